"""`y`: a copy menu wherever something is selected, and the commands it copies run as they are.

The main screen offers the value and JSON Pointer path of the field `e` would edit, the event's JSON, the run id,
and the replay and explain commands; the inputs tree, the whole-value screen and the compare view offer theirs.
A run read from standard input is named in a command by a copy of it, which the test runs.
"""
from __future__ import annotations

import os
import shlex
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

import orjson
import pytest
from textual.widgets import Tree

from tracetui.ui.app import TraceApp
from tracetui.ui.app import open_paths as open_source
from tracetui.ui.screens.compare import CompareScreen
from tracetui.ui.screens.copy_menu import CopyMenu
from tracetui.ui.screens.fixes import FixesScreen
from tracetui.ui.screens.inputs import InputsScreen
from tracetui.ui.screens.value import ValueScreen

from test_replay_ui import open_run
from ui_helpers import screen_text, wait_until

SIZE = (80, 24)


def records_of(path: str, run_id: str) -> list[dict]:
    return [r for r in map(orjson.loads, Path(path).read_bytes().splitlines()) if r.get("run_id") == run_id]


def event_of(path: str, run_id: str, seq: int) -> dict:
    return next(r for r in records_of(path, run_id) if r["rec"] == "event" and r["seq"] == seq)


def toasts(app) -> list[str]:
    return [n.message for n in app._notifications]


async def choose(pilot, key: str) -> None:
    """`y`, then the menu's ``key``."""
    await pilot.press("y")
    await pilot.pause()
    assert isinstance(pilot.app.screen, CopyMenu), type(pilot.app.screen)
    await pilot.press(key)
    await pilot.pause()
    assert not isinstance(pilot.app.screen, CopyMenu)


def tracetui_argv(command: str) -> list[str]:
    """A copied command, run with this interpreter's tracetui."""
    argv = shlex.split(command)
    assert argv[0] == "tracetui"
    return [sys.executable, "-m", "tracetui", *argv[1:]]


@pytest.fixture
def private_tmp(tmp_path, monkeypatch) -> Path:
    """The system temporary folder, for this test only: where a copy of a run from standard input goes."""
    folder = tmp_path / "tmp"
    folder.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    return folder


async def test_y_on_the_main_screen_copies_each_item_exactly(scenarios_file):
    app = TraceApp(open_source([scenarios_file]))
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await open_run(pilot, "tool_failure", seq=5)  # the failing receipt: e edits the injected failure
        await pilot.press("y")
        await pilot.pause()
        assert isinstance(app.screen, CopyMenu)
        text = screen_text(app)
        for row in (" v  value ", " p  path ", " j  event JSON ", " i  run id ", " r  replay command ",
                    " x  explain command "):
            assert row in text, row
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, CopyMenu) and app.clipboard == ""

        file = shlex.quote(scenarios_file)
        expected = {
            "v": '{"read_order:o-1":"service_unavailable"}',
            "p": "/inputs/tool_data/failures",
            "j": orjson.dumps(event_of(scenarios_file, "tool_failure", 5)).decode(),
            "i": "tool_failure",
            "r": f"tracetui replay {file} --run tool_failure",
            "x": f"tracetui explain {file} --run tool_failure",
        }
        said = {}
        for key, text in expected.items():
            await choose(pilot, key)
            assert app.clipboard == text, key
            said[key] = toasts(app)[-1]
            assert said[key].startswith("copied ") and len(said[key]) <= 80, said
        assert said["i"] == "copied the run id: tool_failure"


async def test_y_in_the_inputs_tree_copies_the_fields_path_and_value(scenarios_file):
    app = TraceApp(open_source([scenarios_file]))
    async with app.run_test(size=SIZE) as pilot:
        await open_run(pilot, "cross_tenant")
        await pilot.press("i")
        await pilot.pause()
        assert isinstance(app.screen, InputsScreen)
        tree = app.screen.query_one(Tree)
        node = next(n for n in tree.root.children if n.data[0] == ["inputs", "user_input"])
        tree.move_cursor(node)
        await pilot.pause()
        await choose(pilot, "p")
        assert app.clipboard == "/inputs/user_input"
        await choose(pilot, "v")
        user_input = records_of(scenarios_file, "cross_tenant")[0]["inputs"]["user_input"]
        assert isinstance(user_input, str) and app.clipboard == user_input  # text as it is, not quoted
        principal = next(n for n in tree.root.children if n.data[0] == ["inputs", "principal"])
        tree.move_cursor(principal)
        await pilot.pause()
        await choose(pilot, "v")
        assert app.clipboard == '{"tenant":"shop-a","user":"u-1"}'


