"""Spans as OTLP/JSON, the OpenTelemetry Collector's file-exporter format: one ``TracesData`` per line.

Field names are lowerCamelCase, trace and span ids hex, enums integers and 64-bit
integers decimal strings (the OTLP/JSON rules), so any OTLP/JSON reader, the
collector's ``otlpjsonfile`` receiver included, takes the file.
"""
from __future__ import annotations

from typing import Any, Iterable

import orjson

from tracetui import __version__
from tracetui.otel import semconv as sc
from tracetui.otel.spans import Span, key_values

RESOURCE = {sc.SERVICE_NAME: "tracetui", "service.version": __version__}


def span_json(span: Span) -> dict[str, Any]:
    out: dict[str, Any] = {"traceId": span.trace_id, "spanId": span.span_id}
    if span.parent_span_id:
        out["parentSpanId"] = span.parent_span_id
    out.update({"name": span.name, "kind": span.kind, "startTimeUnixNano": str(span.start_ns),
                "endTimeUnixNano": str(span.end_ns), "attributes": key_values(span.attributes)})
    if span.events:
        out["events"] = [{"timeUnixNano": str(e.time_ns), "name": e.name, "attributes": key_values(e.attributes)}
                         for e in span.events]
    status: dict[str, Any] = {}
    if span.status_message:
        status["message"] = span.status_message
    if span.status_code:
        status["code"] = span.status_code
    out["status"] = status
    return out


def traces_data(spans: Iterable[Span]) -> dict[str, Any]:
    """One ``TracesData``: tracetui as the resource and the instrumentation scope."""
    return {"resourceSpans": [{
        "resource": {"attributes": key_values(RESOURCE)},
        "scopeSpans": [{"scope": {"name": sc.SCOPE_NAME, "version": __version__},
                        "spans": [span_json(s) for s in spans]}],
    }]}


def traces_line(spans: Iterable[Span]) -> bytes:
    return orjson.dumps(traces_data(spans)) + b"\n"
