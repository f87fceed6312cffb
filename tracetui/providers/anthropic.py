"""Anthropic Messages: content blocks out and back, verdict from ``stop_reason``.

``tool_use`` blocks carry ``input`` as an object, so the raw arguments recorded are
its canonical JSON text (sorted keys, no spaces). The assistant's blocks are kept
verbatim for the next request, because thinking blocks and their signatures must
travel back unchanged with the tool calls they led to.

``max_tokens`` (and a full context window) is a truncation, ``refusal`` a refusal
even when partial text or a partial call came first, ``pause_turn`` an incomplete
turn this loop does not resume: in all three no tool runs.
"""
from __future__ import annotations

from typing import Any

import orjson

from tracetui.providers.stream import (
    EventFolder, StreamProtocolError, assemble, complete_json, event_type, index_field, object_field, text_field,
)
from tracetui.providers.base import (
    EMPTY, FAILED, FOREIGN_BODY, INCOMPLETE, INVALID_TOOL_CALL, REFUSED, TEXT, TOOL_CALLS, UNSUPPORTED,
    ModelTurn, ToolCall,
)
from tracetui.providers.shapes import brief, foreign_detail, identify, plain, text_or_none, try_canonical_json
from tracetui.providers.transcript import turns

#: the API version the anthropic SDK pins (``anthropic-version``): the response shapes its types describe
API_VERSION = "2026-10-21"
CUT_SHORT = {"max_tokens": "response cut off at max_tokens",
             "model_context_window_exceeded": "response cut off: the model's context window is full",
             "pause_turn": "turn paused by the API (pause_turn); this loop does not resume paused turns"}
REASONING_BLOCKS = ("thinking", "redacted_thinking")


