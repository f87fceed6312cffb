"""A huge run in the explorer: the main screen's lanes and the two-run compare (``m`` then ``d``) on a run
of ~20,000 events, beside the same screens on a run of ~20 events measured in the same process.

The runs are recordings of the built-in loop (benchmarks/realistic.py's ``long_run_file``: ``calls - 1``
reads of distinct orders, then an unbacked answer), ~5 events a call; the trace holds the run and a copy
whose middle read names another order (the compare's first divergence). Each figure is timed in a headless
app (Textual's ``run_test``, 160×45) from the key to the screen painted (``pilot.pause``), the min and
median of ``--repeat`` (≥ 3) samples, wall and this process's CPU (the compare loads and aligns on a
thread: its CPU is counted), printed as a ratio huge / small. A move that cost what changes on screen
has a ratio near 1; opening the compare pays for reading and aligning both runs, so it is also set beside
that work done without a screen (its ratio near 1: the screen adds little).

    python benchmarks/bench_huge_run.py                 # 4,000 calls (~20,000 events), 3 samples each
    python benchmarks/bench_huge_run.py --calls 1000 --repeat 5
"""
from __future__ import annotations

import argparse
import asyncio
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from measure import OUT, Sample, header, lo_med, row  # noqa: E402
from realistic import long_run_file  # noqa: E402

SIZE = (160, 45)
MOVES = 5


def pair_file(calls: int) -> Path:
    """The long run of ``calls`` calls and a copy (id ``…-b``) whose middle read names another order."""
    path = OUT / f"huge-pair-{calls}-calls.jsonl"
    if path.exists():
        return path
    lines = long_run_file(calls).read_bytes().splitlines(keepends=True)
    run_id = f"long-{calls}".encode()
    middle = b'o-%d\\"' % (calls // 2)
    copy = [line.replace(b'"run_id":"%s"' % run_id, b'"run_id":"%s-b"' % run_id).replace(middle, b'o-0\\"')
            for line in lines]
    tmp = path.with_suffix(".tmp")
    tmp.write_bytes(b"".join(lines + copy))
    os.replace(tmp, path)
    return path


def _clock() -> tuple[float, float]:
    return time.perf_counter(), time.process_time()


def _since(start: tuple[float, float]) -> Sample:
    wall, cpu = _clock()
    return Sample(wall - start[0], cpu - start[1])


async def _screens(path: Path) -> dict[str, Sample]:
    """One sample of each figure on the trace at ``path`` (its first run, then the pair compared)."""
    from tracetui.ui.app import TraceApp, open_paths
    from tracetui.ui.screens.run_diff import RunDiffScreen
    from tracetui.ui.widgets.run_list import RunList
    from tracetui.ui.widgets.swimlanes import SwimLanes

    figures: dict[str, Sample] = {}
    app = TraceApp(open_paths([str(path)]))
    async with app.run_test(size=SIZE) as pilot:
        main = app.screen
        while getattr(main, "scanning", False) or len(main.query_one(RunList).entries) < 2:
            await pilot.pause(0.02)
        runs, lanes = main.query_one(RunList), main.query_one(SwimLanes)
        runs.select_index(1)  # the copy first: opening the first run below is a change of run
        await pilot.pause()
        start = _clock()
        runs.select_index(0)
        await pilot.pause()
        figures["main: open the run"] = _since(start)
        assert len(lanes.events) > 0
        lanes.focus()
        await pilot.pause()
        at = lanes.cursor  # (on the first failure: the run's last step here)
        start = _clock()
        for _ in range(MOVES):
            await pilot.press("left")
            await pilot.pause()
        move = figures["main: one ← move"] = _since(start)
        move.wall, move.cpu = move.wall / MOVES, move.cpu / MOVES
        assert lanes.cursor == at - MOVES
        runs.focus()
        await pilot.press("m")
        runs.select_index(1)
        await pilot.pause()
        start = _clock()
        await pilot.press("d")
        while not isinstance(app.screen, RunDiffScreen):
            await pilot.pause(0.005)
        await pilot.pause()
        figures["compare: open (load, align, paint)"] = _since(start)
        screen = app.screen
        start = _clock()
        for _ in range(MOVES):
            await pilot.press("right")
            await pilot.pause()
        move = figures["compare: one → move"] = _since(start)
        move.wall, move.cpu = move.wall / MOVES, move.cpu / MOVES
        start = _clock()
        await pilot.press("f")
        await pilot.pause()
        figures["compare: f (first divergence)"] = _since(start)
        assert screen.row == (screen.diff.first_index or 0)
    return figures


def _core(path: Path) -> Sample:
    """What opening the compare cannot skip, without a screen: both runs read from the index and aligned."""
    from tracetui.replay.run_diff import diff_runs
    from tracetui.trace.index import IndexedSource

    with IndexedSource([str(path)]).scan_all() as source:
        entries = list(source.runs())
        start = _clock()
        diff = diff_runs(source.load(entries[0]), source.load(entries[1]))
        diff.differing
        return _since(start)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--calls", type=int, default=4000)
    ap.add_argument("--small-calls", type=int, default=4)
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    huge, small = pair_file(a.calls), pair_file(a.small_calls)
    from tracetui.trace.reader import read_trace

    events = {p: len(next(iter(read_trace(str(p)).runs.values())).events) for p in (huge, small)}
    samples: dict[Path, list[dict[str, Sample]]] = {huge: [], small: []}
    for _ in range(max(3, a.repeat)):
        for p in (small, huge):
            samples[p].append(asyncio.run(_screens(p)))
    header(f"a run of {events[huge]:,} events (two in {huge.name}, {huge.stat().st_size / 2**20:.0f} MiB) beside one "
           f"of {events[small]} events, headless {SIZE[0]}×{SIZE[1]}")
    print(f"   {'figure':<46} {'huge run min / median':>22}   {'small run min / median':<42} {'ratio':>6}")
    for name in samples[huge][0]:
        for kind in ("wall", "cpu"):
            ours = [getattr(s[name], kind) for s in samples[huge]]
            ref = [getattr(s[name], kind) for s in samples[small]]
            row(f"{name} ({kind})", ours, ref, "small", unit="ms")
    core = [_core(huge) for _ in range(max(3, a.repeat))]
    for kind in ("wall", "cpu"):
        row(f"compare: open ({kind}) beside its core work", [getattr(s["compare: open (load, align, paint)"], kind)
                                                        for s in samples[huge]],
            [getattr(c, kind) for c in core], "load 2 runs + align", unit="ms")
    lo, med = lo_med([s["main: one ← move"].wall for s in samples[huge]])
    print(f"   a move on the huge run: {med * 1000:.1f} ms median (min {lo * 1000:.1f} ms)")


if __name__ == "__main__":
    main()
