"""explain proves a recorded agent's fixes by re-running the agent itself (a real openai-SDK process) offline.

The agent is ``agents/scripted_agent.py``: a hand-written tool loop whose exit status is the business's
acceptance (0 only when its answer states the status ``read_order`` returned). Each re-run plays the run's
recorded responses, with the candidate's edits, from a local replay server: nothing is mocked.
"""
from __future__ import annotations

import sys
from pathlib import Path

import orjson

from tracetui.explain import explain
from tracetui.explain.report import as_data, as_text, proof_data
from tracetui.explain.search import FIX, PARTIAL, WHAT_IF, Search
from tracetui.replay.replay import replay

import agent_runs as runs

AGENT = [sys.executable, str(Path(__file__).resolve().parent / "agents" / "scripted_agent.py")]


def test_a_denied_made_up_id_is_fixed_with_the_id_the_request_names_then_an_answer_from_the_receipt():
    run = runs.denied_run()
    result = explain(run, command=AGENT)
    best = result.best
    assert best is not None and best.kind == FIX
    assert [(e.path, e.value) for e in best.edits] == [
        ("/responses/0/body/choices/0/message/tool_calls/0/function/arguments", '{"order_id":"o-1"}'),
        ("/responses/1/body/choices/0/message/content", '{"order_id":"o-1","status":"shipped"}')]
    assert best.candidate.words == ("the model should have called read_order with order_id o-1 (what the request "
                                    "names; o-2 is not), then answered with what read_order returned (o-1 shipped)")
    assert result.responsibility == "model"
    assert all(not e.path.startswith("/inputs") for p in result.fixes + result.what_ifs for e in p.edits)
    # what explain printed re-runs the user's command, and the replay reproduces the proof
    assert replay(run, [(e.path, e.value) for e in best.edits], command=AGENT).after["ready"]
    text = "\n".join(as_text(result, "t.jsonl", 5))
    assert f" -- {AGENT[0]} {AGENT[1]}" in text
    assert f"{result.reruns} re-runs of your command, " in text and " s each (two at a time)" in text
    data = as_data(result, "t.jsonl", 5)
    assert data["reruns"] == result.reruns > 1 and data["seconds_per_run"] > 0
    assert data["fixes"][0]["command"].endswith(f" -- {AGENT[0]} {AGENT[1]}")
    # check --explain --json prints the best proof alone: its command re-runs the user's command too
    assert proof_data(best, "t.jsonl", 1, "denied")["command"] == data["fixes"][0]["command"]


def test_proving_two_at_a_time_ranks_and_counts_exactly_as_one_at_a_time():
    run = runs.denied_run()
    both = Search(run, command=AGENT)
    one = Search(run, command=AGENT)
    one.at_once = 1
    assert both.at_once == 2
    proven = [[(p.kind, p.candidate.words, p.candidate.key, p.order) for p in s.proofs()] for s in (both, one)]
    assert proven[0] == proven[1] and proven[0]
    assert (both.tried, both.refused, both.reruns) == (one.tried, one.refused, one.reruns)


def test_an_answer_with_no_tool_call_is_fixed_by_the_call_then_a_supplied_next_response_said_so():
    result = explain(runs.no_call_run(), command=AGENT)
    (best,) = result.fixes
    assert best.candidate.words == (
        "the model should have called read_order with order_id o-1 before answering, and the recording ends after "
        "the fixed turn, so its next response is supplied: it should have answered from the read_order result "
        "(o-1 shipped)")
    assert [e.path for e in best.edits] == ["/responses/0/body", "/responses/1"]  # one past the recording
    supplied = best.edits[1].value["body"]["choices"][0]["message"]["content"]
    assert orjson.loads(supplied) == runs.SHIPPED  # the receipt the fixed call got, read from its re-run
    assert best.candidate.side == "model + recording"


def test_a_rate_limit_the_sdk_gave_up_on_gets_only_a_what_if_never_a_fix():
    result = explain(runs.rate_limited_run(), command=AGENT)
    assert result.fixes == [] and result.responsibility == "environment"
    (what_if,) = result.what_ifs
    assert what_if.kind == WHAT_IF and what_if.candidate.side == "provider + recording"
    assert "more retries or a backoff in your agent is the change to make" in what_if.why_not
    assert all(p.kind == PARTIAL for p in result.partials)


def test_an_agent_that_streams_is_given_its_rewritten_responses_as_streams():
    result = explain(runs.streamed_no_call_run(), command=[*AGENT, "--stream"])
    (best,) = result.fixes
    assert [e.path for e in best.edits] == ["/responses/0", "/responses/1"]
    assert all(e.value["headers"]["content-type"] == "text/event-stream" and "events" in e.value for e in best.edits)
    assert best.outcome.after["ready"]


def test_a_command_that_does_not_reproduce_the_recording_proves_nothing_and_says_what_it_did_instead():
    run = runs.denied_run()
    broken = [sys.executable, "-c", "import sys; print('boom: OPENAI_API_KEY is not set', file=sys.stderr); "
                                    "sys.exit(3)"]
    result = explain(run, command=broken)
    assert not result.fixes and not result.what_ifs and not result.partials and result.tried == 0
    assert result.reason.startswith(f"your command does not reproduce run {run.run_id}: re-run without an edit, "
                                    f"it ends no_exchanges at answer@1, where the recording ends permission_denied")
    assert result.reason.endswith("the agent's last words: boom: OPENAI_API_KEY is not set")
    assert result.reason in "\n".join(as_text(result, "t.jsonl", 5))  # said as it is, not "no edit changes it"
