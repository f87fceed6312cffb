"""Sending spans to a collector over OTLP/HTTP (protobuf), with httpx.

Bounded: each request has a timeout, the collector's status line and headers must all
arrive within it (however slowly they drip), and its answer must end within it and
within :data:`MAX_ANSWER_BYTES` once inflated (gzip and deflate are undone here, a
bounded piece at a time, so a small compressed answer cannot inflate past the cap in
memory); a 429/502/503/504 is retried at most twice (after ``Retry-After``, capped),
redirects are never followed (an OTLP endpoint does not redirect; following one could
send the spans somewhere unexpected), and the proxy settings of the environment are
ignored for loopback endpoints.

A 2xx counts as delivered only when its body is an ``ExportTraceServiceResponse``
(protobuf, or JSON when the collector says so), as OTLP/HTTP answers: a proxy's or
login page's ``200 text/html`` is not a collector's answer, and the spans are not
reported sent. When a later request is refused, the error carries what the
collector took before (:attr:`SendError.delivered`), so the user learns which
runs arrived.

Headers come from ``--header`` or ``OTEL_EXPORTER_OTLP_(TRACES_)HEADERS``, as the
OpenTelemetry SDKs read them; they are never written anywhere.
"""
from __future__ import annotations

import gzip
import os
import re
import time
import zlib
from email.message import Message
from dataclasses import dataclass
from typing import Iterable, Mapping
from urllib.parse import unquote, urlsplit

import httpx
import orjson

from tracetui.otel.export_json import traces_data
from tracetui.otel.export_proto import export_request, parse_response
from tracetui.otel.spans import Span
from tracetui.providers.header_deadline import HeaderDeadline, bound_header_reads
from tracetui.providers.http_transport import ACCEPT_ENCODING, is_loopback
from tracetui.providers.response_caps import DecodedBody, TooLarge
from tracetui.trace.safe_text import cut_text, redacted_prefix

TRACES_PATH = "/v1/traces"
RETRY_STATUSES = frozenset({429, 502, 503, 504})
MAX_RETRIES = 2
MAX_RETRY_WAIT_S = 5.0
#: spans per request: collectors commonly cap a request at a few MiB
BATCH_SPANS = 2000
#: the most of a collector's answer read: an ExportTraceServiceResponse is a few bytes, an error page a few KiB
MAX_ANSWER_BYTES = 1024 * 1024


class SendError(Exception):
    """The collector refused or could not be reached. ``delivered``: what it took before that (requests it
    answered with success, their runs and spans); ``refused_runs``: the runs of the request that failed."""

    def __init__(self, message: str, delivered: "SendReport | None" = None, refused_runs: int = 0):
        super().__init__(message)
        self.delivered = delivered
        self.refused_runs = refused_runs


_TOKEN = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")  # a header name (RFC 9110)
_FIELD_VALUE = re.compile(r"[\t\x20-\x7e]*")  # a header value HTTP carries: printable ASCII, spaces and tabs


def checked_headers(headers: Mapping[str, str]) -> dict[str, str]:
    """Headers HTTP can carry, else :class:`SendError` naming the header (never its value: it may be a key)."""
    for name, value in headers.items():
        if not _TOKEN.fullmatch(name):
            # only the name's valid start is said: "Name: token=" (a colon for "=") puts the token in the name
            start = _TOKEN.match(name)
            said = f"{start.group(0)}…" if start else "(a header)"
            raise SendError(f"header {said}: not a header name (letters, digits and !#$%&'*+.^_`|~-); "
                            f"write NAME=VALUE")
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
    runs: int = 0  # the first ``runs`` runs given, whole: requests never split a run


