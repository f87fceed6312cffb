"""Re-running a recorded agent (tracetui.replay.agent_replay): edits as served responses, the command only
from the caller, and what the comparison counts.

The agent here is a few lines of standard-library Python (no SDK to import, so each run takes a few tens of
milliseconds): it asks Chat Completions once, runs the tool the model called, asks again, and accepts the
answer (exit 0) only when it states the status the tool returned. The SDK agents are proven in
tests/record/test_agents_end_to_end.py.
"""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "record"))

from model_script import ScriptedServer, script  # noqa: E402

from tracetui.replay.agent_replay import INPUTS_REFUSED, served_responses  # noqa: E402
from tracetui.replay.pointer import EditError  # noqa: E402
from tracetui.replay.replay import replay  # noqa: E402
from tracetui.trace.reader import RunData  # noqa: E402
from tracetui.trace.source import run_data_from_records  # noqa: E402

AGENT = r'''
import json, os, sys, urllib.request, urllib.error
base = os.environ["OPENAI_BASE_URL"]
def ask(messages):
    body = json.dumps({"model": "m", "messages": messages, "tools": [{"type": "function", "function": {
        "name": "read_order", "parameters": {"type": "object", "properties": {"order_id": {"type": "string"}},
                                             "required": ["order_id"]}}}]}).encode()
    req = urllib.request.Request(base + "/chat/completions", body, {"content-type": "application/json",
                                                                    "authorization": "Bearer sk-test"})
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return json.load(r)["choices"][0]["message"]
    except urllib.error.HTTPError as e:
        sys.exit(3)
messages = [{"role": "user", "content": "Where is my order o-1?"}]
status = None
for _ in range(3):
    m = ask(messages)
    messages.append({k: v for k, v in m.items() if k in ("role", "content", "tool_calls")})
    if not m.get("tool_calls"):
        print(m.get("content"))
        sys.exit(0 if status and status in (m.get("content") or "") else 1)
    for c in m["tool_calls"]:
        oid = json.loads(c["function"]["arguments"]).get("order_id")
        result = {"order_id": oid, "status": "shipped"} if oid == "o-1" else "permission denied"
        status = result["status"] if isinstance(result, dict) else status
        messages.append({"role": "tool", "tool_call_id": c["id"], "content": json.dumps(result)})
sys.exit(1)
'''


@pytest.fixture(scope="module")
def agent(tmp_path_factory) -> list[str]:
    path = tmp_path_factory.mktemp("agent") / "tiny_agent.py"
    path.write_text(AGENT)
    return [sys.executable, "-I", str(path)]


def _record(agent: list[str], scenario: str) -> RunData:
    from tracetui.record.session import record_command

    with ScriptedServer(script("openai-chat", scenario)) as server:
        records = record_command(agent, {"openai": server.url}, f"tiny-{scenario}", ["python", "tiny_agent.py"])
    return run_data_from_records(records)


@pytest.fixture(scope="module")
def denied(agent) -> RunData:
    return _record(agent, "denied")


@pytest.fixture(scope="module")
def clean(agent) -> RunData:
    return _record(agent, "clean")


ARGS = "/responses/0/body/choices/0/message/tool_calls/0/function/arguments"
ANSWER = "/responses/1/body/choices/0/message/content"


def test_the_recording_is_what_the_scripted_model_answered(denied):
    assert denied.inputs["source"] == "record"
    assert denied.verdict()["first_failure"]["lane"] == "authorization"


def test_an_unedited_rerun_reproduces_the_run_and_counts_no_change(clean, agent):
    outcome = replay(clean, [], agent)
    assert outcome.after == outcome.before
    assert outcome.changes == []  # the re-run's own request_match ("exact") is no difference
    assert all(e["data"]["request_match"]["match"] == "exact"
               for e in outcome.replayed.events if e["kind"] == "http.attempt")


