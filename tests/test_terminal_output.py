"""What the command line prints of trace and server text: never a control sequence, never a secret.

Every CLI print of untrusted text takes one path (``tracetui.trace.safe_text``):
secrets redacted as the trace file would, control characters made visible.
"""
from __future__ import annotations

import orjson
import pytest
from click.testing import CliRunner

from tracetui.cli import main

from secret_corpus import instances, pieces

#: what a hostile server or trace puts in its text: clipboard write (OSC 52), clear screen, a hyperlink (OSC 8),
#: a device control string, the C1 CSI byte, a bidi override, a bell and a carriage return
HOSTILE = ("\x1b]52;c;aGVsbG8=\x07 \x1b[2J \x1b]8;;http://evil.example\x1b\\link\x1b]8;;\x1b\\ "
           "\x1bP1$qm\x1b\\ \x9b31m \u202eevil\u202c \x07\rX")
RAW_CONTROLS = ("\x1b", "\x07", "\x9b", "\u202e", "\u202c", "\r")
SECRET = "sk-proj-Q7xT2mV9pL4kR8wZ1nB6cY3hJ5fD0gSaT3BlbkFJ"


def clean(text: str) -> bool:
    return not any(c in text for c in RAW_CONTROLS) and SECRET not in text


def run_cli(*args: str):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def test_run_prints_a_hostile_401_verdict_escaped_and_redacted(tmp_path):
    responses = tmp_path / "r.json"
    responses.write_bytes(orjson.dumps([{"status": 401, "headers": {},
                                         "body": {"error": {"message": f"bad key {SECRET} {HOSTILE}"}}}]))
    out = tmp_path / "t.jsonl"
    res = run_cli("run", "--responses", str(responses), "-o", str(out))
    assert res.exit_code == 1
    assert "auth_error" in res.stderr and "\\x1b]52;c;" in res.stderr and "<redacted>" in res.stderr
    assert clean(res.stderr) and clean(res.stdout)
    assert SECRET.encode() not in out.read_bytes()


def _trace(tmp_path, run_ids, reason: str) -> str:
    lines = []
    for run_id in run_ids:
        lines.append({"rec": "summary", "run_id": run_id, "status": "auth_error", "ready": False,
                      "first_failure": {"lane": "http", "seq": 1, "code": "auth_error", "reason": reason}})
    path = tmp_path / "t.jsonl"
    path.write_bytes(b"".join(orjson.dumps(line) + b"\n" for line in lines))  # not through the writer: as found
    return str(path)


def test_replay_of_an_unknown_run_lists_the_file_s_run_ids_escaped(tmp_path):
    path = _trace(tmp_path, [f"a{HOSTILE}", f"b {SECRET}"], "x")
    res = run_cli("replay", path, "--run", "nope")
    assert res.exit_code == 2 and "no run 'nope'" in res.stderr
    assert "\\x1b]52;c;" in res.stderr and clean(res.stderr)


@pytest.mark.parametrize("fmt", [[], ["--json"]])
def test_check_prints_verdicts_escaped_and_redacted(tmp_path, fmt):
    path = _trace(tmp_path, [f"r{HOSTILE}"], f"HTTP 401 ({SECRET}) {HOSTILE}")
    res = run_cli("check", path, *fmt)
    assert res.exit_code == 1 and clean(res.stdout) and clean(res.stderr)
    if fmt:
        verdict = orjson.loads(res.stdout)["runs"][0]  # still valid JSON, escapes included
        assert verdict["run_id"].startswith("r\x1b]52") and SECRET not in verdict["first_failure"]["reason"]


def test_every_corpus_secret_stays_off_checks_output(tmp_path):
    corpus = instances()
    path = _trace(tmp_path, [f"run-{i}" for i in range(len(corpus))], "")
    lines = [orjson.loads(line) for line in open(path, "rb")]
    for line, (_, text, _) in zip(lines, corpus):
        line["first_failure"]["reason"] = f"server said: {text}"
        line["run_id"] = f"{line['run_id']} {text}"
    (tmp_path / "t.jsonl").write_bytes(b"".join(orjson.dumps(line) + b"\n" for line in lines))
    for fmt in ([], ["--json"]):
        res = run_cli("check", path, *fmt)
        for name, _, secret in corpus:
            shown = res.stdout + res.stderr
            assert not [p for p in pieces(secret) if p in shown or orjson.dumps(p).decode()[1:-1] in shown], name


def test_replay_prints_edits_of_credential_fields_redacted(tmp_path):
    gen = tmp_path / "g.jsonl"
    assert run_cli("generate", "--scenario", "single", "-o", str(gen)).exit_code == 0
    res = run_cli("replay", str(gen), "--run", "single", "--set", '/responses/0/headers/x-api-key="hunter2-Qx7"', "--json")
    assert "hunter2-Qx7" not in res.stdout
    assert orjson.loads(res.stdout)["edits"] == [{"path": "/responses/0/headers/x-api-key", "value": "<redacted>"}]
    res = run_cli("replay", str(gen), "--run", "single", "--set", f"/inputs/user_input=my key is {SECRET}")
    assert clean(res.stdout) and clean(res.stderr)


def _on_a_terminal(*args: str) -> bytes:
    """What ``tracetui ARGS`` writes to standard output when that is a terminal (a pseudo-terminal here)."""
    import os
    import pty
    import subprocess
    import sys

    leader, follower = pty.openpty()
    try:
        proc = subprocess.Popen([sys.executable, "-m", "tracetui", *args], stdout=follower,
                                stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
        os.close(follower)
        out = b""
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # the terminal closed: the command ended
                break
            if not chunk:
                break
            out += chunk
        proc.wait(timeout=60)
    finally:
        os.close(leader)
    return out


@pytest.mark.parametrize("command", ["run", "export"])
def test_json_lines_written_to_a_terminal_hold_no_raw_control(tmp_path, command):
    """A trace or OTLP/JSON on standard output stays JSON, its C1 and bidi controls written as JSON escapes."""
    responses = tmp_path / "r.json"
    responses.write_bytes(orjson.dumps([{"status": 200, "headers": {}, "body": {
        "object": "response", "status": "completed", "output": [{"type": "message", "role": "assistant", "content": [
            {"type": "output_text", "text": f"done {HOSTILE}", "annotations": []}]}]}}]))
    if command == "run":
        out = _on_a_terminal("run", "--responses", str(responses))
    else:
        trace = tmp_path / "t.jsonl"
        assert run_cli("run", "--responses", str(responses), "-o", str(trace)).exit_code in (0, 1)
        out = _on_a_terminal("export", str(trace), "--content", "-o", "-")
    text = out.decode().replace("\r\n", "\n")  # the terminal's own line ends
    assert "done" in text and clean(text), text
    for line in text.splitlines():
        assert orjson.loads(line)
    assert "\\u009b31m" in text and "\\u202eevil" in text  # the same JSON values, escaped


def test_a_line_cut_to_a_width_redacts_only_what_it_can_show(monkeypatch):
    """A tree row or a title of a 15 MB string redacted all of it (1.3 s per row) to show 29 characters."""
    from tracetui.trace import safe_text

    seen: list[int] = []
    real = safe_text.redact_text

    def counting(text):
        seen.append(len(text))
        return real(text)

    monkeypatch.setattr(safe_text, "redact_text", counting)
    shown = safe_text.one_line(f"key {SECRET} " + "A" * 2_000_000 + HOSTILE, 80)
    assert max(seen) < 10_000 and clean(shown) and "<redacted>" in shown and len(shown) <= 80
