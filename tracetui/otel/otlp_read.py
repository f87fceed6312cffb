"""Reading OTLP/JSON files: JSON lines of ``TracesData`` (the file exporter's form) or one document.

Tolerant like the trace reader: a line that is not JSON, not a ``TracesData``, or a
span without valid ids becomes a :class:`~tracetui.trace.reader.Problem` with its
line number and why, and everything else still loads; an invalid UTF-8 byte or half
a surrogate pair costs one character, not its line or document
(:mod:`~tracetui.otel.salvage`). Ids may be hex (OTLP/JSON) or base64 (protobuf's
generic JSON mapping); keys may be lowerCamelCase or snake_case.
"""
from __future__ import annotations

import os
import re
from typing import Any, Callable

import orjson

from tracetui.otel import salvage
from tracetui.otel.otlp_fields import enum_value as _enum, hex_id as _id, uint64 as _int
from tracetui.otel.otlp_typed import spans_of_line
from tracetui.otel.spans import KIND_NAMES, STATUS_NAMES, Span, SpanEvent, attributes_of
from tracetui.trace.limits import MAX_LINE_BYTES
from tracetui.trace.reader import Problem, iter_fd_lines, iter_lines, open_checked
from tracetui.trace.safe_text import redacted_prefix

#: a single-document file is parsed whole; past this size it must be JSON lines
MAX_DOCUMENT_BYTES = 512 * 1024 * 1024
#: skipped spans of a document whose line is looked for (past them, their problems name the document's first)
MAX_LOCATED = 100


def _get(obj: dict[str, Any], camel: str, snake: str) -> Any:
    return obj[camel] if camel in obj else obj.get(snake)


def _list(value: Any) -> list[Any]:
    """A repeated field: a list, or nothing (a file may hold any JSON there)."""
    return value if isinstance(value, list) else []


def spans_of(doc: Any, line: int, path: str, problems: list[Problem],
             locate: Callable[[dict[str, Any]], int] | None = None) -> list[Span]:
    """The spans of one ``TracesData`` (or ``ExportTraceServiceRequest``) object; a span that cannot be read
    is a problem saying where it is and why. ``locate``: the line of a span in a document of many lines."""
    if not isinstance(doc, dict) or not isinstance(_get(doc, "resourceSpans", "resource_spans"), list):
        problems.append(Problem(line, "not an OTLP TracesData object (no resourceSpans list)", path))
        return []
    out: list[Span] = []
    for r, resource_spans in enumerate(_get(doc, "resourceSpans", "resource_spans")):
        if not isinstance(resource_spans, dict):
            continue
        resource = resource_spans.get("resource") if isinstance(resource_spans.get("resource"), dict) else {}
        resource_attrs = attributes_of(resource.get("attributes"))
        scopes = _get(resource_spans, "scopeSpans", "scope_spans") or resource_spans.get(
            "instrumentationLibrarySpans") or []
        if not isinstance(scopes, list):
            problems.append(Problem(line, f"resourceSpans[{r}].scopeSpans is {_kind(scopes)}, not a list: "
                                          f"none of its spans was read", path))
            continue
        for s, scope_spans in enumerate(scopes):
            if not isinstance(scope_spans, dict):
                continue
            scope = scope_spans.get("scope") or scope_spans.get("instrumentationLibrary") or {}
            scope_name = scope.get("name") if isinstance(scope, dict) and isinstance(scope.get("name"), str) else ""
            where = f"resourceSpans[{r}].scopeSpans[{s}].spans"
            listed = scope_spans.get("spans")
            if listed is not None and not isinstance(listed, list):
                problems.append(Problem(line, f"{where} is {_kind(listed)}, not a list: none of its spans was read",
                                        path))
            for k, raw in enumerate(_list(listed)):
                span = _span(raw, resource_attrs, scope_name, line)
                at = locate(raw) if locate is not None and isinstance(raw, dict) else line
                if span is None:
                    problems.append(Problem(at, f"span {where}[{k}]{_described(raw)} skipped: {_unreadable(raw)}",
                                            path))
                    continue
                attributes = raw.get("attributes")
                not_a_list = attributes is not None and not isinstance(attributes, list)
                null_root = "attributes" in raw and attributes is None and not span.parent_span_id
                if not_a_list or null_root:  # a root's attributes hold the run's name and verdict: without them,
                    # the run read is not the run written (null elsewhere is protobuf JSON's "none")
                    problems.append(Problem(at, f"span {where}[{k}]{_described(raw)}: its attributes are "
                                                f"{_kind(attributes)}, not a list: read without them", path))
                out.append(span)
    return out


def _kind(value: Any) -> str:
    """What a JSON value is, in words: "null", "an object", "a number" …"""
    return "null" if value is None else _KINDS.get(type(value), "text")


