"""The explorer's way to a proven fix: `n E Enter`, the inputs tree, and the editor and compare fixes."""
from __future__ import annotations

from pathlib import Path

from textual.widgets import TextArea, Tree

from tracetui.trace.index import IndexedSource
from tracetui.trace.format import LANES
from tracetui.ui.app import TraceApp
from tracetui.ui.app import open_paths as open_source
from tracetui.ui.screens.compare import CompareScreen
from tracetui.ui.screens.confirm import ConfirmQuit
from tracetui.ui.screens.edit import EditScreen
from tracetui.ui.screens.fixes import FixesScreen
from tracetui.ui.screens.inputs import InputsScreen
from tracetui.ui.screens.main import MainScreen
from tracetui.ui.widgets.run_list import RunList
from tracetui.ui.widgets.swimlanes import SwimLanes

from test_replay_ui import open_run
from ui_helpers import screen_text, wait_until


async def scanned(pilot) -> None:
    await pilot.pause()
    while getattr(pilot.app.screen, "scanning", False):
        await pilot.pause(0.05)


async def test_n_E_enter_opens_the_first_failing_run_fixed_in_the_compare_view(scenarios_file):
    """Three keys after `tracetui open FILE`: the first failed run, its fixes, the best one applied."""
    app = TraceApp(open_source([scenarios_file]))
    async with app.run_test(size=(160, 45)) as pilot:
        await scanned(pilot)
        await pilot.press("n", "E", "enter")  # Enter may come before the first proof: it waits for it
        await wait_until(pilot, lambda: isinstance(app.screen, CompareScreen), tries=100)
        screen = app.screen
        assert isinstance(screen, CompareScreen)
        assert screen.outcome.original.run_id == "tool_failure"
        assert screen.outcome.after["ready"] and not screen.outcome.before["ready"]
        text = screen_text(app)
        assert "edit  /inputs/tool_data/failures = {}" in text
        assert "receipt failed at step 5 (tool_failed)  →  answer ready" in text


async def test_the_fixes_panel_lists_proven_fixes_with_their_verdicts_and_copies_a_command(scenarios_file):
    app = TraceApp(open_source([scenarios_file]))
    async with app.run_test(size=(160, 45)) as pilot:
        await open_run(pilot, "cross_tenant")
        await pilot.press("E")
        await wait_until(pilot, lambda: isinstance(app.screen, FixesScreen) and app.screen.done)
        panel = app.screen
        # the caller asked for an order of another tenant: the check held, so each edit that passes is a what-if,
        # and, as in the CLI, no partial is listed (answering about o-1 instead is not what was asked)
        assert [(p.kind, p.candidate.side) for p in panel.shown] == [("what_if", "caller"), ("what_if", "data")]
        assert any(p.kind == "partial" for p in panel.proofs)  # proven, and left out
        text = screen_text(app)
        assert "fixes for cross_tenant · ✗ permission_denied @ authorization 4 · guard: a check did its job" in text
        assert "the authorization check held: the caller asked for o-2, which belongs to shop-b" in text
        assert "no fix · 2 what-ifs · 3 tried" in text
        assert "? what-if · caller     the caller would need tenant shop-b and user u-2" in text
        assert "why not: would defeat the authorization check: it changes who the caller is" in text
        assert "/inputs/principal = {\"tenant\":\"shop-b\",\"user\":\"u-2\"}  → ✓ answer_ready" in text
        assert "◐ partial" not in text and "order_id o-1" not in text
        await pilot.press("y")
        await pilot.pause()
        assert app.clipboard == (f"tracetui replay {scenarios_file} --run cross_tenant "
                                 "--set '/inputs/principal={\"tenant\":\"shop-b\",\"user\":\"u-2\"}'")
        await pilot.press("down", "y")
        await pilot.pause()
        assert app.clipboard.startswith(f"tracetui replay {scenarios_file} --run cross_tenant "
                                        "--set '/inputs/tool_data/orders/o-2={")
        await pilot.press("enter")  # the highlighted one (the order's owner), not the top one
        await wait_until(pilot, lambda: isinstance(app.screen, CompareScreen))
        assert [path for path, _ in app.screen.outcome.edits] == ["/inputs/tool_data/orders/o-2"]


