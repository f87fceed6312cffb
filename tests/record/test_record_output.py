"""Where ``tracetui record -o`` writes, checked before the agent runs (a run is never made only to be lost),
and a stop signal that comes while the run is being written (review 21b)."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time

import orjson
from click.testing import CliRunner

from wire_helpers import Reply, ScriptedServer, chat_body, free_port
from wire_helpers import loopback_only  # noqa: F401  (autouse fixture)

from tracetui.cli import main

SAFETY = 30  # seconds: a safety net only


def _marker_agent(tmp_path) -> list[str]:
    """An agent whose only effect is a file saying it ran."""
    return [sys.executable, "-c", f"open({str(tmp_path / 'ran')!r}, 'w').close()"]


def _record(args: list[str]):
    # in a process of its own: before the check, a FIFO blocked the write for good
    return subprocess.run([sys.executable, "-m", "tracetui", "record", *args], capture_output=True, text=True,
                          timeout=SAFETY)


def test_an_output_in_a_missing_folder_is_refused_before_the_agent_runs(tmp_path):
    result = _record(["-o", str(tmp_path / "nodir" / "rec.jsonl"), "--", *_marker_agent(tmp_path)])
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert "does not exist" in result.stderr
    assert not (tmp_path / "ran").exists()


def test_a_fifo_as_output_is_refused_and_nothing_hangs(tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    result = _record(["-o", str(fifo), "--", *_marker_agent(tmp_path)])
    assert result.returncode == 2 and "not a regular file" in result.stderr
    assert not (tmp_path / "ran").exists()


def test_an_existing_file_that_is_not_a_trace_is_never_appended_to(tmp_path):
    script = tmp_path / "agent.py"
    script.write_text("print('my agent')\n")
    result = _record(["-o", str(script), "--", *_marker_agent(tmp_path)])
    assert result.returncode == 2 and "is not a trace" in result.stderr
    assert script.read_text() == "print('my agent')\n" and not (tmp_path / "ran").exists()


def test_a_symlink_to_a_file_not_there_yet_gets_the_run_where_it_points(tmp_path):
    (tmp_path / "link.jsonl").symlink_to("runs.jsonl")
    result = CliRunner().invoke(main, ["record", "-o", str(tmp_path / "link.jsonl"), "--", sys.executable, "-c", "pass"])
    assert result.exit_code == 0, result.stderr
    [run, *_] = [orjson.loads(line) for line in (tmp_path / "runs.jsonl").read_bytes().splitlines()]
    assert run["rec"] == "run" and (tmp_path / "link.jsonl").is_symlink()


def test_a_command_not_executable_is_named_as_such_not_redacted(tmp_path):
    passwd = tmp_path / "passwd"
    passwd.write_text("root:x:0:0\n")
    result = CliRunner().invoke(main, ["record", "-o", str(tmp_path / "r.jsonl"), "--", str(passwd)])
    assert result.exit_code == 127
    assert f"{passwd}: permission denied (is it executable?)" in result.stderr


def test_a_password_in_the_upstream_url_is_never_written(tmp_path):
    out = tmp_path / "r.jsonl"
    result = CliRunner().invoke(main, ["record", "-o", str(out), "--upstream",
                                       f"http://tracetui:hunter2-secret@127.0.0.1:{free_port()}", "--", "true"])
    assert result.exit_code == 0, result.stderr
    run = orjson.loads(out.read_bytes().splitlines()[0])
    assert set(run["inputs"]["upstream"].values()) == {run["inputs"]["upstream"]["openai"]}
    assert "@" not in run["inputs"]["upstream"]["openai"] and b"tracetui:" not in out.read_bytes()


#: the agent leaves a helper with a request on the wire, and ends when the test says so; once tracetui has
#: reaped the agent (its /proc entry gone: run_agent has given the signal handlers back), the helper sends
#: SIGTERM to tracetui, which is still waiting for that request to finish (the run not written yet)
AGENT = """
import os, subprocess, sys
helper = subprocess.Popen([sys.executable, "-c", HELPER, str(os.getppid()), str(os.getpid())])
sys.stdin.readline()  # the test saw the helper's request reach the upstream
os._exit(0)
"""
HELPER = """
import os, signal, sys, threading, time, httpx
def ask():
    try:
        httpx.post(os.environ["OPENAI_BASE_URL"] + "/chat/completions", json={"model": "m", "messages": []}, timeout=60)
    except httpx.HTTPError:
        pass
threading.Thread(target=ask, daemon=True).start()
tracetui, agent = sys.argv[1:3]
deadline = time.monotonic() + 30
while os.path.exists(f"/proc/{agent}") and time.monotonic() < deadline:  # until tracetui has reaped the agent
    time.sleep(0.001)
os.kill(int(tracetui), signal.SIGTERM)
"""


def test_sigterm_after_the_agent_ended_waits_until_the_run_is_written(tmp_path):
    out = tmp_path / "rec.jsonl"
    agent = textwrap.dedent(AGENT).replace("HELPER", repr(textwrap.dedent(HELPER)))
    with ScriptedServer([Reply(body=chat_body("late"), delay=8)]) as up:
        tracetui = subprocess.Popen([sys.executable, "-m", "tracetui", "record", "-o", str(out), "--upstream", up.url,
                                     "--", sys.executable, "-c", agent], stdin=subprocess.PIPE,
                                    stderr=subprocess.PIPE, text=True)
        try:
            deadline = time.monotonic() + SAFETY  # readiness: the helper's request is on the wire (polled, bounded)
            while not up.requests and tracetui.poll() is None and time.monotonic() < deadline:
                time.sleep(0.01)
            assert up.requests, "the helper's request never reached the upstream"
            tracetui.stdin.write("go\n")
            tracetui.stdin.close()
            code = tracetui.wait(SAFETY)
        finally:
            if tracetui.poll() is None:
                tracetui.kill()
    stderr = tracetui.stderr.read()
    assert code == 130, (code, stderr)
    lines = [orjson.loads(line) for line in out.read_bytes().splitlines()]
    assert lines[0]["rec"] == "run" and lines[-1]["rec"] == "summary"
    assert f"written to {out}" in stderr
