"""Sending spans to a collector over OTLP/HTTP (protobuf), with httpx.

Bounded: each request has a timeout, the collector's status line and headers must all
arrive within it (however slowly they drip), and its answer must end within it and
within :data:`MAX_ANSWER_BYTES`; a 429/502/503/504 is retried at most twice
(after ``Retry-After``, capped), redirects are never followed (an OTLP endpoint
does not redirect; following one could send the spans somewhere unexpected), and
the proxy settings of the environment are ignored for loopback endpoints.
Headers come from ``--header`` or ``OTEL_EXPORTER_OTLP_(TRACES_)HEADERS``, as the
OpenTelemetry SDKs read them; they are never written anywhere.
"""
from __future__ import annotations

import os
import re
import time
from dataclasses import dataclass
from typing import Iterable, Mapping
from urllib.parse import unquote, urlsplit

import httpx

from tracetui.otel.export_proto import export_request, partial_success
from tracetui.otel.spans import Span
from tracetui.providers.header_deadline import HeaderDeadline, bound_header_reads
from tracetui.providers.http_transport import is_loopback

TRACES_PATH = "/v1/traces"
RETRY_STATUSES = frozenset({429, 502, 503, 504})
MAX_RETRIES = 2
MAX_RETRY_WAIT_S = 5.0
#: spans per request: collectors commonly cap a request at a few MiB
BATCH_SPANS = 2000
#: the most of a collector's answer read: an ExportTraceServiceResponse is a few bytes, an error page a few KiB
MAX_ANSWER_BYTES = 1024 * 1024


class SendError(Exception):
    pass


_TOKEN = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")  # a header name (RFC 9110)
_FIELD_VALUE = re.compile(r"[\t\x20-\x7e]*")  # a header value HTTP carries: printable ASCII, spaces and tabs


def checked_headers(headers: Mapping[str, str]) -> dict[str, str]:
    """Headers HTTP can carry, else :class:`SendError` naming the header (never its value: it may be a key)."""
    for name, value in headers.items():
        if not _TOKEN.fullmatch(name):
            raise SendError(f"header {name!r}: not a header name (letters, digits and !#$%&'*+.^_`|~-)")
        if not _FIELD_VALUE.fullmatch(value):
            raise SendError(f"header {name}: its value holds a character HTTP cannot carry (a line break, a control "
                            f"character or non-ASCII text)")
    return dict(headers)


@dataclass
class SendReport:
    requests: int = 0
    spans: int = 0
    rejected: int = 0
    messages: tuple[str, ...] = ()


def traces_url(endpoint: str) -> str:
    """The URL to POST to: ``endpoint`` as given, or with ``/v1/traces`` when it names no path (OTel's rule)."""
    parts = urlsplit(endpoint)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise SendError(f"{endpoint!r} is not an http(s) URL")
    if parts.username or parts.password:
        raise SendError("no credentials in the URL: give them as --header (e.g. 'Authorization=Basic …')")
    if parts.path in ("", "/"):
        return endpoint.rstrip("/") + TRACES_PATH
    return endpoint


def env_headers(environ: Mapping[str, str] = os.environ) -> dict[str, str]:
    """``OTEL_EXPORTER_OTLP_TRACES_HEADERS`` (else ``OTEL_EXPORTER_OTLP_HEADERS``): ``k=v,k2=v2``, URL-encoded."""
    raw = environ.get("OTEL_EXPORTER_OTLP_TRACES_HEADERS") or environ.get("OTEL_EXPORTER_OTLP_HEADERS") or ""
    out = {}
    for item in raw.split(","):
        key, sep, value = item.partition("=")
        if sep and key.strip():
            out[unquote(key.strip())] = unquote(value.strip())
    return out


def batches(runs: Iterable[list[Span]], limit: int = BATCH_SPANS) -> Iterable[list[Span]]:
    """Whole runs grouped into requests of at most ``limit`` spans (a bigger run goes alone)."""
    batch: list[Span] = []
    for spans in runs:
        if batch and len(batch) + len(spans) > limit:
            yield batch
            batch = []
        batch.extend(spans)
    if batch:
        yield batch


