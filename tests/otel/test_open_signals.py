"""``tracetui open`` of an OTLP/JSON file still being read ends on SIGTERM and SIGHUP, as every open does
(issue 22: 4 of 4 needed SIGKILL), and shows its first runs while the rest is read. The explorer runs on a
pseudo-terminal; the signal is sent once it has drawn a run of the file and says it is still indexing, never
on a timer. Timeouts are only
safety nets."""
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
TRACES = 6000


@pytest.fixture(scope="module")
def big_otlp(tmp_path_factory) -> Path:
    """Thousands of foreign runs, a trace per line: seconds of reading after the first runs show."""
    path = tmp_path_factory.mktemp("otlp") / "many.jsonl"
    with open(path, "wb") as out:
        for n in range(TRACES):
            trace = f"{n + 1:032x}"
            root = span("invoke_agent shop", f"{n + 1:016x}", "", 0, 90, trace=trace,
                        gen_ai__operation__name="invoke_agent", gen_ai__agent__name="shopper")
            chats = [span("chat m", f"{(n + 1) * 16 + k:016x}", root["spanId"], k * 10, k * 10 + 5, trace=trace,
                          gen_ai__operation__name="chat", gen_ai__output__messages="x" * 400) for k in range(1, 6)]
            out.write(orjson.dumps(traces_data(root, *chats)) + b"\n")
    return path


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP])
def test_open_of_an_otlp_file_being_read_exits_on_the_signal(big_otlp, signum):
    import pty

    leader, follower = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "tracetui", "open", str(big_otlp)], stdin=follower,
                            stdout=follower, stderr=follower, cwd=ROOT, start_new_session=True,
                            env={**os.environ, "TERM": "xterm-256color", "COLUMNS": "120", "LINES": "40"})
    os.close(follower)
    try:
        seen = read_until(leader, b"shopper-", proc)
        assert b"shopper-" in seen, "the explorer never showed a run"
        seen += read_until(leader, "indexing…".encode(), proc)
        assert "indexing…".encode() in seen, "its first runs did not show while the rest was read"
        proc.send_signal(signum)
        assert exit_status(leader, proc) == 128 + signum  # (its terminal closes first, then it exits)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        os.close(leader)
