"""Traced runs per second: the `single` scenario through the full loop, written to JSONL.

Prints figures; asserts nothing (machines are shared and noisy). One core, one process.
Target (issue 2): at least 20,000 runs/s.

    python benchmarks/bench_loop.py [--runs N] [--scenario NAME]
"""
from __future__ import annotations

import argparse
import os
import tempfile
import time

from tracetui.loop.inputs import build_inputs
from tracetui.loop.runner import run_inputs
from tracetui.loop.scenarios import SCENARIOS
from tracetui.trace.writer import encode_record


def bench(scenario: str, runs: int) -> tuple[float, int]:
    template = build_inputs(scenario)
    fd, path = tempfile.mkstemp(suffix=".jsonl")
    written = 0
    start = time.perf_counter()
    with os.fdopen(fd, "wb", buffering=1 << 20) as out:
        for i in range(runs):
            result = run_inputs(f"{scenario}-{i}", template)
            for record in result.records:
                line = encode_record(record)
                written += len(line)
                out.write(line)
    elapsed = time.perf_counter() - start
    os.unlink(path)
    return runs / elapsed, written


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=50_000)
    parser.add_argument("--scenario", default="single", choices=sorted(SCENARIOS))
    args = parser.parse_args()
    bench(args.scenario, min(2000, args.runs))  # warm caches
    rate, size = bench(args.scenario, args.runs)
    print(f"scenario {args.scenario}: {args.runs} traced runs, {rate:,.0f} runs/s, "
          f"{size / args.runs:,.0f} bytes/run, {size / 1e6 / (args.runs / rate):,.1f} MB/s of JSONL")


if __name__ == "__main__":
    main()
