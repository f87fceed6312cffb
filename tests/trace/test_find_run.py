"""``replay --run`` reads what its run costs: a small file through the reader (no scanner, no numpy to import),
a big one only as far as the run's summary."""
from __future__ import annotations

import subprocess
import sys

import orjson

from tracetui.trace import checking
from tracetui.trace.checking import find_run
from tracetui.trace.reader import read_trace


def test_a_run_of_a_small_file_is_the_readers_and_needs_no_scanner(root):
    """Replay of a sample paid ~0.1 s importing numpy and the index before reading 90 KB: more than explain."""
    sample = root / "sample_traces" / "scenarios.jsonl"
    run, names, count = find_run(sample, "cross_tenant")
    assert (names, count) == ([], 0)
    whole = read_trace(sample).runs["cross_tenant"]
    assert (run.run, run.events, run.summary) == (whole.run, whole.events, whole.summary)
    code = ("import sys; from tracetui.trace.checking import find_run; "
            f"assert find_run({str(sample)!r}, 'cross_tenant')[0] is not None; "
            "print(sorted(m for m in ('numpy', 'tracetui.trace.index.scanner') if m in sys.modules))")
    shown = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert shown.stdout == "[]\n", shown.stderr


def test_a_run_near_the_start_of_a_big_file_is_read_only_that_far(root, tmp_path, monkeypatch):
    lines = (root / "sample_traces" / "scenarios.jsonl").read_bytes().splitlines(keepends=True)
    first = orjson.loads(lines[0])["run_id"]
    path = tmp_path / "big.jsonl"
    path.write_bytes(b"".join(lines) + b"".join(
        line.replace(b'"run_id":"', b'"run_id":"%d-' % k, 1) for k in range(40) for line in lines))
    monkeypatch.setattr(checking, "SMALL_FILE_BYTES", 0)  # this file counts as big
    read = []
    finder_scan = checking.StrictScan.scan

    def counted(self, chunk_bytes=None):
        for step in finder_scan(self, chunk_bytes):
            read.append(self.lines.pos)
            yield step
    monkeypatch.setattr(checking.StrictScan, "scan", counted)
    run, _, _ = find_run(path, first, chunk_bytes=16 * 1024)
    assert run.summary is not None and run.run_id == first
    assert read[-1] < path.stat().st_size // 10
