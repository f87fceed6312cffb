"""Pilot tests: what the explorer shows and how keys move it."""
from __future__ import annotations

import orjson

from tracetui.trace.format import LANE_TITLES, LANES
from tracetui.ui.app import open_paths as open_source
from tracetui.trace.reader import read_trace
from tracetui.trace.safe_text import printable
from tracetui.ui.app import TraceApp
from tracetui.ui.screens.main import MainScreen
from tracetui.ui.screens.problems import ProblemList, ProblemsScreen
from tracetui.ui.widgets.detail import DetailPane
from tracetui.ui.widgets.lane_summary import LaneSummary
from tracetui.ui.widgets.run_list import RunList
from tracetui.ui.widgets.swimlanes import SwimLanes
from tracetui.ui.widgets.verdict import VerdictBanner

from ui_helpers import encode, screen_strips, screen_text, write_lines, wait_until

SIZE = (160, 45)


async def settle(pilot, app) -> None:
    """Wait for the index scan (if any) and the messages it caused."""
    await pilot.pause()
    await app.workers.wait_for_complete()
    await pilot.pause()
    await pilot.pause()


def parts(app):
    screen = app.screen
    return (screen.query_one(RunList), screen.query_one(SwimLanes), screen.query_one(VerdictBanner),
            screen.query_one(DetailPane))


def lane_row(lanes: SwimLanes, lane: str) -> str:
    return lanes.render_line(1 + LANES.index(lane)).text


def select(app, run_id: str) -> None:
    runs = app.screen.query_one(RunList)
    index = next(i for i, e in enumerate(runs.entries) if e.run_id == run_id)
    assert runs.select_index(index)


async def test_every_scenario_flags_what_check_prints(scenarios_file):
    """Open a real file through the index; for each run the flagged lane, step and reason are the core's."""
    expected = {rid: run.verdict() for rid, run in read_trace(scenarios_file).runs.items()}
    app = TraceApp(open_source([scenarios_file]))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        runs, lanes, banner, _ = parts(app)
        assert len(runs.view) == len(expected)
        for pos in range(len(runs.view)):
            runs.action_edge(0)
            runs.action_cursor(pos)
            await pilot.pause()
            entry = runs.current
            verdict = expected[entry.run_id]
            assert lanes.entry is entry
            ff = verdict["first_failure"]
            if ff is None:
                assert banner.plain.startswith(("✓", "!")), entry.run_id
                assert not any(lane_row(lanes, lane).startswith("▶") for lane in LANES)
                continue
            assert entry.first_failure == ff
            title = LANE_TITLES[ff["lane"]].upper()
            assert f"✗ {verdict['status']} — first failing boundary: {title} at step {ff['seq']}" in banner.plain
            assert printable(ff["reason"]) in banner.plain
            row = lane_row(lanes, ff["lane"])
            assert row.startswith("▶") and "◀" in row, (entry.run_id, row)
            assert lanes.current["seq"] == ff["seq"]  # the cursor starts on the first failure
            others = [lane for lane in LANES if lane != ff["lane"]]
            assert not any(lane_row(lanes, lane).startswith("▶") for lane in others)


async def test_arrows_f_and_next_failure(demo):
    app = TraceApp(demo)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        runs, lanes, banner, detail = parts(app)
        assert runs.current.run_id == "text"
        await pilot.press("down")
        assert runs.current.run_id == "single"
        await pilot.press("up", "up")
        assert runs.current.run_id == "text"
        await pilot.press("n")
        await pilot.pause()
        assert runs.current.run_id == "tool_failure"
        assert lanes.current["seq"] == runs.current.first_failure["seq"] == 5
        await pilot.press("left", "left")
        assert lanes.current["seq"] == 3
        await pilot.pause()
        assert "event 3" in detail.border_title
        await pilot.press("right")
        assert lanes.current["seq"] == 4
        await pilot.press("f")
        assert lanes.current["seq"] == 5
        await pilot.press("n")
        await pilot.pause()
        assert runs.current.run_id == "repeat"
        await pilot.press("N", "N")
        await pilot.pause()
        assert runs.current.run_id == "single-transient-3"  # wraps to the last failed run
        assert "HTTP at step 1 (gave up at step 3)" in banner.plain


