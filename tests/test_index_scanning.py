"""The explorer's index as the UI uses it: several files, progress while scanning, runs read while a
thread scans, and the file left as it was (split from test_index.py, whose helpers these use)."""
from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from tracetui.trace.index import IndexedSource, ScanProgress
from tracetui.trace.reader import TraceReadError

from test_index import _runs, all_lines, reference, write


# -- several files, the API the UI uses ------------------------------------------------------
def test_several_files(tmp_path):
    a = write(tmp_path, b"".join(_runs()[0][1]) + b"".join(_runs()[1][1]), "a.jsonl")
    b = write(tmp_path, b"garbage\n" + b"".join(_runs()[1][1]), "b.jsonl")
    empty = write(tmp_path, b"", "c.jsonl")
    src = IndexedSource([a, b, empty]).scan_all(100)
    assert [(e.source, e.run_id) for e in src.runs()] == [(0, _runs()[0][0]), (0, _runs()[1][0]), (1, _runs()[1][0])]
    assert [(p.path, p.line) for p in src.problems()] == [(b, 1), (empty, 0)]
    same_id = [e for e in src.runs() if e.run_id == _runs()[1][0]]
    assert src.load(same_id[0]).first_line == len(_runs()[0][1]) + 1
    assert src.load(same_id[1]).first_line == 2
    assert src.load(same_id[0]).events == src.load(same_id[1]).events


def test_every_file_empty(tmp_path):
    with pytest.raises(TraceReadError, match="every file is empty"):
        IndexedSource([write(tmp_path, b"", "a"), write(tmp_path, b"", "b")])


def test_scan_progress_and_partial_runs(tmp_path):
    path = write(tmp_path, all_lines())
    size = os.path.getsize(path)
    src = IndexedSource([path])
    assert src.runs() == [] and not src.done
    steps = list(src.scan(8192))  # a chunk holds the first run or two, far less than the file
    assert all(isinstance(s, ScanProgress) for s in steps)
    assert steps[0].runs > 0 and steps[0].bytes_done < size  # runs show before the scan ends
    assert [s.bytes_done for s in steps] == sorted(s.bytes_done for s in steps)
    assert steps[-1].done and steps[-1].fraction == 1.0 and steps[-1].bytes_done == size
    assert 0 < steps[0].fraction < 1
    assert steps[-1].runs == len(src.runs()) == len(_runs())
    assert src.done
    assert list(src.scan()) == [steps[-1]]  # scanning again finds nothing new


def test_runs_list_only_grows_while_scanning(tmp_path):
    src = IndexedSource([write(tmp_path, all_lines())])
    seen = src.runs()
    snapshots = []
    for _ in src.scan(2048):
        assert src.runs() is seen
        snapshots.append(list(seen))
    for earlier, later in zip(snapshots, snapshots[1:]):
        assert later[:len(earlier)] == earlier


def test_scan_resumes_after_an_early_stop(tmp_path):
    path = write(tmp_path, all_lines())
    src = IndexedSource([path])
    gen = src.scan(1000)
    next(gen)
    next(gen)
    gen.close()
    src.scan_all()
    assert {e.run_id: e for e in src.runs()} == reference(path)[1]


def scan_in_a_thread(src: IndexedSource, chunk: int) -> tuple[threading.Thread, list[Exception]]:
    """The scan run as the explorer runs it, in a thread (started); the errors it raised."""
    errors: list[Exception] = []

    def scan():
        try:
            for _ in src.scan(chunk):
                pass
        except Exception as exc:  # pragma: no cover - reported by the caller
            errors.append(exc)
    thread = threading.Thread(target=scan)
    thread.start()
    return thread, errors


def test_scan_in_a_thread_while_reading_runs(tmp_path):
    path = write(tmp_path, all_lines() * 1)
    src = IndexedSource([path])
    thread, errors = scan_in_a_thread(src, 512)
    counts = []
    while thread.is_alive():
        entries = src.runs()
        counts.append(len(entries))
        if entries:
            src.load(entries[-1])
        src.problems()
    thread.join()
    assert errors == []
    assert counts == sorted(counts)
    assert {e.run_id: e for e in src.runs()} == reference(path)[1]


def test_a_second_concurrent_scan_is_refused(tmp_path):
    src = IndexedSource([write(tmp_path, all_lines())])
    gen = src.scan(1000)
    next(gen)
    with pytest.raises(RuntimeError, match="already being scanned"):
        next(src.scan())
    gen.close()


def test_the_file_is_never_modified(tmp_path):
    data = all_lines()
    path = write(tmp_path, data)
    before = os.stat(path)
    with IndexedSource([path]) as src:
        src.scan_all(999)
        for entry in src.runs():
            src.load(entry)
    after = os.stat(path)
    assert Path(path).read_bytes() == data
    assert (before.st_mtime_ns, before.st_size) == (after.st_mtime_ns, after.st_size)


def test_index_module_does_not_import_textual():
    import subprocess
    import sys

    code = "import sys, tracetui.trace.index; print('textual' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
