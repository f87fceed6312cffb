"""explain on a recorded agent's run: candidates read from the wire, never from inputs a record run lacks."""
from __future__ import annotations

import orjson
import pytest

from tracetui.explain.command import agent_command, command_hint, printed_command
from tracetui.explain.evidence import Evidence
from tracetui.explain.generate import candidates
from tracetui.explain.kinds import WHAT_IF, kind_of, why_not
from tracetui.explain.search import NO_COMMAND, Search

import agent_runs as runs


def proposed(run) -> list[tuple[str, list[tuple[str, object]], str]]:
    return [(c.words, [(e.path, e.value) for e in c.edits], c.side) for c in candidates(Evidence(run))]


def call_of(value) -> tuple[str, dict]:
    """(name, arguments) of the one call a rewritten chat response makes."""
    body = value["body"] if "body" in value else value
    (call,) = body["choices"][0]["message"]["tool_calls"]
    return call["function"]["name"], orjson.loads(call["function"]["arguments"])


def test_the_evidence_of_a_record_run_is_read_from_the_requests_the_agent_sent():
    ev = Evidence(runs.denied_run())
    assert ev.agent and ev.recorded
    assert ev.user_input == runs.QUESTION  # the first user text of the first request
    assert [(t["name"], t["parameters"]) for t in ev.tools] == [("read_order", runs.SCHEMA)]
    assert ev.orders == {} and ev.principal == {}


def test_a_denied_made_up_id_is_replaced_by_the_one_the_request_names():
    (words, edits, side), *_ = proposed(runs.denied_run())
    assert words == "the model should have called read_order with order_id o-1 (what the request names; o-2 is not)"
    assert edits == [("/responses/0/body/choices/0/message/tool_calls/0/function/arguments", '{"order_id":"o-1"}')]
    assert side == "model"


def test_no_candidate_of_a_record_run_edits_its_inputs():
    for build in (runs.denied_run, runs.unknown_tool_run, runs.schema_run, runs.truncated_run, runs.no_call_run,
                  runs.unbacked_run, runs.rate_limited_run):
        found = proposed(build())
        assert found, build.__name__
        assert all(path.startswith("/responses/") for _, edits, _ in found for path, _ in edits), build.__name__


def test_an_unknown_tool_is_renamed_to_the_declared_one_and_bad_arguments_are_repaired_by_its_schema():
    (words, edits, _), *_ = proposed(runs.unknown_tool_run())
    assert words == "the model should have called read_order (lookup_order is not offered)"
    assert edits == [("/responses/0/body/choices/0/message/tool_calls/0/function/name", "read_order")]
    (words, edits, _), *_ = proposed(runs.schema_run())
    assert words == 'the model should have called read_order with {"order_id":"o-1"} (order_id, not orderId)'
    assert edits == [("/responses/0/body/choices/0/message/tool_calls/0/function/arguments", '{"order_id":"o-1"}')]


def test_an_answer_with_no_tool_call_before_it_becomes_the_call_the_request_needs():
    ((words, [(path, value)], side),) = proposed(runs.no_call_run())
    assert words == "the model should have called read_order with order_id o-1 before answering"
    assert path == "/responses/0/body" and side == "model"
    assert call_of(value) == ("read_order", {"order_id": "o-1"})


def test_an_answer_no_tool_result_backs_repeats_the_result_instead():
    ((words, edits, _),) = proposed(runs.unbacked_run())
    assert words == "the model should have answered with what read_order returned (o-1 shipped)"
    assert edits == [("/responses/1/body/choices/0/message/content", '{"order_id":"o-1","status":"shipped"}')]


def test_a_truncated_response_is_finished_or_becomes_the_call_the_request_needs():
    (first, [(path, value)], _), (second, [(path2, value2)], _) = proposed(runs.truncated_run())
    assert (first, path, value) == ("the response should have finished (it stopped at length)",
                                    "/responses/0/body/choices/0/finish_reason", "stop")
    assert second == "the model should have called read_order with order_id o-1" and path2 == "/responses/0/body"
    assert call_of(value2) == ("read_order", {"order_id": "o-1"})


def test_a_rate_limit_the_sdk_gave_up_on_is_answered_at_its_last_attempt_and_only_as_a_what_if():
    run = runs.rate_limited_run()
    ev = Evidence(run)
    ((words, [(path, value)], side),) = proposed(run)
    assert path == "/responses/2" and side == "provider"  # the last of three attempts: the SDK's retries come first
    assert words == "a working response would have called read_order with order_id o-1"
    assert call_of(value) == ("read_order", {"order_id": "o-1"})
    (candidate,) = candidates(ev)
    kind, why = kind_of(candidate, ev)
    assert kind == WHAT_IF
    assert why.startswith("it replaces what the provider answered (rate_limited) after the SDK gave up retrying")
    assert why_not("/responses/2", ev) == why


def test_a_record_run_is_not_re_run_without_the_user_s_command():
    search = Search(runs.denied_run())
    assert search.reason == NO_COMMAND and list(search.proofs()) == []
    assert Search(runs.denied_run(), command=["python", "agent.py"]).reason is None