def parent_cycles(spans: list[Span], path: str) -> list[Problem]:
    """A problem for each ring of spans that are each other's ancestors (a hostile or broken file): such a
    trace has no root there, so the run read from it may lack the run's own span and its verdict."""
    problems: list[Problem] = []
    by_trace: dict[str, dict[str, Span]] = {}
    for span in spans:
        by_trace.setdefault(span.trace_id, {})[span.span_id] = span
    for by_id in by_trace.values():
        done: set[str] = set()
        for start in by_id.values():
            chain: dict[str, int] = {}
            node: Span | None = start
            while node is not None and node.span_id not in done and node.span_id not in chain:
                chain[node.span_id] = len(chain)
                node = by_id.get(node.parent_span_id) if node.parent_span_id else None
            if node is not None and node.span_id in chain:  # walked into this walk's own chain: a ring
                ring = list(chain)[chain[node.span_id]:]
                first = by_id[ring[0]]
                problems.append(Problem(first.line, f"span {redacted_prefix(first.name, 60)!r} (spanId {first.span_id}) and "
                                                    f"{len(ring) - 1} other(s) are each other's parents (a parent "
                                                    f"cycle): that part of trace {first.trace_id} has no root",
                                        path))
            done.update(chain)
    return problems


def _described(raw: Any) -> str:
    """`` ('name', spanId …)`` of a span object, what there is of them."""
    if not isinstance(raw, dict):
        return ""
    name, span_id = raw.get("name"), _get(raw, "spanId", "span_id")
    said = [repr(redacted_prefix(name, 60)) if isinstance(name, str) and name else "",
            f"spanId {redacted_prefix(span_id, 40)}" if isinstance(span_id, str) and span_id else ""]
    said = [x for x in said if x]
    return f" ({', '.join(said)})" if said else ""


def _unreadable(raw: Any) -> str:
    """Why a span cannot be read, in words."""
    if not isinstance(raw, dict):
        return f"it is {type(raw).__name__ if raw is not None else 'null'}, not an object"
    reasons = []
    for camel, snake, size in (("traceId", "trace_id", 16), ("spanId", "span_id", 8)):
        value = _get(raw, camel, snake)
        if _id(value, size) is not None:
            continue
        if value is None:
            reasons.append(f"it has no {camel}")
        elif not isinstance(value, str):
            reasons.append(f"its {camel} is {_KINDS.get(type(value), 'not text')}, not text")
        elif not value:
            reasons.append(f"its {camel} is empty")
        elif value.strip("0") == "" or value.strip("A=") == "":
            reasons.append(f"its {camel} is all zeros (OTLP's \"no id\")")
        else:
            reasons.append(f"its {camel} is not {size} bytes in hex ({size * 2} digits) or base64")
    return "; ".join(reasons)


_KINDS = {bool: "true or false", int: "a number", float: "a number", list: "a list", dict: "an object"}


def _line_of_span(text: bytes) -> Callable[[dict[str, Any]], int]:
    """The line of a document where a span's own ``spanId`` is written (1 when it cannot be found)."""
    located = 0

    def locate(raw: dict[str, Any]) -> int:
        nonlocal located
        value = _get(raw, "spanId", "span_id")
        located += 1
        if not isinstance(value, str) or not value or located > MAX_LOCATED:  # each search reads the document
            return 1
        found = re.search(rb'"span_?[iI]d"\s*:\s*' + re.escape(orjson.dumps(value)), text)
        return text.count(b"\n", 0, found.start()) + 1 if found else 1

    return locate


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


def _parse(raw: bytes, number: int, label: str, problems: list[Problem]) -> tuple[bool, Any]:
    """(True, one JSON line's value), its bad spots noted in ``problems``; (False, None) when it cannot be read."""
    if len(raw) > MAX_LINE_BYTES:
        problems.append(Problem(number, f"line is {len(raw)} bytes, over the {MAX_LINE_BYTES}-byte limit", label))
        return False, None
    doc, notes, error = salvage.loads(raw)
    problems.extend(Problem(number + note.line - 1, note.message, label) for note in notes)
    if error is not None:
        problems.append(Problem(number + error.line - 1, error.message, label))
        return False, None
    return True, doc


def line_spans(raw: bytes, number: int, label: str, problems: list[Problem]) -> list[Span] | None:
    """The spans of one line of JSON lines (None when it cannot be read: ``problems`` says why): decoded by
    the schema where that reads the same (:mod:`tracetui.otel.otlp_typed`), else read tolerantly."""
    if type(raw) is bytes and len(raw) <= MAX_LINE_BYTES:
        spans = spans_of_line(raw, number)
        if spans is not None:
            return spans
    ok, doc = _parse(raw, number, label, problems)
    return spans_of(doc, number, label, problems) if ok else None


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
    broken: Problem | None = None  # why the file does not read as one document
    if first is not None and size <= MAX_DOCUMENT_BYTES and (
            len(first[1]) > MAX_LINE_BYTES or salvage.loads(first[1])[2] is not None):
        text = whole().removeprefix(b"\xef\xbb\xbf")
        doc, notes, error = salvage.loads(text)
        if error is None:  # one (pretty-printed) document
            problems.extend(Problem(note.line, note.message, label) for note in notes)
            spans = spans_of(doc, 1, label, problems, locate=_line_of_span(text))
            return spans, problems + parent_cycles(spans, label)
        broken = Problem(error.line, error.message, label)
    spans: list[Span] = []
    read_any_line = False
    for number, raw in lines_of():
        found = line_spans(raw, number, label, problems)
        if found is None:
            continue
        read_any_line = True
        spans.extend(found)
    if broken is not None and broken.line > 1 and not read_any_line:
        # its first line began a document that breaks further down: that is the reason, not each line of it
        return [], [broken]
    return spans, problems + parent_cycles(spans, label)
