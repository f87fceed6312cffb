"""`E` on a recorded agent's run: the command is asked for once per file, never taken from the trace."""
from __future__ import annotations

import sys
from pathlib import Path

from textual.widgets import Input

from tracetui.record.exchange import AgentExit, WireExchange
from tracetui.record.recording import run_records
from tracetui.trace.writer import write_trace
from tracetui.ui.app import TraceApp
from tracetui.ui.app import open_paths as open_source
from tracetui.ui.screens.agent_command import AgentCommandScreen
from tracetui.ui.screens.compare import CompareScreen
from tracetui.ui.screens.edit import EditScreen
from tracetui.ui.screens.fixes import FixesScreen

from test_replay_ui import open_run
from ui_helpers import screen_text, wait_until

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "explain"))
from agent_runs import first_messages, request, text_reply  # noqa: E402


def killed_agent_file(tmp_path: Path, hint: list[str]) -> str:
    """A trace holding one recorded agent run that was killed: no candidate, so E proves nothing (no re-run)."""
    exchanges = [WireExchange(0, "openai-chat", request(first_messages()), text_reply("Order o-1 shipped."), False)]
    records = run_records("record-agent", exchanges, AgentExit(None, "SIGKILL", False, True, None), hint,
                          {"openai": "https://api.openai.com"})
    path = tmp_path / "agent.jsonl"
    write_trace(path, records)
    return str(path)


async def test_E_on_a_recorded_run_asks_for_the_command_once_and_shows_the_hint_without_running_it(tmp_path):
    marker = tmp_path / "ran"
    hint = [sys.executable, "-c", f"open({str(marker)!r}, 'w')"]  # would leave the marker behind if it ran
    path = killed_agent_file(tmp_path, hint)
    app = TraceApp(open_source([path]))
    async with app.run_test(size=(150, 40)) as pilot:
        await open_run(pilot, "record-agent")
        await pilot.press("E")
        await wait_until(pilot, lambda: isinstance(app.screen, AgentCommandScreen))
        screen = app.screen
        assert isinstance(screen, AgentCommandScreen)
        assert screen.query_one(Input).value == ""  # prefilled with nothing
        text = screen_text(app)
        assert "recorded as:" in text and "-c" in text and "never run unless you type it" in text
        assert "runs your agent for real, its tools too" in text  # the model is played back, the tools are not
        await pilot.press("enter")  # nothing typed: asked again, in words
        await pilot.pause()
        assert isinstance(app.screen, AgentCommandScreen)
        assert "type the command that runs your agent" in screen_text(app)
        for key in "python agent.py":
            await pilot.press("space" if key == " " else key)
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, FixesScreen) and app.screen.done)
        panel = app.screen
        assert panel.command == ["python", "agent.py"]
        # no agent.py here: the re-run does not end as the recording did, said as such (not "no fix")
        assert "your command does not reproduce run record-agent" in screen_text(app)
        await pilot.press("escape")
        await pilot.pause()
        await pilot.press("E")  # the same file: the command typed is remembered, not asked again
        await wait_until(pilot, lambda: isinstance(app.screen, FixesScreen))
        assert app.screen.command == ["python", "agent.py"]
        await pilot.press("escape")
        await pilot.pause()
        await pilot.press("e")  # editing a field re-runs the same command: not asked again either
        await wait_until(pilot, lambda: isinstance(app.screen, EditScreen))
        assert isinstance(app.screen, EditScreen)
    assert not marker.exists()  # the trace's command was shown, never run


async def test_escape_at_the_prompt_proves_nothing_and_forgets_nothing_typed(tmp_path):
    path = killed_agent_file(tmp_path, ["python", "agent.py"])
    app = TraceApp(open_source([path]))
    async with app.run_test(size=(150, 40)) as pilot:
        await open_run(pilot, "record-agent")
        await pilot.press("E")
        await wait_until(pilot, lambda: isinstance(app.screen, AgentCommandScreen))
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, (AgentCommandScreen, FixesScreen))
        await pilot.press("E")  # nothing was typed: asked again
        await wait_until(pilot, lambda: isinstance(app.screen, AgentCommandScreen))
        assert isinstance(app.screen, AgentCommandScreen)


async def test_the_fixes_of_a_recorded_run_are_proven_with_the_typed_command_and_y_copies_it(tmp_path):
    import shlex

    from agent_runs import unbacked_run

    agent = [sys.executable, str(Path(__file__).resolve().parent.parent / "explain" / "agents" / "scripted_agent.py")]
    run = unbacked_run()
    path = tmp_path / "agent.jsonl"
    write_trace(path, [run.run, *run.events])
    app = TraceApp(open_source([str(path)]))
    async with app.run_test(size=(160, 40)) as pilot:
        await open_run(pilot, "unbacked")
        await pilot.press("E")
        await wait_until(pilot, lambda: isinstance(app.screen, AgentCommandScreen))
        app.screen.query_one(Input).value = shlex.join(agent)
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, FixesScreen) and app.screen.done, tries=1500)
        panel = app.screen
        assert [(p.kind, p.candidate.words) for p in panel.shown] == [
            ("fix", "the model should have answered with what read_order returned (o-1 shipped)")]
        assert "1 re-run of your command: " in screen_text(app)
        await pilot.press("y")
        await pilot.pause()
        assert app.clipboard.startswith(f"tracetui replay {path} --run unbacked --set ")
        assert app.clipboard.endswith(" -- " + shlex.join(agent))
        await pilot.press("enter")  # the fix in the compare view, whose further edits re-run the same command
        await wait_until(pilot, lambda: isinstance(app.screen, CompareScreen))
        assert app.screen.command == agent and app.screen.outcome.after["ready"]


async def test_e_on_a_recorded_denial_offers_the_call_s_arguments_never_an_input(tmp_path):
    from agent_runs import denied_run

    run = denied_run()
    path = tmp_path / "agent.jsonl"
    write_trace(path, [run.run, *run.events])
    app = TraceApp(open_source([str(path)]))
    async with app.run_test(size=(150, 40)) as pilot:
        await open_run(pilot, "denied")
        await pilot.press("e")
        await wait_until(pilot, lambda: isinstance(app.screen, AgentCommandScreen))
        app.screen.query_one(Input).value = "python agent.py"
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, EditScreen))
        # a recorded agent's inputs are its own code (an /inputs path is refused): offer what the model answered
        assert app.screen.query_one("#edit-path", Input).value == (
            "/responses/0/body/choices/0/message/tool_calls/0/function/arguments")
