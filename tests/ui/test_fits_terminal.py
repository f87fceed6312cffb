"""The explorer fits the terminal (issue 24, item 6) and the small stumbles of item 7: whole swimlane
cells sized to the width, a banner that never claims a pass for a run it could not read, one esc out of
the JSON editor, a file column for two files, no re-run keys on imported runs, written paths said on exit."""
from __future__ import annotations

from pathlib import Path

from tracetui.trace.format import LANES
from tracetui.trace.index import IndexedSource
from tracetui.trace.writer import write_trace
from tracetui.ui import app as app_module
from tracetui.ui.app import TraceApp, open_paths, run_app, written_lines
from tracetui.ui.screens.edit import EditScreen
from tracetui.ui.screens.main import MainScreen
from tracetui.ui.widgets.cell_words import LAYOUTS, choose_layout, short_word
from tracetui.ui.widgets.header import HeaderBar
from tracetui.ui.widgets.run_list import RunList, share_widths
from tracetui.ui.widgets.swimlanes import SwimLanes
from tracetui.ui.widgets.verdict import VerdictBanner

from test_replay_ui import open_run
from ui_helpers import screen_text, wait_until

SAMPLES = Path(__file__).resolve().parents[2] / "sample_traces"


def grid_rows(lanes: SwimLanes) -> list[str]:
    return [lanes.render_line(y).text for y in range(len(LANES) + 1)]


async def test_an_eight_step_run_is_shown_whole_at_80_columns(scenarios_file):
    app = TraceApp(IndexedSource([scenarios_file]))
    async with app.run_test(size=(80, 24)) as pilot:
        await open_run(pilot, "single")
        lanes = app.screen.query_one(SwimLanes)
        assert len(lanes.events) == 8
        axis = grid_rows(lanes)[0].split()
        assert axis == ["step", *map(str, range(1, 9))]  # every step, none cut
        text = "\n".join(grid_rows(lanes))
        for fragment in ("alid", "00 ", "erifie"):  # what 12-cell cells cut at 80 columns showed
            assert fragment not in text.replace("200", ""), text


async def test_a_long_run_scrolls_by_whole_cells(scenarios_file):
    app = TraceApp(IndexedSource([scenarios_file]))
    async with app.run_test(size=(80, 24)) as pilot:
        await open_run(pilot, "parallel")
        lanes = app.screen.query_one(SwimLanes)
        for _ in range(len(lanes.events)):
            lanes.move_to(lanes.cursor + 1)
            await pilot.pause()
        axis = grid_rows(lanes)[0]
        width = lanes.col_w
        cells = axis[lanes.label_w:]
        shown = [cells[i:i + width] for i in range(0, len(cells) - width + 1, width)]
        numbers = [c.strip().rstrip("▼") for c in shown if c.strip()]
        assert numbers[-1] == str(len(lanes.events))  # the last step is on screen
        assert all(n.isdigit() for n in numbers), numbers  # each cell starts where a step starts
        assert numbers == [str(n) for n in range(int(numbers[0]), len(lanes.events) + 1)]


def test_cell_words_are_short_forms_never_fragments():
    assert short_word("verified", 3) == "ok" and short_word("denied", 5) == "deny"
    assert short_word("custom_failure_code", 5) == "cust…"  # unknown: cut where it says so
    assert short_word("200", 2) == "#"
    assert choose_layout(200, 8) == LAYOUTS[0] and choose_layout(54, 8).col_w == 6


def test_spare_width_goes_to_the_column_that_is_cut():
    # a status of 25 cells and ids of 10: the id has 30 spare cells, the status gets what it needs
    id_w, status_w, scen_w = share_widths(70, (10, 25, 0), status=True, scenario=False)
    assert status_w == 26 and id_w == 44
    id_w, status_w, _ = share_widths(40, (30, 25, 0), status=True, scenario=False)
    assert status_w == 18 and id_w == 22  # the id is cut: the status keeps its usual width


async def test_the_banner_never_claims_a_pass_for_a_run_it_could_not_load(tmp_path, scenario_records):
    path = tmp_path / "t.jsonl"
    write_trace(path, scenario_records)
    app = TraceApp(IndexedSource([str(path)]))
    async with app.run_test(size=(160, 45)) as pilot:
        await open_run(pilot, "single")
        banner = app.screen.query_one(VerdictBanner)
        assert "every boundary passed" in banner.plain
        path.write_bytes(path.read_bytes()[:100])  # truncated while open
        runs = app.screen.query_one(RunList)
        runs.select_index(next(i for i, e in enumerate(runs.entries) if e.run_id == "text"))
        await pilot.pause()
        await pilot.pause()
        assert "could not" in banner.plain
        assert "passed" not in banner.plain and not banner.plain.startswith("✓"), banner.plain


