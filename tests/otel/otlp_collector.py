"""A scripted OTLP/HTTP collector on 127.0.0.1: real sockets, one scripted answer per request.

Each request is recorded (its path, headers and the decoded ``ExportTraceServiceRequest``)
and takes the next answer of the script: a status with a Content-Type and a body, or raw
bytes written as they are (a compressed bomb, a broken status line). The server runs
while the test is inside the ``with`` block and is stopped when it leaves.
"""
from __future__ import annotations

import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from opentelemetry.proto.collector.trace.v1 import trace_service_pb2

PROTOBUF = "application/x-protobuf"


@dataclass
class Answer:
    status: int = 200
    content_type: str | None = PROTOBUF
    body: bytes = b""  # the default: an empty ExportTraceServiceResponse, full success
    headers: dict[str, str] = field(default_factory=dict)
    raw: bytes | None = None  # sent instead of a well-formed answer, byte for byte


def success(rejected: int = 0, message: str = "") -> Answer:
    response = trace_service_pb2.ExportTraceServiceResponse()
    if rejected or message:
        response.partial_success.rejected_spans = rejected
        response.partial_success.error_message = message
    return Answer(body=response.SerializeToString())


def _decoded(raw: bytes, headers: dict[str, str]) -> Any:
    """The ExportTraceServiceRequest a body holds: gunzipped when so encoded, protobuf or OTLP/JSON (hex ids)."""
    import base64
    import gzip
    import json

    from google.protobuf import json_format

    if headers.get("content-encoding") == "gzip":
        raw = gzip.decompress(raw)
    if headers.get("content-type", "").startswith("application/json"):
        doc = json.loads(raw)
        for resource in doc.get("resourceSpans", []):
            for scope in resource.get("scopeSpans", []):
                for span in scope.get("spans", []):
                    for key in ("traceId", "spanId", "parentSpanId"):
                        if key in span:
                            span[key] = base64.b64encode(bytes.fromhex(span[key])).decode()
        return json_format.ParseDict(doc, trace_service_pb2.ExportTraceServiceRequest())
    return trace_service_pb2.ExportTraceServiceRequest.FromString(raw)


class Collector:
    def __init__(self, answers: list[Answer]):
        self.answers = list(answers)
        self.requests: list[dict[str, Any]] = []
        self.lock = threading.Lock()
        collector = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_POST(self):
                raw = self.rfile.read(int(self.headers.get("content-length") or 0))
                headers = {k.lower(): v for k, v in self.headers.items()}
                with collector.lock:
                    collector.requests.append({"path": self.path, "headers": headers, "raw": raw,
                                               "request": _decoded(raw, headers)})
                    answer = collector.answers.pop(0) if collector.answers else Answer(500, "text/plain", b"no answer")
                self.close_connection = True
                try:
                    if answer.raw is not None:
                        self.wfile.write(answer.raw)
                        return
                    self.send_response(answer.status)
                    if answer.content_type:
                        self.send_header("content-type", answer.content_type)
                    for name, value in answer.headers.items():
                        self.send_header(name, value)
                    self.send_header("content-length", str(len(answer.body)))
                    self.send_header("connection", "close")
                    self.end_headers()
                    self.wfile.write(answer.body)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client stopped reading (a capped answer)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    @property
    def url(self) -> str:
        host, port = self.httpd.server_address[:2]
        return f"http://{host}:{port}"

    def run_ids(self, index: int) -> list[str]:
        """The runs (``gen_ai.conversation.id`` of each root span) in request ``index``."""
        ids = []
        for resource in self.requests[index]["request"].resource_spans:
            for scope in resource.scope_spans:
                for span in scope.spans:
                    if not span.parent_span_id:
                        ids += [a.value.string_value for a in span.attributes if a.key == "gen_ai.conversation.id"]
        return ids

    def __enter__(self) -> "Collector":
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(timeout=5)