async def test_call_partners_jump_and_back(demo):
    app = TraceApp(demo)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        runs, lanes, _, detail = parts(app)
        select(app, "cross_tenant")
        await pilot.pause()
        lanes.select_seq(3)
        await pilot.pause()
        assert "▸ ● generation 2" in detail.text.plain and "▸ ✗ authorization 4" in detail.text.plain
        await pilot.press("c")
        assert lanes.current["seq"] == 4
        await pilot.press("c")
        assert lanes.current["seq"] == 2  # wraps back to the model's call
        await pilot.press("C")
        assert lanes.current["seq"] == 4
        await app.screen.run_action("jump_to_step(3)")  # what clicking a partner link runs
        assert lanes.current["seq"] == 3


async def test_text_status_lane_filters_and_sort(demo):
    app = TraceApp(demo)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        runs = app.screen.query_one(RunList)
        await pilot.press("slash", *"cross_ten")  # ("tenant" is in every run's events: / finds it there too)
        await pilot.pause()
        assert [runs.entries[i].run_id for i in runs.view] == ["cross_tenant"]
        assert runs.current.run_id == "cross_tenant"
        await pilot.press("escape")
        assert len(runs.view) == len(demo.runs())
        await pilot.press("t")
        assert runs.view and all(runs.entries[i].first_failure for i in runs.view)
        await pilot.press("t")
        assert runs.view and all(runs.entries[i].ready for i in runs.view)
        await pilot.press("x")
        await pilot.press("l", "l", "l")  # http, generation, arguments
        assert {runs.entries[i].failing_lane for i in runs.view} == {"arguments"}
        await pilot.press("x", "s", "s", "s")
        ids = [runs.entries[i].run_id for i in runs.view]
        assert ids == sorted(ids)
        assert "by id" in screen_text(app)


async def test_a_filter_that_leaves_no_run_leaves_no_run_title(demo):
    """The run pane's title named the last run shown above 'no run selected'."""
    app = TraceApp(demo)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        pane = app.screen.query_one("#run-pane")
        assert str(pane.border_title).startswith("run ")
        await pilot.press("slash", *"zzzy")
        await pilot.pause()
        assert app.screen.query_one(RunList).current is None
        assert not str(pane.border_title or "").startswith("run "), pane.border_title
        await pilot.press("escape")
        await pilot.pause()
        assert str(pane.border_title).startswith("run ")


async def test_clicking_a_lane_bar_filters(demo):
    app = TraceApp(demo)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        summary = app.screen.query_one(LaneSummary)
        runs = app.screen.query_one(RunList)
        half = summary.size.width // 2
        await pilot.click(LaneSummary, offset=(half + 3, 2))  # row 0 is the border: second row, second column = auth
        await pilot.pause()
        assert app.screen.query_state.lane == "authorization"
        assert [runs.entries[i].run_id for i in runs.view] == ["cross_tenant"]
        await pilot.click(LaneSummary, offset=(half + 3, 2))  # again: filter off
        await pilot.pause()
        assert app.screen.query_state.lane is None


async def test_problems_screen_lists_bad_lines(tmp_path, scenario_records):
    good = [encode(r) for r in scenario_records]
    lines = good[:10] + [b'{"rec":"event", broken', b"\xff\xfe not utf-8", b"[1,2]"] + good[10:]
    path = write_lines(tmp_path / "bad.jsonl", lines)
    expected_runs = len(read_trace(path).runs)
    app = TraceApp(open_source([path]))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        assert len(app.screen.query_one(RunList).view) == expected_runs
        assert "3 problems — p to view" in screen_text(app)
        await pilot.press("p")
        await pilot.pause()
        assert isinstance(app.screen, ProblemsScreen)
        plist = app.screen.query_one(ProblemList)
        rows = [plist.render_line(y).text for y in range(3)]
        assert "line 11" in rows[0] and "malformed JSON" in rows[0]
        assert "line 12" in rows[1] and "not valid UTF-8" in rows[1]
        assert "line 13" in rows[2] and "expected a JSON object" in rows[2]
        await pilot.press("escape")
        assert isinstance(app.screen, MainScreen)


