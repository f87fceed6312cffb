"""Edit-to-new-verdict latency for a typical run, and until the compare view is drawn.

Prints figures; asserts nothing. Targets (issue 4): ≤ 20 ms in the core,
≤ 100 ms until the compare view is drawn.

    python benchmarks/bench_replay.py [--repeat N]
"""
from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from pathlib import Path

from tracetui.replay.replay import replay
from tracetui.trace.reader import read_trace

SAMPLE = Path(__file__).resolve().parent.parent / "sample_traces" / "scenarios.jsonl"
EDIT = ("/responses/0/body/output/0/arguments", '{"order_id": "o-1"}')


def core(repeat: int) -> list[float]:
    run = read_trace(SAMPLE).runs["cross_tenant"]
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        outcome = replay(run, [EDIT])
        assert outcome.after["ready"]
        times.append((time.perf_counter() - start) * 1000)
    return times


async def compare_view(repeat: int) -> list[float]:
    from textual.app import App

    from tracetui.ui.screens.compare import CompareScreen

    run = read_trace(SAMPLE).runs["cross_tenant"]
    times = []

    class Host(App):
        pass

    app = Host()
    async with app.run_test(size=(160, 45)) as pilot:
        for _ in range(repeat):
            start = time.perf_counter()
            screen = CompareScreen(replay(run, [EDIT]), str(SAMPLE))
            await app.push_screen(screen)
            await pilot.pause()  # until the screen has been composed, laid out and refreshed
            times.append((time.perf_counter() - start) * 1000)
            app.pop_screen()
            await pilot.pause()
    return times


def show(label: str, times: list[float]) -> None:
    print(f"{label}: median {statistics.median(times):.2f} ms, p90 {sorted(times)[int(len(times) * 0.9)]:.2f} ms "
          f"over {len(times)} edits")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=200)
    args = parser.parse_args()
    core(20)
    show("core: edit → re-run → new verdict", core(args.repeat))
    show("UI: edit → compare view drawn (headless)", asyncio.run(compare_view(max(10, args.repeat // 10))))


if __name__ == "__main__":
    main()
