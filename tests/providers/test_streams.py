"""Each API's stream folder keeps the two rules: text as it comes, tool arguments only when complete and final."""
from __future__ import annotations

import copy

import pytest

from tracetui.providers.stream import StreamProtocolError
from tracetui.providers import base
from tracetui.providers.anthropic import AnthropicStreamAssembler
from tracetui.providers.gemini import GeminiStreamAssembler
from tracetui.providers.openai_chat import ChatStreamAssembler
from tracetui.providers.registry import get_adapter

from wire import ANSWER, args_index, streams

FOLDERS = {"openai-chat": ChatStreamAssembler, "anthropic": AnthropicStreamAssembler,
           "gemini": GeminiStreamAssembler}


def recorded(events):
    """Wire form → recorded form: the bare ``[DONE]`` text is kept as ``{"data": "[DONE]"}``."""
    return [{"data": e} if isinstance(e, str) else e for e in events]


@pytest.mark.parametrize("provider", sorted(FOLDERS))
def test_text_deltas_are_shown_as_they_arrive(provider):
    _, answer = streams(provider)
    folder = FOLDERS[provider]()
    shown = [d for d in (folder.feed(e) for e in recorded(answer)) if d]
    assert "".join(shown) == ANSWER and len(shown) > 1
    turn = get_adapter(provider).parse_response(folder.finish())
    assert (turn.kind, turn.text) == (base.TEXT, ANSWER)


@pytest.mark.parametrize("provider", sorted(FOLDERS))
def test_tool_call_is_released_only_after_the_final_event(provider):
    call, _ = streams(provider)
    events = recorded(call)
    folder = FOLDERS[provider]()
    for e in events[:-1]:
        folder.feed(e)
    if provider != "gemini":  # gemini's last chunk is the call itself
        with pytest.raises(StreamProtocolError, match="stream ended without"):
            folder.finish()
    folder = FOLDERS[provider]()
    for e in events:
        folder.feed(e)
    turn = get_adapter(provider).parse_response(folder.finish())
    assert turn.kind == base.TOOL_CALLS
    assert [(c.name, c.arguments.replace(" ", "")) for c in turn.calls] == [("read_order", '{"order_id":"o-1"}')]


@pytest.mark.parametrize("provider", sorted(FOLDERS))
def test_dropped_stream_is_a_protocol_error(provider):
    call, _ = streams(provider)
    body, error = get_adapter(provider).assemble_stream(recorded(call)[:args_index(call)])
    assert body is None and "stream ended without" in error


@pytest.mark.parametrize("provider, event", [
    ("openai-chat", {"error": {"message": "bad gateway", "type": "server_error"}}),
    ("openai-chat", {"type": "error", "message": "flat error"}),
    ("anthropic", {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}),
    ("anthropic", {"type": "error", "message": "flat"}),
    ("gemini", {"error": {"code": 500, "message": "Internal error", "status": "INTERNAL"}}),
])
def test_error_event_mid_stream(provider, event):
    call, _ = streams(provider)
    events = recorded(call)
    body, error = get_adapter(provider).assemble_stream(events[:1] + [event] + events[1:])
    assert body is None and error.startswith("error event mid-stream")


def test_chat_broken_arguments_are_a_protocol_error():
    call, _ = streams("openai-chat")
    events = copy.deepcopy(recorded(call))
    events[2]["choices"][0]["delta"]["tool_calls"][0]["function"]["arguments"] = 'id":"o-1"'  # drops the brace
    body, error = get_adapter("openai-chat").assemble_stream(events)
    assert body is None and "not complete JSON" in error


def test_chat_length_with_cut_arguments_is_incomplete_not_a_protocol_error():
    call, _ = streams("openai-chat")
    events = copy.deepcopy(recorded(call))
    del events[2]  # the closing half of the arguments never came
    events[2]["choices"][0]["finish_reason"] = "length"
    adapter = get_adapter("openai-chat")
    body, error = adapter.assemble_stream(events)
    assert error is None
    turn = adapter.parse_response(body)
    assert turn.kind == base.INCOMPLETE and turn.calls[0].arguments == '{"order_'


