"""Traced runs per second: the `single` scenario through the full loop, written to JSONL.

Prints figures; asserts nothing (machines are shared and noisy). One core, one process.
Target (issue 2): at least 20,000 runs/s; the table says whether the median met it.
The reference is writing the same records with orjson alone (made once, no loop, no
redaction): the floor of producing the bytes. Min and median of ``--repeat`` (≥ 3).

Runs are written the way ``tracetui generate`` writes them: encoded and redacted run
by run into an atomically replaced file. The built-in provider answers a request it
has answered before from its reply cache (its scripted model is a pure function of
the request), so the main figure measures the loop, tracing and writing; the second
figure runs the scripted model for every request.

    python benchmarks/bench_loop.py [--runs N] [--repeat N] [--scenario NAME]
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent))

import measure  # noqa: E402
from measure import row  # noqa: E402
from tracetui.loop.inputs import build_inputs  # noqa: E402
from tracetui.loop.runner import run_inputs  # noqa: E402
from tracetui.loop.scenarios import SCENARIOS  # noqa: E402
from tracetui.providers import fake  # noqa: E402
from tracetui.trace.writer import write_trace_runs  # noqa: E402

#: runs per second (issue 2)
TARGET = 20_000


def bench(scenario: str, runs: int) -> tuple[float, int]:
    """(seconds, bytes written) for ``runs`` runs of one scenario."""
    template = build_inputs(scenario)
    fd, path = tempfile.mkstemp(suffix=".jsonl")
    os.close(fd)
    try:
        start = time.perf_counter()
        write_trace_runs(path, (run_inputs(f"{scenario}-{i}", template).records for i in range(runs)))
        return time.perf_counter() - start, os.path.getsize(path)
    finally:
        os.unlink(path)


def plain_write(scenario: str, runs: int) -> float:
    """The reference: the same runs' records, made once, written ``runs`` times with orjson alone (no loop, no
    redaction, no atomic replace): the floor of writing the bytes."""
    records = run_inputs(scenario, build_inputs(scenario)).records
    fd, path = tempfile.mkstemp(suffix=".jsonl")
    os.close(fd)
    try:
        start = time.perf_counter()
        with open(path, "wb") as out:
            for i in range(runs):
                out.write(b"".join(orjson.dumps(r, option=orjson.OPT_APPEND_NEWLINE) for r in records))
        return time.perf_counter() - start
    finally:
        os.unlink(path)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=5_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--scenario", default="single", choices=sorted(SCENARIOS))
    args = parser.parse_args()
    repeat = max(3, args.repeat)
    bench(args.scenario, min(2000, args.runs))  # warm caches
    measured = [bench(args.scenario, args.runs) for _ in range(repeat)]
    warm = [t for t, _ in measured]
    reference = [plain_write(args.scenario, args.runs) for _ in range(repeat)]
    cache_size = fake.REPLY_CACHE_SIZE
    fake.REPLY_CACHE_SIZE = 0
    try:
        cold = [bench(args.scenario, args.runs)[0] for _ in range(repeat)]
    finally:
        fake.REPLY_CACHE_SIZE = cache_size
    size = measured[0][1]
    measure.header(f"bench_loop: {args.runs:,} runs of {args.scenario} through the loop, written to JSONL "
                   f"({size / args.runs:,.0f} bytes/run), one process")
    measure.columns("plain orjson write")
    rate = args.runs / statistics.median(warm)
    row("traced runs, reply cache on (s per batch)", warm, reference, "same records",
        note=f"({args.runs / min(warm):,.0f} / {rate:,.0f} runs/s best / median; target 20,000 runs/s: "
        f"{'met' if rate >= TARGET else 'MISSED'} at the median)")
    cold_rate = args.runs / statistics.median(cold)
    row("traced runs, scripted model every call", cold, reference, "same records",
        note=f"({cold_rate:,.0f} runs/s at the median)")


if __name__ == "__main__":
    main()
