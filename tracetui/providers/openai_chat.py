"""OpenAI Chat Completions (and the many servers that copy it): messages out, one choice back.

The verdict comes from ``choices[0].finish_reason`` first: ``length`` is a
truncation even when a tool call is present (its arguments may be cut, so it never
runs), ``content_filter`` and ``message.refusal`` are refusals. Only ``tool_calls``
(or ``stop`` with calls, as some compatible servers send) releases tool calls.
"""
from __future__ import annotations

from typing import Any

from tracetui.providers.stream import (
    EventFolder, StreamProtocolError, assemble, complete_json, list_field, object_field,
)
from tracetui.providers.base import (
    EMPTY, FAILED, FOREIGN_BODY, INCOMPLETE, INVALID_TOOL_CALL, REFUSED, TEXT, TOOL_CALLS, UNSUPPORTED,
    ModelTurn, ToolCall,
)
from tracetui.providers.shapes import brief, error_message, foreign_detail, identify, json_type, plain, text_or_none
from tracetui.providers.transcript import turns
from tracetui.trace.safe_text import redacted_prefix

DONE = "[DONE]"


class OpenAIChatAdapter:
    name = "openai-chat"
    #: appended to the base URL as given (``http://localhost:8000/v1``, ``…/v1beta/openai``), as the openai SDK does
    path = "/chat/completions"
    default_base_url = "https://api.openai.com/v1"

    def build_request(self, model, transcript, tools, max_output_tokens, stream):
        messages: list[dict[str, Any]] = []
        for kind, items in turns(transcript):
            if kind == "system":
                messages.extend({"role": "system", "content": i["content"]} for i in items)
            elif kind == "user":
                messages.append({"role": items[0].get("role", "user"), "content": items[0]["content"]})
            elif kind == "assistant":
                messages.append(_assistant(items))
            else:
                messages.extend({"role": "tool", "tool_call_id": i["call_id"], "content": i["output"]} for i in items)
        body: dict[str, Any] = {"model": model, "messages": messages, "tools": [_tool(t) for t in tools],
                                "max_completion_tokens": max_output_tokens}
        if stream:
            body["stream"] = True
            body["stream_options"] = {"include_usage": True}
        return body

    def parse_response(self, body: Any) -> ModelTurn:
        if identify(body) != "openai-chat":
            message = error_message(body)
            if message is not None:
                return ModelTurn(FAILED, detail=f"error body with status 200: {message}")
            return ModelTurn(FOREIGN_BODY, detail=foreign_detail(body, self.name))
        usage = body.get("usage") if isinstance(body.get("usage"), dict) else None
        choices = body.get("choices")
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
            return ModelTurn(UNSUPPORTED, usage=usage, detail="no choice in the response")
        choice = choices[0]
        raw_finish = choice.get("finish_reason")
        finish = text_or_none(raw_finish)
        message = choice.get("message")
        if not isinstance(message, dict):
            return ModelTurn(UNSUPPORTED, finish_reason=finish, usage=usage, detail="choice has no message object")
        text = _text(message.get("content"))
        raw_calls = message.get("tool_calls") or []
        if text is None or not isinstance(raw_calls, list):
            return ModelTurn(UNSUPPORTED, finish_reason=finish, usage=usage, item_types=["message"],
                             detail="message content or tool_calls has an unknown shape")
        types = (["message"] if text or not raw_calls else []) + ["tool_call"] * len(raw_calls)
        partial = [_loose_call(c) for c in raw_calls]
        refusal = message.get("refusal")
        if isinstance(refusal, str) and refusal:
            return ModelTurn(REFUSED, text=text, finish_reason=finish, usage=usage, item_types=types,
                             detail=f"model refused: {refusal}")
        if finish == "content_filter":
            return ModelTurn(REFUSED, text=text, finish_reason=finish, usage=usage, item_types=types,
                             detail="content filter stopped the response (finish_reason content_filter)")
        if finish == "length":
            return ModelTurn(INCOMPLETE, text=text, calls=partial, finish_reason=finish, usage=usage, item_types=types,
                             detail="response cut off at the output token limit (finish_reason length)")
        if (finish == "function_call" or message.get("function_call") is not None) and not raw_calls:
            return ModelTurn(UNSUPPORTED, text=text, finish_reason=finish, usage=usage, item_types=types,
                             code="legacy_function_call",
                             detail="the server answered with a legacy function_call (deprecated by tool_calls); "
                                    "this loop offers tools and runs only tool_calls")
        if finish not in ("stop", "tool_calls", "function_call"):
            return ModelTurn(UNSUPPORTED, text=text, finish_reason=finish,
                             usage=usage, item_types=types, detail=f"unexpected finish_reason {brief(raw_finish)}")
        items: list[dict[str, Any]] = []
        if text:
            items.append({"type": "message", "role": "assistant", "content": text})
        calls: list[ToolCall] = []
        for raw in raw_calls:
            fn = raw.get("function") if isinstance(raw, dict) else None
            if not isinstance(fn, dict) or raw.get("type", "function") != "function" or not all(
                    isinstance(v, str) and v for v in (raw.get("id"), fn.get("name"), fn.get("arguments"))):
                return ModelTurn(INVALID_TOOL_CALL, text=text, calls=partial, finish_reason=finish, usage=usage,
                                 item_types=types, detail="tool call without id, function name or arguments")
            calls.append(ToolCall(raw["id"], fn["name"], fn["arguments"]))
            items.append({"type": "tool_call", "call_id": raw["id"], "name": fn["name"], "arguments": fn["arguments"],
                          "raw": raw})
        if calls:
            return ModelTurn(TOOL_CALLS, text=text, calls=calls, items=items, usage=usage, item_types=types,
                             finish_reason=finish)
        if finish == "tool_calls":
            return ModelTurn(INVALID_TOOL_CALL, text=text, finish_reason=finish, usage=usage, item_types=types,
                             detail="finish_reason tool_calls but the message has no tool call")
        if text:
            return ModelTurn(TEXT, text=text, items=items, usage=usage, item_types=types, finish_reason=finish)
        return ModelTurn(EMPTY, items=items, usage=usage, item_types=types, finish_reason=finish,
                         detail="finished with no text and no tool call")

    def assemble_stream(self, events):
        return assemble(ChatStreamAssembler(), events)


