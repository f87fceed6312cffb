"""Reading a failure from what an error says: a span's exception, ``error.type`` or status message.

Instrumentations record errors as text (an exception type and message, or a
status description), so the lane a failure belongs to is read from words: a rate
limit or a timeout is HTTP, ``max_output_tokens`` is a truncation, a tripwire is
a guardrail, "permission denied" is authorization. A text that matches nothing
stays where its span puts it.
"""
from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

import orjson

from tracetui.otel.spans import Span
from tracetui.trace.format import CODE_RECORDING_ENDED

PERMISSION = re.compile(r"permission|forbidden|not authori[sz]ed|unauthori[sz]ed|access denied|\b403\b|"
                         r"not allowed|PermissionError", re.I)
GUARDRAIL = re.compile(r"guardrail.*(trip|trigger)|tripwire", re.I)
UNKNOWN_TOOL = re.compile(r"tool\b.*\bnot found|unknown tool|no tool named|ToolNotFound|is not a valid tool", re.I)
BUDGET = re.compile(r"max(imum)?[ _]?turns|MaxTurnsExceeded|UsageLimitExceeded|usage limit|request_limit|"
                     r"recursion limit", re.I)
_LENGTH_ERROR = re.compile(r"max_output_tokens|max_tokens|\blength\b|incomplete", re.I)
_FILTER_ERROR = re.compile(r"content.?filter|safety", re.I)
_RATE = re.compile(r"\b429\b|rate.?limit", re.I)
_TIMEOUT = re.compile(r"time.?out|timed out", re.I)
_CONNECTION = re.compile(r"connect|network|dns|\bssl\b|remote ?protocol", re.I)
_SERVER = re.compile(r"\b5\d\d\b|overloaded|server.?error|internal error|service unavailable", re.I)
_CLIENT_STATUS = re.compile(r"\b4\d\d\b|bad ?request|APIStatusError|not ?found", re.I)
_STREAM = re.compile(r"stream", re.I)
DUPLICATE_ID = re.compile(r"duplicate.*call.?id|call.?id.*(twice|already used|duplicate)", re.I)
VALIDATION = re.compile(r"ValidationError|validation", re.I)
#: a step that could not read a tool call from the model's output (smolagents' AgentParsingError)
PARSING = re.compile(r"AgentParsingError|error while parsing tool call|could not parse tool call", re.I)

def error_text(span: Span) -> str:
    error = span.error()
    if error is None:
        return ""
    kind, message = error
    if kind == "error" and message:  # no error type recorded: the status message says it all
        kind = ""
    text = f"{kind}: {message}" if kind and message and message not in kind else (kind or message)
    if span.status_message and span.status_message not in text:
        text += f" ({span.status_message})"
    return text.strip()


def http_code(status: int | None, text: str) -> str:
    if status is None and text.startswith(CODE_RECORDING_ENDED):
        return CODE_RECORDING_ENDED  # a recorded run that ran out of responses: no boundary failed here
    if status is not None and status < 400:
        return "stream_interrupted" if _STREAM.search(text) else "unexpected_body"
    if status == 429 or _RATE.search(text):
        return "rate_limited"
    if status == 408 or _TIMEOUT.search(text):
        return "timeout"
    if status is not None and status >= 500 or _SERVER.search(text):
        return "server_error"
    if status is not None and status >= 400:
        return "request_rejected"
    return "transport_error"


def chat_error(text: str) -> tuple[str, str]:
    """A failed model call's lane and code, read from its error."""
    if _RATE.search(text):
        return "http", "rate_limited"
    if _TIMEOUT.search(text):
        return "http", "timeout"
    if _CONNECTION.search(text):
        return "http", "transport_error"
    if _SERVER.search(text):
        return "http", "server_error"
    if _LENGTH_ERROR.search(text):
        return "generation", "incomplete"
    if _FILTER_ERROR.search(text):
        return "generation", "content_filter"
    if _CLIENT_STATUS.search(text):
        return "http", "request_rejected"
    return "generation", "response_failed"


def schema_problem(value: Any, schema: dict[str, Any]) -> tuple[str | None, str | None]:
    """``(problem, undecided)``: why the arguments break the schema (its first error), or why the schema
    gives no verdict on them (a ``$ref`` to outside it, a pattern tracetui does not run, a check that
    would take too many steps, a broken schema); both None when they fit. Checked by
    :mod:`tracetui.trace.tool_schema`: nothing is fetched, the work is bounded."""
    from tracetui.trace.tool_schema import SchemaUnusable, errors

    try:
        checker = _checker(orjson.dumps(schema, option=orjson.OPT_SORT_KEYS))
        found = errors(checker, value, first=True)
    except SchemaUnusable as exc:
        return None, str(exc)
    except Exception:  # noqa: BLE001 - a broken or hostile schema: no verdict from it
        return None, "the declared schema is not one tracetui can check arguments with"
    if not found:
        return None, None
    error = found[0]
    where = "/".join(str(p) for p in error.absolute_path)
    return f"{error.message}" + (f" (at {where})" if where else ""), None


@lru_cache(maxsize=256)
def _checker(schema_json: bytes) -> Any:
    """One validator per declared schema, not per tool call (an import checks every call)."""
    from tracetui.trace.tool_schema import validator

    return validator(orjson.loads(schema_json))