class AnthropicAdapter:
    name = "anthropic"
    #: appended to the base URL as given: the anthropic SDK's base URL is the API root
    path = "/v1/messages"
    default_base_url = "https://api.anthropic.com"

    def build_request(self, model, transcript, tools, max_output_tokens, stream):
        system: list[str] = []
        messages: list[dict[str, Any]] = []
        for kind, items in turns(transcript):
            if kind == "system":
                system.extend(i["content"] for i in items)
            elif kind == "user":
                messages.append({"role": "user", "content": items[0]["content"]})
            elif kind == "assistant":
                messages.append({"role": "assistant", "content": [b for b in map(_block, items) if b is not None]})
            else:
                messages.append({"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": i["call_id"], "content": i["output"],
                     "is_error": bool(i.get("is_error"))} for i in items]})
        body: dict[str, Any] = {"model": model, "max_tokens": max_output_tokens, "messages": messages,
                                "tools": [{"name": t["name"], "description": t["description"],
                                           "input_schema": t["parameters"]} for t in tools]}
        if system:
            body["system"] = "\n\n".join(system)
        if stream:
            body["stream"] = True
        return body

    def parse_response(self, body: Any) -> ModelTurn:
        if isinstance(body, dict) and body.get("type") == "error":
            err = body.get("error") if isinstance(body.get("error"), dict) else {}
            return ModelTurn(FAILED, detail=f"error body with status 200: {plain(err.get('type', 'error'))}: "
                                            f"{plain(err.get('message', ''))}".rstrip(": "))
        if identify(body) != "anthropic" or body.get("role", "assistant") != "assistant":
            return ModelTurn(FOREIGN_BODY, detail=foreign_detail(body, self.name))
        stop = body.get("stop_reason")
        stop_text = text_or_none(stop)
        usage = body.get("usage") if isinstance(body.get("usage"), dict) else None
        content = body.get("content")
        if not isinstance(content, list) or not all(isinstance(b, dict) for b in content):
            return ModelTurn(UNSUPPORTED, finish_reason=stop_text, usage=usage, detail="content is not a list of blocks")
        types = [str(b.get("type")) for b in content]
        text = "".join(b["text"] for b in content if b.get("type") == "text" and isinstance(b.get("text"), str))
        loose = [_loose_call(b) for b in content if b.get("type") == "tool_use"]
        common = {"finish_reason": stop_text, "usage": usage, "item_types": types, "status": None}
        if stop == "refusal":
            partial = f"; {len(text)} characters of partial text discarded" if text else ""
            return ModelTurn(REFUSED, text=text, calls=loose, **common,
                             detail=f"model refused (stop_reason refusal){partial}")
        if stop_text in CUT_SHORT:
            return ModelTurn(INCOMPLETE, text=text, calls=loose, **common, detail=CUT_SHORT[stop_text])
        if stop not in ("end_turn", "stop_sequence", "tool_use"):
            return ModelTurn(UNSUPPORTED, text=text, **common, detail=f"unexpected stop_reason {brief(stop)}")
        calls: list[ToolCall] = []
        items: list[dict[str, Any]] = []
        for block in content:
            kind = block.get("type")
            if kind == "text":
                if not isinstance(block.get("text"), str):
                    return ModelTurn(UNSUPPORTED, **common, detail="text block without text")
                items.append({"type": "message", "role": "assistant", "content": block["text"], "raw": block})
            elif kind == "tool_use":
                if not (isinstance(block.get("id"), str) and block["id"] and isinstance(block.get("name"), str)
                        and block["name"] and isinstance(block.get("input"), dict)):
                    return ModelTurn(INVALID_TOOL_CALL, text=text, calls=loose, **common,
                                     detail="tool_use block without id, name or an input object")
                args = try_canonical_json(block["input"])
                if args is None:
                    return ModelTurn(INVALID_TOOL_CALL, text=text, calls=loose, **common,
                                     detail="tool_use input nests too deeply to be written as JSON")
                calls.append(ToolCall(block["id"], block["name"], args))
                items.append({"type": "tool_call", "call_id": block["id"], "name": block["name"], "arguments": args,
                              "raw": block})
            elif kind in REASONING_BLOCKS:
                items.append({"type": "reasoning", "raw": block})
            else:
                return ModelTurn(UNSUPPORTED, text=text, **common, detail=f"unknown content block {brief(kind)}")
        if calls:
            return ModelTurn(TOOL_CALLS, text=text, calls=calls, items=items, **common)
        if stop == "tool_use":
            return ModelTurn(INVALID_TOOL_CALL, text=text, **common,
                             detail="stop_reason tool_use but no tool_use block")
        if text:
            return ModelTurn(TEXT, text=text, items=items, **common)
        return ModelTurn(EMPTY, items=items, **common, detail="finished with no text and no tool call")

    def assemble_stream(self, events):
        return assemble(AnthropicStreamAssembler(), events)


