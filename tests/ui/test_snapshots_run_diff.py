"""SVG snapshots of the two-run compare (m, then d) at 80×24 and 200×60.

Update with ``pytest tests/ui/test_snapshots_run_diff.py --snapshot-update`` and look at the pictures first.
"""
from __future__ import annotations

from tracetui.ui.app import TraceApp
from tracetui.ui.widgets.run_list import RunList


def mark_then_diff(marked: str, other: str, steps: int = 0):
    async def run_before(pilot) -> None:
        await pilot.pause()
        runs = pilot.app.screen.query_one(RunList)
        runs.select_index(next(i for i, e in enumerate(runs.entries) if e.run_id == marked))
        await pilot.press("m")
        runs.select_index(next(i for i, e in enumerate(runs.entries) if e.run_id == other))
        await pilot.press("d")
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()
        for _ in range(steps):
            await pilot.press("right")
        await pilot.pause()
        pilot.app.clear_notifications()
        await pilot.pause()
    return run_before


def test_run_diff_narrow(snap_compare, demo):
    assert snap_compare(TraceApp(demo), terminal_size=(80, 24), run_before=mark_then_diff("single", "cross_tenant"))


def test_run_diff_wide(snap_compare, demo):
    assert snap_compare(TraceApp(demo), terminal_size=(200, 60),
                        run_before=mark_then_diff("single", "single-fault-429", steps=2))
