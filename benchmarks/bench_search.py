"""Search inside events (`/` in the explorer) over a big realistic trace, beside a raw scan of the same bytes.

The search (:mod:`tracetui.triage.event_search`) reads the indexed file in blocks, finds the text's bytes
case-insensitively, and parses and confirms (redacted, as the explorer shows it) only the lines that hold
them, skipping the rest of a run once it is found. The reference is a grep-like pass over the same file
in the same blocks: ``bytes.lower()`` and ``bytes.find`` for every occurrence, no parsing (what
``grep -ci`` does). Three texts: one no run holds (the floor: the raw pass plus mapping nothing), a
tool name in a few runs, and a word in nearly every run (each run found costs one line parsed and
redacted). Peak memory: the search's own allocations (tracemalloc, one more pass), and the process's
peak RSS with the index (which the explorer holds anyway).

    python benchmarks/bench_search.py [--size-mb 1024] [--repeat 3]
"""
from __future__ import annotations

import argparse
import resource
import sys
import time
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import measure  # noqa: E402
import realistic  # noqa: E402

from tracetui.trace.index import IndexedSource  # noqa: E402
from tracetui.triage.event_search import BLOCK_BYTES, EventSearch, Needle  # noqa: E402

TEXTS = (("a text no run holds", "zq-no-such-text"), ("a tool name in a few runs", "cancel_order"),
         ("a word in nearly every run", "refund"))


def raw_scan(path: Path, text: str) -> int:
    """Occurrences of ``text``, case aside, block by block: the grep-like reference."""
    needle, count = text.lower().encode(), 0
    with path.open("rb", buffering=0) as fh:
        while block := fh.read(BLOCK_BYTES):
            low = block.lower()
            at = low.find(needle)
            while at >= 0:
                count += 1
                at = low.find(needle, at + len(needle))
    return count


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--size-mb", type=int, default=64)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    path, meta = realistic.trace_file(args.size_mb)
    measure.header(f"search inside events: {realistic.describe(meta)}")
    t0 = time.perf_counter()
    source = IndexedSource([path]).scan_all()
    index_s = time.perf_counter() - t0
    runs = len(source.runs())
    print(f"   indexed in {index_s:.1f} s ({runs:,} runs); each figure: the whole file searched")
    measure.columns("raw lower+find")
    for label, text in TEXTS:
        found: list[int] = []
        ours = measure.series(lambda: measure.in_process(
            lambda: found.append(len(EventSearch(source, Needle.of(text)).all()))), args.repeat)
        hits: list[int] = []
        ref = measure.series(lambda: measure.in_process(lambda: hits.append(raw_scan(path, text))), args.repeat)
        measure.row(f"{label} ({found[-1]:,} runs found)", [s.wall for s in ours], [s.wall for s in ref],
                    "raw", note=f"({hits[-1]:,} occurrences)")
    for label, text in TEXTS[1:]:
        tracemalloc.start()
        EventSearch(source, Needle.of(text)).all()
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        print(f"   peak memory of the search, {label}: {peak / 2 ** 20:.1f} MiB (its own allocations)")
    print(f"   peak RSS of this process (the index included): "
          f"{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB")
    source.close()


if __name__ == "__main__":
    main()
