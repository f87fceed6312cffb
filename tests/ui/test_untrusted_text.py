"""Trace text and file names in the explorer are only ever literal, and never show a secret.

Run ids, reasons and paths come from the file (or its name): a ``[/]`` in them must
not be read as markup (it crashed notifications with ``MarkupError``), a
``[@click=…]`` must not become an action link, and whatever the trace writer
would redact must not be shown either.
"""
from __future__ import annotations

import ast
import re
from pathlib import Path

import orjson
import pytest

import tracetui.ui
from tracetui.loop.runner import run_scenario
from tracetui.ui.app import open_paths as open_source
from tracetui.trace.writer import write_trace
from tracetui.ui.app import TraceApp
from tracetui.ui.widgets.detail import DetailPane
from tracetui.ui.widgets.run_list import RunList
from tracetui.ui.widgets.swimlanes import SwimLanes
from tracetui.ui.widgets.verdict import VerdictBanner

from secret_corpus import instances, pieces
from ui_helpers import screen_strips, screen_text

SIZE = (160, 45)


async def select_run(pilot, run_id: str) -> None:
    await pilot.pause()
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()
    runs = pilot.app.screen.query_one(RunList)
    assert runs.select_index(next(i for i, e in enumerate(runs.entries) if e.run_id == run_id))
    await pilot.pause()


def notifications(app) -> list:
    return list(app._notifications)


def single_run(run_id: str) -> list[dict]:
    return [{**record, "run_id": run_id} for record in run_scenario("single").records]


async def test_writing_a_run_whose_id_is_markup_does_not_crash(tmp_path):
    path = tmp_path / "t.jsonl"
    write_trace(path, single_run("[/]"))
    app = TraceApp(open_source([str(path)]))
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await select_run(pilot, "[/]")
        await pilot.press("w")
        await pilot.pause()
        assert app.is_running
        wrote = [n for n in notifications(app) if n.message.startswith("wrote run")]
    assert wrote and wrote[0].message.startswith("wrote run [/] to ") and not wrote[0].markup


async def test_editing_a_run_without_its_run_line_whose_id_is_markup_does_not_crash(tmp_path):
    path = tmp_path / "zero.jsonl"
    path.write_bytes(b'{"rec":"summary","run_id":"[/]","status":"answer_ready","ready":true,'
                     b'"metrics":{"model_calls":0},"first_failure":null}\n')
    app = TraceApp(open_source([str(path)]))
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await select_run(pilot, "[/]")
        await pilot.press("e")
        await pilot.pause()
        assert app.is_running
        said = [n for n in notifications(app) if "no recorded inputs" in n.message]
    assert said and "run [/] has" in said[0].message and not said[0].markup


async def test_a_trace_under_a_directory_named_like_markup_can_be_written_from(tmp_path):
    folder = tmp_path / "[" / "]"
    folder.mkdir(parents=True)
    path = folder / "t.jsonl"
    write_trace(path, single_run("single"))
    app = TraceApp(open_source([str(path)]))
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await select_run(pilot, "single")
        await pilot.press("w")
        await pilot.pause()
        assert app.is_running
        wrote = [n for n in notifications(app) if n.message.startswith("wrote run")]
    assert wrote and "/[/]/t.single.jsonl" in wrote[0].message  # an unedited run: no "edited" in its name
    assert (folder / "t.single.jsonl").exists()


async def test_a_file_name_with_an_action_link_stays_text(tmp_path):
    path = tmp_path / "[@click=app.quit]x.jsonl"
    write_trace(path, single_run("single"))
    app = TraceApp(open_source([str(path)]))
    async with app.run_test(size=SIZE, notifications=True) as pilot:  # toasts shown, as for a user
        await select_run(pilot, "single")
        await pilot.press("w")
        await pilot.pause()
        assert app.is_running
        wrote = [n for n in notifications(app) if n.message.startswith("wrote run")]
        assert wrote and "[@click=app.quit]x.single.jsonl" in wrote[0].message and not wrote[0].markup
        await pilot.pause()
        assert "/[@click=app.quit]x.single.jsonl" in screen_text(app)  # the toast shows the name as it is
        for strip in screen_strips(app):
            for segment in strip:
                assert "app.quit" not in str((segment.style.meta if segment.style else {}).get("@click")), segment
    assert (tmp_path / "[@click=app.quit]x.single.jsonl").exists()


