"""One OTLP/JSON line decoded by its schema (msgspec): the common case, read at the speed of parsing it.

:func:`tracetui.otel.otlp_read.spans_of` reads any JSON tolerantly: a dict per object, then each field
checked. Most lines are well formed, and building those dicts to read a few fields of them costs more than
parsing the line. Here a line is decoded straight into the OTLP messages (every field OTLP defines, in
both spellings, and nothing else), and the spans are made from them by the tolerant reader's rules.

A line is read here only when that gives exactly what the tolerant reader gives, else :func:`spans_of_line`
returns None and the line is read the tolerant way: any field of a type the tolerant reader would treat
apart (a number where text is expected, an integer outside int64 in any field, an unknown field, nesting
deeper than the decoder goes), a span the tolerant reader would report (bad ids, null attributes on a root), invalid
UTF-8 or half a surrogate pair (the tolerant reader notes the spot). Every value is decoded, none skipped,
so what this decoder accepts orjson accepts too.
"""
from __future__ import annotations

from typing import Annotated, Any, Optional, Union

import msgspec
from msgspec import UNSET, Struct, UnsetType

from tracetui.otel.otlp_fields import enum_value as _enum, hex_id as _id, uint64 as _int
from tracetui.otel.spans import (KIND_NAMES, MAX_VALUE_DEPTH, STATUS_NAMES, Span, SpanEvent, _float,
                                 _int as _value_int)

#: an integer orjson reads as an int (beyond int64 it would read a float, read apart: the tolerant way)
Int = Annotated[int, msgspec.Meta(ge=-2**63, le=2**63 - 1)]
Number = Union[Int, str, None]  # ids, times, enums: text or a number
Text = Union[str, None, UnsetType]  # ids, names, messages: anything else is read apart (the tolerant way)
#: a scalar field OTLP defines that no reader looks at: decoded (so checked), then dropped. Never ``Any``:
#: msgspec reads an integer of any size there, where orjson refuses one past a double (the line is malformed)
Unused = Union[Int, float, str, bool, None, UnsetType]


class _Value(Struct, forbid_unknown_fields=True, gc=False):  # AnyValue
    stringValue: Union[str, None, UnsetType] = UNSET
    string_value: Union[str, None, UnsetType] = UNSET
    boolValue: Union[bool, None, UnsetType] = UNSET
    bool_value: Union[bool, None, UnsetType] = UNSET
    intValue: Union[Number, UnsetType] = UNSET
    int_value: Union[Number, UnsetType] = UNSET
    doubleValue: Union[Int, float, str, None, UnsetType] = UNSET
    double_value: Union[Int, float, str, None, UnsetType] = UNSET
    bytesValue: Union[str, None, UnsetType] = UNSET
    bytes_value: Union[str, None, UnsetType] = UNSET
    arrayValue: Union["_Array", None, UnsetType] = UNSET
    array_value: Union["_Array", None, UnsetType] = UNSET
    kvlistValue: Union["_KeyValues", None, UnsetType] = UNSET
    kvlist_value: Union["_KeyValues", None, UnsetType] = UNSET


class _Array(Struct, forbid_unknown_fields=True, gc=False):
    values: Union[list[_Value], None, UnsetType] = UNSET


class _KeyValue(Struct, forbid_unknown_fields=True, gc=False):
    key: str
    value: Union[_Value, None, UnsetType] = UNSET


class _KeyValues(Struct, forbid_unknown_fields=True, gc=False):
    values: Union[list[_KeyValue], None, UnsetType] = UNSET


Attributes = Union[list[_KeyValue], None, UnsetType]


class _Event(Struct, forbid_unknown_fields=True, gc=False):
    name: Union[str, None, UnsetType] = UNSET
    timeUnixNano: Union[Number, UnsetType] = UNSET
    time_unix_nano: Union[Number, UnsetType] = UNSET
    attributes: Attributes = UNSET
    droppedAttributesCount: Unused = UNSET
    dropped_attributes_count: Unused = UNSET


class _Link(Struct, forbid_unknown_fields=True, gc=False):
    traceId: Text = UNSET
    trace_id: Text = UNSET
    spanId: Text = UNSET
    span_id: Text = UNSET
    traceState: Unused = UNSET
    trace_state: Unused = UNSET
    attributes: Attributes = UNSET
    droppedAttributesCount: Unused = UNSET
    dropped_attributes_count: Unused = UNSET
    flags: Unused = UNSET


class _Scope(Struct, forbid_unknown_fields=True, gc=False):  # InstrumentationScope
    name: Text = UNSET
    version: Unused = UNSET
    attributes: Attributes = UNSET
    droppedAttributesCount: Unused = UNSET
    dropped_attributes_count: Unused = UNSET


