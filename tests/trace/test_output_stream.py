"""``tracetui check x | head -1``: when the reader closes standard output, check ends quietly with 141 (as a
shell reports a program that SIGPIPE stopped), and never blames the input file.

Each output here is several times what a pipe holds, and this test reads one line and closes its end:
the check is still writing then, so its next write fails, whatever the scheduler does.
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from otlp_samples import long_named_otlp
from tracetui.trace.output_stream import OUTPUT_CLOSED

ROOT = Path(__file__).resolve().parent.parent.parent
SAFETY_S = 120


@pytest.fixture(scope="module")
def traces(tmp_path_factory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("closed")
    lines = (ROOT / "sample_traces" / "scenarios.jsonl").read_bytes().splitlines()
    single = [line for line in lines if b'"run_id":"single"' in line]
    native = folder / "many.jsonl"
    native.write_bytes(b"".join(line.replace(b'"run_id":"single"', b'"run_id":"r-%d-%s"' % (i, b"x" * 500)) + b"\n"
                                for i in range(1000) for line in single))
    return {"native": native, "otlp": long_named_otlp(folder / "many.json")}


@pytest.mark.skipif(sys.platform == "win32", reason="a closed pipe is reported so on POSIX")
@pytest.mark.parametrize("kind", ["native", "otlp"])
@pytest.mark.parametrize("flags", [(), ("--json",)], ids=["text", "json"])
def test_a_closed_output_ends_check_quietly(traces, kind, flags):
    child = subprocess.Popen([sys.executable, "-m", "tracetui", "check", str(traces[kind]), *flags],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT,
                             env={**os.environ, "TRACETUI_WORKER": "off"})
    try:
        assert child.stdout.readline()  # what `head -1` reads
        child.stdout.close()  # and then it is gone
        err = child.stderr.read()
        child.wait(timeout=SAFETY_S)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    assert child.returncode == OUTPUT_CLOSED, err
    assert err == b""  # no "Broken pipe", no error naming the input, no traceback
