"""What a model request says, read as each provider's SDK sends it: its tools, its tool results, its turn.

A recorded agent's tools and tool results are not tracetui's: they are only on the wire. The request
of each turn declares the tools (and their schemas) the model may call, and the request after it
carries back what those calls returned. Both are read here into one provider-neutral shape:
a tool is ``{"name", "description", "parameters"}`` (the built-in loop's shape, so its argument
check applies unchanged) and a result is a :class:`ToolResult`.

The request bodies come from a user's process: any field may be missing or of any type. Whatever
does not have the documented shape is skipped, never an exception.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any

import orjson

from tracetui.trace import limits

#: a declared tool without parameters takes any object (the SDKs send ``{}`` arguments for it)
ANY_OBJECT: dict[str, Any] = {"type": "object"}


@dataclass(frozen=True)
class ToolResult:
    """One tool result the agent sent back to the model."""

    call_id: str | None  # the id it answers (Gemini may send none: matched by name)
    name: str | None  # the tool's name, where the wire says it (Gemini; Responses and Chat do not)
    text: str  # the result as the model reads it: its text, or the JSON text of a structured result
    is_error: bool  # the agent marked it as an error (Anthropic ``is_error``)

    def value(self) -> Any:
        """The result parsed as JSON when its text is JSON a trace can hold, else None.

        Parsed once (each reader of the result asks again). JSON nested deeper than a trace
        line may be (``trace.limits.MAX_DEPTH``) is read as text: kept in a receipt, it would
        make the whole run impossible to write."""
        return self._parsed

    @cached_property
    def _parsed(self) -> Any:
        try:
            value = orjson.loads(self.text)
        except orjson.JSONDecodeError:
            return None
        text = self.text
        deep = len(text) > 2 * limits.MAX_DEPTH and text.count("[") + text.count("{") > limits.MAX_DEPTH
        return None if deep and limits.too_deep(value) else value


def declared_tools(provider: str | None, body: Any) -> dict[str, dict[str, Any]]:
    """The function tools a request offers the model, by name, as ``{"name", "description", "parameters"}``.

    Built-in server-side tools (web search, code execution, …) are not listed: the model's calls to
    them never come back to the agent to run.
    """
    tools = body.get("tools") if isinstance(body, dict) else None
    out: dict[str, dict[str, Any]] = {}
    if provider == "gemini":
        for entry in _dicts(tools):
            for fn in _dicts(_first(entry, "functionDeclarations", "function_declarations")):
                json_schema = _first(fn, "parametersJsonSchema", "parameters_json_schema")
                if json_schema is not None:
                    _add(out, fn.get("name"), fn.get("description"), json_schema)
                else:
                    parameters = fn.get("parameters")
                    _add(out, fn.get("name"), fn.get("description"),
                         openapi_schema(parameters) if parameters is not None else None)
        return out
    for tool in _dicts(tools):
        if provider == "openai-chat":
            fn = tool.get("function")
            if tool.get("type", "function") == "function" and isinstance(fn, dict):
                _add(out, fn.get("name"), fn.get("description"), fn.get("parameters"))
        elif provider == "openai-responses":
            if tool.get("type") == "function":
                _add(out, tool.get("name"), tool.get("description"), tool.get("parameters"))
        elif provider == "anthropic":
            if "input_schema" in tool and tool.get("type") in (None, "custom"):
                _add(out, tool.get("name"), tool.get("description"), tool.get("input_schema"))
    if provider == "openai-chat":  # the deprecated ``functions`` list, still accepted by the API
        for fn in _dicts(body.get("functions") if isinstance(body, dict) else None):
            _add(out, fn.get("name"), fn.get("description"), fn.get("parameters"))
    return out


def tool_results(provider: str | None, body: Any) -> list[ToolResult]:
    """Every tool result a request carries, in the order it holds them."""
    if not isinstance(body, dict):
        return []
    out: list[ToolResult] = []
    if provider == "openai-chat":
        for m in _dicts(body.get("messages")):
            if m.get("role") == "tool":
                out.append(ToolResult(_text_or_none(m.get("tool_call_id")), None, _content_text(m.get("content")),
                                      False))
    elif provider == "openai-responses":
        for item in _dicts(body.get("input")):
            if item.get("type") == "function_call_output":
                out.append(ToolResult(_text_or_none(item.get("call_id")), None, _content_text(item.get("output")),
                                      False))
    elif provider == "anthropic":
        for m in _dicts(body.get("messages")):
            content = m.get("content")
            for block in _dicts(content if isinstance(content, list) else None):
                if block.get("type") == "tool_result":
                    out.append(ToolResult(_text_or_none(block.get("tool_use_id")), None,
                                          _content_text(block.get("content")), block.get("is_error") is True))
    elif provider == "gemini":
        for content in _dicts(body.get("contents")):
            for part in _dicts(content.get("parts")):
                fr = _first(part, "functionResponse", "function_response")
                if isinstance(fr, dict):
                    out.append(ToolResult(_text_or_none(fr.get("id")), _text_or_none(fr.get("name")),
                                          _json_text(fr.get("response")), False))
    return out


def results_after_last_model_turn(provider: str | None, body: Any) -> list[ToolResult]:
    """The tool results that answer the request's last model turn (Gemini matches by name: only these count)."""
    if provider != "gemini" or not isinstance(body, dict):
        return tool_results(provider, body)
    contents = [c for c in _dicts(body.get("contents"))]
    last_model = max((i for i, c in enumerate(contents) if c.get("role") == "model"), default=-1)
    return tool_results(provider, {"contents": contents[last_model + 1:]})