def test_an_edited_argument_and_answer_fix_the_run(denied, agent):
    outcome = replay(denied, [(ARGS, '{"order_id": "o-1"}'), (ANSWER, "Your order o-1 has shipped.")], agent)
    assert not outcome.before["ready"] and outcome.after["ready"], outcome.after
    kinds = [e["kind"] for e in outcome.replayed.events]
    assert "http.request_changed" in kinds  # the second request carries the new tool result
    assert any(c.verdict_changed for c in outcome.changes)


def test_two_edits_of_one_exchange_add_up(denied):
    served = served_responses(denied, [(ANSWER, "one"), ("/responses/1/body/choices/0/finish_reason", "length")])
    choice = served[1]["body"]["choices"][0]
    assert (choice["message"]["content"], choice["finish_reason"]) == ("one", "length")
    assert served[0] == denied.events[0]["data"]["response"]  # the rest as recorded


def test_one_past_the_last_exchange_supplies_a_new_one(denied):
    extra = {"status": 200, "headers": {}, "body": {"choices": []}}
    assert served_responses(denied, [("/responses/2", extra)])[2] == extra
    with pytest.raises(EditError, match=r"numbered from 0 \(/responses/2 supplies"):
        served_responses(denied, [("/responses/3", extra)])
    with pytest.raises(EditError, match="/responses/2: an exchange needs a status"):
        served_responses(denied, [("/responses/2", {"body": {}})])


@pytest.mark.parametrize("path", ["/inputs/command_hint", "/inputs/source", "/inputs"])
def test_inputs_cannot_be_edited_and_say_what_can(denied, agent, path):
    with pytest.raises(EditError) as caught:
        replay(denied, [(path, ["python", "x.py"])], agent)
    assert str(caught.value) == INPUTS_REFUSED


def test_a_recorded_run_without_a_command_says_how_to_give_one(denied):
    with pytest.raises(EditError, match=r"give it after --, e\.g\. tracetui replay FILE --run tiny-denied -- python"):
        replay(denied)


def test_the_command_is_never_taken_from_the_trace(denied, agent, tmp_path):
    planted = tmp_path / "ran"
    hinted = RunData(denied.run_id, run={**denied.run, "inputs": {**denied.inputs, "command_hint": [
        sys.executable, "-c", f"open({str(planted)!r}, 'w')"]}}, events=denied.events, summary=denied.summary)
    with pytest.raises(EditError):
        replay(hinted)
    replay(hinted, [], agent)
    assert not planted.exists()


def test_a_built_in_run_takes_no_command(root):
    from tracetui.trace.reader import read_trace

    run = read_trace(root / "sample_traces" / "scenarios.jsonl").runs["cross_tenant"]
    with pytest.raises(EditError, match="built-in loop.*leave out the -- COMMAND"):
        replay(run, [], ["python", "agent.py"])


def test_a_command_that_does_not_start_is_an_error_in_words(denied, tmp_path):
    with pytest.raises(EditError, match="cannot re-run: the command did not start: .*no such file"):
        replay(denied, [], [str(tmp_path / "missing-agent")])


def test_the_agents_output_never_reaches_tracetuis_output(clean, agent, capfd):
    replay(clean, [], agent)
    out, err = capfd.readouterr()
    assert "shipped" not in out and "shipped" not in err



def test_a_damaged_recording_is_an_error_in_words_never_a_crash(denied, agent):
    import copy

    events = copy.deepcopy(denied.events)
    request = events[0]["data"]["request"]
    request.update(provider=["openai-chat"], body_sha256=[1], url={"path": 1})
    damaged = RunData(denied.run_id, run=denied.run, events=events, summary=denied.summary)
    try:
        outcome = replay(damaged, [], agent)
    except EditError as exc:
        assert str(exc).startswith("cannot re-run")
    else:  # the damaged fields only make the first request compare as different
        assert outcome.replayed.events[-1]["kind"] == "answer.verify"


