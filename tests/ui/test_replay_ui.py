"""Edit one field and re-run, in the explorer: the flow a user walks with `e`, `w` and esc."""
from __future__ import annotations

from pathlib import Path

from tracetui.trace.index import IndexedSource
from tracetui.ui.app import open_paths as open_source
from tracetui.trace.reader import read_trace
from tracetui.ui.app import TraceApp
from tracetui.ui.screens.compare import CompareScreen
from tracetui.ui.screens.edit import EditScreen
from tracetui.ui.screens.main import MainScreen
from tracetui.ui.widgets.run_list import RunList
from tracetui.ui.widgets.swimlanes import SwimLanes

from ui_helpers import screen_text, wait_until


async def open_run(pilot, run_id: str, seq: int | None = None) -> None:
    await pilot.pause()
    screen = pilot.app.screen
    if hasattr(screen, "scanning"):
        while screen.scanning:
            await pilot.pause(0.05)
    runs = screen.query_one(RunList)
    assert runs.select_index(next(i for i, e in enumerate(runs.entries) if e.run_id == run_id))
    await pilot.pause()
    if seq is not None:
        screen.query_one(SwimLanes).select_seq(seq)
    await pilot.pause()


async def edit(pilot, path: str | None, value: str) -> None:
    await pilot.press("e")
    await pilot.pause()
    assert isinstance(pilot.app.screen, EditScreen)
    if path is not None:
        pilot.app.screen.query_one("#edit-path").value = path
    pilot.app.screen.query_one("#edit-value").value = value
    await pilot.press("enter")
    await wait_until(pilot, lambda: isinstance(pilot.app.screen, CompareScreen))  # the re-run is on a worker


async def test_reading_another_order_than_the_one_asked_for_is_not_an_answer(scenarios_file):
    app = TraceApp(open_source([scenarios_file]))
    async with app.run_test(size=(160, 45)) as pilot:
        await open_run(pilot, "cross_tenant", seq=3)
        await pilot.press("e")
        await pilot.pause()
        editor = app.screen
        assert editor.query_one("#edit-path").value == "/responses/0/body/output/0/arguments"
        assert editor.query_one("#edit-value").value == '{"order_id":"o-2"}'  # the current value, ready to change
        await pilot.press("escape")
        await edit(pilot, None, '{"order_id": "o-1"}')
        screen = app.screen
        assert isinstance(screen, CompareScreen)
        # the user asked about o-2: reading and answering about o-1 instead gets past the guard, not to an answer
        assert (screen.outcome.before["status"], screen.outcome.after["status"]) == ("permission_denied",
                                                                                     "answer_off_topic")
        assert "answer_off_topic" in screen_text(app)
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, MainScreen)


async def test_calling_the_offered_tool_makes_the_run_answer_ready(scenarios_file):
    app = TraceApp(open_source([scenarios_file]))
    async with app.run_test(size=(160, 45)) as pilot:
        await open_run(pilot, "unknown_tool", seq=3)
        await edit(pilot, "/responses/0/body/output/0/name", "read_order")
        await wait_until(pilot, lambda: isinstance(app.screen, CompareScreen))
        screen = app.screen
        assert (screen.outcome.before["status"], screen.outcome.after["status"]) == ("unknown_tool", "answer_ready")
        text = screen_text(app)
        assert "arguments failed at step 3 (unknown_tool)" in text and "answer ready" in text
        assert "8 event(s) differ, 7 with a new outcome" in text  # the failed step and the six it never reached
        assert "edited: /responses/0/body/output/0/name" in text
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, MainScreen)


async def test_an_edit_that_moves_the_failure_to_another_lane(scenarios_file):
    app = TraceApp(open_source([scenarios_file]))
    async with app.run_test(size=(160, 45)) as pilot:
        await open_run(pilot, "single")
        await edit(pilot, "/inputs/tools/0/parameters/properties/order_id/pattern", "^x-")
        outcome = app.screen.outcome
        assert outcome.before["ready"] and outcome.after["first_failure"]["lane"] == "arguments"
        # the model tries to repair twice, then the run is handed to a human
        assert "arguments failed at step 3 (handoff_required)" in screen_text(app)
        assert outcome.after["first_failure"]["decided_at"] == 9
        # keep editing the new run: with no repair budget the handoff comes at once
        await pilot.press("e")
        await pilot.pause()
        app.screen.query_one("#edit-path").value = "/inputs/budgets/repair_budget"
        app.screen.query_one("#edit-value").value = "0"
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, CompareScreen) and len(app.screen.outcome.edits) == 2)
        outcome = app.screen.outcome
        assert [p for p, _ in outcome.edits] == ["/inputs/tools/0/parameters/properties/order_id/pattern",
                                                 "/inputs/budgets/repair_budget"]
        assert outcome.after["status"] == "handoff_required"
        assert outcome.after["first_failure"]["decided_at"] == 3
        assert outcome.replayed.summary["metrics"]["model_calls"] == 1