def traces_url(endpoint: str, as_is: bool = False) -> str:
    """The URL to POST to: ``endpoint`` as given, or with ``/v1/traces`` when it names no path (OTel's rule for
    ``--endpoint``; a URL from ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`` is taken ``as_is``)."""
    try:
        parts = urlsplit(endpoint)
        parts.port  # noqa: B018 - a port that is no number, or out of range, raises here
    except ValueError:
        parts = None
    if parts is None or parts.scheme not in ("http", "https") or not parts.hostname:
        # the URL is not repeated: one mistyped (no "://") may hold a password the redactor cannot see
        raise SendError("the endpoint is not an http(s) URL: expected http:// or https:// and a host, e.g. "
                        "http://127.0.0.1:4318")
    if parts.username or parts.password:
        raise SendError("no credentials in the URL: give them as --header (e.g. 'Authorization=Basic …')")
    if parts.path in ("", "/") and not as_is:
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
    return (batch for _, batch in _run_batches(runs, limit))


def _run_batches(runs: Iterable[list[Span]], limit: int = BATCH_SPANS) -> Iterable[tuple[int, list[Span]]]:
    """(how many runs, their spans) for each request."""
    batch: list[Span] = []
    count = 0
    for spans in runs:
        if batch and len(batch) + len(spans) > limit:
            yield count, batch
            batch, count = [], 0
        batch.extend(spans)
        count += 1
    if batch:
        yield count, batch


def send(endpoint: str, runs: Iterable[list[Span]], headers: Mapping[str, str] | None = None,
         timeout_s: float = 10.0, transport: httpx.BaseTransport | None = None, protocol: str = "http/protobuf",
         compression: str | None = None, as_is: bool = False) -> SendReport:
    """POST the runs' spans as ``protocol`` (``http/protobuf`` or ``http/json``), gzipped when ``compression``
    says so; raises :class:`SendError` when the collector refuses or cannot be reached."""
    url = traces_url(endpoint, as_is)
    media = "application/json" if protocol == "http/json" else "application/x-protobuf"
    coding = {"Content-Encoding": "gzip"} if compression == "gzip" else {}
    all_headers = checked_headers({**env_headers(), **(headers or {}), "Content-Type": media, **coding,
                                   "Accept-Encoding": ACCEPT_ENCODING})  # only codings inflated here within the cap
    report = SendReport()
    messages: list[str] = []
    with httpx.Client(timeout=httpx.Timeout(timeout_s), follow_redirects=False, transport=transport,
                      trust_env=not is_loopback(url)) as client:
        headers_due = HeaderDeadline()  # a collector dripping its headers a byte at a time is cut at the timeout
        bound_header_reads(client, headers_due)
        for run_count, batch in _run_batches(runs, BATCH_SPANS):
            body = orjson.dumps(traces_data(batch)) if protocol == "http/json" else \
                export_request(batch).SerializeToString()
            if compression == "gzip":
                body = gzip.compress(body, mtime=0)  # no time in the header: the same runs, the same bytes
            try:
                response = _post(client, url, body, all_headers, timeout_s, headers_due)
                rejected, message = _accepted(response, url)
            except SendError as exc:
                report.messages = tuple(messages)
                raise SendError(str(exc), delivered=report, refused_runs=run_count) from None
            report.requests += 1
            report.spans += len(batch)
            report.runs += run_count
            report.rejected += rejected
            if message:
                messages.append(message)
    report.messages = tuple(messages)
    return report


#: the media types of an OTLP/HTTP answer: protobuf (what tracetui sends, so what a collector answers) or JSON
PROTOBUF_TYPES = frozenset({"application/x-protobuf", "application/protobuf"})
JSON_TYPE = "application/json"


def _media_type(response: httpx.Response) -> str:
    """The Content-Type without its parameters, lower-cased; "" when there is none."""
    raw = response.headers.get("content-type", "")
    if not raw.strip():
        return ""
    message = Message()
    message["content-type"] = raw
    return message.get_content_type()


