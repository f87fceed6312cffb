"""explain on recorded agent runs a hostile (or merely unusual) trace shapes: bounded work, bodies an SDK accepts."""
from __future__ import annotations

import orjson

from tracetui.explain import agent_side
from tracetui.explain.evidence import Evidence
from tracetui.explain.generate import candidates

import agent_runs as runs


def test_thousands_of_declared_tools_against_a_long_request_cost_a_bounded_number_of_schema_checks(monkeypatch):
    checks = []
    real = agent_side.validate_arguments

    def counted(*args):
        checks.append(1)
        return real(*args)

    monkeypatch.setattr(agent_side, "validate_arguments", counted)
    tools = [{"type": "function", "function": {"name": f"t{i}", "parameters": {
        "type": "object", "required": ["code"], "properties": {"code": {"type": "string", "pattern": f"^z{i}-[0-9]$"}}}}}
        for i in range(100)]
    words = " ".join(f"w{i}" for i in range(600)) + " z0-1"  # one value fits t0, at the very end
    run = runs.run_of([(runs.request(runs.first_messages(words), tools=tools), runs.text_reply("done"))], 1, "many")
    found = list(candidates(Evidence(run)))
    # without a budget: every tool's parameter against every word, 60 000 checks (seconds; minutes for more) before the first re-run
    assert len(checks) <= agent_side.MOST_CHECKS + 10
    assert found == [] or all(c.edits for c in found)


def test_a_value_is_still_found_within_the_budget():
    m0 = runs.first_messages(" ".join(f"w{i}" for i in range(500)) + " order o-1")
    run = runs.run_of([(runs.request(m0), runs.text_reply("Order o-1 is on its way."))], 1, "long")
    (candidate,) = candidates(Evidence(run))
    call = candidate.edits[0].value["choices"][0]["message"]["tool_calls"][0]
    assert orjson.loads(call["function"]["arguments"]) == {"order_id": "o-1"}


def test_a_rewritten_or_supplied_response_keeps_the_recorded_envelope_a_framework_validates():
    # pydantic-ai checks id and model of a chat completion: a body written afresh lacked both
    run = runs.no_call_run()
    (candidate,) = candidates(Evidence(run))
    (edit,) = candidate.edits
    assert edit.path == "/responses/0/body"
    body = edit.value
    assert (body["id"], body["model"], body["object"]) == ("chatcmpl-2", "gpt-x", "chat.completion")
    assert body["choices"][0]["message"]["tool_calls"][0]["function"]["name"] == "read_order"
    assert body["choices"][0]["finish_reason"] == "tool_calls"  # the answer's fields are the new ones


def test_the_envelope_is_never_borrowed_from_an_error_body():
    run = runs.rate_limited_run()
    (candidate,) = candidates(Evidence(run))
    body = candidate.edits[0].value["body"]
    assert "error" not in body and "id" not in body  # no answered response to lend one


def test_the_field_offered_for_editing_a_recorded_run_s_event_is_what_the_model_answered_never_an_input():
    from tracetui.explain.agent_side import edit_path

    run = runs.denied_run()
    ev = Evidence(run)
    denial = next(e for e in ev.events if e.get("lane") == "authorization")
    assert edit_path(ev, denial) == "/responses/0/body/choices/0/message/tool_calls/0/function/arguments"
    answer = next(e for e in ev.events if e.get("lane") == "answer")
    assert edit_path(ev, answer) == "/responses/1/body"
    assert edit_path(ev, None) == "/responses/0/body"


def _profile_denied_run(asked: str, called: str):
    tool = {"type": "function", "function": {"name": "read_profile", "description": "A user's profile.", "parameters": {
        "type": "object", "required": ["user"], "properties": {"user": {"type": "string"}}}}}
    m0 = runs.first_messages(f"Show me the profile of {asked} please")
    r0 = runs.calls_reply(runs.call("read_profile", {"user": called}))
    m1 = runs.after(m0, r0, [("call-1", f"Error: permission denied: {called} is not yours")])
    return runs.run_of([(runs.request(m0, tools=[tool]), r0), (runs.request(m1, tools=[tool]),
                                                               runs.text_reply("I cannot."))], 1, "profile")


def test_a_denial_of_a_made_up_name_is_not_a_guard_that_held_and_no_word_of_prose_replaces_it():
    from tracetui.explain.kinds import guard_held, headline

    ev = Evidence(_profile_denied_run("alice", "bob"))  # the request names alice; the model asked for bob
    assert not guard_held(ev)
    assert not (headline(ev) or "").startswith("the authorization check held")
    assert not any("what the request names" in c.words for c in candidates(ev))  # "Show", "me" … are no user names
    held = Evidence(_profile_denied_run("alice", "alice"))  # what the request named was denied: the guard held
    assert guard_held(held) and headline(held).startswith("the authorization check held")
