"""Reading OTLP/JSON files: JSON lines of ``TracesData`` (the file exporter's form) or one document.

Tolerant like the trace reader: a line that is not JSON, not a ``TracesData``, or a
span without valid ids becomes a :class:`~tracetui.trace.reader.Problem` with its
line number, and everything else still loads. Ids may be hex (OTLP/JSON) or
base64 (protobuf's generic JSON mapping); keys may be lowerCamelCase or snake_case.
"""
from __future__ import annotations

import base64
import binascii
import os
from typing import Any

import orjson

from tracetui.otel.spans import KIND_NAMES, STATUS_NAMES, Span, SpanEvent, attributes_of
from tracetui.trace.limits import MAX_LINE_BYTES
from tracetui.trace.reader import Problem, iter_fd_lines, iter_lines, open_checked

#: a single-document file is parsed whole; past this size it must be JSON lines
MAX_DOCUMENT_BYTES = 512 * 1024 * 1024


def _get(obj: dict[str, Any], camel: str, snake: str) -> Any:
    return obj[camel] if camel in obj else obj.get(snake)


def _list(value: Any) -> list[Any]:
    """A repeated field: a list, or nothing (a file may hold any JSON there)."""
    return value if isinstance(value, list) else []


def _id(value: Any, size: int) -> str | None:
    if not isinstance(value, str) or not value:
        return None
    if len(value) == size * 2:
        try:
            raw = bytes.fromhex(value)
        except ValueError:
            raw = b""
        if raw:
            return raw.hex() if any(raw) else None
    try:
        raw = base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        return None
    return raw.hex() if len(raw) == size and any(raw) else None


def _int(value: Any) -> int:
    try:
        number = int(value)
    except (TypeError, ValueError):
        return 0
    return number if 0 <= number < 2**64 else 0


def _enum(value: Any, names: dict[str, int]) -> int:
    if isinstance(value, str):
        return names.get(value, _int(value))
    return value if type(value) is int else 0


def spans_of(doc: Any, line: int, path: str, problems: list[Problem]) -> list[Span]:
    """The spans of one ``TracesData`` (or ``ExportTraceServiceRequest``) object."""
    if not isinstance(doc, dict) or not isinstance(_get(doc, "resourceSpans", "resource_spans"), list):
        problems.append(Problem(line, "not an OTLP TracesData object (no resourceSpans list)", path))
        return []
    out: list[Span] = []
    for resource_spans in _get(doc, "resourceSpans", "resource_spans"):
        if not isinstance(resource_spans, dict):
            continue
        resource = resource_spans.get("resource") if isinstance(resource_spans.get("resource"), dict) else {}
        resource_attrs = attributes_of(resource.get("attributes"))
        scopes = _get(resource_spans, "scopeSpans", "scope_spans") or resource_spans.get(
            "instrumentationLibrarySpans") or []
        for scope_spans in scopes if isinstance(scopes, list) else []:
            if not isinstance(scope_spans, dict):
                continue
            scope = scope_spans.get("scope") or scope_spans.get("instrumentationLibrary") or {}
            scope_name = scope.get("name") if isinstance(scope, dict) and isinstance(scope.get("name"), str) else ""
            for raw in _list(scope_spans.get("spans")):
                span = _span(raw, resource_attrs, scope_name, line)
                if span is None:
                    problems.append(Problem(line, "a span without a valid traceId and spanId was skipped", path))
                else:
                    out.append(span)
    return out


def _span(raw: Any, resource: dict[str, Any], scope: str, line: int) -> Span | None:
    if not isinstance(raw, dict):
        return None
    trace_id = _id(_get(raw, "traceId", "trace_id"), 16)
    span_id = _id(_get(raw, "spanId", "span_id"), 8)
    if trace_id is None or span_id is None:
        return None
    parent = _id(_get(raw, "parentSpanId", "parent_span_id"), 8) or ""
    status = raw.get("status") if isinstance(raw.get("status"), dict) else {}
    events = []
    for event in _list(raw.get("events")):
        if isinstance(event, dict):
            events.append(SpanEvent(str(event.get("name") or ""), _int(_get(event, "timeUnixNano", "time_unix_nano")),
                                    attributes_of(event.get("attributes"))))
    message = status.get("message")
    return Span(trace_id=trace_id, span_id=span_id, name=str(raw.get("name") or ""), parent_span_id=parent,
                kind=_enum(raw.get("kind"), KIND_NAMES),
                start_ns=_int(_get(raw, "startTimeUnixNano", "start_time_unix_nano")),
                end_ns=_int(_get(raw, "endTimeUnixNano", "end_time_unix_nano")),
                attributes=attributes_of(raw.get("attributes")), events=events,
                status_code=_enum(status.get("code"), STATUS_NAMES),
                status_message=message if isinstance(message, str) else "",
                resource=resource, scope=scope, line=line)


def _parse(raw: bytes) -> tuple[Any, str | None]:
    if len(raw) > MAX_LINE_BYTES:
        return None, f"line is {len(raw)} bytes, over the {MAX_LINE_BYTES}-byte limit"
    try:
        return orjson.loads(raw), None
    except orjson.JSONDecodeError as exc:
        try:
            raw.decode("utf-8")
        except UnicodeDecodeError as uexc:
            return None, f"not valid UTF-8 at byte {uexc.start}"
        return None, f"malformed JSON: {exc}"


def read_spans(path: str | os.PathLike[str]) -> tuple[list[Span], list[Problem]]:
    """Every span in an OTLP/JSON file, and the lines that could not be read."""
    p = open_checked(path)
    return _read_spans(lambda: iter_lines(p), p.stat().st_size, p.read_bytes, str(path))


def read_spans_fd(fd: int, label: str) -> tuple[list[Span], list[Problem]]:
    """:func:`read_spans` of an open descriptor (standard input, spooled to its end)."""
    size = os.fstat(fd).st_size
    return _read_spans(lambda: iter_fd_lines(fd), size, lambda: os.pread(fd, size, 0), label)


def _read_spans(lines_of: Any, size: int, whole: Any, label: str) -> tuple[list[Span], list[Problem]]:
    problems: list[Problem] = []
    first = next(iter(lines_of()), None)
    if first is not None and _parse(first[1])[1] is not None and size <= MAX_DOCUMENT_BYTES:
        doc, problem = _document(whole())
        if problem is None:  # one (pretty-printed) document
            return spans_of(doc, 1, label, problems), problems
    spans: list[Span] = []
    for number, raw in lines_of():
        doc, problem = _parse(raw)
        if problem:
            problems.append(Problem(number, problem, label))
            continue
        spans.extend(spans_of(doc, number, label, problems))
    return spans, problems


def _document(raw: bytes) -> tuple[Any, str | None]:
    try:
        return orjson.loads(raw.removeprefix(b"\xef\xbb\xbf")), None
    except orjson.JSONDecodeError as exc:
        return None, str(exc)
