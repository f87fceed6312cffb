"""Time to the first painted run list, and to a full scan, for a large trace file.

    python benchmarks/bench_first_frame.py [RUNS] [--keep PATH]

Builds a file of about RUNS runs (copies of every built-in scenario with new run
ids), opens it in the explorer headless and reports when the first rows showed,
when the scan finished, and how long ↓, End, a text filter and a sort took.
"""
from __future__ import annotations

import asyncio
import sys
import tempfile
import time
from pathlib import Path

from tracetui.loop.runner import records_of, run_scenario
from tracetui.loop.scenarios import SCENARIOS
from tracetui.ui.app import open_paths as open_source
from tracetui.trace.writer import encode_record
from tracetui.ui.app import TraceApp
from tracetui.ui.widgets.run_list import RunList


def build(path: Path, runs: int) -> None:
    block = b"".join(encode_record(r) for r in records_of(iter(run_scenario(n) for n in SCENARIOS)))
    with open(path, "wb") as fh:
        for k in range(max(1, runs // len(SCENARIOS))):
            fh.write(block.replace(b'"run_id":"', b'"run_id":"%d-' % k))


async def measure(path: Path) -> None:
    t0 = time.perf_counter()
    app = TraceApp(open_source([str(path)]))
    async with app.run_test(size=(160, 45)) as pilot:
        runs = app.screen.query_one(RunList)
        while not runs.view:
            await pilot.pause(0.01)
        print(f"first rows painted   {time.perf_counter() - t0:7.3f} s ({len(runs.view):,} runs so far)")
        await app.workers.wait_for_complete()
        await pilot.pause()
        print(f"scan complete        {time.perf_counter() - t0:7.3f} s ({len(runs.view):,} runs)")
        for label, keys in (("↓", ["down"]), ("End", ["end"]), ("filter 'cross'", ["slash", *"cross", "enter"]),
                            ("clear + sort", ["x", "s"])):
            t = time.perf_counter()
            await pilot.press(*keys)
            await pilot.pause()
            print(f"{label:<20} {time.perf_counter() - t:7.3f} s")


def main() -> None:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 and sys.argv[1].isdigit() else 200_000
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "big.jsonl"
        t = time.perf_counter()
        build(path, runs)
        print(f"built {path.stat().st_size / 1e6:,.0f} MB in {time.perf_counter() - t:.1f} s")
        asyncio.run(measure(path))


if __name__ == "__main__":
    main()