HOSTILE_ID = "[bold]x[/bold][link=http://e]y[/link]\x1b]8;;http://evil\x07z\x1b]8;;\x07\rCR\u202e"


def hostile_lines(records: list[dict]) -> list[bytes]:
    out = []
    for rec in records:
        rec = orjson.loads(orjson.dumps(rec))
        rec["run_id"] = HOSTILE_ID
        if rec["rec"] == "run":
            rec["inputs"]["scenario"] = "[red]scen[/red]\x1b[2J"
        if rec["rec"] == "event":
            rec["summary"] = "[b]sum[/b]\x1b[5m\x07 " + rec["summary"]
            rec["data"]["evil"] = "[i]data[/i]\x1b[31m\x9b"
            if rec["call_id"]:
                rec["call_id"] = "[u]c[/u]\x1b"
            if rec["outcome"] == "failed":
                rec["code"] = "\x1b]2;PWNED\x07"  # would retitle the terminal
            if rec["lane"] == "generation":
                rec["data"]["kind"] = "\x1b[31mkind"
        if rec["rec"] == "summary":
            rec["first_failure"]["reason"] = "[bold red]why[/] \x1b]8;;http://x\x07L\x1b]8;;\x07"
            rec["first_failure"]["code"] = rec["status"] = "\x1b]0;T\x07st"
        out.append(orjson.dumps(rec))
    return out


async def test_hostile_strings_render_literally(tmp_path, demo):
    entry = next(e for e in demo.runs() if e.run_id == "cross_tenant")
    data = demo.load(entry)
    path = write_lines(tmp_path / "hostile.jsonl", hostile_lines([data.run, *data.events, data.summary]))
    app = TraceApp(open_source([path]))
    async with app.run_test(size=(200, 50)) as pilot:
        await settle(pilot, app)
        runs, lanes, banner, detail = parts(app)
        await pilot.pause()
        text = screen_text(app)
        assert "[bold]x[/bold][link=http://e]y[/link]\\x1b]8;;http://evil\\x07z" in text  # run list and title
        title = app.screen.query_one("#run-pane")._border_title.plain
        assert "scenario [red]scen[/red]\\x1b[2J" in title
        assert "[bold red]why[/] \\x1b]8;;http://x\\x07L" in banner.plain
        assert "[b]sum[/b]\\x1b[5m\\x07" in detail.text.plain
        assert "[i]data[/i]\\u001b[31m" in detail.text.plain  # JSON escapes it; still literal
        assert "call_id [u]c[/u]\\x1b" in str(detail.border_title) or "[u]c[/u]" in text
        for bad in ("\x1b", "\x07", "\r", "\x9b", "\u202e"):
            assert bad not in text
        for strip in screen_strips(app):
            for seg in strip:
                assert not (seg.style and seg.style.link), seg  # no hyperlink ever reaches the terminal
        # the compare view words the same hostile verdict (the edit repairs the hostile scenario name)
        await pilot.press("e")
        await pilot.pause()
        app.screen.query_one("#edit-path").value = "/inputs/scenario"
        app.screen.query_one("#edit-value").value = "cross_tenant"
        await pilot.press("enter")
        await wait_until(pilot, lambda: type(app.screen).__name__ == "CompareScreen")
        text = screen_text(app)
        assert type(app.screen).__name__ == "CompareScreen" and "\\x1b]0;T\\x07st" in text
        for bad in ("\x1b", "\x07", "\r", "\x9b", "\u202e"):
            assert bad not in text