async def test_one_escape_closes_the_json_editor(scenarios_file):
    app = TraceApp(IndexedSource([scenarios_file]))
    async with app.run_test(size=(80, 24)) as pilot:
        await open_run(pilot, "single")
        await pilot.press("e")
        await wait_until(pilot, lambda: isinstance(app.screen, EditScreen))
        app.screen.query_one("#edit-path").value = "/inputs/budgets"
        await pilot.pause()
        app.screen.query_one("#edit-json").focus()
        await pilot.pause()
        assert app.screen.focused.id == "edit-json"
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, MainScreen)


async def test_the_json_editor_fits_80x24_with_its_keys(scenarios_file):
    app = TraceApp(IndexedSource([scenarios_file]))
    async with app.run_test(size=(80, 24)) as pilot:
        await open_run(pilot, "single")
        await pilot.press("e")
        await wait_until(pilot, lambda: isinstance(app.screen, EditScreen))
        app.screen.query_one("#edit-path").value = "/inputs/budgets"
        await pilot.pause()
        await pilot.pause()
        editor = app.screen.query_one("#edit-json")
        help_line = app.screen.query_one("#edit-help")
        assert editor.display and editor.region.height >= 3
        assert help_line.region.height > 0 and help_line.region.bottom <= 23  # above the dialog's border
        assert "ctrl+s re-run with this edit" in screen_text(app)


async def test_two_files_show_a_file_column(tmp_path, scenario_records):
    a, b = tmp_path / "openai.jsonl", tmp_path / "anthropic.jsonl"
    records = [r for r in scenario_records if r.get("run_id") in ("single", "cross_tenant")]
    write_trace(a, records)
    write_trace(b, records)
    app = TraceApp(IndexedSource([str(a), str(b)]))
    async with app.run_test(size=(160, 45)) as pilot:
        await open_run(pilot, "single")  # once both files are indexed
        rows = [line for line in screen_text(app).splitlines() if "✓ single " in line]
        assert len(rows) == 2, screen_text(app)
        assert "openai.js" in rows[0] and "anthropic" in rows[1]  # the same run id, told apart


async def test_one_file_has_no_file_column(scenarios_file):
    app = TraceApp(IndexedSource([scenarios_file]))
    async with app.run_test(size=(160, 45)) as pilot:
        await open_run(pilot, "cross_tenant")
        assert app.screen.query_one(RunList).file_labels is None
        assert "scenarios.jsonl" not in screen_text(app).splitlines()[5]


async def test_imported_runs_offer_no_re_run_keys():
    app = TraceApp(open_paths([str(SAMPLES / "otel-scenarios.jsonl")]))
    async with app.run_test(size=(120, 30)) as pilot:
        await pilot.pause()
        await app.workers.wait_for_complete()
        await pilot.pause()
        enabled = {b.binding.key: b.enabled for b in app.screen.active_bindings.values()}
        assert not enabled["E"] and not enabled["e"] and not enabled["i"]
        assert enabled["n"]
        await pilot.press("e")
        await pilot.pause()
        assert isinstance(app.screen, MainScreen)


async def test_recorded_runs_keep_their_re_run_keys(scenarios_file):
    app = TraceApp(IndexedSource([scenarios_file]))
    async with app.run_test(size=(120, 30)) as pilot:
        await open_run(pilot, "cross_tenant")
        enabled = {b.binding.key: b.enabled for b in app.screen.active_bindings.values()}
        assert enabled["E"] and enabled["e"] and enabled["i"]


async def test_a_passing_run_shows_no_lane_as_not_reached(scenarios_file):
    app = TraceApp(IndexedSource([scenarios_file]))
    async with app.run_test(size=(160, 45)) as pilot:
        await open_run(pilot, "text")
        text = "\n".join(grid_rows(app.screen.query_one(SwimLanes)))
        assert "not reached" not in text and "not needed" in text


