"""Big traces end to end, as the commands users run, beside a plain script on the same file in the same run.

The trace is realistic by default (benchmarks/realistic.py: distinct ids, reasons, amounts;
response sizes log-normal); ``--replicated`` measures the replicated file instead, labelled as the
best case it is. Every figure is the min and median of ``--repeat`` (≥ 3) samples, each in a fresh
process (a figure's samples taken in turn with its reference's, as the load drifts), printed as
tracetui / reference (one direction: below 1.00 tracetui is faster or smaller):

- references: reading the file and counting newlines; a plain orjson line filter (the failed runs'
  summaries) as someone would write it, with its CPU time and peak RSS;
- ``tracetui check FILE`` (one process: it starts no other):
  wall time, CPU and peak RSS; and check's peak RSS on a file a quarter of the size, for the growth per MiB;
- ``tracetui replay FILE --run ID`` of a run near the start, beside the same run alone in a small file;
- the full index (headless, in one fresh process) beside the newline count.

The first frame is bench_first_frame.py's (painted in a real terminal, from process start).

    python benchmarks/bench_open.py                       # 64 MiB realistic, 3 samples each
    python benchmarks/bench_open.py --size-mb 1024 --only check
    python benchmarks/bench_open.py --replicated          # the best case, labelled
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
from measure import TRACETUI, cpu_row, row  # noqa: E402
from realistic import MiB, describe, trace_file  # noqa: E402

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # as tracetui's command sets it (children inherit it)
HERE = Path(__file__).resolve()
#: a trace of one run: what check and the filter pay on it is their start-up
SMALL_TRACE = HERE.parents[1] / "sample_traces" / "fault-429.jsonl"


def child_reference(kind: str, path: str) -> None:
    """A reference reading of the file, in a process of its own."""
    import orjson

    if kind == "newlines":  # read + count newlines
        count = 0
        with open(path, "rb", buffering=0) as f:
            while block := f.read(16 * MiB):
                count += block.count(b"\n")
    elif kind == "filter":  # the plain line-by-line filter someone would write: failed runs' summaries
        out = sys.stdout.buffer
        with open(path, "rb") as f:
            for line in f:
                record = orjson.loads(line)
                if record.get("rec") == "summary" and record.get("status") != "answer_ready":
                    out.write(b"%s %s\n" % (record["run_id"].encode(), str(record.get("status")).encode()))


def child_index(path: str) -> None:
    """The full index, headless, timed inside the process (start-up apart)."""
    t0 = time.perf_counter()
    from tracetui.trace.index import IndexedSource

    imported = time.perf_counter()
    src = IndexedSource([path])
    for _ in src.scan():
        pass
    print(json.dumps({"import_s": imported - t0, "index_s": time.perf_counter() - imported, "runs": len(src.runs()),
                      "problems": len(src.problems())}))


def _child(kind: str, path: Path) -> list[str]:
    return [sys.executable, str(HERE), f"--child-{kind}", str(path)]


def near_start_run(path: Path) -> tuple[str, bytes]:
    """The second run of the file and its lines."""
    import orjson

    lines, run_id, firsts = [], None, []
    with open(path, "rb") as f:
        for line in f:
            record = orjson.loads(line)
            if record["rec"] == "run" and run_id is None:
                firsts.append(record["run_id"])
                if len(firsts) == 3:  # (the first has no summary; the second may be interleaved with it)
                    run_id = record["run_id"]
            if record["run_id"] == run_id:
                lines.append(line)
                if record["rec"] == "summary":
                    return run_id, b"".join(lines)
    raise SystemExit("no run near the start")


def series(argv, repeat, env=None) -> list[measure.Sample]:
    samples = measure.series(lambda: measure.run(argv, env), repeat)
    bad = [s for s in samples if s.code not in (0, 1)]
    if bad:
        raise SystemExit(f"{' '.join(map(str, argv))} failed: {bad[0].extra['stderr'][-500:]}")
    return samples


def interleaved(commands, repeat: int) -> list[list[measure.Sample]]:
    """Samples of each (argv, env), taken in turn (the load of a shared machine drifts: each sees the same)."""
    out: list[list[measure.Sample]] = [[] for _ in commands]
    for _ in range(max(3, repeat)):
        for samples, (argv, env) in zip(out, commands):
            samples.append(measure.run(argv, env))
    for samples, (argv, _) in zip(out, commands):
        bad = [s for s in samples if s.code not in (0, 1)]
        if bad:
            raise SystemExit(f"{' '.join(map(str, argv))} failed: {bad[0].extra['stderr'][-500:]}")
    return out


def bench_check(path: Path, size_mb: int, replicated: bool, repeat: int) -> None:
    newlines = series(_child("newlines", path), repeat)
    gb = path.stat().st_size / 1e9
    row("read + count newlines (reference)", [gb / s.wall for s in newlines], unit="GB/s")
    filt, off = interleaved([(_child("filter", path), None), ([*TRACETUI, "check", str(path)], None)], repeat)
    start = measure.startup(command=["check", str(SMALL_TRACE)])
    row("start-up: check of a one-run trace", start, [s.wall for s in series(_child("filter", SMALL_TRACE), 5)],
        "orjson filter of it", note="(the fixed part of check: imports, numpy's among them)")
    row("check: wall", [s.wall for s in off], [s.wall for s in filt], "orjson filter",
        note="(target ≤ 1.00 on realistic data)")
    cpu_row("  its CPU", off, filt, "orjson filter")
    row("check peak RSS", [s.rss_mb for s in off], [s.rss_mb for s in filt], "orjson filter", unit="MiB")
    quarter, _ = trace_file(max(1, size_mb // 4), replicated)
    small = series([*TRACETUI, "check", str(quarter)], repeat)
    big_mb, small_mb = path.stat().st_size / MiB, quarter.stat().st_size / MiB
    growth = (min(s.rss_mb for s in off) - min(s.rss_mb for s in small)) / (big_mb - small_mb) * 1024
    row(f"check peak RSS on {small_mb:.0f} MiB", [s.rss_mb for s in small], unit="MiB",
        note=f"(growth: {growth:.0f} KiB per MiB of trace between {small_mb:.0f} and {big_mb:.0f} MiB)")


def bench_replay(path: Path, repeat: int) -> None:
    run_id, lines = near_start_run(path)
    small = measure.OUT / "near-start-run.jsonl"
    small.write_bytes(lines)
    near, alone = interleaved([([*TRACETUI, "replay", str(path), "--run", run_id], None),
                               ([*TRACETUI, "replay", str(small), "--run", run_id], None)], repeat)
    row(f"replay --run {run_id} (near the start)", [s.wall for s in near], [s.wall for s in alone],
        "same run alone in a file", note="(target ≤ 0.5 s)")
    cpu_row("  its CPU", near, alone, "same run alone")


def bench_index(path: Path, repeat: int) -> None:
    newlines = series(_child("newlines", path), repeat)
    index = [measure.run(_child("index", path), capture=True) for _ in range(max(3, repeat))]
    inner = [json.loads(s.extra["stdout"].strip().splitlines()[-1]) for s in index]
    gb = path.stat().st_size / 1e9
    row("full index, headless: process wall", [s.wall for s in index], [s.wall for s in newlines],
        "read + count newlines", note=f"({inner[0]['runs']:,} runs, {inner[0]['problems']} problems)")
    cpu_row("  its CPU", index, newlines, "read + count newlines")
    row("  the scan alone (imports apart)", [r["index_s"] for r in inner], note=(
        f"({gb / statistics.median([r['index_s'] for r in inner]):.2f} GB/s at the median; imports "
        f"{statistics.median([r['import_s'] for r in inner]) * 1000:.0f} ms)"))
    row("  peak RSS", [s.rss_mb for s in index], [s.rss_mb for s in newlines], "read + count newlines", unit="MiB")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--size-mb", type=int, default=64, help="trace size in MiB (default 64; the README's 1 GB "
                    "figures: --size-mb 1024)")
    ap.add_argument("--repeat", type=int, default=3, help="samples per figure (at least 3)")
    ap.add_argument("--only", choices=["check", "replay", "index"], action="append",
                    help="measure only these (repeatable; default: everything)")
    ap.add_argument("--replicated", action="store_true", help="the replicated file: the best case, labelled")
    ap.add_argument("--child-newlines", help=argparse.SUPPRESS)
    ap.add_argument("--child-filter", help=argparse.SUPPRESS)
    ap.add_argument("--child-index", help=argparse.SUPPRESS)
    args = ap.parse_args()
    for kind in ("newlines", "filter"):
        if getattr(args, f"child_{kind}"):
            return child_reference(kind, getattr(args, f"child_{kind}"))
    if args.child_index:
        return child_index(args.child_index)
    only = set(args.only or ["check", "replay", "index"])
    path, meta = trace_file(args.size_mb, args.replicated)
    measure.run(_child("newlines", path))  # the file in the page cache, as for every figure below
    measure.header(f"bench_open: {path.name}: {describe(meta)}")
    measure.columns()
    if "check" in only:
        bench_check(path, args.size_mb, args.replicated, args.repeat)
    if "replay" in only:
        bench_replay(path, args.repeat)
    if "index" in only:
        bench_index(path, args.repeat)


if __name__ == "__main__":
    main()