class _EntityRef(Struct, forbid_unknown_fields=True, gc=False):
    schemaUrl: Unused = UNSET
    schema_url: Unused = UNSET
    type: Unused = UNSET
    idKeys: Union[list[str], None, UnsetType] = UNSET
    id_keys: Union[list[str], None, UnsetType] = UNSET
    descriptionKeys: Union[list[str], None, UnsetType] = UNSET
    description_keys: Union[list[str], None, UnsetType] = UNSET


class _Status(Struct, forbid_unknown_fields=True, gc=False):
    code: Union[Number, UnsetType] = UNSET
    message: Text = UNSET


class _Span(Struct, forbid_unknown_fields=True, gc=False):
    traceId: Text = UNSET
    trace_id: Text = UNSET
    spanId: Text = UNSET
    span_id: Text = UNSET
    parentSpanId: Text = UNSET
    parent_span_id: Text = UNSET
    name: Union[str, None, UnsetType] = UNSET
    kind: Union[Number, UnsetType] = UNSET
    startTimeUnixNano: Union[Number, UnsetType] = UNSET
    start_time_unix_nano: Union[Number, UnsetType] = UNSET
    endTimeUnixNano: Union[Number, UnsetType] = UNSET
    end_time_unix_nano: Union[Number, UnsetType] = UNSET
    attributes: Attributes = UNSET
    events: Union[list[_Event], None, UnsetType] = UNSET
    status: Union[_Status, None, UnsetType] = UNSET
    traceState: Unused = UNSET
    trace_state: Unused = UNSET
    flags: Unused = UNSET
    links: Union[list[_Link], None, UnsetType] = UNSET
    droppedAttributesCount: Unused = UNSET
    dropped_attributes_count: Unused = UNSET
    droppedEventsCount: Unused = UNSET
    dropped_events_count: Unused = UNSET
    droppedLinksCount: Unused = UNSET
    dropped_links_count: Unused = UNSET


class _ScopeSpans(Struct, forbid_unknown_fields=True, gc=False):
    scope: Union[_Scope, None, UnsetType] = UNSET
    instrumentationLibrary: Union[_Scope, None, UnsetType] = UNSET
    spans: Union[list[_Span], None, UnsetType] = UNSET
    schemaUrl: Unused = UNSET
    schema_url: Unused = UNSET


class _Resource(Struct, forbid_unknown_fields=True, gc=False):
    attributes: Attributes = UNSET
    droppedAttributesCount: Unused = UNSET
    dropped_attributes_count: Unused = UNSET
    entityRefs: Union[list[_EntityRef], None, UnsetType] = UNSET
    entity_refs: Union[list[_EntityRef], None, UnsetType] = UNSET


class _ResourceSpans(Struct, forbid_unknown_fields=True, gc=False):
    resource: Union[_Resource, None, UnsetType] = UNSET
    scopeSpans: Union[list[_ScopeSpans], None, UnsetType] = UNSET
    scope_spans: Union[list[_ScopeSpans], None, UnsetType] = UNSET
    instrumentationLibrarySpans: Union[list[_ScopeSpans], None, UnsetType] = UNSET
    schemaUrl: Unused = UNSET
    schema_url: Unused = UNSET


class _TracesData(Struct, forbid_unknown_fields=True, gc=False):
    resourceSpans: Union[list[_ResourceSpans], None, UnsetType] = UNSET
    resource_spans: Union[list[_ResourceSpans], None, UnsetType] = UNSET


_decode = msgspec.json.Decoder(_TracesData).decode


def _either(camel: Any, snake: Any) -> Any:
    """The tolerant reader's ``obj[camel] if camel in obj else obj.get(snake)``."""
    return camel if camel is not UNSET else (None if snake is UNSET else snake)


def spans_of_line(raw: bytes, line: int) -> Optional[list[Span]]:
    """The spans of one line as :func:`tracetui.otel.otlp_read.spans_of` reads them, or None: read it that way."""
    try:
        doc = _decode(raw)
    except (msgspec.DecodeError, RecursionError):  # (ValidationError is a DecodeError)
        return None
    resources = _either(doc.resourceSpans, doc.resource_spans)
    if not isinstance(resources, list):
        return None
    out: list[Span] = []
    ids: dict[str, Optional[str]] = {}  # each trace id (the spans of a line share a few) checked once
    for resource_spans in resources:
        resource = resource_spans.resource
        resource_attrs = _attributes(resource.attributes, 0) if isinstance(resource, _Resource) else {}
        scopes = (_either(resource_spans.scopeSpans, resource_spans.scope_spans)
                  or resource_spans.instrumentationLibrarySpans or [])
        for scope_spans in scopes:
            scope = _given(scope_spans.scope) or _given(scope_spans.instrumentationLibrary)
            scope_name = scope.name if scope is not None and type(scope.name) is str else ""
            for raw_span in scope_spans.spans or ():
                span = _span(raw_span, resource_attrs, scope_name, line, ids)
                if span is None:
                    return None
                out.append(span)
    return out


