"""``tracetui record -- COMMAND`` end to end: a real agent process, a scripted upstream on loopback, the
trace file it writes, the exit status it passes on, and how it stops (signals, Ctrl-C in a terminal)."""
from __future__ import annotations

import os
import pty
import select
import signal
import subprocess
import sys
import textwrap
import time

import orjson
import pytest
from click.testing import CliRunner

from wire_helpers import KEY, Reply, ScriptedServer, chat_body
from wire_helpers import loopback_only  # noqa: F401  (autouse fixture)

from tracetui.cli import main

SAFETY = 30

CHAT_AGENT = """
import os, sys, openai
client = openai.OpenAI(max_retries=0, timeout=20)
answer = client.chat.completions.create(model="gpt-x", messages=[{"role": "user", "content": "status of o-1?"}])
print("agent:", answer.choices[0].message.content, flush=True)
sys.exit(int(os.environ.get("AGENT_EXIT", "0")))
"""
#: an agent that says it is running (a line on stdout), then waits to be stopped
WAITING_AGENT = """
import sys, time
try:
    print("ready", flush=True)  # inside the try: a Ctrl-C right after it is still the agent's to handle
    time.sleep(60)
except KeyboardInterrupt:
    print("agent: interrupted", flush=True)
    raise SystemExit(1)
"""


def _script(tmp_path, text: str) -> str:
    path = tmp_path / "agent.py"
    path.write_text(textwrap.dedent(text))
    return str(path)


def _runs(path) -> list[list[dict]]:
    runs: list[list[dict]] = []
    for line in path.read_bytes().splitlines():
        record = orjson.loads(line)
        if record["rec"] == "run":
            runs.append([])
        runs[-1].append(record)
    return runs


def _record(args: list[str], env: dict | None = None):
    return CliRunner().invoke(main, ["record", *args], env=env, catch_exceptions=False)


def test_a_chat_agent_is_recorded_judged_and_its_exit_status_passed_on(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    out = tmp_path / "rec.jsonl"
    agent = _script(tmp_path, CHAT_AGENT)
    with ScriptedServer([Reply(body=chat_body("shipped")), Reply(body=chat_body("shipped"))]) as up:
        ok = _record(["-o", str(out), "--upstream", up.url, "--", sys.executable, agent])
        rejected = _record(["-o", str(out), "--upstream", f"openai={up.url}", "--run-id", "second", "--",
                            sys.executable, agent], env={"AGENT_EXIT": "3"})
    assert ok.exit_code == 0 and rejected.exit_code == 3
    assert "✓ record-agent  answer_ready" in ok.stderr and f"written to {out}" in ok.stderr
    assert "answer_rejected" in rejected.stderr and f"appended to {out}" in rejected.stderr
    first, second = _runs(out)  # appending added a run; the first is kept
    assert first[0]["run_id"] == "record-agent" and second[0]["run_id"] == "second"
    assert first[0]["inputs"]["source"] == "record"
    assert first[0]["inputs"]["command_hint"] == [sys.executable, agent]
    assert first[0]["inputs"]["upstream"]["openai"] == up.url
    assert up.requests[0]["headers"]["authorization"] == f"Bearer {KEY}"  # forwarded ...
    assert KEY.encode() not in out.read_bytes() and KEY not in ok.stderr + ok.stdout  # ... never written or printed
    assert second[-1]["status"] == "answer_rejected"


def test_a_command_that_does_not_start_exits_127_with_the_reason_and_writes_nothing(tmp_path):
    out = tmp_path / "rec.jsonl"
    result = _record(["-o", str(out), "--", "no-such-agent-command-x", "--flag"])
    assert result.exit_code == 127
    assert "no-such-agent-command-x: command not found" in result.stderr
    assert not out.exists()


def test_an_agent_that_never_calls_the_endpoint_gets_a_run_that_says_so(tmp_path):
    out = tmp_path / "rec.jsonl"
    result = _record(["-o", str(out), "--", sys.executable, "-c", "pass"])
    [run] = _runs(out)
    assert result.exit_code == 0
    assert run[-1]["status"] == "no_exchanges" and "never called the endpoint" in result.stderr


def test_an_agent_killed_by_sigkill_has_its_run_written_and_the_exit_says_so(tmp_path):
    out = tmp_path / "rec.jsonl"
    result = _record(["-o", str(out), "--", sys.executable, "-c",
                      "import os, signal; os.kill(os.getpid(), signal.SIGKILL)"])
    [run] = _runs(out)
    assert result.exit_code == 128 + signal.SIGKILL
    assert run[-1]["status"] == "agent_killed" and "SIGKILL" in result.stderr


def test_a_bad_upstream_is_a_usage_error(tmp_path):
    result = CliRunner().invoke(main, ["record", "-o", str(tmp_path / "r.jsonl"), "--upstream", "mistral=http://x",
                                       "--", "true"])
    assert result.exit_code == 2 and "'mistral' is no provider here" in result.stderr


def test_a_port_already_taken_is_a_clear_error(tmp_path):
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = _record(["-o", str(tmp_path / "r.jsonl"), "--port", str(port), "--", "true"])
    assert result.exit_code == 1 and f"port {port} on 127.0.0.1 is already taken" in result.stderr


def _tracetui(args: list[str], **kw) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "tracetui", *args], **kw)


