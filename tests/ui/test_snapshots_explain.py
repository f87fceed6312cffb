"""SVG snapshots of the fixes panel, the inputs tree, and the screens at 80×24.

Update with ``pytest tests/ui --snapshot-update`` and look at the pictures before committing
(``rsvg-convert -o x.png file.svg``).
"""
from __future__ import annotations

from textual.widgets import Tree

from tracetui.trace.index import IndexedSource
from tracetui.ui.app import TraceApp
from tracetui.ui.screens.compare import CompareScreen
from tracetui.ui.screens.fixes import FixesScreen

from test_replay_ui import edit, open_run
from ui_helpers import wait_until


def app_for(path: str) -> TraceApp:
    return TraceApp(IndexedSource([path], label="scenarios.jsonl"))  # a stable header for the picture


def fixes_of(run_id: str):
    async def run_before(pilot) -> None:
        await open_run(pilot, run_id)
        await pilot.press("E")
        await wait_until(pilot, lambda: isinstance(pilot.app.screen, FixesScreen) and pilot.app.screen.done, 100)
        await pilot.pause()
    return run_before


def test_fixes_panel(snap_compare, scenarios_file):
    assert snap_compare(app_for(scenarios_file), terminal_size=(160, 45), run_before=fixes_of("cross_tenant"))


def test_fixes_panel_80x24(snap_compare, scenarios_file):
    assert snap_compare(app_for(scenarios_file), terminal_size=(80, 24), run_before=fixes_of("refusal"))


def inputs_with(*opened: str):
    async def run_before(pilot) -> None:
        await open_run(pilot, "cross_tenant")
        await pilot.press("i")
        await pilot.pause()
        tree = pilot.app.screen.query_one(Tree)
        for key in opened:
            node = next(n for n in tree.root.children if n.data[0][-1] == key)
            node.expand()
            await pilot.pause()
        tree.move_cursor(next(n for n in tree.root.children if n.data[0][-1] == opened[-1]))
        await pilot.pause()
    return run_before


def test_inputs_tree(snap_compare, scenarios_file):
    assert snap_compare(app_for(scenarios_file), terminal_size=(120, 40),
                        run_before=inputs_with("principal", "budgets"))


def test_inputs_tree_80x24(snap_compare, scenarios_file):
    assert snap_compare(app_for(scenarios_file), terminal_size=(80, 24), run_before=inputs_with("principal"))


def test_compare_view_80x24(snap_compare, scenarios_file):
    async def run_before(pilot) -> None:
        await open_run(pilot, "unknown_tool", seq=3)
        await edit(pilot, "/responses/0/body/output/0/name", "read_order")
        await wait_until(pilot, lambda: isinstance(pilot.app.screen, CompareScreen))
        await pilot.pause()

    assert snap_compare(app_for(scenarios_file), terminal_size=(80, 24), run_before=run_before)


def test_help_screen_80x24(snap_compare, scenarios_file):
    async def run_before(pilot) -> None:
        await open_run(pilot, "cross_tenant")
        await pilot.press("question_mark")
        await pilot.pause()

    assert snap_compare(app_for(scenarios_file), terminal_size=(80, 24), run_before=run_before)