class ChatStreamAssembler(EventFolder):
    """Folds ``chat.completion.chunk`` events; the stream is complete at ``data: [DONE]``.

    Tool call fragments are keyed by their ``index``: the first carries id and
    name, later ones only argument text. Arguments must parse when the stream is
    done, unless ``finish_reason`` is ``length`` (then the call is reported as cut
    off, and the adapter classifies the turn as incomplete).
    """

    final_event = "a [DONE] event"

    def __init__(self) -> None:
        super().__init__()
        self.meta: dict[str, Any] = {}
        self.refusal = ""
        self.calls: dict[int, dict[str, Any]] = {}
        self.finish_reason: str | None = None
        self.usage: dict[str, Any] | None = None
        self.content_seen = False

    def take(self, event: dict[str, Any]) -> str | None:
        if event.get("data") == DONE and len(event) == 1:
            if self.finish_reason is None:
                raise StreamProtocolError("[DONE] arrived before any choice finished")
            self.ended = True
            return None
        if "choices" not in event:
            if "data" in event:
                raise StreamProtocolError(f"event data is not a chunk: {redacted_prefix(plain(event['data']), 60)!r}")
            return None
        for key in ("id", "model", "created", "system_fingerprint", "service_tier"):
            if key in event:
                self.meta.setdefault(key, event[key])
        if isinstance(event.get("usage"), dict):
            self.usage = event["usage"]
        shown = None
        for choice in list_field(event, "choices", "a chunk"):
            if not isinstance(choice, dict) or choice.get("index", 0) != 0:
                continue
            if self.finish_reason is not None and choice.get("delta"):
                raise StreamProtocolError("content after the choice finished")
            delta = object_field(choice, "delta", "a choice")
            if isinstance(delta.get("content"), str) and delta["content"]:
                shown = self.show(delta["content"])
            if isinstance(delta.get("refusal"), str):
                self.refusal += delta["refusal"]
            for frag in list_field(delta, "tool_calls", "a delta"):
                self._fragment(frag)
            if choice.get("finish_reason") is not None:
                self.finish_reason = choice["finish_reason"]
        return shown

    def _fragment(self, frag: Any) -> None:
        if not isinstance(frag, dict) or isinstance(frag.get("index"), bool) or not isinstance(frag.get("index"), int):
            raise StreamProtocolError("tool call fragment without an index")
        call = self.calls.get(frag["index"])
        if call is None:
            if not frag.get("id"):
                raise StreamProtocolError(f"tool call {frag['index']} starts without an id")
            if not isinstance(frag["id"], str):
                raise StreamProtocolError(f"tool call {frag['index']} has an id that is a JSON {json_type(frag['id'])}")
            call = self.calls[frag["index"]] = {"id": frag["id"], "type": "function",
                                                "function": {"name": "", "arguments": ""}}
        fn = object_field(frag, "function", f"tool call {frag['index']}")
        if fn.get("name"):
            if not isinstance(fn["name"], str):
                raise StreamProtocolError(f"tool call {frag['index']} has a name that is a JSON {json_type(fn['name'])}")
            call["function"]["name"] = call["function"]["name"] or fn["name"]
        if isinstance(fn.get("arguments"), str):
            call["function"]["arguments"] += fn["arguments"]

    def result(self) -> dict[str, Any]:
        calls = [self.calls[i] for i in sorted(self.calls)]
        if self.finish_reason != "length":
            for n, call in enumerate(calls):
                complete_json(call["function"]["arguments"], f"tool call {n}")
        message: dict[str, Any] = {"role": "assistant", "content": self.text or None,
                                   "refusal": self.refusal or None}
        if calls:
            message["tool_calls"] = calls
        body = {**self.meta, "object": "chat.completion",
                "choices": [{"index": 0, "message": message, "finish_reason": self.finish_reason}]}
        if self.usage is not None:
            body["usage"] = self.usage
        return body


def _assistant(items: list[dict[str, Any]]) -> dict[str, Any]:
    text = "".join(i["content"] for i in items if i["type"] == "message")
    calls = [i.get("raw") or {"id": i["call_id"], "type": "function",
                              "function": {"name": i["name"], "arguments": i["arguments"]}}
             for i in items if i["type"] == "tool_call"]
    message: dict[str, Any] = {"role": "assistant", "content": text or None}
    if calls:
        message["tool_calls"] = calls
    return message


def _tool(t: dict[str, Any]) -> dict[str, Any]:
    return {"type": "function", "function": {"name": t["name"], "description": t["description"],
                                             "parameters": t["parameters"], "strict": True}}


def _text(content: Any) -> str | None:
    """Message content as text: a string, null, or (some servers) a list of text parts."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list) and all(isinstance(p, dict) and isinstance(p.get("text"), str) for p in content):
        return "".join(p["text"] for p in content)
    return None


def _loose_call(raw: Any) -> ToolCall:
    """A call as far as it got, for reporting a truncated or invalid turn; never executed."""
    fn = raw.get("function") if isinstance(raw, dict) else None
    fn = fn if isinstance(fn, dict) else {}
    return ToolCall(text_or_none(raw.get("id")) if isinstance(raw, dict) else None, text_or_none(fn.get("name")),
                    text_or_none(fn.get("arguments")))
