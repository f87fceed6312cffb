"""Ctrl-C during ``check``: what was printed stays whole, and ``--json`` still prints one JSON document.

The check reads standard input from this test, which keeps it open: the check cannot end by
itself, so the interrupt always lands while it runs. The signal is sent once the first verdicts
have arrived on standard output (never on a timer); timeouts are only safety nets.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from first_output import interrupted_at_first_output

ROOT = Path(__file__).resolve().parent.parent
SAFETY_S = 60
#: more runs than the check prints in one block (1024 verdicts as JSON, 2048 lines as text), so some output
#: comes before the end of the input
RUNS = 2100


def _many_runs() -> bytes:
    lines = (ROOT / "sample_traces" / "scenarios.jsonl").read_bytes().splitlines()
    single = [line for line in lines if b'"run_id":"single"' in line]
    return b"".join(line.replace(b'"run_id":"single"', b'"run_id":"r-%d"' % i) + b"\n"
                    for i in range(RUNS) for line in single)


def _interrupted_check(*flags: str) -> tuple[int, bytes, bytes]:
    """(exit status, stdout, stderr) of ``check -`` interrupted once its first output arrived."""
    child = subprocess.Popen([sys.executable, "-m", "tracetui", "check", "-", *flags], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT,
                             env={**os.environ, "TRACETUI_WORKER": "off"})
    def feed() -> None:
        try:
            child.stdin.write(_many_runs())
            child.stdin.flush()  # standard input stays open: the check waits for more
        except (OSError, ValueError):  # the check ended (a failing test): its error says why
            pass
    writer = threading.Thread(target=feed, daemon=True)  # a full pipe must not block this test
    try:
        writer.start()
        return interrupted_at_first_output(child, SAFETY_S)
    finally:
        writer.join(timeout=SAFETY_S)
        if child.poll() is None:
            child.kill()
            child.wait()


@pytest.mark.skipif(sys.platform == "win32", reason="SIGINT to a child process is POSIX")
def test_an_interrupted_json_check_prints_a_whole_document_that_says_so():
    status, out, err = _interrupted_check("--json")
    document = json.loads(out)  # every verdict printed is whole, and the document is closed
    assert document["interrupted"] is True and document["file"] == "-"
    assert 0 < len(document["runs"]) <= RUNS  # how many were checked before the signal is up to the scheduler
    assert [r["run_id"] for r in document["runs"]] == [f"r-{i}" for i in range(len(document["runs"]))]
    assert all(r["status"] == "answer_ready" for r in document["runs"])
    assert status == 130
    assert b"interrupted (Ctrl-C)" in err and b"Traceback" not in err


@pytest.mark.skipif(sys.platform == "win32", reason="SIGINT to a child process is POSIX")
def test_an_interrupted_check_keeps_its_lines_whole_and_says_how_far_it_got():
    status, out, err = _interrupted_check()
    lines = out.decode().splitlines()
    assert 0 < len(lines) <= RUNS and out.endswith(b"\n")
    assert all(line.split()[1] == f"r-{i}" for i, line in enumerate(lines))
    assert status == 130
    assert f"{len(lines)} run(s): {len(lines)} ready".encode() in err
    assert f"the {len(lines)} run(s) checked before it".encode() in err