async def test_an_invalid_edit_is_refused_in_the_editor_and_changes_nothing(scenarios_file):
    app = TraceApp(open_source([scenarios_file]))
    async with app.run_test(size=(160, 45)) as pilot:
        await open_run(pilot, "single")
        await pilot.press("e")
        await pilot.pause()
        editor = app.screen
        for path, value, message in (("/inputs/budgets/max_calls", "lots", "not valid JSON"),
                                     ("/inputs/budgets/max_calls", '"4"', "expected a whole number"),
                                     ("/inputs/no/such", "1", "no field 'no'"),
                                     ("/inputs/budgets/max_retries", "-1", "cannot re-run: budgets.max_retries"),
                                     ("/responses/5/status", "200", "no item '5'")):
            editor.query_one("#edit-path").value = path
            editor.query_one("#edit-value").value = value
            await pilot.press("enter")
            await pilot.pause()
            assert app.screen is editor
            assert message in str(editor.query_one("#edit-error").render())
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, MainScreen)


async def test_write_puts_the_edited_run_in_a_new_file_and_leaves_the_original(scenarios_file):
    original = Path(scenarios_file).read_bytes()
    app = TraceApp(open_source([scenarios_file]))
    async with app.run_test(size=(160, 45)) as pilot:
        await open_run(pilot, "truncated")
        await edit(pilot, "/inputs/budgets/max_output_tokens", "500")
        await pilot.press("w")
        await pilot.pause()
        written = Path(app.screen.written)
        await pilot.press("w")  # a second write never overwrites the first
        await pilot.pause()
        second = Path(app.screen.written)
    assert Path(scenarios_file).read_bytes() == original
    assert written.parent == Path(scenarios_file).parent and written != second
    assert written.name == "scenarios.truncated.edited.jsonl"
    run = read_trace(written).runs["truncated"]
    assert run.verdict()["ready"] and run.inputs["edits"] == [{"path": "/inputs/budgets/max_output_tokens", "value": 500}]


async def test_write_on_the_main_screen_exports_the_selected_run(scenarios_file):
    app = TraceApp(open_source([scenarios_file]))
    async with app.run_test(size=(160, 45)) as pilot:
        await open_run(pilot, "cross_tenant")
        await pilot.press("w")
        await pilot.pause()
    out = Path(scenarios_file).parent / "scenarios.cross_tenant.jsonl"  # as recorded: not named "edited"
    assert list(read_trace(out).runs) == ["cross_tenant"]
    assert not list(Path(scenarios_file).parent.glob("*edited*"))


def test_compare_view_snapshot(snap_compare, scenarios_file):
    async def run_before(pilot) -> None:
        await open_run(pilot, "unknown_tool", seq=3)
        await edit(pilot, "/responses/0/body/output/0/name", "read_order")
        await wait_until(pilot, lambda: isinstance(pilot.app.screen, CompareScreen))
        await pilot.pause()

    source = IndexedSource([scenarios_file], label="scenarios.jsonl")  # a stable header for the picture
    assert snap_compare(TraceApp(source), terminal_size=(160, 45), run_before=run_before)


def test_edit_dialog_snapshot(snap_compare, scenarios_file):
    async def run_before(pilot) -> None:
        await open_run(pilot, "cross_tenant", seq=3)
        await pilot.press("e")
        await pilot.pause()
        pilot.app.screen.query_one("#edit-value").value = "{broken"
        pilot.app.screen.query_one("#edit-path").value = "/inputs/budgets/max_calls"
        await pilot.press("enter")
        await pilot.pause()

    source = IndexedSource([scenarios_file], label="scenarios.jsonl")
    assert snap_compare(TraceApp(source), terminal_size=(120, 30), run_before=run_before)


async def test_the_path_box_completes_editable_paths(scenarios_file):
    app = TraceApp(open_source([scenarios_file]))
    async with app.run_test(size=(160, 45)) as pilot:
        await open_run(pilot, "single")
        await pilot.press("e")
        await pilot.pause()
        box = app.screen.query_one("#edit-path")
        box.value = ""
        box.focus()
        await pilot.press(*"/inputs/bu")
        await pilot.pause(0.1)
        await pilot.press("right")  # accept the suggestion
        await pilot.pause()
        assert box.value == "/inputs/budgets"
        await pilot.press(*"/max_c", "right", "enter")
        await pilot.pause()
        assert box.value == "/inputs/budgets/max_calls"
        assert "current (whole number) 4" in str(app.screen.query_one("#edit-current").render())


async def test_edit_on_a_run_without_its_inputs_line_says_why(tmp_path):
    path = tmp_path / "zero.jsonl"
    path.write_bytes(b'{"rec":"summary","run_id":"zero","status":"answer_ready","ready":true,'
                     b'"metrics":{"model_calls":0},"first_failure":null}\n')
    app = TraceApp(open_source([str(path)]))
    async with app.run_test(size=(160, 45)) as pilot:
        await open_run(pilot, "zero")
        await pilot.press("e")
        await pilot.pause()
        assert isinstance(app.screen, MainScreen)
        assert any("no recorded inputs" in str(n.message) for n in app._notifications)
