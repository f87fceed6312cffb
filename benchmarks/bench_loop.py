"""Traced runs per second: the `single` scenario through the full loop, written to JSONL.

Prints figures; asserts nothing (machines are shared and noisy). One core, one process.
Target (issue 2): at least 20,000 runs/s.

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
import tempfile
import time

from tracetui.loop.inputs import build_inputs
from tracetui.loop.runner import run_inputs
from tracetui.loop.scenarios import SCENARIOS
from tracetui.providers import fake
from tracetui.trace.writer import write_trace_runs


def bench(scenario: str, runs: int) -> tuple[float, int]:
    """(runs per second, bytes written) for ``runs`` runs of one scenario."""
    template = build_inputs(scenario)
    fd, path = tempfile.mkstemp(suffix=".jsonl")
    os.close(fd)
    try:
        start = time.perf_counter()
        write_trace_runs(path, (run_inputs(f"{scenario}-{i}", template).records for i in range(runs)))
        elapsed = time.perf_counter() - start
        return runs / elapsed, os.path.getsize(path)
    finally:
        os.unlink(path)


def rates(scenario: str, runs: int, repeat: int) -> tuple[list[float], int]:
    bench(scenario, min(2000, runs))  # warm caches
    measured = [bench(scenario, runs) for _ in range(repeat)]
    return [rate for rate, _ in measured], measured[0][1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=50_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--scenario", default="single", choices=sorted(SCENARIOS))
    args = parser.parse_args()
    warm, size = rates(args.scenario, args.runs, args.repeat)
    print(f"scenario {args.scenario}: {args.runs} traced runs written to JSONL, {args.repeat} times: "
          f"best {max(warm):,.0f} runs/s, median {statistics.median(warm):,.0f} runs/s "
          f"({size / args.runs:,.0f} bytes/run, {size / 1e6 * statistics.median(warm) / args.runs:,.1f} MB/s)")
    cache_size = fake.REPLY_CACHE_SIZE
    fake.REPLY_CACHE_SIZE = 0
    try:
        cold, _ = rates(args.scenario, args.runs, args.repeat)
    finally:
        fake.REPLY_CACHE_SIZE = cache_size
    print(f"  with the scripted model answering every request (reply cache off): "
          f"best {max(cold):,.0f} runs/s, median {statistics.median(cold):,.0f} runs/s")


if __name__ == "__main__":
    main()
