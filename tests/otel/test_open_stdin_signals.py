"""``cat spans.jsonl | tracetui open -`` ends on SIGTERM and SIGHUP while its writer is still writing, as every
open does: the scan of standard input waits for more without blocking the explorer's exit. The explorer
runs on a pseudo-terminal (its controlling terminal, where it reads keys), standard input is a pipe left
open; the signal is sent once it has drawn a run, never on a timer. Timeouts are only safety nets."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import orjson
import pytest
from otel_builders import span, traces_data
from pty_screen import exit_status, read_until

ROOT = Path(__file__).resolve().parents[2]
#: the child takes the pseudo-terminal as its controlling terminal (``open -`` reads keys from /dev/tty)
CHILD = ("import os, sys\nos.setsid()\nfd = os.open(sys.argv[1], os.O_RDWR)\nos.dup2(fd, 1)\nos.dup2(fd, 2)\n"
         "from tracetui.cli import main\nsys.argv = ['tracetui', 'open', '-']\nmain()\n")


def _lines(count: int) -> bytes:
    out = []
    for n in range(count):
        trace = f"{n + 1:032x}"
        root = span("invoke_agent shop", f"{n + 1:016x}", "", 0, 90, trace=trace,
                    gen_ai__operation__name="invoke_agent", gen_ai__agent__name="shopper")
        chat = span("chat m", f"{n + 100:016x}", root["spanId"], 1, 5, trace=trace, gen_ai__operation__name="chat")
        out.append(orjson.dumps(traces_data(chat, root)) + b"\n")
    return b"".join(out)


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP])
def test_open_of_piped_otlp_still_arriving_exits_on_the_signal(signum):
    import pty

    leader, follower = pty.openpty()
    read_fd, write_fd = os.pipe()
    proc = subprocess.Popen([sys.executable, "-c", CHILD, os.ttyname(follower)], stdin=read_fd, cwd=ROOT,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            env={**os.environ, "TERM": "xterm-256color", "COLUMNS": "120", "LINES": "40"})
    os.close(read_fd)  # (the follower stays open here too: until the child opens it, the leader reads EIO)
    try:
        os.write(write_fd, _lines(12))  # the writer stays open: the scan waits for more
        seen = read_until(leader, b"shopper-", proc)
        assert b"shopper-" in seen, "the explorer never showed a run"
        proc.send_signal(signum)
        assert exit_status(leader, proc) == 128 + signum
    finally:
        os.close(write_fd)
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        os.close(leader)
        os.close(follower)