def _given(scope: Any) -> Optional[_Scope]:
    """A scope that holds a field (the tolerant reader's ``scope or …``: ``{}`` is none)."""
    if isinstance(scope, _Scope) and any(v is not UNSET for v in msgspec.structs.astuple(scope)):
        return scope
    return None


def _span(raw: _Span, resource: dict[str, Any], scope: str, line: int,
          ids: dict[str, Optional[str]]) -> Optional[Span]:
    trace_value = raw.traceId if raw.traceId is not UNSET else raw.trace_id
    trace_id = ids.get(trace_value) if type(trace_value) is str else None
    if trace_id is None:
        trace_id = _hex_id(None if trace_value is UNSET else trace_value, 16)
        if type(trace_value) is str:
            ids[trace_value] = trace_id
    span_id = _hex_id(raw.spanId if raw.spanId is not UNSET else _either(UNSET, raw.span_id), 8)
    if trace_id is None or span_id is None:
        return None  # a problem to report: the tolerant reader says which
    parent = raw.parentSpanId if raw.parentSpanId is not UNSET else _either(UNSET, raw.parent_span_id)
    parent = _hex_id(parent, 8) or "" if parent is not None else ""
    attributes = raw.attributes
    if attributes is None and not parent:
        return None  # a root without its attributes: a problem to report
    status = raw.status if isinstance(raw.status, _Status) else None
    events = []
    for event in raw.events or ():
        events.append(SpanEvent(event.name or "", _int(_either(event.timeUnixNano, event.time_unix_nano)),
                                _attributes(event.attributes, 0)))
    kind, code = raw.kind, status.code if status is not None else None
    message = status.message if status is not None else None
    start = raw.startTimeUnixNano if raw.startTimeUnixNano is not UNSET else _either(UNSET, raw.start_time_unix_nano)
    end = raw.endTimeUnixNano if raw.endTimeUnixNano is not UNSET else _either(UNSET, raw.end_time_unix_nano)
    return Span(trace_id, span_id, raw.name or "", parent,
                kind if type(kind) is int else _enum(None if kind is UNSET else kind, KIND_NAMES),
                _int(start), _int(end), _attributes(attributes, 0), events,
                code if type(code) is int else _enum(None if code is UNSET else code, STATUS_NAMES),
                message if isinstance(message, str) else "", resource, scope, line)


def _hex_id(value: Any, size: int) -> Optional[str]:
    """:func:`tracetui.otel.otlp_read._id`, at once for the usual form: lowercase hex, not all zeros."""
    if type(value) is str and len(value) == 2 * size and not value.strip(_HEX) and value.strip("0"):
        return value
    return _id(value, size)


_HEX = "0123456789abcdef"


def _attributes(items: Any, depth: int) -> dict[str, Any]:
    """:func:`tracetui.otel.spans.attributes_of` of decoded key-values (text first: most values are)."""
    out: dict[str, Any] = {}
    if items:
        for item in items:
            value = item.value
            if value is UNSET or value is None:
                out[item.key] = None
            elif value.stringValue is not UNSET:
                out[item.key] = value.stringValue
            else:
                out[item.key] = _value(value, depth)
    return out


def _value(value: _Value, depth: int) -> Any:
    """:func:`tracetui.otel.spans.from_any_value` of a decoded AnyValue (its fields looked at in its order)."""
    if value.stringValue is not UNSET:
        return value.stringValue
    if value.string_value is not UNSET:
        return value.string_value
    if value.boolValue is not UNSET:
        return bool(value.boolValue)
    if value.bool_value is not UNSET:
        return bool(value.bool_value)
    if value.intValue is not UNSET:
        return _value_int(value.intValue)
    if value.int_value is not UNSET:
        return _value_int(value.int_value)
    if value.doubleValue is not UNSET:
        return _float(value.doubleValue)
    if value.double_value is not UNSET:
        return _float(value.double_value)
    if value.bytesValue is not UNSET:
        return value.bytesValue
    if value.bytes_value is not UNSET:
        return value.bytes_value
    if depth >= MAX_VALUE_DEPTH:
        return None
    array = _either(value.arrayValue, value.array_value)
    if isinstance(array, _Array):
        values = array.values
        return [_value(v, depth + 1) for v in values] if isinstance(values, list) else []
    kvlist = _either(value.kvlistValue, value.kvlist_value)
    if isinstance(kvlist, _KeyValues):
        return _attributes(kvlist.values, depth + 1)
    return None
