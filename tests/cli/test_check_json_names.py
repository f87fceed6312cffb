"""``check --json`` of a file whose name is not UTF-8 (bytes a file system allows): the name is escaped in a valid
document, not a traceback (orjson refuses the lone surrogate such a name decodes to)."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

SAMPLE = Path(__file__).resolve().parents[2] / "sample_traces" / "fault-429.jsonl"


@pytest.mark.skipif(sys.platform == "win32" or sys.platform == "darwin", reason="names of any bytes: Linux")
@pytest.mark.parametrize("args", [["--json"], ["--json", "--group"]])
def test_a_name_that_is_not_utf8_is_escaped_in_the_json(tmp_path, args):
    name = os.fsencode(tmp_path) + b"/run-\xff\x1b[31m.jsonl"
    shutil.copyfile(SAMPLE, name)
    done = subprocess.run([os.fsencode(sys.executable), b"-m", b"tracetui", b"check", *map(os.fsencode, args), name],
                          capture_output=True, timeout=120)
    assert done.returncode in (0, 1), done.stderr
    assert b"Traceback" not in done.stderr and b"\x1b" not in done.stdout
    document = json.loads(done.stdout)  # (json: orjson refuses the lone surrogate the escape stands for)
    assert document["file"].endswith("run-\udcff\x1b[31m.jsonl")
