"""``open`` of OTLP/JSON where its temporary file of runs cannot be made or fills the disk: a message that
says where and what to do (``TMPDIR``), never a bare errno; the runs listed before a full disk still load."""
from __future__ import annotations

import errno
import os
import tempfile

import pytest
from otlp_open_files import otlp_file

from tracetui.otel import run_spool
from tracetui.otel.detect import open_any
from tracetui.trace.reader import TraceReadError


def test_no_usable_temporary_directory_is_said_with_tmpdir(tmp_path, monkeypatch):
    path = otlp_file(tmp_path / "spans.jsonl")
    missing = tmp_path / "no-such-dir"
    monkeypatch.setattr(tempfile, "tempdir", str(missing))
    with pytest.raises(TraceReadError) as raised:
        open_any([str(path)])
    said = str(raised.value)
    assert said.startswith(f"{path}: ") and str(missing) in said and "TMPDIR" in said


def test_a_full_disk_stops_the_scan_with_a_clear_reason_and_the_listed_runs_still_load(tmp_path, monkeypatch):
    source = open_any([str(otlp_file(tmp_path / "spans.jsonl"))])
    written = []
    pwrite = os.pwrite

    def fills_up(fd, data, at):
        if len(written) == 3:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        written.append(at)
        return pwrite(fd, data, at)

    monkeypatch.setattr(run_spool.os, "pwrite", fills_up)
    try:
        with pytest.raises(OSError) as raised:
            for _ in source.scan():
                pass
        said = str(raised.value)
        assert "is full" in said and tempfile.gettempdir() in said and "TMPDIR" in said and "[Errno" not in said
        assert len(source.runs()) == 3
        for entry in source.runs():
            assert source.load(entry).events
    finally:
        source.close()