def test_the_printed_replay_command_ends_with_the_user_s_command_never_the_hint():
    run = runs.denied_run()
    (candidate, *_) = candidates(Evidence(run))
    command = printed_command("t.jsonl", "denied", run, candidate.edits, ["python", "my agent.py", "--fast"])
    assert command.text == ("tracetui replay t.jsonl --run denied --set "
                            "'/responses/0/body/choices/0/message/tool_calls/0/function/arguments={\"order_id\":\"o-1\"}'"
                            " -- python 'my agent.py' --fast")
    assert "agent.py --fast" not in (printed_command("t.jsonl", "denied", run, candidate.edits).text or "")
    secret = printed_command("t.jsonl", "denied", run, candidate.edits,
                             ["python", "agent.py", "--key", "sk-proj-abcdefghijklmnopqrstuvwxyz0123456789"])
    assert "abcdefghijklmnop" not in secret.text and secret.redacted


def test_the_command_typed_in_the_explorer_is_read_as_a_shell_would_and_the_hint_is_only_shown():
    assert agent_command("python 'my agent.py' --fast") == ["python", "my agent.py", "--fast"]
    with pytest.raises(ValueError, match="type the command"):
        agent_command("   ")
    with pytest.raises(ValueError, match="check its quotes"):
        agent_command("python 'agent.py")
    assert command_hint(runs.denied_run()) == "python agent.py"


def test_a_missing_call_fills_every_required_argument_from_the_request_by_its_schema():
    refund = {"type": "function", "function": {"name": "refund_order", "description": "Refund an order.",
              "parameters": {"type": "object", "required": ["order_id", "amount"], "properties": {
                  "order_id": {"type": "string", "pattern": "^o-[0-9]+$"}, "amount": {"type": "number"},
                  "note": {"type": "string"}}}}}
    chat = {"type": "function", "function": {"name": "small_talk", "description": "Chat.",
            "parameters": {"type": "object", "required": ["topic"], "properties": {"topic": {"type": "string"}}}}}
    m0 = runs.first_messages("Please refund 25.50 on order o-7, thanks")
    run = runs.run_of([(runs.request(m0, tools=[chat, refund]), runs.text_reply("Refunded!"))], 1, "refund")
    ((words, [(_, value)], _),) = proposed(run)  # small_talk's free text cannot be read off the request
    assert call_of(value) == ("refund_order", {"order_id": "o-7", "amount": 25.5})
    assert words == ('the model should have called refund_order with {"order_id":"o-7","amount":25.5} '
                     'before answering')


def test_a_free_text_parameter_is_filled_only_when_its_name_says_it_is_an_identifier():
    def tool(name: str, key: str) -> dict:
        return {"type": "function", "function": {"name": name, "description": "", "parameters": {
            "type": "object", "required": [key], "properties": {key: {"type": "string"}}}}}

    m0 = runs.first_messages("Where is ticket 4821 at?")
    run = runs.run_of([(runs.request(m0, tools=[tool("search", "query"), tool("read_ticket", "ticketId")]),
                        runs.text_reply("Soon."))], 1, "ticket")
    ((_, [(_, value)], _),) = proposed(run)
    assert call_of(value) == ("read_ticket", {"ticketId": "4821"})


def test_a_refused_turn_becomes_the_call_the_request_needs():
    m0 = runs.first_messages()
    refusal = runs.text_reply("")
    refusal["body"]["choices"][0]["message"] = {"role": "assistant", "content": None, "refusal": "I can't help."}
    run = runs.run_of([(runs.request(m0), refusal)], 1, "refused")
    assert Evidence(run).failure.get("code") == "refused"
    ((words, [(path, value)], side),) = proposed(run)
    assert (words, path, side) == ("the model should have called read_order with order_id o-1", "/responses/0/body",
                                   "model")
    assert call_of(value) == ("read_order", {"order_id": "o-1"})


def test_a_denial_of_what_the_request_names_is_a_guard_that_held_and_nothing_is_a_fix():
    m0 = runs.first_messages("What is the status of order o-2?")
    r0 = runs.calls_reply(runs.call("read_order", {"order_id": "o-2"}))
    m1 = runs.after(m0, r0, [("call-1", "Error: permission denied: o-2 belongs to another customer")])
    run = runs.run_of([(runs.request(m0), r0), (runs.request(m1), runs.text_reply("I cannot see it."))], 1, "held")
    search = Search(run, command=["python", "agent.py"])
    assert search.responsibility == "guard" and search.guard_held
    assert search.headline == ("the authorization check held: the request asked for what the agent's tool denied; "
                               "nothing in the model or the harness needs fixing")
    ev = Evidence(run)
    found = list(candidates(ev))
    assert not any("what the request names" in c.words for c in found)  # o-2 is what was asked: not replaced
    assert all(kind_of(c, ev)[0] == WHAT_IF for c in found)