def test_chat_done_before_a_finish_reason_is_a_protocol_error():
    body, error = get_adapter("openai-chat").assemble_stream([{"data": "[DONE]"}])
    assert body is None and "before any choice finished" in error


def test_anthropic_broken_input_json_is_a_protocol_error():
    call, _ = streams("anthropic")
    events = copy.deepcopy(recorded(call))
    for e in events:
        if e.get("delta", {}).get("partial_json") == '"o-1"}':
            e["delta"]["partial_json"] = '"o-1"'
    body, error = get_adapter("anthropic").assemble_stream(events)
    assert body is None and "content block 1" in error and "not complete JSON" in error


def test_anthropic_max_tokens_mid_tool_use_is_incomplete_with_the_partial_arguments():
    call, _ = streams("anthropic")
    events = copy.deepcopy(recorded(call))
    events = [e for e in events if e.get("delta", {}).get("partial_json") != '"o-1"}']
    for e in events:
        if e["type"] == "message_delta":
            e["delta"]["stop_reason"] = "max_tokens"
    adapter = get_adapter("anthropic")
    body, error = adapter.assemble_stream(events)
    assert error is None
    turn = adapter.parse_response(body)
    assert turn.kind == base.INCOMPLETE and turn.calls[0].arguments == '{"order_id": '


def test_anthropic_unclosed_block_and_event_after_stop():
    call, _ = streams("anthropic")
    events = recorded(call)
    unclosed = [e for e in events if not (e["type"] == "content_block_stop" and e["index"] == 1)]
    assert "never closed" in get_adapter("anthropic").assemble_stream(unclosed)[1]
    late = events + [{"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "x"}}]
    assert "after the message_stop" in get_adapter("anthropic").assemble_stream(late)[1]


def test_anthropic_tool_without_parameters_streams_no_json():
    events = [{"type": "message_start", "message": {"id": "m", "type": "message", "role": "assistant", "content": [],
                                                    "stop_reason": None, "usage": {"input_tokens": 1}}},
              {"type": "content_block_start", "index": 0,
               "content_block": {"type": "tool_use", "id": "t", "name": "ping", "input": {}}},
              {"type": "content_block_stop", "index": 0},
              {"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 3}},
              {"type": "message_stop"}]
    adapter = get_adapter("anthropic")
    body, error = adapter.assemble_stream(events)
    turn = adapter.parse_response(body)
    assert error is None and turn.calls[0].arguments == "{}"


def test_gemini_usage_chunk_after_finish_is_fine_but_content_is_not():
    _, answer = streams("gemini")
    usage = {"usageMetadata": {"promptTokenCount": 60, "totalTokenCount": 80}}
    assert get_adapter("gemini").assemble_stream(answer + [usage])[1] is None
    more = {"candidates": [{"content": {"role": "model", "parts": [{"text": "more"}]}, "index": 0}]}
    assert "after the chunk with a finishReason" in get_adapter("gemini").assemble_stream(answer + [more])[1]


def test_gemini_args_as_text_are_not_complete():
    chunk = {"candidates": [{"content": {"role": "model", "parts": [
        {"functionCall": {"name": "read_order", "args": '{"order_id": "o-'}}]}, "finishReason": "STOP", "index": 0}]}
    body, error = get_adapter("gemini").assemble_stream([chunk])
    assert body is None and "not a complete object" in error


def test_gemini_blocked_prompt_stream():
    chunk = {"promptFeedback": {"blockReason": "PROHIBITED_CONTENT"}, "usageMetadata": {"promptTokenCount": 4}}
    adapter = get_adapter("gemini")
    body, error = adapter.assemble_stream([chunk])
    assert error is None and adapter.parse_response(body).kind == base.REFUSED