class AnthropicStreamAssembler(EventFolder):
    """Folds Messages stream events; complete at ``message_stop``.

    ``input_json_delta`` fragments are joined per block and parsed only when the
    message stops; a block cut short by ``max_tokens``/``refusal``/``pause_turn``
    keeps its partial text under ``partial_json`` so the turn can be reported as
    cut off, never run.
    """

    final_event = "a message_stop event"

    def __init__(self) -> None:
        super().__init__()
        self.message: dict[str, Any] | None = None
        self.blocks: dict[int, dict[str, Any]] = {}
        self.json: dict[int, str] = {}
        self.open: set[int] = set()

    def take(self, event: dict[str, Any]) -> str | None:
        kind = event_type(event)
        if kind == "message_start":
            if self.message is not None or not isinstance(event.get("message"), dict):
                raise StreamProtocolError("message_start repeated or without a message")
            self.message = dict(event["message"])
            return None
        if kind in ("ping", None) or not kind.startswith(("content_block", "message_")):
            return None
        if self.message is None:
            raise StreamProtocolError(f"{kind} before message_start")
        if kind == "content_block_start":
            idx = event.get("index")
            block = event.get("content_block")
            if isinstance(idx, bool) or not isinstance(idx, int) or not isinstance(block, dict) or idx in self.blocks:
                raise StreamProtocolError("content_block_start without a new index and a block")
            self.blocks[idx] = dict(block)
            self.open.add(idx)
            if block.get("type") == "tool_use":
                self.json[idx] = ""
        elif kind == "content_block_delta":
            idx = self._open_index(event, "delta for")
            delta = object_field(event, "delta", kind)
            block = self.blocks[idx]
            dtype = delta.get("type")
            if dtype == "text_delta":
                text = text_field(delta, "text", "a text_delta")
                block["text"] = self._so_far(block, "text", idx) + text
                return self.show(text)
            if dtype == "input_json_delta":
                if idx not in self.json:
                    raise StreamProtocolError(f"input_json_delta for content block {idx}, which is not a tool_use")
                self.json[idx] += text_field(delta, "partial_json", "an input_json_delta")
            elif dtype == "thinking_delta":
                block["thinking"] = self._so_far(block, "thinking", idx) + text_field(delta, "thinking",
                                                                                       "a thinking_delta")
            elif dtype == "signature_delta":
                block["signature"] = text_field(delta, "signature", "a signature_delta")
        elif kind == "content_block_stop":
            self.open.discard(self._open_index(event, "content_block_stop for"))
        elif kind == "message_delta":
            delta = object_field(event, "delta", kind)
            for key in ("stop_reason", "stop_sequence"):
                if key in delta:
                    self.message[key] = delta[key]
            if isinstance(event.get("usage"), dict):
                usage = self.message.get("usage")
                self.message["usage"] = {**(usage if isinstance(usage, dict) else {}), **event["usage"]}
        elif kind == "message_stop":
            self.ended = True
        return None

    def _open_index(self, event: dict[str, Any], what: str) -> int:
        idx = index_field(event, "index", str(event.get("type")))
        if idx not in self.open:
            raise StreamProtocolError(f"{what} content block {idx}, which is not open")
        return idx

    @staticmethod
    def _so_far(block: dict[str, Any], key: str, idx: int) -> str:
        """Text a block has accumulated (or started with); a block that started with non-text cannot grow."""
        value = block.get(key, "")
        if not isinstance(value, str):
            raise StreamProtocolError(f"content block {idx} started with a {key} that is not a string")
        return value

    def result(self) -> dict[str, Any]:
        assert self.message is not None
        if self.open:
            raise StreamProtocolError(f"content block {min(self.open)} was never closed")
        stop = self.message.get("stop_reason")
        if stop is None:
            raise StreamProtocolError("message stopped without a stop_reason")
        cut = isinstance(stop, str) and (stop in CUT_SHORT or stop == "refusal")
        content = []
        for idx in sorted(self.blocks):
            block = self.blocks[idx]
            if idx in self.json:
                raw = self.json[idx] or "{}"  # a tool without parameters streams no JSON at all
                if cut:
                    try:
                        block["input"] = orjson.loads(raw)
                    except orjson.JSONDecodeError:
                        block.pop("input", None)
                        block["partial_json"] = raw
                else:
                    block["input"] = complete_json(raw, f"content block {idx}")
            content.append(block)
        return {**self.message, "content": content}


def _block(item: dict[str, Any]) -> dict[str, Any] | None:
    raw = item.get("raw")
    if item["type"] == "reasoning":
        return raw if isinstance(raw, dict) and raw.get("type") in REASONING_BLOCKS else None
    if isinstance(raw, dict) and raw.get("type") in ("text", "tool_use"):
        return raw
    if item["type"] == "message":
        return {"type": "text", "text": item["content"]}
    try:
        args = orjson.loads(item["arguments"])
    except (orjson.JSONDecodeError, TypeError):
        args = item["arguments"]  # sent as it is; the API will say what it thinks of it
    return {"type": "tool_use", "id": item["call_id"], "name": item["name"], "input": args}


def _loose_call(block: dict[str, Any]) -> ToolCall:
    """A call as far as it got (partial JSON when cut off), for reporting only."""
    if isinstance(block.get("input"), dict):
        args = try_canonical_json(block["input"])
    else:
        args = text_or_none(block.get("partial_json"))
    return ToolCall(text_or_none(block.get("id")), text_or_none(block.get("name")), args)