def test_sigint_to_tracetui_stops_the_agent_writes_the_run_and_exits_130(tmp_path):
    out = tmp_path / "rec.jsonl"
    proc = _tracetui(["record", "-o", str(out), "--", sys.executable, _script(tmp_path, WAITING_AGENT)],
                     stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        assert proc.stdout.readline() == b"ready\n"  # the agent runs: now stop tracetui (not the agent)
        proc.send_signal(signal.SIGINT)
        rest, err = proc.communicate(timeout=SAFETY)
    finally:
        proc.kill()
    assert proc.returncode == 130
    assert b"agent: interrupted" in rest  # SIGINT was passed on to the agent
    [run] = _runs(out)
    assert run[-1]["status"] == "interrupted" and run[-1].get("ended_by") == "interrupt"


def test_ctrl_c_in_a_terminal_stops_the_agent_writes_the_run_and_exits_130(tmp_path):
    out = tmp_path / "rec.jsonl"
    agent = _script(tmp_path, WAITING_AGENT)
    pid, fd = pty.fork()
    if pid == 0:  # the child: tracetui record on a terminal of its own, in its foreground
        try:
            os.execv(sys.executable, [sys.executable, "-m", "tracetui", "record", "-o", str(out), "--",
                                      sys.executable, agent])
        finally:
            os._exit(127)
    seen = b""
    try:
        seen = _read_until(fd, b"ready", seen)
        os.write(fd, b"\x03")  # Ctrl-C: the terminal interrupts its whole foreground group
        seen = _read_until(fd, None, seen)
    finally:
        _, status = os.waitpid(pid, 0)
        os.close(fd)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 130, seen
    assert seen.count(b"agent: interrupted") == 1  # the agent was interrupted once, not twice
    [run] = _runs(out)
    assert run[-1]["status"] == "interrupted"


def _read_until(fd: int, marker: bytes | None, seen: bytes) -> bytes:
    """Read the terminal until ``marker`` shows (None: until it closes), within the safety net."""
    deadline = time.monotonic() + SAFETY
    while marker is None or marker not in seen:
        left = deadline - time.monotonic()
        if left <= 0:
            pytest.fail(f"no {marker!r} on the terminal; it showed {seen!r}")
        ready, _, _ = select.select([fd], [], [], left)
        if not ready:
            continue
        try:
            chunk = os.read(fd, 4096)
        except OSError:  # EIO: the terminal closed
            chunk = b""
        if not chunk:
            if marker is None:
                return seen
            pytest.fail(f"the terminal closed before {marker!r}; it showed {seen!r}")
        seen += chunk
    return seen


#: an agent that sends one request and waits for its answer (the test kills it meanwhile)
ASKING_AGENT = """
import os, httpx
print(os.getpid(), flush=True)
httpx.post(os.environ["OPENAI_BASE_URL"] + "/chat/completions", json={"model": "m", "messages": []}, timeout=300)
"""


def test_an_agent_killed_mid_request_ends_tracetui_at_once_with_what_it_did(tmp_path):
    out = tmp_path / "rec.jsonl"
    with ScriptedServer([Reply(body=chat_body(), delay=60)]) as up:  # an upstream far slower than the safety net
        proc = _tracetui(["record", "-o", str(out), "--upstream", up.url, "--", sys.executable,
                          _script(tmp_path, ASKING_AGENT)], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE)
        try:
            agent_pid = int(proc.stdout.readline())
            deadline = time.monotonic() + SAFETY
            while not up.requests and time.monotonic() < deadline:  # the request is at the upstream
                time.sleep(0.01)
            assert up.requests
            os.kill(agent_pid, signal.SIGKILL)
            _, err = proc.communicate(timeout=SAFETY)  # not held by the request still waiting upstream
        finally:
            proc.kill()
    assert proc.returncode == 128 + signal.SIGKILL, err
    [run] = _runs(out)
    [attempt] = [r for r in run if r.get("kind") == "http.attempt"]
    assert attempt["data"]["response"]["status"] is None
    assert run[-1]["status"] == "agent_killed" or run[-1]["first_failure"]["lane"] == "http"
