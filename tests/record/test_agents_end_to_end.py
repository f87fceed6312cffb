"""Your own agent, end to end: real agents on real SDKs, recorded, checked, replayed, explained, fixed.

Each agent (openai SDK and anthropic SDK with hand-written tool loops, a pydantic-ai Agent) runs as a separate
process under ``tracetui record`` against a scripted model server on loopback that plants one failure per
scenario. Then, all through the command line a user types:

- ``tracetui check`` names the planted failure's lane;
- ``tracetui replay FILE --run ID -- COMMAND`` without edits reproduces the run: the same verdict, the same
  events, every request as recorded (no ``http.request_changed``), with no network at all;
- ``tracetui explain FILE --run ID -- COMMAND`` proves a fix by re-running the agent, and the replay command
  it prints, pasted, reproduces that fix.

Streamed calls go through the same way (``--stream``). The agents are ordinary Python processes that take
1–3 s each (the SDKs' imports dominate), so recordings are made once per module, two at a time, over a spread
of cases: every planted failure on the openai agent, several on each of the others, a stream on each; explain
runs on a spread that still covers every planted failure and every agent.
"""
from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import pytest

from model_script import AGENTS, FIRST_FAILING_LANE, SCENARIOS, ScriptedServer, agent_command, agent_env, script

TRACETUI = [sys.executable, "-m", "tracetui"]
TIMEOUT = 300  # a safety net only: a hung agent must not hang the suite

#: recorded, checked and replayed: every planted failure on the openai agent; on the others a spread of lanes
#: (each agent's own handling of every scenario is proven against the scripted server in test_agents.py)
#: and a streamed run each
RECORDED = [("openai", s, False) for s in SCENARIOS] + [("openai", "clean", True)] \
    + [("anthropic", s, False) for s in ("denied", "no_tool_call", "rate_limited")] + [("anthropic", "truncated", True)] \
    + [("pydantic-ai", s, False) for s in ("clean", "unknown_tool", "bad_arguments")] + [("pydantic-ai", "denied", True)]
#: explained, with the top proposal re-verified by its printed command: every planted failure, each agent, streams
#: (truncation on the openai agent too, by check --explain)
EXPLAINED = [("openai", "denied", False), ("openai", "rate_limited", False),
             ("anthropic", "no_tool_call", False), ("anthropic", "truncated", True),
             ("pydantic-ai", "unknown_tool", False), ("pydantic-ai", "bad_arguments", False),
             ("pydantic-ai", "denied", True)]

def _id(case) -> str:
    return f"{case[0]}-{case[1]}" + ("-stream" if case[2] else "")


def run_id(case) -> str:
    return _id(case)


def tracetui(*args: str) -> subprocess.CompletedProcess:
    """A ``tracetui`` command as a user runs it (its own process), with the test keys and no proxies."""
    return subprocess.run([*TRACETUI, *args], env=agent_env(dict(os.environ)), capture_output=True, text=True,
                          timeout=TIMEOUT)


def command(case) -> list[str]:
    return agent_command(case[0], case[2])


def _record(case, folder) -> tuple[str, subprocess.CompletedProcess]:
    agent, scenario, stream = case
    trace = str(folder / f"{_id(case)}.jsonl")
    with ScriptedServer(script(AGENTS[agent][1], scenario, stream)) as model:
        done = tracetui("record", "-o", trace, "--upstream", model.url, "--run-id", run_id(case), "--", *command(case))
    return trace, done


@pytest.fixture(scope="module")
def recordings(tmp_path_factory):
    """Each case recorded once (two agents at a time: the machine has two cores)."""
    folder = tmp_path_factory.mktemp("recordings")
    with ThreadPoolExecutor(max_workers=2) as pool:
        return dict(zip(RECORDED, pool.map(lambda case: _record(case, folder), RECORDED)))


def _replay(case, trace) -> subprocess.CompletedProcess:
    return tracetui("replay", trace, "--run", run_id(case), "--json", "--", *command(case))


@pytest.fixture(scope="module")
def replays(recordings):
    with ThreadPoolExecutor(max_workers=2) as pool:
        return dict(zip(RECORDED, pool.map(lambda case: _replay(case, recordings[case][0]), RECORDED)))