def send(endpoint: str, runs: Iterable[list[Span]], headers: Mapping[str, str] | None = None,
         timeout_s: float = 10.0, transport: httpx.BaseTransport | None = None) -> SendReport:
    """POST the runs' spans; raises :class:`SendError` when the collector refuses or cannot be reached."""
    url = traces_url(endpoint)
    all_headers = checked_headers({**env_headers(), **(headers or {}), "Content-Type": "application/x-protobuf"})
    report = SendReport()
    messages: list[str] = []
    with httpx.Client(timeout=httpx.Timeout(timeout_s), follow_redirects=False, transport=transport,
                      trust_env=not is_loopback(url)) as client:
        headers_due = HeaderDeadline()  # a collector dripping its headers a byte at a time is cut at the timeout
        bound_header_reads(client, headers_due)
        for batch in batches(runs):
            body = export_request(batch).SerializeToString()
            response = _post(client, url, body, all_headers, timeout_s, headers_due)
            report.requests += 1
            report.spans += len(batch)
            partial = partial_success(response.content) if response.content else None
            if partial:
                report.rejected += partial[0]
                if partial[1]:
                    messages.append(partial[1])
    report.messages = tuple(messages)
    return report


def _post(client: httpx.Client, url: str, body: bytes, headers: Mapping[str, str],
          timeout_s: float = 10.0, headers_due: HeaderDeadline | None = None) -> httpx.Response:
    headers_due = headers_due or HeaderDeadline()
    for attempt in range(MAX_RETRIES + 1):
        try:
            headers_due.start(timeout_s)
            with client.stream("POST", url, content=body, headers=dict(headers)) as streamed:
                headers_due.stop()
                answer = _read_answer(streamed, url, timeout_s)
            kept = [(k, v) for k, v in streamed.headers.multi_items()  # the answer is decoded already
                    if k.lower() not in ("content-encoding", "content-length", "transfer-encoding")]
            response = httpx.Response(streamed.status_code, headers=kept, content=answer)
        except httpx.TimeoutException:
            raise SendError(f"{url}: no answer within the timeout") from None
        except httpx.HTTPError as exc:
            raise SendError(f"{url}: {exc.__class__.__name__}: {exc}") from None
        finally:
            headers_due.stop()
        if response.status_code in RETRY_STATUSES and attempt < MAX_RETRIES:
            time.sleep(_retry_after(response, attempt))
            continue
        if 300 <= response.status_code < 400:
            where = response.headers.get("location", "elsewhere")
            raise SendError(f"{url}: redirected ({response.status_code}) to {where}; redirects are not followed, "
                            f"give the final URL")
        if response.status_code >= 400:
            excerpt = response.text[:200].strip()
            raise SendError(f"{url}: the collector answered {response.status_code}"
                            + (f": {excerpt}" if excerpt else ""))
        return response
    raise AssertionError("unreachable")  # pragma: no cover


def _read_answer(response: httpx.Response, url: str, timeout_s: float) -> bytes:
    """The collector's answer, read while it is within :data:`MAX_ANSWER_BYTES` and the timeout (a read
    timeout alone restarts with every byte)."""
    deadline = time.monotonic() + timeout_s
    chunks: list[bytes] = []
    size = 0
    for chunk in response.iter_bytes():
        size += len(chunk)
        if size > MAX_ANSWER_BYTES:
            raise SendError(f"{url}: the collector's answer is over {MAX_ANSWER_BYTES:,} bytes; not read further")
        if time.monotonic() > deadline:
            raise SendError(f"{url}: the collector's answer did not end within the timeout ({timeout_s:g} s)")
        chunks.append(chunk)
    return b"".join(chunks)


def _retry_after(response: httpx.Response, attempt: int) -> float:
    try:
        wait = float(response.headers.get("retry-after", ""))
    except ValueError:
        wait = 0.5 * (2 ** attempt)
    return max(0.0, min(wait, MAX_RETRY_WAIT_S))
