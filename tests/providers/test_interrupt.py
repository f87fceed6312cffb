"""Ctrl-C during a live run: the trace holds what was recorded, says the run was interrupted, and replays.

The run is a real `tracetui run` process against the scripted loopback server,
stopped with SIGINT as a terminal would: once inside a 60 s Retry-After wait, once
in the middle of a stream the server holds open.
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import orjson
from click.testing import CliRunner

from tracetui.cli import main

from scripted_server import Reply, ScriptedServer
from wire import RATE_LIMITED, streams

KEY = "sk-test-interrupt-0123456789abcdef"
BOUND = 20.0  # seconds any wait in this file may take before the test fails


def start(server, tmp_path, *flags):
    out = tmp_path / "live.jsonl"
    env = {**os.environ, "OPENAI_API_KEY": KEY, "PYTHONUNBUFFERED": "1"}
    # A shell without job control starts background jobs with SIGINT ignored, and a child keeps a signal
    # ignored across exec (so the run would rightly ignore Ctrl-C). Catching it here while the child is
    # started gives the child the default, as a terminal's foreground job has it.
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        proc = subprocess.Popen([sys.executable, "-m", "tracetui", "run", "--provider", "openai-chat", "--base-url",
                                 server.url + "/v1", "--model", "m", "--seed", "3", "-o", str(out), *flags],
                                env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    finally:
        signal.signal(signal.SIGINT, previous)
    return proc, out


def until(condition):
    deadline = time.monotonic() + BOUND
    while not condition():
        assert time.monotonic() < deadline, "the run never got there"
        time.sleep(0.02)


def stop(proc):
    proc.send_signal(signal.SIGINT)
    try:
        _, err = proc.communicate(timeout=BOUND)
    except subprocess.TimeoutExpired:
        proc.kill()
        raise
    return proc.returncode, err.decode()


def test_ctrl_c_inside_a_long_retry_after_wait_writes_the_run_as_interrupted(tmp_path):
    with ScriptedServer([Reply(429, RATE_LIMITED, {"retry-after": "60"})]) as server:
        proc, out = start(server, tmp_path)
        until(lambda: len(server.requests) == 1)
        time.sleep(0.3)  # into the 60 s wait
        code, err = stop(proc)
    assert code == 130, err
    records = [orjson.loads(line) for line in out.read_bytes().splitlines()]
    run, *events, summary = records
    assert [r["status"] for r in run["inputs"]["responses"]] == [429, None]
    assert run["inputs"]["responses"][1]["error"] == "interrupted"
    first, second = events
    assert first["code"] == "rate_limited" and first["data"]["backoff_ms"] == 60000
    assert second["code"] == "interrupted" and "interrupted (Ctrl-C)" in second["summary"]
    assert summary["status"] == "interrupted" and summary["ended_by"] == "interrupt"
    assert "interrupted" in err
    replayed = CliRunner().invoke(main, ["replay", str(out), "--run", "http-openai-chat"])
    assert "the re-run reproduces the original byte for byte" in replayed.output, replayed.output


def test_ctrl_c_mid_stream_keeps_the_events_that_arrived(tmp_path):
    first, _ = streams("openai-chat")
    held = Reply(events=first, pause_after=1)  # two events out, then the server holds the stream open
    with ScriptedServer([held]) as server:
        proc, out = start(server, tmp_path, "--stream", "--no-show-stream")
        until(lambda: held.sent >= 2)
        time.sleep(0.3)
        code, err = stop(proc)
        held.resume.set()
    assert code == 130, err
    run, *events, summary = [orjson.loads(line) for line in out.read_bytes().splitlines()]
    [attempt] = run["inputs"]["responses"]
    assert (attempt["status"], attempt["error"], len(attempt["events"])) == (200, "interrupted", 2)
    assert events[-1]["code"] == "interrupted" and summary["ended_by"] == "interrupt"
    assert not any(e["lane"] in ("arguments", "receipt") for e in events)
    replayed = CliRunner().invoke(main, ["replay", str(out), "--run", "http-openai-chat"])
    assert "the re-run reproduces the original byte for byte" in replayed.output, replayed.output