def test_an_events_field_to_edit_is_what_the_model_answered(denied):
    from tracetui.replay.edit import current_value, event_path

    by_kind = {e["kind"]: e for e in reversed(denied.events)}  # the first of each kind
    assert event_path(by_kind["authorization.check"], denied) == "/responses/0/body"
    assert event_path(by_kind["answer.verify"], denied) == "/responses/1/body"
    assert event_path(by_kind["http.attempt"], denied) == "/responses/0/status"
    assert current_value(denied, "/responses/0/body")[1]  # a field that exists: the editor opens on it


STOPPED_BY_THE_USER = r'''
import os, signal, sys, time, urllib.request
try:  # by the time it is answered, tracetui is waiting for the agent (and handles SIGINT as Ctrl-C)
    urllib.request.urlopen(os.environ["OPENAI_BASE_URL"] + "/models", timeout=60).read()
except Exception:
    pass
os.kill(os.getppid(), signal.SIGINT)  # as a Ctrl-C would: tracetui stops the agent
time.sleep(120)
'''


def test_a_rerun_stopped_with_ctrl_c_is_no_result_it_exits_130_and_writes_nothing(denied, tmp_path):
    import subprocess

    from tracetui.trace.writer import write_trace

    trace, out = tmp_path / "agent.jsonl", tmp_path / "rerun.jsonl"
    write_trace(trace, [r for r in (denied.run, *denied.events, denied.summary) if r is not None])
    stopper = tmp_path / "stopper.py"
    stopper.write_text(STOPPED_BY_THE_USER)
    done = subprocess.run([sys.executable, "-m", "tracetui", "replay", str(trace), "--run", denied.run_id, "-o", str(out),
                           "--", sys.executable, "-I", str(stopper)], stdin=subprocess.DEVNULL, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 130, done.stdout + done.stderr
    assert "stopped with Ctrl-C: the re-run did not finish, so nothing was compared or written" in done.stderr
    assert done.stdout == "" and not out.exists()


DEAF_TO_CTRL_C = r'''
import os, signal, sys, time, urllib.request
signal.signal(signal.SIGINT, signal.SIG_IGN)  # an agent that ignores Ctrl-C
folder = sys.argv[1]
open(os.path.join(folder, str(os.getpid())), "w").close()
try:  # by the time it is answered, tracetui is waiting for the agent
    urllib.request.urlopen(os.environ["OPENAI_BASE_URL"] + "/models", timeout=60).read()
except Exception:
    pass
try:
    os.close(os.open(os.path.join(folder, "asked"), os.O_CREAT | os.O_EXCL))
    os.kill(os.getppid(), signal.SIGINT)  # the first agent only: as a Ctrl-C sent to tracetui would
except FileExistsError:
    pass
time.sleep(120)
'''


def test_ctrl_c_during_explain_stops_every_re_run_even_an_agent_that_ignores_it(denied, tmp_path):
    import os
    import subprocess
    import time

    from tracetui.trace.writer import write_trace

    trace, pids = tmp_path / "agent.jsonl", tmp_path / "pids"
    pids.mkdir()
    write_trace(trace, [r for r in (denied.run, *denied.events, denied.summary) if r is not None])
    deaf = tmp_path / "deaf.py"
    deaf.write_text(DEAF_TO_CTRL_C)
    done = subprocess.run([sys.executable, "-m", "tracetui", "explain", str(trace), "--run", denied.run_id,
                           "--", sys.executable, "-I", str(deaf), str(pids)], stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=100)  # a safety net: the agents sleep 120 s
    assert done.returncode == 130, done.stdout + done.stderr
    started = [int(p.name) for p in pids.iterdir() if p.name.isdigit()]
    assert started
    for _ in range(200):  # left behind, an agent would live on for two minutes
        alive = []
        for pid in started:
            try:
                os.kill(pid, 0)
                alive.append(pid)
            except ProcessLookupError:
                pass
        if not alive:
            break
        time.sleep(0.05)
    assert not alive, f"agents {alive} outlived tracetui"
