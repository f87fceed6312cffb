"""OpenAI Responses API: input items out, output items back.

Classification follows the response contract: HTTP first (done by the loop), then
the top-level ``status``, then each output item's type. Anything that is not
recognisably a Responses body is ``unsupported``, never repaired.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tracetui.providers.base import (
    CANCELLED, EMPTY, FAILED, FOREIGN_BODY, INCOMPLETE, INVALID_TOOL_CALL, REFUSED, TEXT, TOOL_CALLS, UNSUPPORTED,
    ModelTurn, ToolCall,
)
from tracetui.providers.shapes import brief, json_type, plain, text_or_none
from tracetui.providers.stream import (
    EventFolder, StreamProtocolError, assemble, complete_json, event_type, index_field, object_field, text_field,
)

TERMINAL = {"response.completed", "response.incomplete", "response.failed"}


class OpenAIResponsesAdapter:
    name = "openai-responses"
    #: appended to the base URL as given; like the openai SDK's, the base URL holds the version (``…/v1``)
    path = "/responses"
    default_base_url = "https://api.openai.com/v1"

    def build_request(self, model, transcript, tools, max_output_tokens, stream):
        items: list[dict[str, Any]] = []
        for item in transcript:
            t = item["type"]
            if t == "message":
                items.append({"role": item["role"], "content": item["content"]})
            elif t == "tool_call":
                items.append(item.get("raw") or {"type": "function_call", "call_id": item["call_id"],
                                                  "name": item["name"], "arguments": item["arguments"]})
            elif t == "tool_result":
                items.append({"type": "function_call_output", "call_id": item["call_id"], "output": item["output"]})
            else:  # reasoning and any other provider item, kept verbatim
                items.append(item["raw"])
        body: dict[str, Any] = {"model": model, "input": items,
                                "tools": [_tool(t) for t in tools], "max_output_tokens": max_output_tokens}
        if stream:
            body["stream"] = True
        return body

    def parse_response(self, body: Any) -> ModelTurn:
        if not isinstance(body, dict) or body.get("object", "response") != "response" or (
                "output" not in body and "status" not in body):
            return ModelTurn(FOREIGN_BODY, detail=_not_responses(body))
        status = body.get("status")
        usage = body.get("usage") if isinstance(body.get("usage"), dict) else None
        output = body.get("output")
        types = [_item_type(i) for i in output] if isinstance(output, list) else []
        if status == "incomplete":
            details = body.get("incomplete_details") or {}
            reason = details.get("reason") if isinstance(details, dict) else None
            return ModelTurn(INCOMPLETE, status=status, finish_reason=text_or_none(reason), usage=usage, item_types=types,
                             detail=f"response incomplete: {plain(reason or 'no reason given')}",
                             text=_texts(output), calls=_calls(output))
        if status in ("failed", "cancelled"):
            err = body.get("error") if isinstance(body.get("error"), dict) else {}
            msg = err.get("message") if err else None
            return ModelTurn(FAILED if status == "failed" else CANCELLED, status=status, usage=usage, item_types=types,
                             detail=f"response {status}" + (f": {plain(msg)}" if msg else ""))
        if status != "completed" or not isinstance(output, list):
            return ModelTurn(UNSUPPORTED, status=status if isinstance(status, str) else None, item_types=types,
                             detail=f"unexpected response status {brief(status)}" if status != "completed"
                             else "output is not a list")
        calls: list[ToolCall] = []
        texts: list[str] = []
        items: list[dict[str, Any]] = []
        for item in output:
            if not isinstance(item, dict):
                return ModelTurn(UNSUPPORTED, status=status, item_types=types, detail="output item is not an object")
            kind = item.get("type")
            if kind == "function_call":
                call_id, name, arguments = item.get("call_id"), item.get("name"), item.get("arguments")
                if not (isinstance(call_id, str) and isinstance(name, str) and isinstance(arguments, str)
                        and call_id and name and arguments):
                    return ModelTurn(INVALID_TOOL_CALL, status=status, item_types=types,
                                     detail="function_call without call_id, name or arguments")
                calls.append(ToolCall(call_id, name, arguments))
                items.append({"type": "tool_call", "call_id": call_id, "name": name, "arguments": arguments,
                              "raw": item})
            elif kind == "message":
                content = item.get("content")
                if item.get("status") not in (None, "completed") or not isinstance(content, list):
                    return ModelTurn(UNSUPPORTED, status=status, item_types=types, detail="message item not completed")
                for part in content:
                    if not isinstance(part, dict):
                        return ModelTurn(UNSUPPORTED, status=status, item_types=types, detail="content part is not an object")
                    if part.get("type") == "refusal":
                        return ModelTurn(REFUSED, status=status, usage=usage, item_types=types,
                                         detail=plain(part.get("refusal") or "refused"))
                    if part.get("type") != "output_text" or not isinstance(part.get("text"), str):
                        return ModelTurn(UNSUPPORTED, status=status, item_types=types,
                                         detail=f"unknown content part {brief(part.get('type'))}")
                    texts.append(part["text"])
                items.append({"type": "message", "role": "assistant", "content": "".join(
                    p["text"] for p in content)})
            elif kind == "reasoning":
                items.append({"type": "reasoning", "raw": item})
            else:
                return ModelTurn(UNSUPPORTED, status=status, item_types=types, detail=f"unknown output item {brief(kind)}")
        if calls:
            return ModelTurn(TOOL_CALLS, text="".join(texts), calls=calls, items=items, usage=usage,
                             status=status, item_types=types, finish_reason="tool_calls")
        if texts:
            return ModelTurn(TEXT, text="".join(texts), items=items, usage=usage, status=status,
                             item_types=types, finish_reason="stop")
        return ModelTurn(EMPTY, items=items, status=status, item_types=types, detail="completed with no text and no tool call")

    def assemble_stream(self, events):
        return assemble_responses_stream(events)


def _tool(t: dict[str, Any]) -> dict[str, Any]:
    return {"type": "function", "name": t["name"], "description": t["description"], "strict": True,
            "parameters": t["parameters"]}


def _texts(output: Any) -> str:
    if not isinstance(output, list):
        return ""
    out = []
    for item in output:
        if isinstance(item, dict) and item.get("type") == "message" and isinstance(item.get("content"), list):
            out.extend(p.get("text", "") for p in item["content"] if isinstance(p, dict) and isinstance(p.get("text"), str))
    return "".join(out)


def _calls(output: Any) -> list[ToolCall]:
    if not isinstance(output, list):
        return []
    return [ToolCall(text_or_none(i.get("call_id")), text_or_none(i.get("name")), text_or_none(i.get("arguments")))
            for i in output if isinstance(i, dict) and i.get("type") == "function_call"]


def _item_type(item: Any) -> str:
    """An output item's type for the trace: its text, ``?`` when it has none, or the JSON type it is instead."""
    if not isinstance(item, dict):
        return "?"
    kind = item.get("type", "?")
    return kind if isinstance(kind, str) else f"<{json_type(kind)}>"