async def test_y_in_the_whole_value_screen_copies_the_event_as_json(scenarios_file):
    app = TraceApp(open_source([scenarios_file]))
    async with app.run_test(size=SIZE) as pilot:
        await open_run(pilot, "cross_tenant", seq=4)
        await pilot.press("v")
        await pilot.pause()
        assert isinstance(app.screen, ValueScreen)
        event = event_of(scenarios_file, "cross_tenant", 4)
        await choose(pilot, "j")
        assert app.clipboard == orjson.dumps(event, option=orjson.OPT_INDENT_2).decode()
        await choose(pilot, "l")
        assert app.clipboard == orjson.dumps(event).decode()
        assert isinstance(app.screen, ValueScreen)


async def test_y_in_the_compare_view_copies_the_replay_command_with_its_edits(scenarios_file):
    app = TraceApp(open_source([scenarios_file]))
    async with app.run_test(size=(160, 45)) as pilot:
        await open_run(pilot, "tool_failure")
        await pilot.press("E", "enter")
        await wait_until(pilot, lambda: isinstance(app.screen, CompareScreen), tries=200)
        assert isinstance(app.screen, CompareScreen)
        await choose(pilot, "r")
        assert app.clipboard == shlex.join(["tracetui", "replay", scenarios_file, "--run", "tool_failure",
                                            "--set", "/inputs/tool_data/failures={}"])
        done = subprocess.run(tracetui_argv(app.clipboard), capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stdout + done.stderr  # the edit makes it answer-ready
        await choose(pilot, "i")
        assert app.clipboard == "tool_failure"


def stdin_app(path: str) -> TraceApp:
    """The explorer as `cat PATH | tracetui open -` opens it."""
    return TraceApp(open_source(["-"], stdin=open(path, "rb")))


async def test_with_standard_input_the_copied_commands_name_a_copy_of_the_run_and_run(scenarios_file, private_tmp):
    app = stdin_app(scenarios_file)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await open_run(pilot, "cross_tenant")
        await choose(pilot, "r")
        replay = app.clipboard
        argv = shlex.split(replay)
        assert argv[:2] == ["tracetui", "replay"] and argv[3:] == ["--run", "cross_tenant"], replay
        copy = Path(argv[2])
        folder = private_tmp / f"tracetui-{os.getuid()}"
        assert copy.parent == folder and stat.S_IMODE(folder.stat().st_mode) == 0o700
        assert copy.read_bytes() == b"".join(orjson.dumps(r) + b"\n" for r in records_of(scenarios_file,
                                                                                          "cross_tenant"))
        done = subprocess.run(tracetui_argv(replay), capture_output=True, text=True, timeout=120)
        assert done.returncode == 1, done.stderr  # the run failed, and so does its re-run
        assert "the re-run reproduces the original byte for byte" in done.stdout
        await choose(pilot, "x")
        explain = app.clipboard
        assert shlex.split(explain) == ["tracetui", "explain", str(copy), "--run", "cross_tenant"]  # the same copy
        done = subprocess.run(tracetui_argv(explain), capture_output=True, text=True, timeout=120)
        assert done.returncode == 1, done.stderr  # read and explained: no fix (a guard held), not a bad input (2)
        assert "run cross_tenant" in done.stdout and "the authorization check held" in done.stdout
        assert "./-" not in " ".join(toasts(app))


async def test_with_standard_input_the_fixes_panel_copies_a_command_that_proves_the_fix(scenarios_file, private_tmp):
    app = stdin_app(scenarios_file)
    async with app.run_test(size=(160, 45)) as pilot:
        await open_run(pilot, "tool_failure")
        await pilot.press("E")
        await wait_until(pilot, lambda: isinstance(app.screen, FixesScreen) and app.screen.done, tries=200)
        await pilot.press("y")
        await pilot.pause()
        argv = shlex.split(app.clipboard)
        assert argv[:2] == ["tracetui", "replay"] and Path(argv[2]).parent == private_tmp / f"tracetui-{os.getuid()}"
        assert argv[3:] == ["--run", "tool_failure", "--set", "/inputs/tool_data/failures={}"]
        done = subprocess.run(tracetui_argv(app.clipboard), capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stdout + done.stderr


async def test_with_standard_input_y_says_why_when_no_copy_can_be_written(scenarios_file, private_tmp):
    (private_tmp / f"tracetui-{os.getuid()}").write_text("not a folder")  # someone else's name in the way
    app = stdin_app(scenarios_file)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await open_run(pilot, "cross_tenant")
        await choose(pilot, "r")
        assert app.clipboard == ""
        said = toasts(app)[-1]
        assert "has no file of its own (standard input)" in said and said.endswith(": not copied"), said
        await choose(pilot, "i")  # what needs no file is still copied
        assert app.clipboard == "cross_tenant"


async def test_y_copies_a_run_id_with_a_control_character_as_json_and_never_a_command_with_it(tmp_path):
    from tracetui.loop.runner import run_scenario

    run_id = "ct\x1b[201~; touch pwned"
    path = tmp_path / "t.jsonl"
    path.write_bytes(b"".join(orjson.dumps({**r, "run_id": run_id}) + b"\n"
                              for r in run_scenario("cross_tenant").records))
    app = TraceApp(open_source([str(path)]))
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await open_run(pilot, run_id)
        await choose(pilot, "i")
        assert app.clipboard == orjson.dumps(run_id).decode()  # "ct\u001b[201~; touch pwned": no raw ESC
        await choose(pilot, "r")
        assert app.clipboard == orjson.dumps(run_id).decode()  # unchanged: no command was copied
        assert toasts(app)[-1].endswith(": not copied")


async def test_with_standard_input_the_page_S_writes_names_the_copy_in_its_commands(scenarios_file, private_tmp,
                                                                                  tmp_path, monkeypatch):
    import html

    monkeypatch.chdir(tmp_path)  # a run from standard input has its page written in the current folder
    app = stdin_app(scenarios_file)
    async with app.run_test(size=(160, 45), notifications=True) as pilot:
        await open_run(pilot, "tool_failure")
        await pilot.press("S")
        await wait_until(pilot, lambda: any(m.startswith("wrote a page") for m in toasts(app)), tries=1500)
    page = html.unescape((tmp_path / "stdin.tool_failure.html").read_text())
    copies = list((private_tmp / f"tracetui-{os.getuid()}").glob("run-tool_failure.*.jsonl"))
    assert len(copies) == 1
    assert f"tracetui replay {copies[0]} --run tool_failure --set '/inputs/tool_data/failures={{}}'" in page
    assert "./-" not in page


async def test_a_run_id_that_looks_like_a_secret_never_names_a_copy_and_its_copy_says_redacted(tmp_path, private_tmp):
    from tracetui.loop.runner import run_scenario

    secret = "sk-proj-abcdefghijklmnopqrstuvwxyz0123456789ABCD"
    path = tmp_path / "t.jsonl"
    path.write_bytes(b"".join(orjson.dumps({**r, "run_id": secret}) + b"\n"
                              for r in run_scenario("cross_tenant").records))
    app = stdin_app(str(path))
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await open_run(pilot, secret)
        await choose(pilot, "r")
        assert app.clipboard == "" and toasts(app)[-1].endswith(": not copied")
        await choose(pilot, "i")
        assert app.clipboard == "<redacted>"
        assert toasts(app)[-1] == "copied the run id (redacted): <redacted>"  # not "a control character"
    names = [p.name for p in private_tmp.rglob("*")]
    assert not any("abcdefghijklmnop" in name for name in names), names


class ToastScreen:
    """What copy_command needs of a screen: an app with a clipboard, and toasts."""

    def __init__(self) -> None:
        self.app = self
        self.clipboard = ""
        self.said: list[str] = []

    def copy_to_clipboard(self, text: str) -> None:
        self.clipboard = text

    def notify(self, message: str, **_: object) -> None:
        self.said.append(message)


def test_a_copied_command_with_a_redacted_value_and_a_very_long_copy_say_so():
    from tracetui.explain.command import PrintedCommand
    from tracetui.ui.clipboard import LONG_COPY, copy_command, copy_text

    screen = ToastScreen()
    assert copy_command(screen, "the replay command", PrintedCommand("tracetui replay t --run r --set /a='<redacted>'",
                                                                     redacted=True))
    assert screen.clipboard.startswith("tracetui replay t")
    assert "holds <redacted>: may not reproduce" in screen.said[-1] and len(screen.said[-1]) <= 80
    copy_command(screen, "the replay command", PrintedCommand("tracetui replay t --run r"))
    assert "reproduce" not in screen.said[-1]
    copy_text(screen, "the value", "x" * (LONG_COPY + 1))
    assert "too long for some terminals" in screen.said[-1] and len(screen.said[-1]) <= 80
    copy_text(screen, "the value", "x" * 100)
    assert "too long" not in screen.said[-1]
