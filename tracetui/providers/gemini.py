"""Gemini generateContent: contents and parts out, the first candidate back.

A ``functionCall`` part carries ``args`` as an object (recorded as canonical JSON
text) and may have no ``id``; then the adapter makes one up, deterministically
(``gemini-call-N``, counted over the run), says so in ``detail``, and leaves it
out of the ``functionResponse`` it sends back, which Gemini matches by name and
order. The model's parts are returned verbatim, thought signatures included.

Failure modes: ``promptFeedback.blockReason`` (no candidate at all) and the
safety-like finish reasons are refusals, ``MAX_TOKENS`` a truncation, and
``MALFORMED_FUNCTION_CALL`` (or a malformed ``functionCall`` part even under
``STOP``) an invalid tool call.
"""
from __future__ import annotations

from typing import Any

import orjson

from tracetui.providers.stream import (
    EventFolder, StreamProtocolError, assemble, list_field, object_field, stream_error,
)
from tracetui.providers.base import (
    EMPTY, FAILED, FOREIGN_BODY, INVALID_TOOL_CALL, REFUSED, TEXT, TOOL_CALLS, UNSUPPORTED,
    ModelTurn, ToolCall,
)
from tracetui.providers.gemini_finish import FINISH_REASONS
from tracetui.providers.shapes import (
    brief, error_message, foreign_detail, identify, json_type, plain, text_or_none, try_canonical_json,
)
from tracetui.providers.transcript import call_names, turns
from tracetui.trace.safe_text import redacted_prefix

#: the Gemini API version the requests use: the one with ``parameters_json_schema`` and thought signatures
API_VERSION = "v1beta"
#: model name prefixes google-genai keeps as they are (a tuned model, or a name from the API's own model list)
RESOURCE_PREFIXES = ("models/", "tunedModels/")


def resource_name(model: str) -> str:
    """The model's resource name, as google-genai builds it: ``models/NAME`` unless it already has a prefix."""
    return model if model.startswith(RESOURCE_PREFIXES) else f"models/{model}"


def model_problem(model: str) -> str | None:
    """Why google-genai would refuse this model name in a URL path, in words; None when it would not."""
    for bad in ("..", "?", "&", "#"):
        if bad in model:
            return f"a Gemini model name cannot contain {bad!r} (it would change the request path)"
    if not model.isprintable():
        return "a Gemini model name cannot contain control characters (no URL can hold them)"
    return None


SYNTH_PREFIX = "gemini-call-"


