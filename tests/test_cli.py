"""The CLI as a user meets it: verdicts, exit codes and clear errors on bad input."""
from __future__ import annotations

import json
import subprocess
import sys

import orjson
import pytest
from click.testing import CliRunner

from tracetui.cli import main


@pytest.fixture
def cli():
    runner = CliRunner()

    def invoke(*args):
        return runner.invoke(main, [str(a) for a in args], catch_exceptions=False)
    return invoke


def lines(path):
    return [orjson.loads(x) for x in path.read_bytes().splitlines()]


def test_generate_writes_runs_and_check_reads_them(cli, tmp_path):
    out = tmp_path / "t.jsonl"
    r = cli("generate", "--scenario", "single", "--scenario", "cross_tenant", "-o", out)
    assert r.exit_code == 0 and "wrote 2 run(s), 1 failed" in r.output
    recs = lines(out)
    assert [x["rec"] for x in recs][0] == "run" and recs[-1]["rec"] == "summary"
    assert out.read_bytes().startswith(b'{"rec":"run","run_id":"single"')
    r = cli("check", out)
    assert r.exit_code == 1
    assert "✓ single  answer_ready" in r.output
    assert "✗ cross_tenant  permission_denied  authorization@4" in r.output


def test_check_exit_0_when_every_run_is_ready(cli, tmp_path):
    out = tmp_path / "ok.jsonl"
    cli("generate", "--scenario", "single", "--scenario", "parallel", "-o", out)
    assert cli("check", out).exit_code == 0


def test_check_json(cli, root):
    r = cli("check", root / "sample_traces" / "scenarios.jsonl", "--json")
    data = json.loads(r.output)
    verdicts = {v["run_id"]: v for v in data["runs"]}
    assert verdicts["cross_tenant"]["first_failure"]["lane"] == "authorization"
    assert verdicts["single"]["ready"] is True and data["problems"] == []


def file_with(content: bytes):
    def make(directory):
        path = directory / "input.jsonl"
        path.write_bytes(content)
        return path
    return make


@pytest.mark.parametrize("make,message", [
    (lambda p: p / "missing.jsonl", "no such file"),
    (lambda p: p, "is a directory"),
    (file_with(b""), "no runs found (it is empty)"),
    (file_with(b"hello\n{}\n"), "no runs found (no line is a trace record)"),
])
def test_check_exit_2_when_unreadable(cli, tmp_path, make, message):
    r = cli("check", make(tmp_path))
    assert r.exit_code == 2 and message in r.output


@pytest.mark.parametrize("as_json", [False, True])
def test_a_file_without_a_run_says_which_lines_are_not_records(cli, tmp_path, as_json):
    """'no runs found' came alone: the first lines that are not records now say why, before it."""
    path = tmp_path / "notes.jsonl"
    path.write_bytes(b"hello\n" + b'{"a": 1}\n' * 9)
    r = cli("check", *(["--json"] if as_json else []), path)
    assert r.exit_code == 2 and r.stdout == ""
    first, *rest = r.stderr.splitlines()
    assert first.startswith("line 1: malformed JSON: ")
    assert rest == [
        *[f"line {n}: unknown record kind None" for n in range(2, 6)],
        "… and 5 more problem line(s)",
        f"error: {path}: no runs found (no line is a trace record)"]


@pytest.mark.parametrize("args, message", [
    (["explain", "-"], "explain prints replay commands that name the trace: give a file, not -"),
    (["export", "-", "-o", "spans.jsonl"], "export reads the trace whole: give a file, not -"),
])
def test_commands_that_read_a_trace_whole_say_so_for_standard_input(root, args, message):
    """They answered '-: no such file' while check, replay and open read standard input."""
    trace = (root / "sample_traces" / "scenarios.jsonl").read_bytes()
    r = CliRunner().invoke(main, args, input=trace)
    assert r.exit_code == 2 and message in r.output