def conversation_length(provider: str | None, body: Any) -> int | None:
    """How many messages (input items, contents) the request holds: two requests of one turn hold as many.

    None when the body has no conversation of the provider's shape."""
    if not isinstance(body, dict):
        return None
    key = {"openai-chat": "messages", "anthropic": "messages", "openai-responses": "input",
           "gemini": "contents"}.get(provider if isinstance(provider, str) else "")
    value = body.get(key) if key else None
    if isinstance(value, list):
        return len(value)
    if provider == "openai-responses" and isinstance(value, str):
        return 1  # ``input`` as one text: a single user message
    return None


def first_user_text(provider: str | None, body: Any) -> str | None:
    """The text of the request's first user message: what the user asked the agent."""
    if not isinstance(body, dict):
        return None
    if provider == "openai-responses" and isinstance(body.get("input"), str):
        return body["input"]
    key = "contents" if provider == "gemini" else "input" if provider == "openai-responses" else "messages"
    for m in _dicts(body.get(key)):
        if m.get("role", "user" if provider == "gemini" else None) != "user":
            continue
        if provider == "gemini":
            texts = [p["text"] for p in _dicts(m.get("parts")) if isinstance(p.get("text"), str)]
            if texts:
                return "".join(texts)
            continue
        if m.get("type") not in (None, "message"):
            continue
        content = m.get("content")
        if isinstance(content, list) and any(isinstance(b, dict) and b.get("type") == "tool_result" for b in content):
            continue  # an Anthropic user turn that only carries tool results
        text = _content_text(content)
        if text:
            return text
    return None


def openapi_schema(schema: Any, depth: int = 0) -> Any:
    """A Gemini ``parameters`` schema (OpenAPI 3.0 subset: ``"type": "STRING"``, ``nullable``) as JSON Schema.

    Types are written in capitals on this wire and ``nullable`` says null is allowed; everything else
    (properties, items, required, enum, anyOf, formats, bounds) means what it means in JSON Schema.
    """
    if depth > 64:
        return schema
    if isinstance(schema, list):
        return [openapi_schema(s, depth + 1) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key in ("properties", "patternProperties", "$defs", "defs"):
            out["$defs" if key == "defs" else key] = (
                {k: openapi_schema(v, depth + 1) for k, v in value.items()} if isinstance(value, dict) else value)
        elif key in ("items", "anyOf", "oneOf", "allOf", "not", "additionalProperties"):
            out[key] = openapi_schema(value, depth + 1)
        elif key == "any_of":
            out["anyOf"] = openapi_schema(value, depth + 1)
        elif key == "type" and isinstance(value, str):
            out["type"] = value.lower()
        elif key in ("nullable", "propertyOrdering", "property_ordering", "example"):
            continue
        else:
            out[key] = value
    if schema.get("nullable") is True and isinstance(out.get("type"), str):
        out["type"] = [out["type"], "null"]
    return out


def _add(out: dict[str, dict[str, Any]], name: Any, description: Any, parameters: Any) -> None:
    if isinstance(name, str) and name and name not in out:
        out[name] = {"name": name, "description": description if isinstance(description, str) else "",
                     "parameters": parameters if parameters is not None else ANY_OBJECT}


def _dicts(value: Any) -> list[dict[str, Any]]:
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


def _first(mapping: dict[str, Any], *keys: str) -> Any:
    """The first of the keys present: the REST API reads camelCase and snake_case alike."""
    return next((mapping[k] for k in keys if k in mapping), None)


def _text_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _content_text(content: Any) -> str:
    """A message's (or result's) content as text: a string, or the texts of its parts joined."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = [b.get("text") for b in content if isinstance(b, dict)]
        return "".join(t for t in texts if isinstance(t, str))
    if content is None:
        return ""
    return _json_text(content)


def _json_text(value: Any) -> str:
    try:
        return orjson.dumps(value, option=orjson.OPT_SORT_KEYS).decode()
    except (TypeError, orjson.JSONEncodeError):
        return ""