class GeminiAdapter:
    name = "gemini"
    #: set per request by :meth:`build_request`: the path names the model and the method. As google-genai
    #: does, the API version and the path are appended to the base URL, which is the API root.
    path = f"/{API_VERSION}/models/{{model}}:generateContent"
    default_base_url = "https://generativelanguage.googleapis.com"

    def __init__(self) -> None:
        self.synthesized = 0

    def build_request(self, model, transcript, tools, max_output_tokens, stream):
        method = "streamGenerateContent?alt=sse" if stream else "generateContent"
        self.path = f"/{API_VERSION}/{resource_name(model)}:{method}"
        names = call_names(transcript)
        system: list[str] = []
        contents: list[dict[str, Any]] = []
        for kind, items in turns(transcript):
            if kind == "system":
                system.extend(i["content"] for i in items)
            elif kind == "user":
                contents.append({"role": "user", "parts": [{"text": items[0]["content"]}]})
            elif kind == "assistant":
                contents.append({"role": "model", "parts": [p for p in map(_part, items) if p is not None]})
            else:
                contents.append({"role": "user", "parts": [_response(i, names) for i in items]})
        body: dict[str, Any] = {"contents": contents,
                                "tools": [{"functionDeclarations": [
                                    {"name": t["name"], "description": t["description"],
                                     "parameters_json_schema": t["parameters"]} for t in tools]}],
                                "generationConfig": {"maxOutputTokens": max_output_tokens}}
        if system:
            body["systemInstruction"] = {"parts": [{"text": "\n\n".join(system)}]}
        return body

    def parse_response(self, body: Any) -> ModelTurn:
        if identify(body) != "gemini":
            message = error_message(body)
            if message is not None:
                return ModelTurn(FAILED, detail=f"error body with status 200: {message}")
            return ModelTurn(FOREIGN_BODY, detail=foreign_detail(body, self.name))
        usage = body.get("usageMetadata") if isinstance(body.get("usageMetadata"), dict) else None
        feedback = body.get("promptFeedback") if isinstance(body.get("promptFeedback"), dict) else {}
        candidates = body.get("candidates")
        if feedback.get("blockReason"):
            reason = plain(feedback["blockReason"])
            return ModelTurn(REFUSED, finish_reason=reason, usage=usage,
                             detail=f"prompt blocked (promptFeedback.blockReason {reason})")
        if not isinstance(candidates, list) or not candidates or not isinstance(candidates[0], dict):
            return ModelTurn(EMPTY, usage=usage, detail="no candidate in the response")
        cand = candidates[0]
        raw_finish = cand.get("finishReason")
        finish = text_or_none(raw_finish)
        content = cand.get("content") if isinstance(cand.get("content"), dict) else {}
        parts = content.get("parts") or []
        if not isinstance(parts, list) or not all(isinstance(p, dict) for p in parts):
            return ModelTurn(UNSUPPORTED, finish_reason=finish, usage=usage, detail="content.parts is not a list of parts")
        types = [_part_type(p) for p in parts]
        text = "".join(p["text"] for p in parts if isinstance(p.get("text"), str) and not p.get("thought"))
        loose = [_loose_call(p) for p in parts if "functionCall" in p]
        common = {"finish_reason": finish, "usage": usage, "item_types": types}
        why = f": {cand['finishMessage']}" if isinstance(cand.get("finishMessage"), str) else ""
        if finish in FINISH_REASONS:
            kind, code, words = FINISH_REASONS[finish]
            return ModelTurn(kind, text=text, calls=loose, **common, code=code,
                             detail=f"{words} (finishReason {finish}){why}")
        if finish != "STOP":
            return ModelTurn(UNSUPPORTED, text=text, **common, detail=f"unexpected finishReason {brief(raw_finish)}{why}")
        calls: list[ToolCall] = []
        items: list[dict[str, Any]] = []
        made_up: list[str] = []
        for part in parts:
            if "functionCall" in part:
                fc = part["functionCall"]
                args = fc.get("args", {}) if isinstance(fc, dict) else None
                if not isinstance(fc, dict) or not isinstance(fc.get("name"), str) or not fc["name"] \
                        or not isinstance(args, dict) or ("id" in fc and not (isinstance(fc["id"], str) and fc["id"])):
                    return ModelTurn(INVALID_TOOL_CALL, text=text, calls=loose, **common,
                                     detail="malformed functionCall part (no name, or args not an object) "
                                            "under finishReason STOP")
                call_id = fc.get("id")
                if call_id is None:
                    self.synthesized += 1
                    call_id = f"{SYNTH_PREFIX}{self.synthesized}"
                    made_up.append(call_id)
                arguments = try_canonical_json(args)
                if arguments is None:
                    return ModelTurn(INVALID_TOOL_CALL, text=text, calls=loose, **common,
                                     detail="functionCall args nest too deeply to be written as JSON")
                calls.append(ToolCall(call_id, fc["name"], arguments))
                items.append({"type": "tool_call", "call_id": call_id, "name": fc["name"], "arguments": arguments,
                              "raw": part})
            elif isinstance(part.get("text"), str) and not part.get("thought"):
                items.append({"type": "message", "role": "assistant", "content": part["text"], "raw": part})
            else:  # thoughts, signatures and any other part: returned as they came
                items.append({"type": "reasoning", "raw": part})
        detail = (f"functionCall had no id: synthesized {', '.join(made_up)} (deterministic, in run order; "
                  f"not sent back to the API)") if made_up else None
        if calls:
            return ModelTurn(TOOL_CALLS, text=text, calls=calls, items=items, detail=detail, **common)
        if text:
            return ModelTurn(TEXT, text=text, items=items, **common)
        return ModelTurn(EMPTY, items=items, **common, detail="finished with no text and no function call")

    def assemble_stream(self, events):
        return assemble(GeminiStreamAssembler(), events)