async def test_a_run_that_needs_two_edits_says_so_in_the_panel(scenarios_file):
    app = TraceApp(open_source([scenarios_file]))
    async with app.run_test(size=(160, 45)) as pilot:
        await open_run(pilot, "refusal")
        await pilot.press("E")
        await wait_until(pilot, lambda: isinstance(app.screen, FixesScreen) and app.screen.done)
        text = screen_text(app)
        assert "no single edit fixes this run: each fix is a pair of edits" in text
        assert "✓ fix · model  2 edits: the model should have called read_order with order_id o-1, then answered" in text
        assert "◐ partial" not in text  # a fix is proven: as in the CLI, the partial it grew from is not listed


async def test_E_on_a_ready_run_or_a_run_without_inputs_says_why(scenarios_file, tmp_path):
    app = TraceApp(open_source([scenarios_file]))
    async with app.run_test(size=(160, 45)) as pilot:
        await open_run(pilot, "single")
        await pilot.press("E")
        await pilot.pause()
        assert isinstance(app.screen, MainScreen)
        assert any("answer-ready: nothing to fix" in str(n.message) for n in app._notifications)
    path = tmp_path / "foreign.jsonl"
    path.write_bytes(b'{"rec":"summary","run_id":"f","status":"tool_failed","ready":false,"metrics":{},'
                     b'"first_failure":null}\n')
    app = TraceApp(open_source([str(path)]))
    async with app.run_test(size=(160, 45)) as pilot:
        await open_run(pilot, "f")
        for key in ("E", "i"):
            await pilot.press(key)
            await pilot.pause()
            assert isinstance(app.screen, MainScreen)
        assert sum("cannot be re-run" in str(n.message) for n in app._notifications) == 2


async def test_the_inputs_tree_shows_paths_and_enter_on_a_leaf_edits_it(scenarios_file):
    app = TraceApp(open_source([scenarios_file]))
    async with app.run_test(size=(160, 45)) as pilot:
        await open_run(pilot, "truncated")
        await pilot.press("i")
        await pilot.pause()
        assert isinstance(app.screen, InputsScreen)
        tree = app.screen.query_one(Tree)
        budgets = next(n for n in tree.root.children if n.data[0] == ["inputs", "budgets"])
        tree.move_cursor(budgets)
        await pilot.press("enter")  # an object opens
        await pilot.pause()
        text = screen_text(app)
        assert "max_output_tokens" in text and "/inputs/budgets/max_output_tokens" in text
        leaf = next(n for n in budgets.children if n.data[0][-1] == "max_output_tokens")
        tree.move_cursor(leaf)
        await pilot.press("enter")  # a leaf opens the editor on its path
        await pilot.pause()
        editor = app.screen
        assert isinstance(editor, EditScreen)
        assert editor.query_one("#edit-path").value == "/inputs/budgets/max_output_tokens"
        assert editor.query_one("#edit-value").value == "16"
        editor.query_one("#edit-value").value = "500"
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, CompareScreen))
        assert app.screen.outcome.after["ready"]
        assert app.screen.outcome.edits == [("/inputs/budgets/max_output_tokens", 500)]


async def test_an_object_is_edited_as_json_over_several_lines(scenarios_file):
    app = TraceApp(open_source([scenarios_file]))
    async with app.run_test(size=(160, 45)) as pilot:
        await open_run(pilot, "cross_tenant")
        await pilot.press("i")
        await pilot.pause()
        tree = app.screen.query_one(Tree)
        tree.move_cursor(next(n for n in tree.root.children if n.data[0] == ["inputs", "principal"]))
        await pilot.press("e")
        await pilot.pause()
        editor = app.screen
        area = editor.query_one("#edit-json", TextArea)
        assert area.display and not editor.query_one("#edit-value").display
        assert area.text == '{\n  "tenant": "shop-a",\n  "user": "u-1"\n}'
        area.load_text('{\n  "tenant": "shop-b",\n  "user": "u-2"\n}')
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: isinstance(app.screen, CompareScreen))
        assert app.screen.outcome.after["ready"]