def _incomplete_lines(demo) -> list[bytes]:
    lines = []
    for run_id in ("single", "cross_tenant"):
        data = demo.load(next(e for e in demo.runs() if e.run_id == run_id))
        lines += [orjson.dumps(r) for r in (data.run, *data.events)]  # no summary: the writer crashed
    return lines


async def test_incomplete_runs_are_shown_and_marked(tmp_path, demo):
    path = write_lines(tmp_path / "crashed.jsonl", _incomplete_lines(demo))
    app = TraceApp(open_source([path]))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        runs, lanes, banner, _ = parts(app)
        assert {runs.entries[i].run_id for i in runs.view} == {"single", "cross_tenant"}
        select(app, "single")
        await pilot.pause()
        assert banner.plain.startswith("… incomplete")
        select(app, "cross_tenant")
        await pilot.pause()
        assert "AUTHORIZATION at step 4" in banner.plain and "incomplete" in banner.plain
        assert "◀" in lane_row(lanes, "authorization")


async def test_narrow_terminal_keeps_what_matters(demo):
    app = TraceApp(demo)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        select(app, "cross_tenant")
        await pilot.pause()
        text = screen_text(app)
        assert "✗ cross_tenant" in text
        assert "AUTHORIZATION at step 4" in text
        assert "✗ denied ◀" in text
        assert not app.screen.query_one(LaneSummary).display or "-narrow" not in app.screen.classes


async def test_help_and_command_palette_list_the_actions(demo):
    app = TraceApp(demo)
    async with app.run_test(size=(SIZE[0], SIZE[1] + 20)) as pilot:  # the whole help, unscrolled: every key is a row
        await pilot.pause()
        await pilot.press("question_mark")
        await pilot.pause()
        text = screen_text(app)
        for words in ("first failure", "next failed run", "same tool call", "status filter", "lane filter",
                      "could not be read", "^p", "palette"):
            assert words in text
        await pilot.press("escape")
        from tracetui.ui.commands import palette_commands

        names = [name for name, _, _ in palette_commands(app.screen, app)]
        assert "first failure" in names and "failing lane: authorization" in names and "quit" in names
        callback = dict((n, c) for n, _, c in palette_commands(app.screen, app))["show runs: failed"]
        await callback()
        assert app.screen.query_state.status == "failed"


async def test_clicking_a_swimlane_cell_selects_its_event(demo):
    app = TraceApp(demo)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        select(app, "cross_tenant")
        await pilot.pause()
        _, lanes, _, detail = parts(app)
        from tracetui.ui.widgets.swimlanes import COL_W, LABEL_W

        await pilot.click(SwimLanes, offset=(LABEL_W + COL_W + 2, 2))  # column 2: the generation event
        await pilot.pause()
        assert lanes.current["seq"] == 2
        assert "event 2" in str(detail.border_title)


class ManyRuns:
    """A source with 200,000 runs and no file behind it: the run list must not care how many."""

    label = "many"

    def __init__(self, demo, n: int = 200_000):
        template = next(e for e in demo.runs() if e.run_id == "cross_tenant")
        self._demo, self._template = demo, template
        from msgspec.structs import replace

        self._entries = [replace(template, run_id=f"run-{i:06d}") for i in range(n)]

    def runs(self):
        return self._entries

    def problems(self):
        return []

    def load(self, entry):
        return self._demo.load(self._template)


async def test_two_hundred_thousand_runs_scroll_to_the_end(demo):
    source = ManyRuns(demo)
    app = TraceApp(source)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        runs = app.screen.query_one(RunList)
        assert isinstance(runs.view, range) and len(runs.view) == 200_000
        await pilot.press("end")
        await pilot.pause()
        assert runs.current.run_id == "run-199999"
        assert "▶✗ run-199999" in screen_text(app)
        await pilot.press("slash", *"run-10000", "enter")
        await pilot.pause()
        assert [runs.entries[i].run_id for i in runs.view][:2] == ["run-100000", "run-100001"]
        assert len(runs.view) == 10  # run-100000 … run-100009 (ids are zero-padded)