def failing_run(run_id: str) -> list[dict]:
    return [{**record, "run_id": run_id} for record in run_scenario("cross_tenant").records]


@pytest.mark.parametrize("run_id", ["[/]", "[@click=app.quit]x"])
@pytest.mark.parametrize("key", ["E", "i"])
async def test_the_fixes_panel_and_the_inputs_tree_show_a_markup_run_id_as_it_is(tmp_path, run_id, key):
    """Their titles name the run: ``[/]`` crashed them with MarkupError, ``[@click=…]`` made a link."""
    path = tmp_path / "t.jsonl"
    write_trace(path, failing_run(run_id))
    app = TraceApp(open_source([str(path)]))
    async with app.run_test(size=SIZE) as pilot:
        await select_run(pilot, run_id)
        await pilot.press(key)
        await pilot.pause()
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert app.is_running
        assert f"{'fixes for' if key == 'E' else 'inputs of'} {run_id}" in screen_text(app)
        for strip in screen_strips(app):
            for segment in strip:
                assert "app.quit" not in str((segment.style.meta if segment.style else {}).get("@click")), segment


def _notify_calls() -> list[tuple[str, int, ast.Call]]:
    calls = []
    for source in Path(tracetui.ui.__file__).parent.rglob("*.py"):
        for node in ast.walk(ast.parse(source.read_text())):
            if not isinstance(node, ast.Call):
                continue
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
            if name == "notify":
                calls.append((source.name, node.lineno, node))
            elif name == "call_from_thread" and node.args and isinstance(node.args[0], ast.Attribute) \
                    and node.args[0].attr == "notify":
                calls.append((source.name, node.lineno, ast.Call(func=node.args[0], args=node.args[1:],
                                                                   keywords=node.keywords)))
    return calls


def test_every_notification_of_trace_text_is_literal():
    """A notify() whose message is not a fixed string passes markup=False (the default parses markup)."""
    calls = _notify_calls()
    assert len(calls) >= 8  # the scan sees the explorer's notifications
    for where, line, call in calls:
        message = call.args[0] if call.args else next((k.value for k in call.keywords if k.arg == "message"), None)
        fixed = isinstance(message, ast.Constant) and isinstance(message.value, str) and "[" not in message.value
        literal = any(k.arg == "markup" and isinstance(k.value, ast.Constant) and k.value.value is False
                      for k in call.keywords)
        assert fixed or literal, f"{where}:{line}: notify() of variable text without markup=False"


# -- secrets ------------------------------------------------------------------------------------------------

def _secret_trace(tmp_path) -> tuple[str, list[tuple[str, str, str]]]:
    corpus = instances()
    lines = []
    for i, (_, text, _) in enumerate(corpus):
        run_id = f"run-{i} {text}"
        lines += [
            {"rec": "event", "run_id": run_id, "seq": 1, "lane": "http", "kind": "http.response",
             "outcome": "failed", "code": text if i % 2 else "auth_error", "turn": 1, "call_id": f"c {text}",
             "summary": f"HTTP 401: {text}", "data": {"response": {"status": 401, "body": {"error": {"message": text}}},
                                                     "arguments": orjson.dumps({"q": text}).decode()}},
            {"rec": "summary", "run_id": run_id, "status": "auth_error", "ready": False,
             "first_failure": {"lane": "http", "seq": 1, "code": "auth_error", "reason": f"server said {text}"}},
        ]
    path = tmp_path / "secrets.jsonl"
    path.write_bytes(b"".join(orjson.dumps(line) + b"\n" for line in lines))  # as another tool might write it
    return str(path), corpus


