"""Triage on a big trace (issue 24): failure groups and a two-run diff, beside the plain index of the same file.

The trace is realistic (benchmarks/realistic.py: every failure's reason distinct, so the index keeps
most reasons in the file and grouping reads each back). Every figure is the min and median of
``--repeat`` (≥ 3) samples, each in a fresh process, printed as a ratio to its reference of the same run:

- grouping the index's rows (:func:`tracetui.triage.groups.group_entries`) beside the full index that
  made them, both timed in one process (imports apart); with the memory grouping adds (tracemalloc
  peak of a second pass, in bytes a run) beside the index's own;
- ``tracetui check FILE --group`` beside ``tracetui check FILE`` (processes, wall);
- a two-run diff: loading two runs (:func:`tracetui.triage.run_pair.load_run`: a ready run from the
  middle and a failed one near the end, each read only as far as its end) and
  :func:`tracetui.replay.run_diff.diff_runs` of them, beside the index; and ``tracetui diff`` as a process.

    python benchmarks/bench_triage.py                  # 64 MiB realistic, 3 samples each
    python benchmarks/bench_triage.py --size-mb 1024   # the 1 GB file of the README's figures
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import measure  # noqa: E402
from measure import TRACETUI, row  # noqa: E402
from realistic import MiB, describe, trace_file  # noqa: E402

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
HERE = Path(__file__).resolve()


def child_group(path: str) -> None:
    """Index the file, then group its rows; both timed here, then the grouping's memory on a second pass."""
    import tracemalloc

    from tracetui.trace.index import IndexedSource
    from tracetui.triage.groups import FailureGrouper

    t0 = time.perf_counter()
    src = IndexedSource([path])
    for _ in src.scan():
        pass
    t1 = time.perf_counter()
    rows = src.runs()
    grouper = FailureGrouper()
    grouper.add_entries(rows)
    groups = grouper.groups()
    t2 = time.perf_counter()
    tracemalloc.start()
    again = FailureGrouper()
    again.add_entries(rows)
    again.groups()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    print(json.dumps({"index_s": t1 - t0, "group_s": t2 - t1, "runs": len(rows), "groups": len(groups),
                      "failed": grouper.failed, "signatures": grouper.signatures_computed,
                      "reasons": grouper.reasons_seen, "group_peak": peak}))


def child_diff(path: str, a: str, b: str) -> None:
    """Load two runs of the file and diff them, timed here."""
    t0 = time.perf_counter()
    from tracetui.replay.run_diff import diff_runs
    from tracetui.triage.run_pair import load_run

    t1 = time.perf_counter()
    run_a, run_b = load_run(path, a), load_run(path, b)
    t2 = time.perf_counter()
    diff = diff_runs(run_a, run_b)
    t3 = time.perf_counter()
    print(json.dumps({"import_s": t1 - t0, "load_s": t2 - t1, "diff_s": t3 - t2, "rows": len(diff.rows),
                      "divergence": diff.first_divergence}))


def two_runs(path: Path) -> tuple[str, str]:
    """A ready run from the middle of the file and a failed one near its end (by their summary lines)."""
    import orjson

    def summaries(at: int, span: int = 4 * MiB) -> list[dict]:
        with open(path, "rb") as f:
            f.seek(max(0, at))
            f.readline()
            found = []
            for line in f.read(span).splitlines()[:-1]:
                if line.startswith(b'{"rec":"summary"'):
                    found.append(orjson.loads(line))
            return found

    size = path.stat().st_size
    ready = next(s["run_id"] for s in summaries(size // 2) if s.get("status") == "answer_ready")
    failed = [s["run_id"] for s in summaries(size - 4 * MiB) if s.get("status") != "answer_ready"][-1]
    return ready, failed


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--size-mb", type=int, default=64, help="trace size in MiB (default 64; the 1 GB figures: 1024)")
    ap.add_argument("--repeat", type=int, default=3, help="samples per figure (at least 3)")
    ap.add_argument("--child-group", help=argparse.SUPPRESS)
    ap.add_argument("--child-diff", nargs=3, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child_group:
        return child_group(args.child_group)
    if args.child_diff:
        return child_diff(*args.child_diff)
    repeat = max(3, args.repeat)
    path, meta = trace_file(args.size_mb)
    measure.run([*TRACETUI, "check", str(path)])  # the file in the page cache, as for every figure below
    measure.header(f"bench_triage: {path.name}: {describe(meta)}")
    measure.columns()

    inner = [json.loads(measure.run([sys.executable, str(HERE), "--child-group", str(path)], capture=True)
                        .extra["stdout"].strip().splitlines()[-1]) for _ in range(repeat)]
    first = inner[0]
    index_s = [r["index_s"] for r in inner]
    row("group the index's rows", [r["group_s"] for r in inner], index_s, "full index",
        note=f"({first['failed']:,} failed of {first['runs']:,} runs in {first['groups']} groups; "
             f"{first['reasons']:,} reasons read, {first['signatures']:,} redacted and masked)")
    per_run = [r["group_peak"] / r["runs"] for r in inner]
    row("  memory grouping adds, per run", per_run, [400.0] * len(per_run), "index's ~400 B/run (bench_open)",
        unit="B", note=f"({statistics.median(r['group_peak'] for r in inner) / MiB:.1f} MiB peak for "
                       f"{first['runs']:,} runs)")

    grouped, plain = [], []
    for _ in range(repeat):  # in turn, as the load drifts
        grouped.append(measure.run([*TRACETUI, "check", str(path), "--group"]))
        plain.append(measure.run([*TRACETUI, "check", str(path)]))
    row("tracetui check --group", [s.wall for s in grouped], [s.wall for s in plain], "tracetui check")
    row("  its peak RSS", [s.rss_mb + s.worker_rss_mb for s in grouped],
        [s.rss_mb + s.worker_rss_mb for s in plain], "tracetui check", unit="MiB")

    a, b = two_runs(path)
    diffs = [json.loads(measure.run([sys.executable, str(HERE), "--child-diff", str(path), a, b], capture=True)
                        .extra["stdout"].strip().splitlines()[-1]) for _ in range(repeat)]
    row("diff: load two runs (middle, near the end)", [d["load_s"] for d in diffs], index_s, "full index",
        note=f"({a} and {b})")
    row("diff: diff_runs of them", [d["diff_s"] for d in diffs], index_s, "full index",
        note=f"({diffs[0]['rows']} rows; {diffs[0]['divergence'] or 'no divergence'})"[:120])
    cli = [measure.run([*TRACETUI, "diff", f"{path}:{a}", f"{path}:{b}"]) for _ in range(repeat)]
    row("tracetui diff FILE:A FILE:B (process)", [s.wall for s in cli], [s.wall for s in plain], "tracetui check",
        note=f"(exit {cli[0].code})")


if __name__ == "__main__":
    main()
