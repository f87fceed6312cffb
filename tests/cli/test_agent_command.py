"""The ``-- COMMAND`` of replay, explain and check --explain: given only where a run of your own agent needs it.

No agent runs here: each case is refused before anything would start (the command named does not exist, so
running it would be a different error). The re-runs themselves are proven in tests/record/.
"""
from __future__ import annotations

import pytest
from click.testing import CliRunner

from tracetui.cli import main
from tracetui.record.exchange import AgentExit
from tracetui.record.recording import run_records
from tracetui.trace.writer import write_trace

NOWHERE = "/nonexistent/agent-that-never-runs"


@pytest.fixture
def recorded(tmp_path):
    """A trace holding one recorded agent run (no exchange: the agent never called the endpoint)."""
    path = tmp_path / "agent.jsonl"
    write_trace(path, run_records("support", [], AgentExit(0, None, False, True, None), ["python", "agent.py"], {}))
    return str(path)


def _run(*args):
    return CliRunner().invoke(main, list(args))


def _err(result) -> str:
    return result.stderr if hasattr(result, "stderr") else result.output


@pytest.mark.parametrize("verb", ["replay", "explain"])
def test_a_recorded_run_without_a_command_says_how_to_give_it(recorded, verb):
    result = _run(verb, recorded, "--run", "support")
    assert result.exit_code == 2
    said = _err(result)
    assert f"give it after --, e.g. tracetui {verb} {recorded} --run support -- python agent.py" in said


def test_replay_shows_the_recorded_command_as_a_hint_only(recorded):
    assert "(recorded as: python agent.py)" in _err(_run("replay", recorded, "--run", "support"))


def test_an_inputs_edit_of_a_recorded_run_is_refused_before_anything_runs(recorded):
    result = _run("replay", recorded, "--run", "support", "--set", "/inputs/command_hint=[\"sh\"]", "--", NOWHERE)
    assert result.exit_code == 2
    assert "a recorded agent's inputs are its own code and its tools: edit what the model answered" in _err(result)


@pytest.mark.parametrize("verb", ["replay", "explain"])
def test_a_built_in_run_takes_no_command(root, verb):
    result = _run(verb, str(root / "sample_traces" / "scenarios.jsonl"), "--run", "cross_tenant", "--", NOWHERE)
    assert result.exit_code == 2
    assert "built-in loop" in _err(result) and "leave out the -- COMMAND" in _err(result)


def test_check_takes_a_command_only_with_explain(root):
    result = _run("check", str(root / "sample_traces" / "scenarios.jsonl"), "--", NOWHERE)
    assert result.exit_code == 2
    assert "a -- COMMAND needs --explain" in result.output


def test_a_command_that_does_not_start_is_said_in_words(recorded):
    result = _run("replay", recorded, "--run", "support", "--", NOWHERE)
    assert result.exit_code == 2
    assert "cannot re-run: the command did not start" in _err(result) and "no such file" in _err(result)


@pytest.mark.parametrize("verb", ["explain", "check"])
@pytest.mark.parametrize("name, said", [(NOWHERE, "no such file"),
                                        ("tracetui-test-no-such-command", "command not found (not on PATH)")])
def test_a_command_that_cannot_start_is_said_before_any_fix_is_sought(recorded, verb, name, said):
    # else every re-run fails to start, and the run reads as one that no edit fixes
    args = [recorded, "--run", "support"] if verb == "explain" else [recorded, "--explain"]
    result = _run(verb, *args, "--", name)
    assert result.exit_code == 2
    assert f"cannot re-run: the command did not start: {name}: {said}" in _err(result)


def test_explain_shows_the_recorded_command_as_a_hint_too(recorded):
    assert "(recorded as: python agent.py)" in _err(_run("explain", recorded, "--run", "support"))


@pytest.mark.parametrize("path", ["/inputs/no_such_field", "/inputs/source", "/events"])
def test_only_what_the_model_answered_is_editable_on_a_recorded_run(recorded, path):
    # refused in the same words whether or not the field exists in the run line
    result = _run("replay", recorded, "--run", "support", "--set", f"{path}=1", "--", NOWHERE)
    assert result.exit_code == 2
    assert "a recorded agent's inputs are its own code and its tools: edit what the model answered" in _err(result)


@pytest.mark.parametrize("path", ["/responses/0/body", "/responses/x", "/responses"])
def test_an_edit_past_the_recording_says_how_its_exchanges_are_numbered(recorded, path):
    result = _run("replay", recorded, "--run", "support", "--set", f"{path}=1", "--", NOWHERE)
    assert result.exit_code == 2
    assert "the run has 0 exchange(s), numbered from 0 (/responses/0 supplies a whole next exchange)" in _err(result)


def test_an_output_that_cannot_be_written_is_said_before_the_agent_runs(recorded, tmp_path):
    import sys

    ran = tmp_path / "the-agent-ran"
    out = tmp_path / "no-such-folder" / "rerun.jsonl"
    result = _run("replay", recorded, "--run", "support", "-o", str(out), "--",
                  sys.executable, "-c", f"open({str(ran)!r}, 'w')")
    assert result.exit_code == 2
    assert f"cannot write {out}: its folder" in _err(result) and "does not exist" in _err(result)
    assert not ran.exists()  # a re-run runs your agent's tools for real: not for a run that would be lost
