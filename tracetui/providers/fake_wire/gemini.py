"""Gemini's fake server: contents in, a ``GenerateContentResponse`` (or its chunks) out.

The reply is one candidate whose parts are ``text``, thought summaries
(``thought: true``) and ``functionCall`` (``args`` an object, with an ``id``);
the thought signature rides on the first function call (or the first part), and
must come back with it. The verdict is ``finishReason``: ``STOP``, ``MAX_TOKENS``
when the output limit cut it, ``SAFETY`` for a refusal. A stream is a series of
such responses, text in pieces and each call whole, the last one carrying the
finish reason and usage.

Gemini has no failed or cancelled status (a failed generation is an HTTP 500), and
a function call's arguments never arrive as JSON text, so they cannot arrive broken.
"""
from __future__ import annotations

from typing import Any

from tracetui.providers.fake_wire.base import (
    FAKE_MODEL, MODEL_FAILED, FakeWire, loads_or, text_pieces, tokens,
)
from tracetui.providers.shapes import try_canonical_json

FINISH = {"completed": "STOP", "incomplete": "MAX_TOKENS"}
#: a fixed stand-in for the signature the API puts on a model turn that thought
SIGNATURE = "dHJhY2V0dWkgZmFrZSB0aG91Z2h0IHNpZ25hdHVyZQ=="  # base64, as the API's are


class GeminiWire(FakeWire):
    name = "gemini"
    unexpressed = frozenset({"response_cancelled"})
    stream_faults = frozenset({"stream_cut", "stream_no_completion"})
    differences = {
        "response_failed": ("server_error", "Gemini has no failed status: a failed generation is an HTTP 500, "
                                            "retried (within --max-retries), then server_error"),
        "response_cancelled": ("answer_ready", "Gemini cannot cancel a response: the model answers plainly"),
        "stream_bad_json": ("answer_ready", "Gemini streams each function call whole, its args an object: they "
                                            "cannot arrive as broken JSON, so the stream is whole"),
        "invalid_json": ("answer_ready", "functionCall args arrive as an object, never as broken JSON: the "
                                         "model's broken arguments reach the loop as {} (schema_error, then "
                                         "repaired)"),
        "reasoning_items": ("answer_ready", "the thought signature rides on the function call itself, so no "
                                            "ablation separates them: never rejected for a missing signature"),
    }
    fault_differences = {"429": ("rate_limited", "Gemini sends no Retry-After (google-genai would ignore one): "
                                                 "its own backoff applies")}

    def read(self, body):
        items: list[dict[str, Any]] = []
        system = body.get("systemInstruction")
        if isinstance(system, dict):
            items.append({"type": "message", "role": "system", "content": _text(system.get("parts"))})
        for content in body.get("contents") or ():
            if not isinstance(content, dict):
                continue
            role = "assistant" if content.get("role") == "model" else "user"
            for part in content.get("parts") or ():
                if isinstance(part, dict):
                    items.extend(_neutral(part, role))
        config = body.get("generationConfig")
        limit = config.get("maxOutputTokens") if isinstance(config, dict) else None
        return items, limit if isinstance(limit, int) and not isinstance(limit, bool) else 500

    def cache_key(self, body):
        config = body.get("generationConfig")
        return [config.get("maxOutputTokens") if isinstance(config, dict) else None, body.get("contents")]

    def headers(self, request_id):
        return {"content-type": "application/json"}  # the Gemini API sends no request id header

    def render(self, reply, number, units):
        if reply["status"] == "failed":
            return 500, {"error": {"code": 500, "message": MODEL_FAILED, "status": "INTERNAL"}}
        refused = any(i["type"] == "refusal" for i in reply["output"])
        parts = [_part(i) for i in reply["output"] if i["type"] != "refusal"]
        if any(i["type"] == "reasoning" for i in reply["output"]):
            signed = next((p for p in parts if "functionCall" in p), None) or next(
                (p for p in parts if not p.get("thought")), None)
            if signed is not None:
                signed["thoughtSignature"] = SIGNATURE
        candidate: dict[str, Any] = {"content": {"role": "model", "parts": parts}} if parts else {}
        candidate.update(finishReason="SAFETY" if refused else FINISH.get(reply["status"], "STOP"), index=0)
        out = tokens(parts)
        return 200, {"candidates": [candidate], "usageMetadata": {
            "promptTokenCount": units, "candidatesTokenCount": out, "totalTokenCount": units + out},
            "modelVersion": FAKE_MODEL, "responseId": f"resp-{number}"}

    def events(self, body):
        candidate = body["candidates"][0]
        head = {"modelVersion": body["modelVersion"], "responseId": body["responseId"]}
        pieces: list[dict[str, Any]] = []
        for part in (candidate.get("content") or {}).get("parts") or []:
            if "functionCall" in part or part.get("thought") or not part.get("text"):
                pieces.append(part)
                continue
            extra = {k: v for k, v in part.items() if k != "text"}
            pieces += [{"text": piece, **(extra if n == 0 else {})} for n, piece in enumerate(text_pieces(part["text"]))]
        chunks = [{"candidates": [{"content": {"role": "model", "parts": [piece]}, "index": 0}], **head}
                  for piece in pieces] or [{"candidates": [{"index": 0}], **head}]
        last = chunks[-1]["candidates"][0]
        last["finishReason"] = candidate["finishReason"]
        chunks[-1]["usageMetadata"] = body["usageMetadata"]
        return chunks

    def broken_arguments(self, body):  # pragma: no cover - not a fault Gemini can express (see differences)
        return body

    def cut_at(self, events):
        return next(i for i, e in enumerate(events)
                    if any("functionCall" in p for c in e["candidates"] for p in (c.get("content") or {}).get("parts", [])))

    def without_completion(self, events):
        last = events[-1]
        candidate = {k: v for k, v in last["candidates"][0].items() if k != "finishReason"}
        return [*events[:-1], {**last, "candidates": [candidate]}]

    def rejection(self, problem, detail):
        if problem == "orphan_result":
            detail = ("Please ensure that function response turn comes immediately after a function call turn; "
                      f"no function call has id {detail}.")
        else:
            detail = ("Function call is missing a thought_signature in functionCall parts. This is required for "
                      "tools to work correctly.")
        return {"error": {"code": 400, "message": detail, "status": "INVALID_ARGUMENT"}}

    def fault(self, kind, request_id):
        if kind == "429":
            return 429, {"content-type": "application/json"}, {"error": {
                "code": 429, "message": "Resource has been exhausted (e.g. check quota).",
                "status": "RESOURCE_EXHAUSTED",
                "details": [{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "2s"}]}}
        return 503, {"content-type": "application/json"}, {"error": {
            "code": 503, "message": "The model is overloaded. Please try again later.", "status": "UNAVAILABLE"}}


