"""A long run in the lanes and in the two-run compare: a move draws only what is on screen, the cursor's cell
is the one marked, and f still lands on the first divergence (counts of cells drawn, never timings)."""
from __future__ import annotations

import copy
from pathlib import Path

import orjson
import pytest

from tracetui.ui.app import TraceApp, open_paths
from tracetui.ui.screens import run_diff
from tracetui.ui.screens.run_diff import AlignedRows, RunDiffScreen
from tracetui.ui.widgets.run_list import RunList
from tracetui.ui.widgets.swimlanes import CURSOR, SwimLanes

from ui_helpers import wait_until

SAMPLES = Path(__file__).resolve().parents[2] / "sample_traces"
CALLS = 300  # ~1,500 events a run


@pytest.fixture(scope="module")
def long_pair(tmp_path_factory) -> str:
    """A recorded run of CALLS model calls (each reads another order) and a copy whose middle read differs."""
    from tracetui.loop.inputs import responses_inputs
    from tracetui.loop.runner import run_inputs
    from tracetui.trace.writer import write_trace_runs

    first, last = orjson.loads((SAMPLES / "responses" / "normal.json").read_bytes())
    responses = [orjson.loads(orjson.dumps(first).replace(b"call-1", b"call-%d" % i).replace(
        b'\\"o-1\\"', b'\\"o-%d\\"' % i)) for i in range(1, CALLS)]
    responses.append(last)
    inputs = responses_inputs(responses)
    inputs["budgets"] = {**inputs["budgets"], "max_turns": CALLS + 10, "max_calls": CALLS + 10}
    for i in range(1, CALLS):
        inputs["tool_data"]["orders"][f"o-{i}"] = copy.deepcopy(inputs["tool_data"]["orders"]["o-1"])
    path = tmp_path_factory.mktemp("long") / "long.jsonl"
    write_trace_runs(str(path), [run_inputs("long", inputs).records])
    lines = path.read_bytes().splitlines(keepends=True)
    middle = b'o-%d\\"' % (CALLS // 2)
    twin = [line.replace(b'"run_id":"long"', b'"run_id":"long-b"').replace(middle, b'o-1\\"') for line in lines]
    path.write_bytes(b"".join(lines + twin))
    return str(path)


def count_calls(monkeypatch, cls, name: str) -> list[int]:
    calls = [0]
    real = getattr(cls, name)

    def counted(self, *args, **kwargs):
        calls[0] += 1
        return real(self, *args, **kwargs)
    monkeypatch.setattr(cls, name, counted)
    return calls


def cursor_column(lanes: SwimLanes) -> int:
    """Which shown column of the step axis carries the cursor's style (-1: none)."""
    strip = lanes.render_line(0)
    x = 0
    for segment in strip:
        if segment.style is not None and segment.style.underline and segment.style.bgcolor == CURSOR.bgcolor:
            return (x - lanes.cells.label_w) // lanes.cells.col_w
        x += segment.cell_length
    return -1


async def open_run(pilot, run_id: str) -> SwimLanes:
    screen = pilot.app.screen
    while getattr(screen, "scanning", False):
        await pilot.pause(0.05)
    runs = screen.query_one(RunList)
    runs.select_index(next(i for i, e in enumerate(runs.entries) if e.run_id == run_id))
    await pilot.pause()
    return screen.query_one(SwimLanes)


async def open_compare(pilot) -> None:
    """The two long runs side by side: "long" marked (m), "long-b" compared with it (d)."""
    await open_run(pilot, "long")
    await pilot.press("m")
    await open_run(pilot, "long-b")
    await pilot.press("d")
    await wait_until(pilot, lambda: isinstance(pilot.app.screen, RunDiffScreen), tries=500)


@pytest.mark.parametrize("size", [(120, 40), (160, 45)])  # (at 160 the cells leave 7 columns spare)
async def test_moving_along_a_long_run_draws_only_the_cells_on_screen(long_pair, monkeypatch, size):
    app = TraceApp(open_paths([long_pair]))
    async with app.run_test(size=size) as pilot:
        lanes = await open_run(pilot, "long")
        assert len(lanes.events) > 1000
        lanes.focus()
        lanes.move_to(0)
        await pilot.pause()
        shown = (lanes.scrollable_content_region.width - lanes.cells.label_w) // lanes.cells.col_w
        cells = count_calls(monkeypatch, SwimLanes, "_cell")
        for step in range(1, shown + 3):  # across the screen's edge: the lanes scroll by a cell
            await pilot.press("right")
            await pilot.pause()
            assert lanes.cursor == step and lanes.current is lanes.events[step]
            assert lanes.first_shown + cursor_column(lanes) == step  # the cell marked is the selected step's
        # each move draws at most the cells on screen (a few paints of them), never the run's 1,500
        assert cells[0] <= (shown + 3) * shown * 4
        await pilot.press("left")
        await pilot.pause()
        assert lanes.cursor == shown + 1
        assert lanes.first_shown + cursor_column(lanes) == shown + 1
        lanes.move_to(len(lanes.events) - 1)  # the far end: the last cell marked, the lanes scrolled to it
        await pilot.pause()
        assert lanes.first_shown + cursor_column(lanes) == len(lanes.events) - 1
        assert lanes.index_of(lanes.events[700]["seq"]) == 700


async def test_compare_of_two_long_runs_repaints_only_the_rows_a_move_changes(long_pair, monkeypatch):
    app = TraceApp(open_paths([long_pair]))
    async with app.run_test(size=(120, 40)) as pilot:
        await open_compare(pilot)
        await pilot.pause()
        screen = app.screen
        first = screen.diff.first_index
        assert first is not None and first > 100 and screen.row == first  # opens on the first divergence
        a, b = (screen.query_one(f"#lanes-{side}", SwimLanes) for side in "ab")
        assert a.current is screen.diff.rows[first].a.event and b.current is screen.diff.rows[first].b.event
        assert a.first_shown + cursor_column(a) == a.cursor
        rows = screen.query_one(AlignedRows)
        drawn = [0]
        real_row_line = run_diff.row_line

        def counted(*args, **kwargs):
            drawn[0] += 1
            return real_row_line(*args, **kwargs)
        monkeypatch.setattr(run_diff, "row_line", counted)
        for step in (1, 2, 3):
            await pilot.press("right")
            await pilot.pause()
            assert screen.row == first + step
            assert a.current is screen.diff.rows[first + step].a.event
        # each move draws the rows on screen at most (the list moves along with the cursor here), not the 400 listed
        assert 0 < drawn[0] <= 3 * 40
        highlighted = [y for y in range(rows.listed) if "#303a4a" in str(rows.line_text(y).spans)]
        assert highlighted == [screen.row - rows.start]
        for _ in range(5):
            await pilot.press("left")
        await pilot.press("f")
        await pilot.pause()
        assert screen.row == first and a.current is screen.diff.rows[first].a.event
        assert b.first_shown + cursor_column(b) == b.cursor
        assert "first divergence: " in str(screen.query_one("#diff-summary").render())


async def test_a_move_near_the_top_of_the_list_repaints_the_two_rows_it_changes(long_pair, monkeypatch):
    app = TraceApp(open_paths([long_pair]))
    async with app.run_test(size=(120, 40)) as pilot:
        await open_compare(pilot)
        screen = app.screen
        screen.row = 3
        screen.show_row()
        await pilot.pause()
        rows = screen.query_one(AlignedRows)
        assert rows.start <= 3 and rows.lines_in_view()[1] > 4 - rows.start  # rows 3 and 4 both on screen
        drawn = count_calls(monkeypatch, AlignedRows, "line_text")
        await pilot.press("right")
        await pilot.pause()
        assert screen.row == 4 and drawn[0] == 2  # row 3 loses its highlight, row 4 gains it


def row_on_screen(rows: AlignedRows) -> bool:
    first, end = rows.lines_in_view()
    return first <= rows.row - rows.start < end


@pytest.mark.parametrize("size", [(160, 45), (120, 40), (80, 24)])
async def test_the_compare_list_follows_the_current_row(long_pair, size):
    """The highlighted row stays on screen: opening on the first divergence, → past the list's last line
    shown, f from far away, ← back up past its top; with the screen scrolled down to the list (80×24) too."""
    app = TraceApp(open_paths([long_pair]))
    async with app.run_test(size=size) as pilot:
        await open_compare(pilot)
        await pilot.pause()
        screen, rows = app.screen, app.screen.query_one(AlignedRows)
        scroll = screen.query_one("#compare-scroll")
        if rows.lines_in_view()[0] >= rows.lines_in_view()[1]:  # the list below the lanes: scroll to it
            scroll.scroll_to(y=rows.virtual_region.y + 3, animate=False, immediate=True)
            await pilot.pause()
        assert rows.lines_in_view()[0] < rows.lines_in_view()[1] and screen.row == screen.diff.first_index
        assert row_on_screen(rows) or size == (80, 24)  # (there, scrolled to 3 lines past the list's top)
        for _ in range(30):
            await pilot.press("right")
            await pilot.pause()
            assert row_on_screen(rows), (screen.row, rows.start, rows.lines_in_view())
        screen.row = 0
        screen.show_row()
        await pilot.pause()
        assert row_on_screen(rows)
        await pilot.press("f")
        await pilot.pause()
        assert screen.row == screen.diff.first_index and row_on_screen(rows)
        for _ in range(30):
            await pilot.press("left")
            await pilot.pause()
            assert row_on_screen(rows)
        first, _ = rows.lines_in_view()
        top = scroll.region.y + (rows.virtual_region.y - scroll.scroll_offset.y) + first
        await pilot.click(offset=(10, top + 1))  # a row clicked: both runs go to its steps
        await pilot.pause()
        assert screen.row == rows.start + first + 1 and row_on_screen(rows)
        a = screen.query_one("#lanes-a", SwimLanes)
        assert a.current is screen.diff.rows[screen.row].a.event
        scroll.scroll_end(animate=False, immediate=True)  # to the list's blank end (End), then a move
        await pilot.pause()
        await pilot.press("right")
        await pilot.pause()
        assert row_on_screen(rows)


async def test_a_step_clicked_in_the_lanes_of_the_compare_becomes_the_current_row(long_pair):
    """Click a step in B's lanes: the row holding it is current, A goes to its counterpart, → goes on from it."""
    app = TraceApp(open_paths([long_pair]))
    async with app.run_test(size=(160, 45)) as pilot:
        await open_compare(pilot)
        await pilot.pause()
        screen = app.screen
        a, b = (screen.query_one(f"#lanes-{side}", SwimLanes) for side in "ab")
        column = cursor_column(b)
        await pilot.click(b, offset=(b.cells.label_w + (column - 3) * b.cells.col_w + 1, 2))
        await pilot.pause()
        assert b.cursor == b.first_shown + column - 3
        row = screen.diff.rows[screen.row]
        assert row.b.event is b.current and a.current is row.a.event
        await pilot.press("right")
        await pilot.pause()
        assert screen.diff.rows[screen.row].b.event is b.events[b.first_shown + column - 2]