async def test_the_value_follows_the_path_and_a_typo_is_refused_in_words(scenarios_file):
    app = TraceApp(open_source([scenarios_file]))
    async with app.run_test(size=(160, 45)) as pilot:
        await open_run(pilot, "truncated")
        await pilot.press("e")
        await pilot.pause()
        editor = app.screen
        path, value = editor.query_one("#edit-path"), editor.query_one("#edit-value")
        path.value = "/inputs/budgets/max_output_tokens"
        await pilot.pause()
        assert value.value == "16"
        path.value = "/inputs/budgets/max_turns"  # the value box was not touched: it follows the path
        await pilot.pause()
        assert value.value == "4"
        value.value = "9"
        path.value = "/inputs/budgets/max_calls"  # a value the user typed stays theirs
        await pilot.pause()
        assert value.value == "9"
        path.value = "/inputs/budgets/max_output_token"
        await pilot.pause()
        await pilot.press("enter")
        await pilot.pause()
        assert app.screen is editor
        error = str(editor.query_one("#edit-error").render())
        assert "no field 'max_output_token' here (did you mean 'max_output_tokens'?)" in error
        jargon = ("line 1 column", "char ", "Error:", "Unresolvable", "Traceback", "unexpected character")
        for bad_path, bad_value in (("/inputs/budgets/max_calls", "lots"), ("/inputs/principal", "{broken")):
            path.value = bad_path
            await pilot.pause()
            if bad_path == "/inputs/principal":
                assert editor.query_one("#edit-json", TextArea).display  # an object: the JSON editor
                editor.query_one("#edit-json", TextArea).load_text(bad_value)
                await pilot.press("ctrl+s")
            else:
                value.value = bad_value
                await pilot.press("enter")
            await pilot.pause()
            error = str(editor.query_one("#edit-error").render())
            assert error.startswith("✗ ") and app.screen is editor and "is not valid JSON" in error
            assert not any(j in error for j in jargon), error
        await pilot.press("escape")
        await open_run(pilot, "single")
        await pilot.press("e")
        await pilot.pause()
        editor = app.screen
        editor.query_one("#edit-path").value = "/inputs/tools/0/parameters"  # JSON the loop cannot use
        await pilot.pause()
        editor.query_one("#edit-json", TextArea).load_text('{"$ref": "#/x"}')
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: any("cannot re-run" in str(n.message) for n in app._notifications))
        message = next(str(n.message) for n in app._notifications if "cannot re-run" in str(n.message))
        assert "not a JSON Schema the loop can check arguments with" in message
        assert not any(j in message for j in jargon), message


async def compare_unknown_tool(pilot) -> CompareScreen:
    """unknown_tool with the tool the model should have called: one edit that makes it answer-ready."""
    await open_run(pilot, "unknown_tool", seq=3)
    await pilot.press("e")
    await pilot.pause()
    pilot.app.screen.query_one("#edit-path").value = "/responses/0/body/output/0/name"
    pilot.app.screen.query_one("#edit-value").value = "read_order"
    await pilot.press("enter")
    await wait_until(pilot, lambda: isinstance(pilot.app.screen, CompareScreen))
    return pilot.app.screen


async def test_the_compare_view_shows_the_edit_and_the_edited_run_s_answer_at_120_columns(scenarios_file):
    app = TraceApp(open_source([scenarios_file]))
    async with app.run_test(size=(120, 40)) as pilot:
        await compare_unknown_tool(pilot)
        text = screen_text(app)
        assert "edit  /responses/0/body/output/0/name = read_order" in text
        assert "● verified" in text  # both runs on one step axis, full width: the answer step is in view


async def test_left_and_right_move_both_runs_so_every_step_is_reachable(scenarios_file):
    app = TraceApp(open_source([scenarios_file]))
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await compare_unknown_tool(pilot)
        original, edited = screen.query(SwimLanes)
        # at 80 columns the cells are narrow (widgets/cell_words.py): the answer's "verified" reads "ok"
        for _ in range(len(edited.events)):
            await pilot.press("right")
        await pilot.pause()
        assert edited.cursor == len(edited.events) - 1 and original.cursor == len(original.events) - 1
        await pilot.press("down", "down", "down", "down", "down", "down", "down", "down")  # the view scrolls down to it
        await pilot.pause()
        answer_row = edited.render_line(len(LANES)).text
        assert answer_row.rstrip().endswith(("● ok", "● verified")), answer_row  # the last step, in view
        await pilot.press("left")
        await pilot.pause()
        assert edited.cursor == len(edited.events) - 2