def _text(parts: Any) -> str:
    return "".join(p["text"] for p in parts or () if isinstance(p, dict) and isinstance(p.get("text"), str))


def _neutral(part: dict[str, Any], role: str) -> list[dict[str, Any]]:
    if "functionCall" in part:
        call = part["functionCall"] if isinstance(part["functionCall"], dict) else {}
        args = call.get("args")
        item = {"type": "tool_call", "call_id": call.get("id"), "name": call.get("name"),
                "arguments": try_canonical_json(args) if isinstance(args, dict) else None}
        return [{"type": "reasoning"}, item] if part.get("thoughtSignature") else [item]
    if "functionResponse" in part:
        response = part["functionResponse"] if isinstance(part["functionResponse"], dict) else {}
        payload = response.get("response") if isinstance(response.get("response"), dict) else {}
        value = payload.get("output", payload.get("error"))
        return [{"type": "tool_result", "call_id": response.get("id"), "output": try_canonical_json(value)}]
    if part.get("thought"):
        return [{"type": "reasoning"}]
    if isinstance(part.get("text"), str):
        return [{"type": "message", "role": role, "content": part["text"]}]
    return [{"type": "other"}]


def _part(item: dict[str, Any]) -> dict[str, Any]:
    kind = item["type"]
    if kind == "call":
        args = loads_or(item["arguments"], None)  # cut short by the output limit: no args arrived whole
        return {"functionCall": {"id": item["call_id"], "name": item["name"],
                                 "args": args if isinstance(args, dict) else {}}}
    if kind == "text":
        return {"text": item["text"]}
    return {"text": item["summary"], "thought": True}
