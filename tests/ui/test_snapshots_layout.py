"""SVG snapshots of the screens at 80×24 and 200×60: the main screen, the swimlane grid of a long run,
the fixes panel and the JSON editor. Nothing may be cut: look at each picture before committing
(``python -c "import cairosvg; cairosvg.svg2png(url='x.svg', write_to='x.png')"``).
"""
from __future__ import annotations

import pytest

from tracetui.ui.screens.edit import EditScreen
from tracetui.ui.widgets.swimlanes import SwimLanes

from test_replay_ui import open_run
from test_snapshots_explain import app_for, fixes_of
from ui_helpers import wait_until

SIZES = pytest.mark.parametrize("size", [(80, 24), (200, 60)], ids=["80x24", "200x60"])


@SIZES
def test_main_screen(snap_compare, scenarios_file, size):
    async def run_before(pilot) -> None:
        await open_run(pilot, "cross_tenant")

    assert snap_compare(app_for(scenarios_file), terminal_size=size, run_before=run_before)


@SIZES
def test_grid_of_a_long_run(snap_compare, scenarios_file, size):
    """parallel: eleven steps, more than fit at 80 columns; the cursor on the last scrolls by whole cells."""
    async def run_before(pilot) -> None:
        await open_run(pilot, "parallel")
        lanes = pilot.app.screen.query_one(SwimLanes)
        lanes.focus()
        await pilot.pause()
        for _ in range(len(lanes.events)):
            await pilot.press("right")
        await pilot.pause()

    assert snap_compare(app_for(scenarios_file), terminal_size=size, run_before=run_before)


@SIZES
def test_fixes_panel(snap_compare, scenarios_file, size):
    assert snap_compare(app_for(scenarios_file), terminal_size=size, run_before=fixes_of("cross_tenant"))


@SIZES
def test_json_editor(snap_compare, scenarios_file, size):
    """e, then a field holding an object: the JSON editor and, below it, its keys."""
    async def run_before(pilot) -> None:
        await open_run(pilot, "cross_tenant")
        await pilot.press("e")
        await wait_until(pilot, lambda: isinstance(pilot.app.screen, EditScreen))
        pilot.app.screen.query_one("#edit-path").value = "/inputs/budgets"
        await pilot.pause()
        await pilot.pause()

    assert snap_compare(app_for(scenarios_file), terminal_size=size, run_before=run_before)