async def test_a_run_without_its_summary_shows_no_zero_counts(tmp_path, scenario_records):
    path = tmp_path / "cut.jsonl"
    write_trace(path, [r for r in scenario_records if r.get("run_id") == "single" and r.get("rec") != "summary"])
    app = TraceApp(IndexedSource([str(path)]))
    async with app.run_test(size=(160, 45)) as pilot:
        await open_run(pilot, "single")
        text = screen_text(app)
        assert "0m 0t" not in text and "?m ?t" in text
        assert "0 model calls" not in str(app.screen.query_one("#run-pane").border_title)


def test_the_file_changed_warning_has_a_short_form():
    header = HeaderBar("sample_traces/scenarios.jsonl")
    header.progress = "⚠ sample_traces/scenarios.jsonl was replaced by another file since it was opened — r reloads"
    header.runs, header.failed = 30, 20
    assert "⚠ file changed — r reloads" in header._rest(short=True).plain


async def test_a_written_run_is_remembered_with_its_whole_path(tmp_path, scenario_records):
    path = tmp_path / "t.jsonl"
    write_trace(path, scenario_records)
    app = TraceApp(IndexedSource([str(path)]))
    async with app.run_test(size=(80, 24)) as pilot:
        await open_run(pilot, "single")
        await pilot.press("w")
        await pilot.pause()
    written = tmp_path / "t.single.jsonl"
    assert written.exists()
    assert written_lines(app) == [f"tracetui: wrote run single to {written}"]


def test_what_was_written_is_printed_on_exit(tmp_path, scenario_records, monkeypatch, capsys):
    path = tmp_path / "t.jsonl"
    write_trace(path, scenario_records)
    written = tmp_path / "t.single.jsonl"

    def fake_run(self, **options):  # the explorer as a user leaves it: one run written, then q
        self.written.append(("run single", str(written)))

    monkeypatch.setattr(TraceApp, "run", fake_run)
    monkeypatch.setattr(app_module, "_exit_on_signals", lambda app: None)  # this process's handlers stay
    run_app([str(path)])
    assert capsys.readouterr().out == f"tracetui: wrote run single to {written}\n"


async def test_a_cut_reason_still_says_where_it_continues_after_the_terminal_widens(tmp_path, scenario_records):
    records = [dict(r) for r in scenario_records if r.get("run_id") == "tool_failure"]
    for record in records:
        if record.get("rec") == "summary":
            record["first_failure"] = {**record["first_failure"], "reason": "word " * 1000 + "END"}
    path = tmp_path / "long.jsonl"
    write_trace(path, records)
    app = TraceApp(IndexedSource([str(path)]))
    async with app.run_test(size=(80, 24)) as pilot:
        await open_run(pilot, "tool_failure")
        banner = app.screen.query_one(VerdictBanner)
        assert "the whole reason: f, then v" in screen_text(app)
        await pilot.resize_terminal(200, 60)
        await wait_until(pilot, lambda: banner.size.width > 100 and banner.size.height == 5)
        await pilot.pause()
        assert banner.size.height == 5  # the re-cut text's height, not the old text's at the new width
        assert "the whole reason: f, then v" in screen_text(app)  # the end of the cut, on screen


def test_help_words_textual_s_own_scroll_keys_in_the_project_s_voice():
    from textual.containers import VerticalScroll

    from tracetui.ui.screens.help import key_rows

    rows = dict(key_rows(VerticalScroll.BINDINGS))  # the event detail pane's keys are Textual's
    assert rows["↑"] == "scroll up" and rows["pagedown"] == "page down", rows
    assert not any(words[:1].isupper() for words in rows.values()), rows


def test_a_narrow_run_list_numbers_the_twelfth_file_whole():
    from tracetui.trace.source import RunEntry

    runs = RunList(files=[f"/t/f{n}.jsonl" for n in range(12)])
    entry = RunEntry.of("single", 11, "single", None, "answer_ready", "ready", True, None, 2, 1, 0, 8)
    runs.set_view([entry], range(1))
    row = "".join(s.text for s in runs.row_segments(entry, 22, runs.rich_style, False))
    assert " 12 " in row and "…" not in row, row  # not a lone ellipsis for every file past the ninth


async def test_an_imported_run_says_it_cannot_be_re_run_at_80_columns():
    app = TraceApp(open_paths([str(SAMPLES / "otel-scenarios.jsonl")]))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        await app.workers.wait_for_complete()
        await pilot.pause()
        # E, e and i are greyed and do nothing: the title says why, where 80 columns still show it
        assert "imported: no re-run" in screen_text(app).splitlines()[1]