async def test_the_compare_view_scrolls_to_its_last_line_on_a_small_terminal(scenarios_file):
    app = TraceApp(open_source([scenarios_file]))
    async with app.run_test(size=(80, 24)) as pilot:
        await compare_unknown_tool(pilot)
        assert "answer: answer matches 1 tool receipt" not in screen_text(app)
        await pilot.press("end")
        await pilot.pause()
        assert "answer: answer matches 1 tool receipt" in screen_text(app).replace("\n", " ")


async def test_q_in_the_compare_view_asks_before_losing_an_unwritten_re_run(scenarios_file):
    app = TraceApp(open_source([scenarios_file]))
    async with app.run_test(size=(160, 45)) as pilot:
        await open_run(pilot, "truncated")
        await pilot.press("E")
        await wait_until(pilot, lambda: isinstance(app.screen, FixesScreen) and app.screen.done)
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, CompareScreen))
        await pilot.press("q")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmQuit) and app.is_running
        await pilot.press("escape")  # stay
        await pilot.pause()
        assert isinstance(app.screen, CompareScreen)
        await pilot.press("q", "w")  # write it, then quit
        await pilot.pause()
    written = list(Path(scenarios_file).parent.glob("scenarios.truncated.edited*.jsonl"))
    assert len(written) == 1 and app.return_code in (None, 0)


async def test_ctrl_q_and_the_palette_s_quit_ask_too_before_losing_an_unwritten_re_run(scenarios_file):
    """Textual's own quit (ctrl+q, the command palette) goes through the same question as q."""
    app = TraceApp(open_source([scenarios_file]))
    async with app.run_test(size=(160, 45)) as pilot:
        await compare_unknown_tool(pilot)
        await pilot.press("ctrl+q")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmQuit) and app.is_running
        await pilot.press("escape")  # stay
        await pilot.pause()
        assert isinstance(app.screen, CompareScreen)
        await pilot.press("e")  # the editor over the compare view: quitting from there asks as well
        await pilot.pause()
        await app.run_action("app.quit")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmQuit) and app.is_running
        await pilot.press("q")  # quit without writing
        await pilot.pause()
    assert not app.is_running


async def test_keys_after_a_search_work_as_keys(scenarios_file):
    app = TraceApp(open_source([scenarios_file]))
    async with app.run_test(size=(160, 45)) as pilot:
        await scanned(pilot)
        await pilot.press("slash", *"cross", "e")
        await pilot.pause()
        assert isinstance(app.screen, EditScreen)  # `e` edits: "crosse" would match no run
        main = app.screen_stack[0]
        assert main.query_one("#filter").value == "cross"
        assert main.query_one(RunList).current.run_id == "cross_tenant"
        await pilot.press("escape")
        await pilot.press("slash", *"re")  # letters that still match runs are typed: "re" is a search
        await pilot.pause()
        assert main.query_one("#filter").value == "crossre" or main.query_one("#filter").value.endswith("re")
        assert app.focused is main.query_one("#filter")


async def test_the_failing_lane_and_a_whole_footer_at_80_columns(scenarios_file):
    app = TraceApp(IndexedSource([scenarios_file], label="scenarios.jsonl"))
    async with app.run_test(size=(80, 24)) as pilot:
        await open_run(pilot, "cross_tenant")
        lines = screen_text(app).splitlines()
        assert any("✗ cross_tenant" in line and " auth " in line for line in lines)
        footer = lines[-1]
        for label in ("↑↓ runs", "n next fail", "E fixes", "e edit", "i inputs", "/ search", "? help", "q quit",
                      "^p palette"):
            assert label in footer, footer
        await pilot.press("question_mark")
        await pilot.pause()
        text = screen_text(app)
        words = " ".join(text.replace("│", " ").split())
        assert "filter box → run list → swimlanes → event detail" in words  # the real tab order at this size
        assert "^p" in text and "palette" in text and "pgdn" in text


async def test_a_search_that_already_finds_nothing_keeps_its_keys_as_text(scenarios_file):
    app = TraceApp(open_source([scenarios_file]))
    async with app.run_test(size=(160, 45)) as pilot:
        await scanned(pilot)
        await pilot.press("slash", *"zz", "e", "n")
        await pilot.pause()
        assert isinstance(app.screen, MainScreen) and app.screen.query_one("#filter").value == "zzen"