def _not_responses(body: Any) -> str:
    if isinstance(body, str):
        head = body.lstrip()[:15].lower()
        if head.startswith("<!doctype") or head.startswith("<html"):
            return "body is an HTML page, not a Responses API object"
        return "body is not JSON"
    if isinstance(body, dict):
        if body.get("type") == "message" and "content" in body:
            return "body looks like an Anthropic Messages response, not a Responses API object"
        if "choices" in body:
            return "body looks like a Chat Completions response, not a Responses API object"
        if "candidates" in body:
            return "body looks like a Gemini response, not a Responses API object"
        return f"body has object {brief(body.get('object'))}, not 'response'"
    return f"body is a JSON {type(body).__name__}, not an object"


@dataclass
class StreamAssembler(EventFolder):
    """Feed it Responses-API stream events one at a time."""

    text: str = ""
    items: dict[int, dict[str, Any]] = field(default_factory=dict)
    args: dict[int, str] = field(default_factory=dict)
    final: dict[str, Any] | None = None
    shown: list[str] = field(default_factory=list)  # text deltas, in arrival order

    final_event = "a completion event"

    @property
    def ended(self) -> bool:  # type: ignore[override]
        return self.final is not None

    def take(self, event: dict[str, Any]) -> str | None:
        kind = event_type(event)
        if kind in TERMINAL:
            response = event.get("response")
            if not isinstance(response, dict):
                raise StreamProtocolError(f"{kind} carries no response object")
            self.final = response
            return None
        if kind == "response.output_text.delta":
            return self.show(text_field(event, "delta", kind))
        if kind not in ("response.output_item.added", "response.function_call_arguments.delta",
                        "response.function_call_arguments.done", "response.output_item.done"):
            return None
        idx = index_field(event, "output_index", kind, default=0)
        if kind == "response.output_item.added":
            self.items[idx] = dict(object_field(event, "item", kind))
            if self.items[idx].get("type") == "function_call":
                self.args[idx] = ""
        elif kind == "response.function_call_arguments.delta":
            if idx not in self.args:
                raise StreamProtocolError(f"arguments delta for unknown output item {idx}")
            self.args[idx] += text_field(event, "delta", kind)
        elif kind == "response.function_call_arguments.done":
            # checked when the stream ends: a response cut by its token limit is "incomplete", not broken
            if "arguments" in event:
                self.args[idx] = text_field(event, "arguments", kind)
            else:
                self.args.setdefault(idx, "")
        else:  # response.output_item.done
            item = dict(object_field(event, "item", kind) or self.items.get(idx) or {})
            if item.get("type") == "function_call" and item.get("status") != "incomplete":
                complete_json(item.get("arguments", self.args.get(idx, "")), f"output item {idx}")
            self.items[idx] = item
        return None

    def result(self) -> dict[str, Any]:
        assert self.final is not None
        if self.final.get("status") != "incomplete":  # an incomplete response runs no tool anyway
            for idx, item in self.items.items():
                if item.get("type") == "function_call":
                    complete_json(self.args.get(idx, item.get("arguments", "")), f"output item {idx}")
        return self.final


def assemble_responses_stream(events: list[dict[str, Any]]) -> tuple[Any, str | None]:
    return assemble(StreamAssembler(), events)
