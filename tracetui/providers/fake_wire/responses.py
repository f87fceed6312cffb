"""The OpenAI Responses API's fake server: input items in, a ``response`` object (or its events) out.

Bodies carry what ``openai.types.responses.Response`` requires (``created_at``,
``parallel_tool_calls``, ``tool_choice``, the request's ``tools`` echoed back) and
stream as the API streams: ``response.created`` and ``response.in_progress``, then
per output item ``output_item.added``, its content parts, deltas and ``.done``
events (each with its ``item_id``, ``content_index``), ``output_item.done``, and a
terminal event, every event numbered by ``sequence_number``.
"""
from __future__ import annotations

from itertools import count
from typing import Any

from tracetui.providers.fake_wire.base import (
    CREATED_AT, FAKE_MODEL, OVERLOADED, RATE_LIMITED, FakeWire, halves, text_pieces,
)

TERMINAL = {"completed": "response.completed", "incomplete": "response.incomplete"}


class ResponsesWire(FakeWire):
    name = "openai-responses"

    def read(self, body):
        items: list[dict[str, Any]] = []
        for item in body.get("input") or ():
            if not isinstance(item, dict):
                continue
            kind = item.get("type")
            if kind == "function_call":
                items.append({"type": "tool_call", "call_id": item.get("call_id"), "name": item.get("name"),
                              "arguments": item.get("arguments"), "id": item.get("id")})
            elif kind == "function_call_output":
                items.append({"type": "tool_result", "call_id": item.get("call_id"), "output": item.get("output")})
            elif kind in (None, "message"):
                items.append({"type": "message", "role": item.get("role"), "content": item.get("content")})
            else:
                items.append({"type": kind if kind == "reasoning" else "other"})
        return items, _limit(body.get("max_output_tokens"))

    def cache_key(self, body):
        return [body.get("max_output_tokens"), body.get("input")]

    def render(self, reply, number, units):
        if reply["status"] == "failed":
            extra = {"error": reply["error"]}
        elif reply["status"] == "incomplete":
            extra = {"incomplete_details": reply["incomplete_details"]}
        else:
            extra = {}
        body = {"id": f"resp_{number}", "object": "response", "created_at": CREATED_AT, "status": reply["status"],
                "model": FAKE_MODEL, "output": [_item(i) for i in reply["output"]], **extra,
                "parallel_tool_calls": True, "tool_choice": "auto"}
        return 200, body

    def finish(self, body, request):
        tools = request.get("tools")
        if isinstance(body, dict) and body.get("object") == "response":
            body["tools"] = tools if isinstance(tools, list) else []  # as the API does: the request's tools
        return body

    def events(self, body):
        return responses_to_events(body)

    def broken_arguments(self, body):
        output = [dict(i) for i in body["output"]]
        call = next((i for i in output if i.get("type") == "function_call"), None)
        if call is not None:
            call["arguments"] = call["arguments"][:-2]
        return {**body, "output": output}

    def cut_at(self, events):
        return next(i for i, e in enumerate(events) if e["type"] == "response.function_call_arguments.delta") + 1

    def without_completion(self, events):
        return events[:-1]

    def rejection(self, problem, detail):
        return {"error": {"message": detail, "type": "invalid_request_error", "param": "input", "code": None}}

    def fault(self, kind, request_id):
        if kind == "429":
            return 429, {"x-request-id": request_id, "retry-after": "2", "content-type": "application/json"}, {
                "error": {"message": RATE_LIMITED, "type": "requests", "code": "rate_limit_exceeded"}}
        return 503, {"x-request-id": request_id, "content-type": "application/json"}, {
            "error": {"message": OVERLOADED, "type": "server_error", "code": None}}


def _limit(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 500


def _item(item: dict[str, Any]) -> dict[str, Any]:
    """One neutral output item as a Responses output item."""
    kind = item["type"]
    if kind == "call":
        return {"type": "function_call", "id": "fc_" + item["call_id"], "call_id": item["call_id"],
                "name": item["name"], "arguments": item["arguments"], "status": item["status"]}
    if kind == "text":
        return {"type": "message", "id": "msg_1", "role": "assistant", "status": item["status"],
                "content": [{"type": "output_text", "text": item["text"], "annotations": []}]}
    if kind == "refusal":
        return {"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
                "content": [{"type": "refusal", "refusal": item["text"]}]}
    return {"type": "reasoning", "id": item["id"], "summary": [{"type": "summary_text", "text": item["summary"]}]}


def responses_to_events(body: dict[str, Any]) -> list[dict[str, Any]]:
    """Render a complete Responses body as the event stream the API sends for it."""
    number = count()

    def event(kind: str, **fields: Any) -> dict[str, Any]:
        return {"type": kind, "sequence_number": next(number), **fields}

    snapshot = {k: v for k, v in body.items() if k not in ("error", "incomplete_details")}
    snapshot.update(status="in_progress", output=[])
    events = [event("response.created", response=snapshot), event("response.in_progress", response=snapshot)]
    for idx, item in enumerate(body.get("output") or []):
        kind, item_id = item.get("type"), item.get("id")
        where = {"item_id": item_id, "output_index": idx}
        if kind == "function_call":
            events.append(event("response.output_item.added", output_index=idx,
                                item={**item, "arguments": "", "status": "in_progress"}))
            for piece in halves(item["arguments"]):
                events.append(event("response.function_call_arguments.delta", **where, delta=piece))
            events.append(event("response.function_call_arguments.done", **where, arguments=item["arguments"]))
        elif kind == "message":
            events.append(event("response.output_item.added", output_index=idx,
                                item={**item, "status": "in_progress", "content": []}))
            for part_index, part in enumerate(item.get("content") or []):
                events.extend(_part_events(event, where, part_index, part))
        elif kind == "reasoning":
            events.append(event("response.output_item.added", output_index=idx, item={**item, "summary": []}))
            for summary_index, part in enumerate(item.get("summary") or []):
                at = {**where, "summary_index": summary_index}
                events.append(event("response.reasoning_summary_part.added", **at,
                                     part={"type": "summary_text", "text": ""}))
                events.append(event("response.reasoning_summary_text.delta", **at, delta=part["text"]))
                events.append(event("response.reasoning_summary_text.done", **at, text=part["text"]))
                events.append(event("response.reasoning_summary_part.done", **at, part=part))
        else:
            events.append(event("response.output_item.added", output_index=idx, item=item))
        events.append(event("response.output_item.done", output_index=idx, item=item))
    events.append(event(TERMINAL.get(body.get("status"), "response.failed"), response=body))
    return events


def _part_events(event, where: dict[str, Any], part_index: int, part: dict[str, Any]) -> list[dict[str, Any]]:
    at = {**where, "content_index": part_index}
    if part.get("type") == "refusal":
        text = part["refusal"]
        return [event("response.content_part.added", **at, part={"type": "refusal", "refusal": ""}),
                *(event("response.refusal.delta", **at, delta=piece) for piece in text_pieces(text)),
                event("response.refusal.done", **at, refusal=text),
                event("response.content_part.done", **at, part=part)]
    text = part.get("text", "")
    return [event("response.content_part.added", **at, part={"type": "output_text", "text": "", "annotations": []}),
            *(event("response.output_text.delta", **at, delta=piece, logprobs=[]) for piece in text_pieces(text)),
            event("response.output_text.done", **at, text=text, logprobs=[]),
            event("response.content_part.done", **at, part=part)]
