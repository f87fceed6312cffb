"""Reading what a span says, whichever convention wrote it.

Three dialects are read: the current GenAI conventions (``gen_ai.operation.name``,
``gen_ai.input/output.messages`` as JSON, ``gen_ai.tool.call.*``,
``gen_ai.tool.definitions``), the older indexed ones (``gen_ai.prompt.N.*``,
``gen_ai.completion.N.*``, ``llm.request.functions.N.*``) and OpenInference
(``openinference.span.kind``, ``llm.input_messages.N.message.*``, ``llm.tools.N.*``,
``tool.name``, ``tool.parameters``, ``input.value``/``output.value``). Every reader
returns None when the span does not say, so a rule can tell "not recorded" from
"empty".
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from itertools import repeat
from typing import Any

import orjson

from tracetui.otel import raw_output, semconv as sc
from tracetui.otel.spans import KIND_CLIENT, Span

AGENT, CHAT, TOOL, GUARDRAIL, HTTP, CHAIN, OTHER = "agent", "chat", "tool", "guardrail", "http", "chain", "other"
_OI_ROLES = {"AGENT": AGENT, "LLM": CHAT, "TOOL": TOOL, "GUARDRAIL": GUARDRAIL, "CHAIN": CHAIN}


@dataclass
class ToolCall:
    id: str | None
    name: str
    arguments: Any  # a JSON string, a parsed value, or None when not recorded
    invalid: str | None = None  # why the framework could not parse the call (LangChain's invalid_tool_calls)


def role(span: Span) -> str:
    """What a span is (agent, model call, tool …), read once: every rule asks."""
    if span.role is None:
        span.role = _role(span)
    return span.role


def _role(span: Span) -> str:
    attrs = span.attributes
    op = attrs.get(sc.OPERATION) if isinstance(attrs.get(sc.OPERATION), str) else None
    if op in sc.AGENT_OPERATIONS:
        return AGENT
    if op in sc.CHAT_OPERATIONS:
        return CHAT
    if op == sc.EXECUTE_TOOL:
        return TOOL
    oi = attrs.get(sc.OI_KIND)
    if isinstance(oi, str) and oi.upper() in _OI_ROLES:
        return _OI_ROLES[oi.upper()]
    if span.kind == KIND_CLIENT and (sc.HTTP_METHOD in attrs or sc.HTTP_METHOD_OLD in attrs):
        return HTTP
    if sc.TOOL_NAME in attrs:
        return TOOL
    if (sc.SYSTEM in attrs or sc.PROVIDER in attrs or sc.REQUEST_MODEL in attrs
            or any(map(str.startswith, attrs, repeat((sc.PROMPT_PREFIX, sc.COMPLETION_PREFIX))))):
        return CHAT
    if sc.AGENT_NAME in attrs or "agent_name" in attrs:
        return AGENT
    return OTHER


def json_value(value: Any) -> Any:
    """A JSON string parsed, anything else as it is; None when the string is not JSON."""
    if isinstance(value, str):
        try:
            return orjson.loads(value)
        except orjson.JSONDecodeError:
            return None
    return value


_INDEX = re.compile(r"^\d+$")


def unflatten(attrs: dict[str, Any], prefix: str) -> list[Any]:
    """``prefix0.message.role`` … → ``[{"message": {"role": …}}]``: indexed attributes as lists and dicts."""
    root: dict[Any, Any] = {}
    for key, value in attrs.items():
        if not key.startswith(prefix):
            continue
        parts = key[len(prefix):].split(".")
        node = root
        for i, part in enumerate(parts):
            part_key: Any = int(part) if _INDEX.match(part) else part
            if i == len(parts) - 1:
                if not isinstance(node.get(part_key), dict):
                    node[part_key] = value
            else:
                child = node.get(part_key)
                if not isinstance(child, dict):
                    child = node[part_key] = {}
                node = child
    return _as_list(root)


def _as_list(node: Any) -> Any:
    if not isinstance(node, dict):
        return node
    converted = {k: _as_list(v) for k, v in node.items()}
    if converted and all(isinstance(k, int) for k in converted):
        return [converted[k] for k in sorted(converted)]
    return converted


# -- messages ----------------------------------------------------------------------------------
def _genai_messages(value: Any) -> list[dict[str, Any]] | None:
    if isinstance(value, str):
        return _messages_text(value)
    return [m for m in value if isinstance(m, dict)] if isinstance(value, list) else None


@lru_cache(maxsize=2)
def _messages_text(value: str) -> list[dict[str, Any]] | None:
    """Messages held as JSON text, parsed once for the rules that read them in turn (they only read them;
    two kept: a span's input and output, however long a hostile file makes them)."""
    messages = json_value(value)
    return [m for m in messages if isinstance(m, dict)] if isinstance(messages, list) else None


def _indexed_messages(attrs: dict[str, Any], prefix: str) -> list[dict[str, Any]] | None:
    """Old indexed (``gen_ai.completion.0.content``) or OpenInference (``llm.output_messages.0.message.content``)."""
    items = unflatten(attrs, prefix)
    if not isinstance(items, list) or not items:
        return None
    out = []
    for item in items:
        if not isinstance(item, dict):
            continue
        message = item.get("message") if isinstance(item.get("message"), dict) else item
        parts: list[dict[str, Any]] = []
        if isinstance(message.get("content"), str):
            parts.append({"type": "text", "content": message["content"]})
        calls = message.get("tool_calls")
        contents = message.get("contents")  # OpenInference's list form: contents.M.message_content.{type,text}
        listed = isinstance(calls, list)  # tool calls under tool_calls: their contents.M.tool_call repeat them
        for content in contents if isinstance(contents, list) else []:
            item = content.get("message_content") if isinstance(content, dict) else None
            if isinstance(item, dict) and isinstance(item.get("text"), str) and item.get("type") in (None, "text"):
                parts.append({"type": "text", "content": item["text"]})
            elif isinstance(content, dict) and isinstance(content.get("tool_call"), dict) and not listed:
                calls = [*(calls if isinstance(calls, list) else []), content]  # a tool_use block, when not listed
        for call in calls if isinstance(calls, list) else []:
            if not isinstance(call, dict):
                continue
            call = call.get("tool_call") if isinstance(call.get("tool_call"), dict) else call
            function = call.get("function") if isinstance(call.get("function"), dict) else call
            parts.append({"type": "tool_call", "id": call.get("id"), "name": function.get("name"),
                          "arguments": function.get("arguments")})
        if message.get("tool_call_id") is not None:
            parts = [{"type": "tool_call_response", "id": message.get("tool_call_id"),
                      "response": message.get("content")}]
        out.append({"role": message.get("role"), "parts": parts, "finish_reason": message.get("finish_reason")})
    return out


def output_messages(span: Span) -> list[dict[str, Any]] | None:
    attrs = span.attributes
    return (_genai_messages(attrs.get(sc.OUTPUT_MESSAGES)) if sc.OUTPUT_MESSAGES in attrs
            else _indexed_messages(attrs, sc.OI_OUTPUT_MESSAGES) or _indexed_messages(attrs, sc.COMPLETION_PREFIX))


def input_messages(span: Span) -> list[dict[str, Any]] | None:
    attrs = span.attributes
    return (_genai_messages(attrs.get(sc.INPUT_MESSAGES)) if sc.INPUT_MESSAGES in attrs
            else _indexed_messages(attrs, sc.OI_INPUT_MESSAGES) or _indexed_messages(attrs, sc.PROMPT_PREFIX))


def _parts(messages: list[dict[str, Any]] | None, kind: str) -> list[dict[str, Any]]:
    out = []
    for message in messages or []:
        for part in message.get("parts") or []:
            if isinstance(part, dict) and part.get("type") == kind:
                out.append(part)
    return out


def requested_calls(span: Span) -> list[ToolCall] | None:
    """The tool calls a model call asked for; None when its output is not recorded."""
    messages = output_messages(span)
    if messages is None:
        return None
    return [ToolCall(p.get("id") if isinstance(p.get("id"), str) else None, str(p.get("name") or ""),
                     p.get("arguments")) for p in _parts(messages, "tool_call")] + _invalid_calls(span)


def _invalid_calls(span: Span) -> list[ToolCall]:
    """Calls LangChain could not parse (``invalid_tool_calls`` in the raw ``output.value``): they reach no
    indexed attribute, so the model's bad arguments would otherwise look like an empty answer."""
    found: dict[Any, ToolCall] = {}
    for item in raw_output.invalid_calls(span.attributes.get(sc.OI_OUTPUT_VALUE)):
        if isinstance(item.get("name"), str):
            call_id = item.get("id") if isinstance(item.get("id"), str) else None
            found.setdefault(call_id or item["name"], ToolCall(call_id, item["name"], item.get("args"),
                                                               str(item.get("error") or "arguments not parsed")))
    return list(found.values())


def tool_errors(span: Span) -> dict[str, str]:
    """Call id → the text a tool result carried back to this model call, for results that are error strings
    (LangGraph's ToolNode answers an unknown tool with one, and runs no tool span)."""
    out = {}
    for part in _parts(input_messages(span), "tool_call_response"):
        response = part.get("response")
        if part.get("id") is not None and isinstance(response, str) and response.lstrip().lower().startswith("error"):
            out[str(part["id"])] = response
    return out


def answered_calls(span: Span) -> set[str]:
    """Ids of tool calls whose results this model call was sent."""
    return {str(p.get("id")) for p in _parts(input_messages(span), "tool_call_response") if p.get("id") is not None}


def output_text(span: Span) -> str | None:
    messages = output_messages(span)
    if messages is None:
        return None
    texts = [p.get("content") for p in _parts(messages, "text") if isinstance(p.get("content"), str)]
    return "".join(texts)


def refused(span: Span) -> str | None:
    """A refusal the output carries (a ``refusal`` part, OpenAI's ``refusal`` field, or one only in the raw
    ``output.value``: the openai SDK's ``choices[0].message.refusal``, LangChain's ``additional_kwargs.refusal``),
    else None."""
    for part in _parts(output_messages(span), "refusal"):
        return str(part.get("content") or part.get("refusal") or "refused")
    value = span.attributes.get("gen_ai.completion.0.refusal")
    if value:
        return str(value)
    return raw_output.refusal(span.attributes.get(sc.OI_OUTPUT_VALUE))


#: tools through which an agent gives its answer (smolagents' ``final_answer``): their call is the answer
FINAL_ANSWER_TOOLS = frozenset({"final_answer"})


def final_answer_text(call: ToolCall) -> str | None:
    """The answer a final-answer tool call carries (its ``answer`` argument, or the arguments as they are)."""
    value = json_value(call.arguments) if isinstance(call.arguments, str) else call.arguments
    if isinstance(value, dict) and "answer" in value:
        value = value["answer"]
    elif value is None and isinstance(call.arguments, str):
        value = call.arguments  # not JSON (cut short): the text is what there is
    return value if isinstance(value, str) else None if value is None else orjson.dumps(value).decode()


def finish_reasons(span: Span) -> list[str] | None:
    attrs = span.attributes
    value = attrs.get(sc.FINISH_REASONS)
    if isinstance(value, list):
        return [str(v) for v in value]
    if isinstance(value, str):
        parsed = json_value(value)
        return [str(v) for v in parsed] if isinstance(parsed, list) else [value]
    if isinstance(attrs.get(sc.OI_FINISH_REASON), str):
        return [attrs[sc.OI_FINISH_REASON]]
    reasons = [m.get("finish_reason") for m in output_messages(span) or [] if isinstance(m.get("finish_reason"), str)]
    if reasons:
        return reasons
    found = raw_output.finish_reason(attrs.get(sc.OI_OUTPUT_VALUE))  # only in the raw output (LangChain, smolagents)
    return [found] if found else None


def model_name(span: Span) -> str | None:
    for key in (sc.RESPONSE_MODEL, sc.REQUEST_MODEL, sc.OI_MODEL):
        if isinstance(span.attributes.get(key), str):
            return span.attributes[key]
    return None


def agent_name(span: Span) -> str | None:
    for key in (sc.AGENT_NAME, sc.OI_AGENT_NAME, "agent_name"):
        if isinstance(span.attributes.get(key), str) and span.attributes[key]:
            return span.attributes[key]
    return None


# -- tools -------------------------------------------------------------------------------------
def _definition(item: Any) -> tuple[str, Any] | None:
    item = json_value(item)
    if not isinstance(item, dict):
        return None
    if isinstance(item.get("tool"), dict):  # OpenInference: {"tool": {"json_schema": "…"}}
        return _definition(item["tool"].get("json_schema"))
    function = item.get("function") if isinstance(item.get("function"), dict) else item
    name = function.get("name")
    if not isinstance(name, str):
        return None
    schema = function.get("parameters", function.get("parameters_json_schema", function.get("input_schema")))
    return name, json_value(schema)


_DECLARING = (sc.OI_TOOLS, "llm.request.functions.")


def tool_definitions(span: Span) -> dict[str, Any] | None:
    """Tool name → declared JSON Schema of its arguments (None when unknown); None when the span declares none."""
    attrs = span.attributes
    if (sc.TOOL_DEFINITIONS not in attrs and "model_request_parameters" not in attrs
            and not any(map(str.startswith, attrs, repeat(_DECLARING)))):
        return None  # (what most spans say, asked of each at C speed)
    items: list[Any] = []
    if sc.TOOL_DEFINITIONS in attrs:
        value = json_value(attrs[sc.TOOL_DEFINITIONS])
        items = value if isinstance(value, list) else []
    elif isinstance(json_value(attrs.get("model_request_parameters")), dict):  # pydantic-ai before tool.definitions
        items = json_value(attrs["model_request_parameters"]).get("function_tools") or []
    elif any(map(str.startswith, attrs, repeat(_DECLARING))):
        items = unflatten(attrs, sc.OI_TOOLS) or unflatten(attrs, "llm.request.functions.") or []
    found = [d for d in (_definition(i) for i in items if i is not None) if d]
    if not found and not (sc.TOOL_DEFINITIONS in attrs):
        return None
    return dict(found)


def tool_call(span: Span) -> ToolCall:
    """What a tool span ran: name, call id and arguments (None when not recorded)."""
    attrs = span.attributes
    name = attrs.get(sc.TOOL_NAME) or attrs.get(sc.OI_TOOL_NAME) or span.name.removeprefix("execute_tool ").strip()
    call_id = attrs.get(sc.TOOL_CALL_ID) or attrs.get(sc.OI_TOOL_CALL_ID)
    arguments = attrs.get(sc.TOOL_CALL_ARGUMENTS, attrs.get(sc.OI_INPUT_VALUE))
    return ToolCall(str(call_id) if call_id is not None else None, str(name), arguments)


def tool_schema(span: Span) -> Any:
    """The argument schema a tool span itself declares (OpenInference ``tool.parameters``), else None."""
    schema = json_value(span.attributes.get(sc.OI_TOOL_PARAMETERS))
    return schema if isinstance(schema, dict) else None


def tool_result(span: Span) -> Any:
    attrs = span.attributes
    return attrs.get(sc.TOOL_CALL_RESULT, attrs.get(sc.OI_OUTPUT_VALUE))
