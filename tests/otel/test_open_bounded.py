"""``tracetui open`` of an OTLP/JSON file in bounded memory (issue 22 item 3): the converted runs go to a
private temporary file as the stream releases them, and are read back one at a time, so the source holds
their rows, never their records; what the explorer shows is what reading the file whole gives."""
from __future__ import annotations

import gc
import hashlib
import os
import stat
import tempfile

import pytest
from otlp_open_files import otlp_file

from tracetui.otel import stream_source
from tracetui.otel.detect import open_any, read_any
from tracetui.trace.format import NOT_RERUNNABLE
from tracetui.trace.reader import RunData
from tracetui.trace.source import entry_from_run


def _records(run: RunData) -> tuple:
    return run.run_id, run.run, run.events, run.summary, run.first_line


def _scanned(path):
    source = open_any([str(path)])
    seen = [[e.run_id for e in source.runs()] for _ in source.scan()]
    return source, seen


def _alive_runs() -> int:
    gc.collect()
    return sum(1 for o in gc.get_objects() if type(o) is RunData)


def test_open_lists_and_loads_what_reading_the_file_whole_gives(tmp_path):
    path = otlp_file(tmp_path / "spans.jsonl")
    whole = read_any(path)
    source, seen = _scanned(path)
    try:
        assert [e.run_id for e in source.runs()] == list(whole.runs)  # final names, in the file's order
        assert any("orders-4bf92f35" in s for s in seen) and "orders-4bf92f35" not in seen[-1]  # provisional first
        assert list(source.problems()) == whole.problems and whole.problems[0].line == 13
        for entry in source.runs():
            run = source.load(entry)
            assert _records(run) == _records(whole.runs[entry.run_id])
            assert entry == entry_from_run(run)
            assert NOT_RERUNNABLE.get(run.run["source"]), entry.run_id  # imported: E/e/i greyed, with the reason
    finally:
        source.close()


def test_a_row_still_shown_under_its_provisional_name_loads(tmp_path):
    """The explorer may redraw after the names change: a row it still has under the old name loads."""
    from tracetui.trace.source import RunEntry

    source, seen = _scanned(otlp_file(tmp_path / "spans.jsonl"))
    try:
        assert any("orders-4bf92f35" in s for s in seen)
        shape = next(e.shape for e in source.runs() if e.run_id == "orders-4bf92f3577b34da6a3ce")
        old, new = source.load(RunEntry("orders-4bf92f35", shape)), source.load(RunEntry(
            "orders-4bf92f3577b34da6a3ce", shape))
        assert old.run["otel"] == new.run["otel"] and len(old.events) == len(new.events) > 0
    finally:
        source.close()


def test_the_source_holds_rows_not_runs(tmp_path):
    """Structural: once scanned, no run's records are in memory; loading every run keeps only the last few."""
    path = otlp_file(tmp_path / "spans.jsonl")
    before = _alive_runs()
    source, _ = _scanned(path)
    try:
        assert len(source.runs()) == 33
        assert _alive_runs() == before
        for entry in source.runs():
            source.load(entry)
        assert _alive_runs() - before <= stream_source.CACHED_RUNS < 33
    finally:
        source.close()


@pytest.fixture
def private_tmp(tmp_path, monkeypatch):
    where = tmp_path / "tmp"
    where.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(where))
    return where


def _open_in(where) -> list[int]:
    """This process's descriptors open on a file in ``where``."""
    found = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            if os.readlink(f"/proc/self/fd/{fd}").startswith(str(where)):
                found.append(int(fd))
        except OSError:
            pass
    return found


def test_the_runs_go_to_a_private_file_that_is_gone_once_closed(tmp_path, private_tmp):
    path = otlp_file(tmp_path / "spans.jsonl")
    digest, mtime = hashlib.sha256(path.read_bytes()).hexdigest(), path.stat().st_mtime_ns
    source, _ = _scanned(path)
    try:
        spools = _open_in(private_tmp)
        assert len(spools) == 1, "the runs are not kept on disk"
        st = os.fstat(spools[0])
        assert stat.S_IMODE(st.st_mode) == 0o600 and st.st_nlink == 0  # only this process can reach it
        assert st.st_size > 0 and os.listdir(private_tmp) == []  # no name to clean up, whatever ends the process
        source.load(source.runs()[-1])
    finally:
        source.close()
    assert _open_in(private_tmp) == [] and os.listdir(private_tmp) == []
    assert hashlib.sha256(path.read_bytes()).hexdigest() == digest and path.stat().st_mtime_ns == mtime


def test_closing_mid_scan_stops_it_and_frees_the_file(tmp_path, private_tmp):
    source = open_any([str(otlp_file(tmp_path / "spans.jsonl"))])
    scan = source.scan()
    next(scan)
    assert len(_open_in(private_tmp)) == 1
    source.close()
    assert list(scan) == [] and _open_in(private_tmp) == []