@pytest.mark.parametrize("args", ["check -", "replay - --run single"])
def test_a_closed_standard_input_is_an_error_in_words(args):
    """Started with standard input closed (<&-), sys.stdin is None: it ended in an AttributeError traceback."""
    r = subprocess.run(["sh", "-c", f"'{sys.executable}' -m tracetui {args} <&-"], capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 2 and "standard input is closed" in r.stderr and "Traceback" not in r.stderr, r.stderr


def test_check_reports_bad_lines_and_still_reads_good_runs(cli, root, tmp_path):
    good = (root / "sample_traces" / "fault-429.jsonl").read_bytes().splitlines()
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(b"\n".join([good[0], b"{not json", *good[1:-1], b"\xff\xfe\x00", b'{"rec":"event"'] ) + b"\n")
    r = cli("check", bad, "--json")
    data = json.loads(r.output)
    assert [p["line"] for p in data["problems"]] == [2, len(good) + 1, len(good) + 2]
    assert data["runs"][0]["complete"] is False  # the summary line was dropped
    assert data["runs"][0]["status"] == "answer_ready" or data["runs"][0]["first_failure"] is None


def test_incomplete_run_derives_its_failure_from_events(cli, root, tmp_path):
    recs = (root / "sample_traces" / "scenarios.jsonl").read_bytes().splitlines()
    cross = [x for x in recs if b'"run_id":"cross_tenant"' in x][:-1]  # writer crashed before the summary
    path = tmp_path / "crash.jsonl"
    path.write_bytes(b"\n".join(cross) + b"\n")
    r = cli("check", path)
    assert "permission_denied" in r.output and "incomplete" in r.output and "authorization@4" in r.output


def test_unknown_scenario_names_the_choices(cli):
    r = CliRunner().invoke(main, ["generate", "--scenario", "nope"])
    assert r.exit_code == 2 and "'nope' is not one of" in r.output and "cross_tenant" in r.output


def test_unknown_fault_and_ablation(cli):
    assert "'boom' is not one of" in CliRunner().invoke(main, ["generate", "--fault", "boom"]).output
    assert "'x' is not one of" in CliRunner().invoke(main, ["generate", "--ablation", "x"]).output


def test_generate_all_ablations_and_faults(cli, tmp_path):
    out = tmp_path / "a.jsonl"
    r = cli("generate", "--scenario", "parallel", "--all-ablations", "--fault", "429", "--transient-failures", "1",
            "--seed", "3", "-o", out)
    assert r.exit_code == 0
    ids = [x["run_id"] for x in lines(out) if x["rec"] == "summary"]
    assert ids == [f"parallel{'' if a == 'complete' else '-' + a}-fault-429-transient-1-seed-3"
                   for a in ("complete", "drop_assistant_call", "mismatch_call_id", "flatten_roles", "sliding_window")]


def test_run_over_recorded_responses(cli, root, tmp_path):
    out = tmp_path / "r.jsonl"
    r = cli("run", "--responses", root / "sample_traces" / "responses" / "cross_tenant.json", "-o", out)
    assert r.exit_code == 1 and "permission_denied" in r.output
    assert lines(out)[0]["inputs"]["source"] == "responses"
    ok = cli("run", "--responses", root / "sample_traces" / "responses" / "normal.json", "-o", out)
    assert ok.exit_code == 0


@pytest.mark.parametrize("content,message", [
    (b"[{]", "not valid JSON"),
    (b'{"a": 1}', "expected a JSON list of responses, got a dict"),
    (b"[]", "the list of responses is empty"),
    (b"[1, 2]", "response 0 is a int"),
])
def test_malformed_responses_file_names_file_and_position(cli, tmp_path, content, message):
    f = tmp_path / "resp.json"
    f.write_bytes(content)
    r = CliRunner().invoke(main, ["run", "--responses", str(f)])
    assert r.exit_code == 1 and message in r.output and "resp.json" in r.output


def test_malformed_json_error_has_a_position(cli, tmp_path):
    f = tmp_path / "resp.json"
    f.write_bytes(b'[\n  {"status": "completed",\n   "output": [}\n]')
    r = CliRunner().invoke(main, ["run", "--responses", str(f)])
    assert "line 3" in r.output


def test_output_is_atomic_and_never_half_written(cli, tmp_path, monkeypatch):
    out = tmp_path / "t.jsonl"
    out.write_bytes(b"previous content\n")
    import tracetui.trace.writer as writer

    def boom(out_file, runs):
        out_file.write(b"half")
        raise RuntimeError("crash mid-write")
    monkeypatch.setattr(writer, "write_runs", boom)
    with pytest.raises(RuntimeError):
        cli("generate", "-o", out)
    assert out.read_bytes() == b"previous content\n"
    assert [p.name for p in tmp_path.iterdir()] == ["t.jsonl"]


def test_unwritable_output_is_a_clear_error(cli, tmp_path):
    r = CliRunner().invoke(main, ["generate", "-o", str(tmp_path / "no" / "such" / "dir.jsonl")])
    assert r.exit_code == 1 and "cannot write" in r.output


def test_scenarios_and_schema(cli):
    r = cli("scenarios")
    assert "cross_tenant" in r.output and "sliding_window" in r.output and "vendor" in r.output
    schema = json.loads(cli("schema").output)
    assert schema["$defs"]["event"]["properties"]["lane"]["enum"][0] == "http"


def test_odd_field_types_in_a_trace_do_not_crash(tmp_path):
    from tracetui.trace.reader import read_trace
    from tracetui.trace.source import entry_from_run

    path = tmp_path / "odd.jsonl"
    path.write_bytes(b'{"rec":"run","run_id":"r","inputs":"not an object"}\n'
                     b'{"rec":"event","run_id":"r","seq":1,"lane":"http","outcome":"failed","code":"x","summary":"s"}\n'
                     b'{"rec":"summary","run_id":"r","status":7,"metrics":{"model_calls":"many"},"first_failure":"?"}\n')
    entry = entry_from_run(read_trace(path).runs["r"])
    assert (entry.scenario, entry.model_calls, entry.status, entry.failing_lane) == (None, 0, "x", "http")


def test_replay_refuses_to_write_over_its_input(tmp_path, root):
    import shutil
    src = tmp_path / "r.jsonl"
    shutil.copy(root / "sample_traces" / "scenarios.jsonl", src)
    before = src.read_bytes()
    link = tmp_path / "link.jsonl"
    link.symlink_to(src)
    for out in (src, link):
        r = CliRunner().invoke(main, ["replay", str(src), "--run", "single", "--set", "/inputs/seed=3", "-o", str(out)])
        assert r.exit_code == 2 and "is the input trace" in r.output
    assert src.read_bytes() == before


def test_run_refuses_to_write_over_its_responses_file(tmp_path, root):
    import shutil
    resp = tmp_path / "normal.json"
    shutil.copy(root / "sample_traces" / "responses" / "normal.json", resp)
    r = CliRunner().invoke(main, ["run", "--responses", str(resp), "-o", str(resp)])
    assert r.exit_code == 2 and "responses file itself" in r.output


def test_atomic_write_keeps_permissions_and_follows_symlinks(tmp_path):
    import os
    import stat
    private = tmp_path / "p.jsonl"
    private.write_bytes(b"old\n")
    private.chmod(0o600)
    assert CliRunner().invoke(main, ["generate", "-o", str(private)]).exit_code == 0
    assert stat.S_IMODE(private.stat().st_mode) == 0o600 and private.read_bytes().startswith(b'{"rec":"run"')
    target = tmp_path / "target.jsonl"
    target.write_bytes(b"old\n")
    link = tmp_path / "link.jsonl"
    link.symlink_to(target)
    assert CliRunner().invoke(main, ["generate", "-o", str(link)]).exit_code == 0
    assert link.is_symlink() and target.read_bytes().startswith(b'{"rec":"run"')
    fresh = tmp_path / "fresh.jsonl"
    old = os.umask(0o027)
    try:
        assert CliRunner().invoke(main, ["generate", "-o", str(fresh)]).exit_code == 0
    finally:
        os.umask(old)
    assert stat.S_IMODE(fresh.stat().st_mode) == 0o640


def test_check_fails_a_trace_with_unreadable_lines_even_when_its_runs_are_ready(cli, tmp_path):
    out = tmp_path / "ok.jsonl"
    cli("generate", "-o", out)
    assert cli("check", out).exit_code == 0
    out.write_bytes(out.read_bytes() + b"{garbage\n")
    r = cli("check", out)
    assert r.exit_code == 1 and "line 11: malformed JSON" in r.output
    assert "1 run(s): 1 ready, 0 failed, 0 incomplete; 1 problem line(s)" in r.output


def test_check_counts_incomplete_runs_apart_from_failed_ones(cli, root, tmp_path):
    lines = (root / "sample_traces" / "scenarios.jsonl").read_bytes().splitlines()
    single = [x for x in lines if b'"run_id":"single"' in x]
    path = tmp_path / "cut.jsonl"
    path.write_bytes(b"\n".join(single[:3]) + b"\n")  # started, no failure yet, no summary
    r = cli("check", path)
    assert r.exit_code == 1 and "1 run(s): 0 ready, 0 failed, 1 incomplete" in r.output


def test_absurdly_nested_responses_are_refused_clearly(tmp_path):
    f = tmp_path / "deep.json"
    f.write_bytes(b"[" + b"[" * 400 + b"]" * 400 + b"]")
    r = CliRunner().invoke(main, ["run", "--responses", str(f)])
    assert r.exit_code == 1 and "nests deeper than 200 levels" in r.output


def test_ctrl_c_ends_a_command_with_status_130(root):
    """As a shell reports a program stopped by Ctrl-C (click alone would say "Aborted!" and exit 1, which
    a script cannot tell from a failed check). The signal goes to the process group, as a terminal sends it,
    once the command has printed its first verdicts (so it is running, not still importing); never on a timer."""
    import os
    import select
    import signal
    import threading

    single = [x for x in (root / "sample_traces" / "scenarios.jsonl").read_bytes().splitlines()
              if b'"run_id":"single"' in x]
    # more runs than check prints in one block (2048 lines), so verdicts come out while standard input is open
    runs = b"".join(x.replace(b'"run_id":"single"', b'"run_id":"r-%d"' % i) + b"\n" for i in range(2100) for x in single)
    proc = subprocess.Popen([sys.executable, "-m", "tracetui", "check", "-"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True,
                            env={**os.environ, "TRACETUI_WORKER": "off"})

    def feed():  # standard input stays open, as a writer still running: check waits for the rest
        try:
            proc.stdin.write(runs)
            proc.stdin.flush()
        except (OSError, ValueError):  # the command ended early (a failing test): its status says why
            pass
    writer = threading.Thread(target=feed, daemon=True)
    writer.start()
    try:
        ready, _, _ = select.select([proc.stdout], [], [], 60)  # a safety net only
        assert ready and os.read(proc.stdout.fileno(), 64), "check printed nothing"
        os.killpg(proc.pid, signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    finally:
        writer.join(timeout=60)
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130 and b"interrupted" in err and b"Aborted" not in err, err
