"""Spans as OTLP protobuf (``ExportTraceServiceRequest``), built with ``opentelemetry-proto``.

Only sending to a collector needs protobuf; it is the ``otel`` extra, imported
here on first use so that reading and writing files works without it.
"""
from __future__ import annotations

from typing import Any, Iterable

from tracetui import __version__
from tracetui.otel import semconv as sc
from tracetui.otel.export_json import RESOURCE
from tracetui.otel.spans import INT64_MAX, INT64_MIN, Span

INSTALL_HINT = "sending OTLP needs opentelemetry-proto: pip install 'tracetui[otel]'"


class ProtoUnavailable(RuntimeError):
    pass


def _modules() -> tuple[Any, Any, Any, Any]:
    try:
        from opentelemetry.proto.collector.trace.v1 import trace_service_pb2
        from opentelemetry.proto.common.v1 import common_pb2
        from opentelemetry.proto.resource.v1 import resource_pb2
        from opentelemetry.proto.trace.v1 import trace_pb2
    except ImportError as exc:  # pragma: no cover - depends on the install
        raise ProtoUnavailable(INSTALL_HINT) from exc
    return trace_service_pb2, common_pb2, resource_pb2, trace_pb2


def _any_value(common_pb2: Any, value: Any) -> Any:
    out = common_pb2.AnyValue()
    if isinstance(value, bool):
        out.bool_value = value
    elif isinstance(value, int) and INT64_MIN <= value <= INT64_MAX:
        out.int_value = value
    elif isinstance(value, float):
        out.double_value = value
    elif isinstance(value, (list, tuple)):
        out.array_value.values.extend(_any_value(common_pb2, v) for v in value)
    elif isinstance(value, dict):
        out.kvlist_value.values.extend(_key_values(common_pb2, value))
    elif value is not None:
        out.string_value = str(value)
    return out


def _key_values(common_pb2: Any, attributes: dict[str, Any]) -> list[Any]:
    return [common_pb2.KeyValue(key=k, value=_any_value(common_pb2, v)) for k, v in attributes.items()
            if v is not None]


def export_request(spans: Iterable[Span]) -> Any:
    """An ``ExportTraceServiceRequest`` holding the spans under tracetui's resource and scope."""
    trace_service_pb2, common_pb2, resource_pb2, trace_pb2 = _modules()
    proto_spans = []
    for span in spans:
        proto = trace_pb2.Span(
            trace_id=bytes.fromhex(span.trace_id), span_id=bytes.fromhex(span.span_id),
            parent_span_id=bytes.fromhex(span.parent_span_id) if span.parent_span_id else b"",
            name=span.name, kind=span.kind, start_time_unix_nano=span.start_ns, end_time_unix_nano=span.end_ns,
            attributes=_key_values(common_pb2, span.attributes),
            events=[trace_pb2.Span.Event(time_unix_nano=e.time_ns, name=e.name,
                                         attributes=_key_values(common_pb2, e.attributes)) for e in span.events],
            status=trace_pb2.Status(code=span.status_code, message=span.status_message),
        )
        proto_spans.append(proto)
    return trace_service_pb2.ExportTraceServiceRequest(resource_spans=[trace_pb2.ResourceSpans(
        resource=resource_pb2.Resource(attributes=_key_values(common_pb2, RESOURCE)),
        scope_spans=[trace_pb2.ScopeSpans(scope=common_pb2.InstrumentationScope(name=sc.SCOPE_NAME, version=__version__),
                                          spans=proto_spans)],
    )])


def parse_response(body: bytes) -> tuple[int, str] | None:
    """(rejected spans, message) of an ``ExportTraceServiceResponse`` — (0, "") for full success — or None
    when ``body`` is not one."""
    trace_service_pb2, *_ = _modules()
    response = trace_service_pb2.ExportTraceServiceResponse()
    try:
        response.ParseFromString(body)
    except Exception:  # noqa: BLE001 - a body that is not the response message
        return None
    if response.HasField("partial_success"):
        return response.partial_success.rejected_spans, response.partial_success.error_message
    return 0, ""


def partial_success(body: bytes) -> tuple[int, str] | None:
    """(rejected spans, message) from an ``ExportTraceServiceResponse``, when the collector reports any."""
    parsed = parse_response(body)
    return parsed if parsed and (parsed[0] or parsed[1]) else None
