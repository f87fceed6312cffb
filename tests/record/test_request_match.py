"""A replayed request against the recorded one at its place: exact, changed (where), another turn, past the end."""
from __future__ import annotations

import copy
import hashlib
import json

from tracetui.record.request_match import first_difference, match

from wire_run import call_reply, run_agent, text_reply

READ_O1 = call_reply(("read_order", {"order_id": "o-1"}, "call_1"))


def requests(provider="openai-chat", **kw):
    exchanges, _ = run_agent(provider, [READ_O1, text_reply("done")], **kw)
    return [ex.request for ex in exchanges]


def resent(request: dict, body) -> dict:
    """The request as an agent would send it with this body (its sha256 from the bytes)."""
    raw = json.dumps(body).encode() if not isinstance(body, str) else body.encode()
    return {**request, "body": body, "body_sha256": hashlib.sha256(raw).hexdigest()}


def test_a_deterministic_agent_sends_exactly_the_recorded_requests():
    first, again = requests(), requests()
    assert [match(a, b) for a, b in zip(first, again)] == [{"match": "exact", "words": "the same request"}] * 2


def test_changed_content_in_the_same_turn_names_the_first_differing_pointer():
    recorded = requests()[1]
    body = copy.deepcopy(recorded["body"])
    body["messages"][3]["content"] = '{"order_id": "o-1", "status": "shipped"}'
    found = match(recorded, resent(recorded, body))
    assert found == {"match": "changed", "words": "same turn, changed content at /messages/3/content",
                     "pointer": "/messages/3/content"}


def test_another_number_of_messages_is_another_turn():
    first, second = requests()
    found = match(first, second)
    assert found == {"match": "different_turn", "words": "another turn: 4 messages instead of 2"}


def test_another_endpoint_is_another_turn():
    chat = requests()[0]
    anthropic = requests("anthropic")[0]
    found = match(chat, anthropic)
    assert found["match"] == "different_turn"
    assert found["words"] == "another endpoint: POST /v1/messages instead of POST /v1/chat/completions"


def test_a_streamed_gemini_request_is_another_endpoint_than_a_plain_one():
    plain, streamed = requests("gemini")[0], requests("gemini", stream=True)[0]
    assert match(plain, streamed)["match"] == "different_turn"


def test_past_the_end():
    assert match(None, requests()[0], held=2) == {"match": "past_end",
                                                  "words": "past the end of the recording (it holds 2)"}


def test_the_same_json_written_differently_is_changed_with_no_pointer():
    recorded = requests()[0]
    spaced = resent(recorded, json.dumps(recorded["body"], indent=1))
    spaced["body"] = recorded["body"]  # as the proxy parses it: the same JSON value
    assert match(recorded, spaced) == {"match": "changed", "words": "same turn, the same JSON written differently",
                                       "pointer": ""}


def test_a_body_too_large_to_keep_compares_by_sha256_only():
    recorded = {**requests()[0], "body": {"omitted": "5000000 bytes"}}
    same = dict(recorded)
    assert match(recorded, same)["match"] == "exact"
    other = {**recorded, "body_sha256": "0" * 64}
    assert match(recorded, other)["match"] == "changed" and "only its sha256 compares" in match(recorded, other)["words"]


def test_first_difference_in_document_order():
    assert first_difference({"a": 1, "b": [1, 2]}, {"a": 1, "b": [1, 2]}) is None
    assert first_difference({"a": 1, "b": [1, 2]}, {"a": 1, "b": [1, 3]}) == "/b/1"
    assert first_difference({"a": [1]}, {"a": [1, 2]}) == "/a/1"
    assert first_difference({"a": 1}, {"a": 1, "z": 0}) == "/z"
    assert first_difference({"a/b~c": 1}, {"a/b~c": 2}) == "/a~1b~0c"
    assert first_difference(1, 1.0) == ""  # another JSON text
    assert first_difference(True, 1) == ""
    assert first_difference("x", "y") == ""
