"""Ctrl-C during ``check`` of an OTLP/JSON file (read whole, then printed): what was printed stays whole, and
``--json`` still prints one closed JSON document that says it was interrupted, as the streaming check does.

The signal is sent once the first output has arrived (never on a timer): the output is several times what
a pipe holds and this test reads only its first bytes before the signal, so the check is still printing
when the signal lands. Timeouts are only safety nets.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from first_output import interrupted_at_first_output
from otlp_samples import COPIES, PAD, long_named_otlp
from tracetui.cli import main

ROOT = Path(__file__).resolve().parent.parent
SAFETY_S = 120
@pytest.fixture(scope="module")
def many_otlp(tmp_path_factory) -> Path:
    return long_named_otlp(tmp_path_factory.mktemp("otlp") / "many.json")


def _interrupted(path: Path, *flags: str) -> tuple[int, bytes, bytes]:
    child = subprocess.Popen([sys.executable, "-m", "tracetui", "check", str(path), *flags],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT,
                             env={**os.environ, "TRACETUI_WORKER": "off"})
    try:
        return interrupted_at_first_output(child, SAFETY_S)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()


@pytest.mark.skipif(sys.platform == "win32", reason="SIGINT to a child process is POSIX")
def test_an_interrupted_json_check_of_otlp_prints_a_whole_document_that_says_so(many_otlp):
    status, out, err = _interrupted(many_otlp, "--json")
    document = json.loads(out)  # every verdict printed is whole, and the document is closed
    assert document["interrupted"] is True and document["file"] == str(many_otlp)
    assert 0 < len(document["runs"]) < 30 * COPIES and document["problems"] == []
    assert document["runs"][0]["run_id"] == "text-0-" + PAD.decode()
    assert status == 130
    assert b"interrupted (Ctrl-C) while printing" in err and b"Traceback" not in err


@pytest.mark.skipif(sys.platform == "win32", reason="SIGINT to a child process is POSIX")
def test_an_interrupted_text_check_of_otlp_keeps_its_lines_whole(many_otlp):
    status, out, err = _interrupted(many_otlp)
    assert out.endswith(b"\n")
    lines = out.decode().splitlines()
    assert 0 < len(lines) < 30 * COPIES
    assert all(line[:2] in ("✓ ", "✗ ", "! ", "… ") and f"-0-{PAD.decode()}" in line for line in lines[:30])
    assert all(len(line) > len(PAD) for line in lines)  # each one whole
    assert status == 130
    assert f"{len(lines)} run(s): ".encode() in err and b"Traceback" not in err


def test_ctrl_c_while_an_otlp_file_is_read_still_closes_the_document(many_otlp, monkeypatch):
    """(In-process: the interrupt is raised where the file is read, the moment a real Ctrl-C would land.)"""
    def interrupted(path, *args, **kwargs):
        raise KeyboardInterrupt
    monkeypatch.setattr("tracetui.otel.detect.read_any", interrupted)
    monkeypatch.setattr("tracetui.otel.detect.read_for_check", interrupted)  # (check streams OTLP through it)
    out = CliRunner().invoke(main, ["check", str(many_otlp), "--json"])
    assert out.exit_code == 130
    document = json.loads(out.stdout)
    assert document == {"file": str(many_otlp), "runs": [], "problems": [], "interrupted": True}
    assert "interrupted (Ctrl-C) while reading" in out.stderr