@pytest.mark.parametrize("part", [0, 1])
async def test_the_explorer_never_shows_a_secret_the_file_would_redact(tmp_path, part):
    path, corpus = _secret_trace(tmp_path)
    app = TraceApp(open_source([path]))
    half = len(corpus) // 2
    chosen = list(enumerate(corpus))[half * part: half * (part + 1) if not part else None]
    async with app.run_test(size=SIZE) as pilot:
        for i, (name, text, secret) in chosen:
            await select_run(pilot, f"run-{i} {text}")
            screen = app.screen
            shown = [screen_text(app), screen.query_one(DetailPane).text.plain, screen.query_one(VerdictBanner).plain,
                     screen.query_one(SwimLanes).render_line(1).text, str(screen.query_one(DetailPane).border_title)]
            for text_shown in shown:
                left = [p for p in pieces(secret) if p in text_shown or orjson.dumps(p).decode()[1:-1] in text_shown]
                assert not left, (name, text_shown)
            assert "<redacted>" in shown[1]


async def test_the_whole_event_view_never_shows_a_secret_the_file_would_redact(tmp_path):
    """``v`` draws an event in lines of at most LINE_CHARS characters: the value is redacted whole first, so an
    object under a credential key is hidden as in the file, and a secret across a line's edge is caught whole."""
    from textual.widgets import Log

    from tracetui.ui.screens.value import LINE_CHARS, ValueScreen

    records = failing_run("cross_tenant")
    corpus = instances()
    pad = "x" * (LINE_CHARS - 7 - 10)  # each note starts 7 characters into its line: its secret crosses the edge
    records[1]["data"] = {"secret": {"value": "plain-nested-value"}, "notes": [f"{pad} {text}" for _, text, _ in corpus],
                          "title": "\x1b]2;pwned\x07\u202e\x9b\ttab"}
    path = tmp_path / "t.jsonl"
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in records))  # as another tool might write it
    app = TraceApp(open_source([str(path)]))
    async with app.run_test(size=SIZE) as pilot:
        await select_run(pilot, "cross_tenant")
        app.screen.action_jump_to_step(records[1]["seq"])
        await pilot.pause()
        await pilot.press("v")
        await pilot.pause()
        assert isinstance(app.screen, ValueScreen)
        shown = "".join(app.screen.query_one(Log).lines)  # a long line's parts joined again
    assert "plain-nested-value" not in shown and "<redacted>" in shown
    assert "pwned\\u0007\\u202e\\x9b\\ttab" in shown  # JSON escapes C0, the view escapes C1 and bidi
    assert not any(c in shown for c in "\x1b\x07\u202e\x9b\t")
    for name, _, secret in corpus:
        left = [p for p in pieces(secret) if p in shown or orjson.dumps(p).decode()[1:-1] in shown]
        assert not left, name


async def test_the_inputs_tree_and_the_editor_never_show_a_value_under_a_credential_key(tmp_path):
    """A value's key decides, as in the file: a tree row or an editor shows the value without its key."""
    from textual.widgets import Tree

    from tracetui.ui.screens.edit import EditScreen

    records = failing_run("cross_tenant")
    records[0]["inputs"]["principal"].update(password="hunter2-plain", api_key={"value": "plain-key-value"})
    path = tmp_path / "t.jsonl"
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in records))  # as another tool might write it
    app = TraceApp(open_source([str(path)]))
    async with app.run_test(size=SIZE) as pilot:
        await select_run(pilot, "cross_tenant")
        await pilot.press("i")
        await pilot.pause()
        tree = app.screen.query_one(Tree)
        principal = next(n for n in tree.root.children if n.data[0] == ["inputs", "principal"])
        tree.move_cursor(principal)
        await pilot.press("enter")
        await pilot.pause()
        text = screen_text(app)
        assert "/inputs/principal/password" in text and "/inputs/principal/api_key" in text
        assert "hunter2-plain" not in text and "plain-key-value" not in text and "<redacted>" in text
        for node in principal.children:
            tree.move_cursor(node)
            await pilot.press("e")
            await pilot.pause()
            assert isinstance(app.screen, EditScreen)
            text = screen_text(app)
            assert "hunter2-plain" not in text and "plain-key-value" not in text, node.data[0]
            await pilot.press("escape")
            await pilot.pause()


