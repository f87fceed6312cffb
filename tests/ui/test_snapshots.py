"""SVG snapshots of the main screen, detail pane, help and problems at fixed sizes.

Update with ``pytest tests/ui --snapshot-update`` and look at the pictures before committing.
"""
from __future__ import annotations

from tracetui.trace.index import IndexedSource
from tracetui.ui.app import TraceApp
from tracetui.ui.widgets.detail import DetailPane
from tracetui.ui.widgets.run_list import RunList
from tracetui.ui.widgets.swimlanes import SwimLanes

from ui_helpers import encode, write_lines


def select_run(run_id: str, seq: int | None = None):
    async def run_before(pilot) -> None:
        await pilot.pause()
        runs = pilot.app.screen.query_one(RunList)
        runs.select_index(next(i for i, e in enumerate(runs.entries) if e.run_id == run_id))
        await pilot.pause()
        if seq is not None:
            pilot.app.screen.query_one(SwimLanes).select_seq(seq)
            pilot.app.screen.query_one(DetailPane).focus()
        await pilot.pause()
    return run_before


def test_main_screen_cross_tenant(snap_compare, demo):
    assert snap_compare(TraceApp(demo), terminal_size=(160, 45), run_before=select_run("cross_tenant"))


def test_main_screen_wide(snap_compare, demo):
    assert snap_compare(TraceApp(demo), terminal_size=(200, 50), run_before=select_run("single-fault-429"))


def test_main_screen_narrow(snap_compare, demo):
    assert snap_compare(TraceApp(demo), terminal_size=(80, 24), run_before=select_run("cross_tenant"))


def test_detail_pane_with_call_partners(snap_compare, demo):
    assert snap_compare(TraceApp(demo), terminal_size=(160, 45), run_before=select_run("parallel", seq=7))


def test_help_screen(snap_compare, demo):
    assert snap_compare(TraceApp(demo), terminal_size=(100, 40), press=["question_mark"])


def test_problems_screen(snap_compare, tmp_path, scenario_records):
    good = [encode(r) for r in scenario_records]
    lines = good[:10] + [b'{"rec":"event", broken', b"\xff\xfe not utf-8", b"[1,2]", b"x" * 300] + good[10:]
    path = write_lines(tmp_path / "bad.jsonl", lines)
    source = IndexedSource([path], label="bad.jsonl")

    async def run_before(pilot) -> None:
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()
        await pilot.press("p")
        await pilot.pause()

    assert snap_compare(TraceApp(source), terminal_size=(100, 24), run_before=run_before)
