"""The openai SDK under OpenInference (with and without its GenAI dual-write) and OpenLLMetry, and the anthropic
SDK under OpenInference: a planted failure per lane and a clean run, each flagged first on its lane."""
from __future__ import annotations

import pytest
from producer_checks import failure, first_lanes
from sdk_producers import anthropic_trace, openai_chat_trace


@pytest.mark.parametrize("instrumentation", ["openinference", "openinference-genai", "openllmetry"])
def test_openai_sdk_failures_land_on_their_lanes(offline, instrumentation):
    path = offline / f"openai-{instrumentation}.jsonl"
    runs = first_lanes(path, openai_chat_trace(path, instrumentation))
    assert runs["clean"].verdict()["status"] == "answer_ready"
    # a refusal: OpenInference records it only in the raw output.value (choices[0].message.refusal)
    assert failure(runs["refused"])["code"] == "refused"
    assert "I can't help with that request." in failure(runs["refused"])["reason"]
    assert failure(runs["rate-limited"])["code"] == "rate_limited"
    assert failure(runs["unknown-tool"])["code"] == "unknown_tool"
    assert failure(runs["bad-json"])["code"] == "invalid_json"
    # the Agent Action Gate's deny (gen_ai.agent.tool.disposition) is an authorization failure
    assert failure(runs["denied"])["code"] == "permission_denied"
    assert "action gate" in failure(runs["denied"])["reason"]
    assert failure(runs["empty"])["code"] == "empty_answer"
    assert runs["clean"].run["producer"] == "orders-service · orders-app"  # the resource's service, the root's scope
    if instrumentation == "openinference-genai":  # the dual-write's GenAI attributes are there too
        chats = [e for e in runs["clean"].events if e["kind"] == "generation.classify"]
        assert any(k.startswith("gen_ai.") for k in chats[0]["data"]["attributes"])


def test_anthropic_sdk_failures_land_on_their_lanes(offline):
    path = offline / "anthropic.jsonl"
    runs = first_lanes(path, anthropic_trace(path))
    # the answer is in OpenInference's content-list form (…message.contents.0.message_content.text)
    answer = [e for e in runs["clean"].events if e["lane"] == "answer"][-1]
    assert answer["outcome"] == "ok" and answer["data"]["text"] == "o-1 is delivered."
    assert failure(runs["refused"])["code"] == "refused"
    assert failure(runs["truncated"])["code"] == "incomplete"
    assert failure(runs["bad-json"])["code"] == "schema_error"
    assert failure(runs["tool-fails"])["code"] == "tool_failed"
