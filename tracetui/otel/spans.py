"""One span as both directions see it, and OTLP/JSON's attribute values.

Export builds :class:`Span` objects from a run and encodes them
(:mod:`~tracetui.otel.export_json`, :mod:`~tracetui.otel.export_proto`); import
decodes OTLP/JSON into the same objects (:mod:`~tracetui.otel.otlp_read`). Ids are
lowercase hex, times are Unix nanoseconds, attribute values plain Python values
(str, bool, int, float, list, dict).
"""
from __future__ import annotations

import base64
from dataclasses import dataclass, field
from typing import Any

from tracetui.trace.limits import MAX_DEPTH

INT64_MIN, INT64_MAX = -2**63, 2**63 - 1  # an AnyValue's intValue; a bigger integer travels as text
KIND_INTERNAL, KIND_SERVER, KIND_CLIENT, KIND_PRODUCER, KIND_CONSUMER = 1, 2, 3, 4, 5
STATUS_UNSET, STATUS_OK, STATUS_ERROR = 0, 1, 2
KIND_NAMES = {"SPAN_KIND_INTERNAL": 1, "SPAN_KIND_SERVER": 2, "SPAN_KIND_CLIENT": 3, "SPAN_KIND_PRODUCER": 4,
              "SPAN_KIND_CONSUMER": 5, "SPAN_KIND_UNSPECIFIED": 0}
STATUS_NAMES = {"STATUS_CODE_UNSET": 0, "STATUS_CODE_OK": 1, "STATUS_CODE_ERROR": 2}


@dataclass
class SpanEvent:
    name: str
    time_ns: int
    attributes: dict[str, Any] = field(default_factory=dict)


@dataclass
class Span:
    trace_id: str
    span_id: str
    name: str
    parent_span_id: str = ""
    kind: int = KIND_INTERNAL
    start_ns: int = 0
    end_ns: int = 0
    attributes: dict[str, Any] = field(default_factory=dict)
    events: list[SpanEvent] = field(default_factory=list)
    status_code: int = STATUS_UNSET
    status_message: str = ""
    # where an imported span came from (export sets these per file)
    resource: dict[str, Any] = field(default_factory=dict)
    scope: str = ""
    line: int = 0
    #: what :func:`tracetui.otel.dialects.role` read it as, once (an imported span's attributes do not change)
    role: str | None = field(default=None, init=False, repr=False, compare=False)

    @property
    def failed(self) -> bool:
        return self.status_code == STATUS_ERROR

    def error(self) -> tuple[str, str] | None:
        """(type, message) of the span's failure, from ``error.type``, an exception event or its status."""
        for event in self.events:
            if event.name == "exception":
                kind = event.attributes.get("exception.type")
                message = event.attributes.get("exception.message")
                return (str(kind or self.attributes.get("error.type") or "exception"), str(message or ""))
        if self.status_code == STATUS_ERROR or "error.type" in self.attributes:
            return (str(self.attributes.get("error.type") or "error"), self.status_message)
        return None


# -- OTLP/JSON AnyValue ----------------------------------------------------------------------
def any_value(value: Any) -> dict[str, Any]:
    """A Python value as OTLP/JSON's AnyValue (64-bit integers as decimal strings)."""
    if isinstance(value, bool):
        return {"boolValue": value}
    if isinstance(value, int):
        return {"intValue": str(value)} if INT64_MIN <= value <= INT64_MAX else {"stringValue": str(value)}
    if isinstance(value, float):
        return {"doubleValue": value}
    if isinstance(value, str):
        return {"stringValue": value}
    if isinstance(value, (bytes, bytearray)):
        return {"bytesValue": base64.b64encode(bytes(value)).decode()}
    if isinstance(value, (list, tuple)):
        return {"arrayValue": {"values": [any_value(v) for v in value]}}
    if isinstance(value, dict):
        return {"kvlistValue": {"values": key_values(value)}}
    if value is None:
        return {}
    return {"stringValue": str(value)}


def key_values(attributes: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"key": k, "value": any_value(v)} for k, v in attributes.items() if v is not None]


#: arrays and key-value lists nested deeper than this are dropped: an imported run is written back as JSON
#: (shown, exported) inside its events, which must stay within the trace's nesting limit
MAX_VALUE_DEPTH = MAX_DEPTH // 4


def from_any_value(value: Any, depth: int = 0) -> Any:
    """OTLP/JSON AnyValue → a Python value; tolerant of snake_case keys and odd shapes (files are untrusted)."""
    if not isinstance(value, dict):
        return value
    for key, convert in (("stringValue", _same), ("string_value", _same), ("boolValue", bool), ("bool_value", bool),
                         ("intValue", _int), ("int_value", _int), ("doubleValue", _float),
                         ("double_value", _float), ("bytesValue", _same), ("bytes_value", _same)):
        if key in value:
            return convert(value[key])
    if depth >= MAX_VALUE_DEPTH:
        return None
    array = value.get("arrayValue", value.get("array_value"))
    if isinstance(array, dict):
        values = array.get("values")
        return [from_any_value(v, depth + 1) for v in values] if isinstance(values, list) else []
    kvlist = value.get("kvlistValue", value.get("kvlist_value"))
    if isinstance(kvlist, dict):
        return attributes_of(kvlist.get("values"), depth + 1)
    return None


def attributes_of(items: Any, depth: int = 0) -> dict[str, Any]:
    """A list of ``{"key", "value"}`` → a dict (later keys win, as in a collector)."""
    out: dict[str, Any] = {}
    if isinstance(items, list):
        for item in items:
            if isinstance(item, dict) and isinstance(item.get("key"), str):
                out[item["key"]] = from_any_value(item.get("value"), depth)
    return out


def _same(v: Any) -> Any:
    return v


def _int(v: Any) -> Any:
    """An ``intValue``: an int64 as OTLP holds it; anything else (past 64 bits, not a number) as it was written."""
    try:
        number = int(v)
    except (TypeError, ValueError, OverflowError):
        return v
    return number if INT64_MIN <= number <= INT64_MAX else v


def _float(v: Any) -> Any:
    if isinstance(v, str):  # "NaN", "Infinity" are valid proto JSON
        try:
            return float(v)
        except ValueError:
            return v
    return v