@pytest.mark.parametrize("run_id", ["ct\x1b[201~; touch pwned\r", "ct sk-proj-Q7xT2mV9pL4kR8wZ1nB6cY3hJ5fD0gSaT3BlbkFJ"])
async def test_y_never_copies_a_command_holding_a_control_character_or_a_secret(tmp_path, run_id):
    """A pasted ESC[201~ ends a shell's bracketed paste early (what follows runs); a secret is never copied out."""
    from tracetui.ui.screens.fixes import FixesScreen

    path = tmp_path / "t.jsonl"
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in failing_run(run_id)))  # as another tool might write it
    app = TraceApp(open_source([str(path)]))
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await pilot.pause()
        await app.workers.wait_for_complete()
        runs = app.screen.query_one(RunList)
        assert runs.select_index(0)
        await pilot.pause()
        await pilot.press("E")
        await pilot.pause()
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert isinstance(app.screen, FixesScreen) and app.screen.proofs
        await pilot.press("y")
        await pilot.pause()
        assert app.clipboard == ""
        said = [n for n in notifications(app) if "not copied" in n.message]
        assert said and not said[0].markup


CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def raw_controls(app) -> list[str]:
    return [seg.text for strip in screen_strips(app) for seg in strip if CONTROLS.search(seg.text)]


async def test_the_editor_never_puts_a_control_character_of_the_trace_on_screen(tmp_path):
    """The value box, the JSON editor, the path box and its suggestions: an OSC 2 in user_input set the
    terminal's title. A text with controls is offered as a JSON string, which reads back to the same value."""
    from textual.widgets import TextArea, Tree

    from tracetui.replay.edit import current_value, parse_value
    from tracetui.ui.screens.edit import EditScreen

    evil = "hi \x1b]2;PWNED\x1b\\ \x9b2J \u202eevil\x07\r"
    records = failing_run("cross_tenant")
    records[0]["inputs"]["user_input"] = evil
    records[0]["inputs"]["principal"]["note"] = evil
    records[0]["inputs"]["tool_data"]["orders"][f"o-9{evil}"] = {"tenant": "shop-a", "user": "u-1", "status": "x",
                                                                 "paid": 1.0, "refunded": 0.0}
    path = tmp_path / "t.jsonl"
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in records))  # as another tool might write it
    app = TraceApp(open_source([str(path)]))
    async with app.run_test(size=SIZE) as pilot:
        await select_run(pilot, "cross_tenant")
        await pilot.press("i")
        await pilot.pause()
        tree = app.screen.query_one(Tree)
        tree.move_cursor(next(n for n in tree.root.children if n.data[0] == ["inputs", "user_input"]))
        await pilot.press("enter")
        await pilot.pause()
        editor = app.screen
        assert isinstance(editor, EditScreen) and raw_controls(app) == []
        run = editor.run
        typed = editor.query_one("#edit-value").value
        current, exists = current_value(run, "/inputs/user_input")
        assert parse_value(current, typed, exists=exists) == evil  # unchanged, it reads back
        editor.query_one("#edit-path").value = "/inputs/principal"
        await pilot.pause()
        assert raw_controls(app) == []
        assert orjson.loads(editor.query_one("#edit-json", TextArea).text)["note"] == evil
        editor.query_one("#edit-path").value = "/inputs/tool_data/orders/o-9"  # a suggestion would follow
        await pilot.pause()
        assert raw_controls(app) == []
        await pilot.press("escape")
        await pilot.pause()
        tree = app.screen.query_one(Tree)
        data = next(n for n in tree.root.children if n.data[0] == ["inputs", "tool_data"])
        tree.move_cursor(data)
        await pilot.press("enter")
        await pilot.pause()
        orders = next(n for n in data.children if n.data[0][-1] == "orders")
        tree.move_cursor(orders)
        await pilot.press("enter")
        await pilot.pause()
        tree.move_cursor(next(n for n in orders.children if str(n.data[0][-1]).startswith("o-9")))
        await pilot.press("e")
        await pilot.pause()
        assert isinstance(app.screen, EditScreen) and raw_controls(app) == []