class GeminiStreamAssembler(EventFolder):
    """Folds ``streamGenerateContent?alt=sse`` chunks; complete at the chunk with a ``finishReason``.

    Gemini has no end marker, so the chunk naming a finish reason (or a prompt
    block) is the final event; only usage-only chunks may follow it. Text parts are
    concatenated as they come; a ``functionCall`` arrives whole, and its ``args``
    must be an object.
    """

    final_event = "a chunk with a finishReason"

    def __init__(self) -> None:
        super().__init__()
        self.parts: list[dict[str, Any]] = []
        self.finish_reason: str | None = None
        self.meta: dict[str, Any] = {}
        self.candidate: dict[str, Any] = {}

    def after_end(self, event: dict[str, Any]) -> bool:
        """Usage-only chunks may trail; an error chunk passes too, so it is reported as the error it is."""
        return stream_error(event) is not None or not any(
            _parts(c) for c in list_field(event, "candidates", "a chunk") if isinstance(c, dict))

    def take(self, event: dict[str, Any]) -> str | None:
        if identify(event) != "gemini" and "usageMetadata" not in event:
            if "data" in event:
                raise StreamProtocolError(f"event data is not a chunk: {redacted_prefix(plain(event['data']), 60)!r}")
            return None
        for key in ("usageMetadata", "modelVersion", "responseId", "promptFeedback"):
            if key in event:
                self.meta[key] = event[key]
        feedback = event.get("promptFeedback") if isinstance(event.get("promptFeedback"), dict) else {}
        if feedback.get("blockReason"):
            self.ended = True
        shown = None
        for cand in list_field(event, "candidates", "a chunk"):
            if not isinstance(cand, dict) or cand.get("index", 0) != 0:
                continue
            for part in _parts(cand):
                shown = self._part(part) or shown
            for key, value in cand.items():
                if key not in ("content", "index"):
                    self.candidate[key] = value
            if cand.get("finishReason"):
                self.finish_reason = cand["finishReason"]
                self.ended = True
        return shown

    def _part(self, part: Any) -> str | None:
        if not isinstance(part, dict):
            raise StreamProtocolError("a part is not an object")
        if "functionCall" in part:
            fc = part["functionCall"]
            if isinstance(fc, dict) and isinstance(fc.get("args"), str):
                raise StreamProtocolError("functionCall args arrived as text, not a complete object")
            self.parts.append(part)
            return None
        if "text" in part and not isinstance(part["text"], str):
            raise StreamProtocolError(f"a part's text is a JSON {json_type(part['text'])}, not a string")
        if set(part) == {"text"}:
            if self.parts and set(self.parts[-1]) == {"text"}:
                self.parts[-1] = {"text": self.parts[-1]["text"] + part["text"]}
            else:
                self.parts.append(dict(part))
            return self.show(part["text"])
        self.parts.append(part)
        if isinstance(part.get("text"), str) and not part.get("thought"):
            return self.show(part["text"])
        return None

    def result(self) -> dict[str, Any]:
        body: dict[str, Any] = {k: v for k, v in self.meta.items()}
        if self.finish_reason is not None:
            body["candidates"] = [{**self.candidate, "content": {"role": "model", "parts": self.parts}, "index": 0}]
        return body


def _parts(cand: dict[str, Any]) -> list[Any]:
    """A streamed candidate's ``content.parts`` ([] when it has none); other shapes are a protocol error."""
    return list_field(object_field(cand, "content", "a candidate"), "parts", "a candidate's content")


def _part(item: dict[str, Any]) -> dict[str, Any] | None:
    raw = item.get("raw")
    if isinstance(raw, dict) and ("functionCall" in raw or "text" in raw or item["type"] == "reasoning"):
        return raw if item["type"] != "reasoning" or not _foreign_reasoning(raw) else None
    if item["type"] == "reasoning":
        return None
    if item["type"] == "message":
        return {"text": item["content"]}
    try:
        args = orjson.loads(item["arguments"])
    except (orjson.JSONDecodeError, TypeError):
        args = item["arguments"]
    call: dict[str, Any] = {"name": item["name"], "args": args}
    if item.get("call_id") and not str(item["call_id"]).startswith(SYNTH_PREFIX):
        call["id"] = item["call_id"]
    return {"functionCall": call}


def _foreign_reasoning(raw: dict[str, Any]) -> bool:
    """A reasoning item from another API (a Responses or Anthropic block) is not a Gemini part."""
    return "type" in raw


def _response(item: dict[str, Any], names: dict[str, str]) -> dict[str, Any]:
    try:
        payload = orjson.loads(item["output"])
    except (orjson.JSONDecodeError, TypeError):
        payload = item["output"]
    fr: dict[str, Any] = {"name": names.get(item["call_id"], ""),
                          "response": {"error" if item.get("is_error") else "output": payload}}
    if item["call_id"] and not str(item["call_id"]).startswith(SYNTH_PREFIX):
        fr["id"] = item["call_id"]
    return {"functionResponse": fr}


def _part_type(part: dict[str, Any]) -> str:
    if "functionCall" in part:
        return "functionCall"
    if part.get("thought"):
        return "thought"
    return "text" if "text" in part else next(iter(part), "empty")


def _loose_call(part: dict[str, Any]) -> ToolCall:
    fc = part.get("functionCall") if isinstance(part.get("functionCall"), dict) else {}
    args = fc.get("args")
    return ToolCall(text_or_none(fc.get("id")), text_or_none(fc.get("name")),
                    try_canonical_json(args) if isinstance(args, dict) else text_or_none(args))
