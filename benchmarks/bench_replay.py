"""Replay as the command users run, beside explain of the same run; and the edit-to-verdict latency inside.

Prints figures; asserts nothing. As commands (each sample a fresh process, min and median of
``--commands`` ≥ 3, ratio tracetui / reference): ``tracetui replay FILE --run ID`` with no edit and
with one edit, beside ``tracetui explain FILE --run ID`` of the same run (explain runs several
replays, so a replay must never cost more: target ≤ 1.00), on the samples and on one run of 900
model calls; and explain beside the start-up every command pays (``python -c "import tracetui.cli"``).
Inside one process (targets of issue 4): ≤ 20 ms in the core, ≤ 100 ms until the compare view is
drawn, each beside a no-edit replay of the same run.

    python benchmarks/bench_replay.py [--repeat N] [--commands N]
"""
from __future__ import annotations

import argparse
import asyncio
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import measure  # noqa: E402
from measure import TRACETUI, row  # noqa: E402
from realistic import long_run_file  # noqa: E402
from tracetui.replay.replay import replay  # noqa: E402
from tracetui.trace.reader import read_trace  # noqa: E402

SAMPLE = Path(__file__).resolve().parent.parent / "sample_traces" / "scenarios.jsonl"
EDIT = ("/responses/0/body/output/0/arguments", '{"order_id": "o-1"}')


def core(repeat: int) -> list[float]:
    run = read_trace(SAMPLE).runs["cross_tenant"]
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        outcome = replay(run, [EDIT])
        assert outcome.after["status"] != "permission_denied"  # the edit took
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


def no_edit(repeat: int) -> list[float]:
    run = read_trace(SAMPLE).runs["cross_tenant"]
    return [measure.in_process(lambda: replay(run)).wall * 1000 for _ in range(repeat)]


def commands(repeat: int) -> None:
    measure.header("bench_replay: replay and explain as commands (a fresh process each)")
    measure.columns()
    start = measure.startup(repeat)
    row("start-up: python -c 'import tracetui.cli'", start)
    edit = "--set=" + EDIT[0] + "=" + EDIT[1]
    for path, run_id, edits in ((SAMPLE, "cross_tenant", [edit]), (long_run_file(900), "long-900", [])):
        label = "samples" if path == SAMPLE else "900 calls"

        def timed(*argv: str) -> list[float]:
            return [s.wall for s in measure.series(lambda: measure.run([*TRACETUI, *argv]), repeat)]
        explained = timed("explain", str(path), "--run", run_id)
        row(f"explain --run {run_id} ({label})", explained, start, "start-up")
        row(f"replay --run {run_id}, no edit", timed("replay", str(path), "--run", run_id), explained,
            "explain", note="(target ≤ 1.00)")
        if edits:
            row(f"replay --run {run_id}, one edit", timed("replay", str(path), "--run", run_id, *edits), explained,
                "explain", note="(for scale: the edited run does more)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=200, help="edits timed inside one process")
    parser.add_argument("--commands", type=int, default=3, help="samples of each command (at least 3)")
    args = parser.parse_args()
    commands(max(3, args.commands))
    core(20)
    measure.header("bench_replay: inside one process (imports done, trace read)")
    measure.columns()
    reference = no_edit(args.repeat)
    row("core: edit → re-run → new verdict", [t / 1000 for t in core(args.repeat)], [t / 1000 for t in reference],
        "replay, no edit", unit="ms", note="(target ≤ 20 ms)")
    row("UI: edit → compare view drawn (headless)", [t / 1000 for t in asyncio.run(compare_view(
        max(10, args.repeat // 10)))], [t / 1000 for t in reference], "replay, no edit", unit="ms",
        note="(target ≤ 100 ms)")


if __name__ == "__main__":
    main()