def _accepted(response: httpx.Response, url: str) -> tuple[int, str]:
    """(spans rejected, the collector's message) from a 2xx that is a collector's answer; :class:`SendError`
    for one that is not (an HTML page from a proxy or a login wall says 200 and delivers nothing).

    An empty body is an empty ``ExportTraceServiceResponse`` (full success), whatever its type; a body must
    be protobuf that parses as one (typed so, or untyped), or JSON (``null`` or an object, its
    ``partialSuccess`` read)."""
    media = _media_type(response)
    body = response.content
    if not body.strip() and media != "text/html":
        return 0, ""
    if media == JSON_TYPE:
        try:
            answer = orjson.loads(body)
        except orjson.JSONDecodeError:
            answer = []
        if answer is None:  # a web framework's "no content" as JSON
            return 0, ""
        if isinstance(answer, dict):
            partial = answer.get("partialSuccess", answer.get("partial_success")) or {}
            if isinstance(partial, dict):
                rejected = partial.get("rejectedSpans", partial.get("rejected_spans")) or 0
                message = partial.get("errorMessage", partial.get("error_message")) or ""
                try:  # OTLP/JSON writes 64-bit integers as decimal strings
                    return int(rejected), str(message)
                except (TypeError, ValueError):
                    pass
        raise SendError(f"{url}: the collector answered {response.status_code} with JSON that is not an OTLP "
                        f"ExportTraceServiceResponse: {_excerpt(response)}; the spans are not known to have arrived")
    if media in PROTOBUF_TYPES or not media:
        parsed = parse_response(body)
        if parsed is not None:
            return parsed
        raise SendError(f"{url}: the collector answered {response.status_code} with {len(body):,} bytes that are not "
                        f"an OTLP ExportTraceServiceResponse; the spans are not known to have arrived")
    raise SendError(f"{url}: answered {response.status_code} with {media}, not with an OTLP "
                    f"ExportTraceServiceResponse (a proxy's or a login page?): {_excerpt(response)}; the spans are "
                    f"not known to have arrived")


def _excerpt(response: httpx.Response, limit: int = 160) -> str:
    text = " ".join(response.content[:4 * limit].decode("utf-8", errors="replace").split())
    return repr(cut_text(text, limit))


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
            excerpt = redacted_prefix(response.text[:4 * 200 + 8192], 200).strip()  # (redacted before the cut)
            raise SendError(f"{url}: the collector answered {response.status_code}"
                            + (f": {excerpt}" if excerpt else ""))
        if not 200 <= response.status_code < 300:
            raise SendError(f"{url}: the collector answered {response.status_code}, not a success (2xx)")
        return response
    raise AssertionError("unreachable")  # pragma: no cover


def _read_answer(response: httpx.Response, url: str, timeout_s: float) -> bytes:
    """The collector's answer, read while it is within :data:`MAX_ANSWER_BYTES` once inflated and the timeout
    (a read timeout alone restarts with every byte). Raw bytes are inflated here, a bounded piece at a time:
    httpx inflates each chunk whole, so 200 KB of gzip became 197 MB before any cap was looked at."""
    deadline = time.monotonic() + timeout_s
    decoded = DecodedBody(response.headers.get("content-encoding", ""), MAX_ANSWER_BYTES, "the collector's answer")
    chunks: list[bytes] = []
    if response.is_stream_consumed:  # an answer given whole (httpx.MockTransport): in memory and decoded already
        if len(response.content) > MAX_ANSWER_BYTES:
            raise SendError(f"{url}: the collector's answer is over {MAX_ANSWER_BYTES:,} bytes; not read further")
        return response.content
    try:
        for raw in response.iter_raw():
            chunks.append(decoded.feed(raw))
            if time.monotonic() > deadline:
                raise SendError(f"{url}: the collector's answer did not end within the timeout ({timeout_s:g} s)")
        chunks.append(decoded.finish())
    except TooLarge:
        raise SendError(f"{url}: the collector's answer is over {MAX_ANSWER_BYTES:,} bytes"
                        + (" once inflated" if decoded.coding else "") + "; not read further") from None
    except zlib.error as exc:
        raise SendError(f"{url}: the collector's compressed answer is corrupt ({exc})") from None
    return b"".join(chunks)


def _retry_after(response: httpx.Response, attempt: int) -> float:
    try:
        wait = float(response.headers.get("retry-after", ""))
    except ValueError:
        wait = 0.5 * (2 ** attempt)
    return max(0.0, min(wait, MAX_RETRY_WAIT_S))