def _trace(recordings, case) -> str:
    trace, done = recordings[case]
    assert os.path.exists(trace), f"tracetui record wrote nothing: {done.stderr[-3000:]}"
    return trace


@pytest.mark.parametrize("case", RECORDED, ids=_id)
def test_record_exits_with_the_agents_status_and_check_names_the_planted_lane(recordings, case):
    trace = _trace(recordings, case)
    clean = case[1] == "clean"
    assert recordings[case][1].returncode == (0 if clean else 1), recordings[case][1].stderr[-3000:]
    checked = tracetui("check", "--json", trace)
    [verdict] = json.loads(checked.stdout)["runs"]
    assert verdict["ready"] is clean
    assert checked.returncode == (0 if clean else 1)
    if not clean:
        assert verdict["first_failure"]["lane"] == FIRST_FAILING_LANE[case[1]], verdict


@pytest.mark.parametrize("case", [c for c in RECORDED if c[2]], ids=_id)
def test_a_streamed_run_is_recorded_event_by_event(recordings, case):
    with open(_trace(recordings, case)) as f:
        attempts = [r for r in map(json.loads, f) if r.get("kind") == "http.attempt"]
    assert attempts and all(a["data"]["request"]["stream"] is True for a in attempts)
    assert all(isinstance(a["data"]["response"].get("events"), list) and a["data"]["response"]["events"]
               for a in attempts)


@pytest.mark.parametrize("case", RECORDED, ids=_id)
def test_an_unedited_replay_of_the_agent_reproduces_its_run(recordings, replays, case):
    _trace(recordings, case)
    done = replays[case]
    assert done.stdout.startswith("{"), done.stderr[-3000:]  # the agent's own output never mixes into it
    compared = json.loads(done.stdout)
    assert compared["after"] == compared["before"]
    assert compared["changes"] == []  # the same events: every request as recorded, no http.request_changed
    assert done.returncode == (0 if case[1] == "clean" else 1)


@pytest.fixture(scope="module")
def explained(recordings):
    """``explain --json -- COMMAND`` of each explained case (one after the other: explain re-runs two at a time)."""
    return {case: tracetui("explain", _trace(recordings, case), "--run", run_id(case), "--json", "--",
                           *command(case)) for case in EXPLAINED}


def _pasted(printed: str) -> list[str]:
    """A printed ``tracetui replay …`` command as a shell would split it, run with this test's tracetui."""
    argv = shlex.split(printed)
    assert argv[:2] == ["tracetui", "replay"]
    cut = argv.index("--")
    return [*argv[1:cut], "--json", *argv[cut:]]


@pytest.mark.parametrize("case", EXPLAINED, ids=_id)
def test_explain_proves_a_fix_by_rerunning_the_agent_and_its_command_reproduces_it(explained, case):
    done = explained[case]
    assert done.stdout.startswith("{"), done.stderr[-3000:]
    report = json.loads(done.stdout)
    assert report["reruns"] >= 1 and report["seconds_per_run"] > 0
    # a 429 the SDK gave up on is the provider's doing: what would have worked is a what-if, never a fix
    proposals = report["what_ifs"] if case[1] == "rate_limited" else report["fixes"]
    assert proposals, report
    assert done.returncode == (1 if case[1] == "rate_limited" else 0)
    top = proposals[0]
    assert top["after"]["ready"] is True
    printed = top["command"]
    assert printed.endswith(" -- " + shlex.join(command(case))), printed  # the user's command, never the trace's
    verified = tracetui(*_pasted(printed))
    assert verified.returncode == 0, verified.stdout[-2000:] + verified.stderr[-2000:]
    again = json.loads(verified.stdout)
    assert again["before"]["ready"] is False and again["after"]["ready"] is True


def test_check_explain_adds_the_top_fix_with_the_command_to_paste(recordings):
    case = ("openai", "truncated", False)
    done = tracetui("check", _trace(recordings, case), "--explain", "--", *command(case))
    assert done.returncode == 1  # the run failed; the fix is a proposal
    lines = done.stdout.splitlines()
    assert lines[0].startswith(f"✗ {run_id(case)}  incomplete  generation@")
    assert lines[1].startswith("    fix: ")
    assert lines[2].strip().startswith("tracetui replay ") and lines[2].endswith(" -- " + shlex.join(command(case)))

