"""Real HTTP to a provider, shaped like the other transports: one request in, one Exchange out.

It measures latency, keeps only the response headers that explain a failure,
and turns every network fault into a recorded outcome (``timeout``, ``connect``,
``connection``, ``stream_interrupted`` with the events that did arrive,
``response_too_large`` past a cap) instead of an exception, so the loop classifies
it like any other attempt; a ``connection`` failure keeps h11's words for it (an illegal
status line, a body cut short) as its error body. It reads raw bytes and undoes their content-coding
itself (:mod:`~tracetui.providers.response_caps`), so nothing a server sends can
make a run hold more than the caps; the headers arrive against one deadline
(:mod:`~tracetui.providers.header_deadline`); no redirect is followed.

The API key lives only here: it is added to the outgoing headers, which no trace
records, and scrubbed from anything the server echoes back, in any form
(``tracetui.trace.known_secret.KnownSecret``). Waiting between
retries is the one real sleep; the loop decides how long (in logical time) and
calls :meth:`HttpTransport.wait`, and tests inject a no-op ``sleep``.

A streamed exchange can also be *watched*: with ``on_text``, each text delta is
handed over as soon as its event is read, folded by that API's own stream folder
(so tool-call arguments, which the folders never show, are never passed on).
Watching is display only: the recorded events, and so the trace, are the same
with or without it, and the loop still assembles the turn from those events.
"""
from __future__ import annotations

import ipaddress
import time
import zlib
from typing import Any, Callable
from urllib.parse import urlsplit

import httpx
import orjson

from tracetui.providers.anthropic import API_VERSION, AnthropicStreamAssembler
from tracetui.providers.base import INTERRUPTED, RESPONSE_TOO_LARGE, Exchange, HttpRequest
from tracetui.providers.gemini import GeminiStreamAssembler
from tracetui.providers.openai_chat import ChatStreamAssembler
from tracetui.providers.openai_responses import StreamAssembler
from tracetui.providers.header_deadline import HeaderDeadline, bound_header_reads
from tracetui.providers.response_caps import DecodedBody, ResponseCaps, TooLarge, bytes_words
from tracetui.providers.stream import EventFolder
from tracetui.providers.sse import SSEParser
from tracetui.trace.format import BOM
from tracetui.trace.known_secret import KnownSecret
from tracetui.trace.redact import TEXT_MARKER
from tracetui.trace.stream_redact import StreamRedactor, redact_events
from tracetui.trace.limits import too_deep
from tracetui.trace.safe_text import redacted_prefix

KEY_ENV = {"openai-responses": "OPENAI_API_KEY", "openai-chat": "OPENAI_API_KEY",
           "anthropic": "ANTHROPIC_API_KEY", "gemini": "GEMINI_API_KEY"}
#: response headers worth a trace: retry advice, request ids, rate-limit state; never cookies or auth.
#: ``date`` lets a Retry-After given as a date be measured against the server's own clock; ``location``
#: says where a redirect, never followed, pointed.
KEPT = ("retry-after", "retry-after-ms", "x-should-retry", "x-request-id", "request-id", "content-type", "location",
        "openai-processing-ms", "anthropic-ratelimit-requests-remaining", "date", "x-ratelimit-remaining-requests",
        "x-ratelimit-remaining-tokens", "x-ratelimit-reset-requests", "anthropic-ratelimit-tokens-remaining")
REDACTED = TEXT_MARKER
MIN_SECRET_CHARS = 12
#: each API's stream folder: the same rules the adapters assemble with decide what text may be shown
FOLDERS: dict[str, Callable[[], EventFolder]] = {
    "openai-responses": StreamAssembler, "openai-chat": ChatStreamAssembler,
    "anthropic": AnthropicStreamAssembler, "gemini": GeminiStreamAssembler,
}
#: what the transport can undo itself, within the caps (see response_caps)
ACCEPT_ENCODING = "gzip, deflate"


def auth_headers(provider: str, api_key: str | None) -> dict[str, str]:
    """How each API's SDK sends its key (headers only, never the URL, so no log line carries it).

    openai and anthropic (whose SDK now sends the key as a bearer token, with its
    pinned ``anthropic-version``): ``Authorization: Bearer``; google-genai:
    ``x-goog-api-key``.
    """
    headers: dict[str, str] = {"anthropic-version": API_VERSION} if provider == "anthropic" else {}
    if api_key:
        if provider == "gemini":
            headers["x-goog-api-key"] = api_key
        else:
            headers["authorization"] = f"Bearer {api_key}"
    return headers


def url_problem(url: str) -> str | None:
    """Why no request can be sent to ``url`` (a port that is no port, a control character), in words; None
    when one can."""
    try:
        urlsplit(url).port  # noqa: B018 - raises for a port out of range or not a number
        httpx.URL(url)
    except (ValueError, httpx.InvalidURL) as exc:
        return str(exc)
    return None


def is_loopback(url: str) -> bool:
    host = urlsplit(url).hostname or ""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class _TextFeed:
    """Folds events as they are read and passes on each text delta; best effort, never in the way.

    A stream the folder rejects (an error event, broken order) or a display that
    fails (stderr closed) just ends the display for this exchange: the recording
    goes on untouched, and the loop reports the stream's problem from the events.
    """

    def __init__(self, folder: EventFolder, on_text: Callable[[str], None], secret: KnownSecret | None):
        self.folder: EventFolder | None = folder
        self.on_text = on_text
        self.redactor = StreamRedactor(secret)  # holds back what may still turn out to be a secret
        self.count = 0  # deltas passed on

    def __call__(self, events: list[dict[str, Any]]) -> None:
        for event in events:
            if self.folder is None:
                return
            try:
                before = len(self.folder.shown)  # every delta, even several in one event (Gemini parts)
                self.folder.feed(event)
                for delta in self.folder.shown[before:]:
                    self._show(self.redactor.feed(delta))
            except Exception:  # noqa: BLE001 - the display must never change what is recorded
                self.folder = None

    def close(self) -> None:
        """The end of the exchange: show what was held back."""
        try:
            self._show(self.redactor.close())
        except Exception:  # noqa: BLE001 - as above
            pass

    def _show(self, text: str) -> None:
        if text:
            self.on_text(text)
            self.count += 1


class HttpTransport:
    """A :class:`~tracetui.providers.base.Transport` over an httpx client.

    ``exchanges`` keeps every attempt, in order, so the run can be recorded as a
    cassette and replayed offline.

    Timeouts are the SDKs': ``request.timeout_ms`` bounds each read (and each
    write), so a healthy stream or a slow model may take as long as it keeps
    sending; connecting gets ``connect_timeout_ms`` (default: the same); the status
    line and headers must all arrive within ``header_timeout_ms`` of sending
    (default: the request's timeout), however slowly a server drips them.
    ``caps`` bound what one response and the whole run may read and record.

    ``on_text(delta)``, if given, receives the model's text deltas of each streamed
    (SSE, status 200) exchange while it is being read, in order; tool-call
    arguments never. ``on_stream_end(exchange)``, if given, is called after each
    streamed exchange in which at least one delta was passed on (to end the line,
    say, or mark a cut stream); it sees the exchange as recorded.

    Ctrl-C while an attempt is on the wire records that attempt as ``interrupted``
    (with the status and events that did arrive), then lets the interrupt go on to
    the caller, which writes what the run recorded (:func:`tracetui.loop.live.run_http`).
    """

    def __init__(self, provider: str, api_key: str | None, *, sleep: Callable[[float], None] | None = None,
                 client: httpx.Client | None = None, clock: Callable[[], float] = time.monotonic,
                 trust_env: bool = True, on_text: Callable[[str], None] | None = None,
                 on_stream_end: Callable[[Exchange], None] | None = None, caps: ResponseCaps | None = None,
                 connect_timeout_ms: int | None = None, header_timeout_ms: int | None = None):
        self._auth = auth_headers(provider, api_key)
        self._new_folder = FOLDERS.get(provider)
        self.on_text = on_text
        self.on_stream_end = on_stream_end
        # A placeholder key such as "EMPTY" or "ollama" (local servers) is no secret, and scrubbing
        # so short a string would corrupt the recorded bodies; real keys are far longer.
        self._secret = KnownSecret(api_key) if api_key and len(api_key) >= MIN_SECRET_CHARS else None
        self.sleep = sleep if sleep is not None else (lambda seconds: time.sleep(seconds))
        self.clock = clock
        self.caps = caps or ResponseCaps()
        self.connect_timeout_ms = connect_timeout_ms
        self.header_timeout_ms = header_timeout_ms
        # proxies from the environment are never right for a server on this machine
        self.client = client or httpx.Client(trust_env=trust_env, follow_redirects=False)
        self._headers_due = HeaderDeadline(clock)
        bound_header_reads(self.client, self._headers_due)
        self.exchanges: list[Exchange] = []
        self.recorded_bytes = 0  # the recorded exchanges so far, as JSON

    def wait(self, ms: int) -> None:
        """Really wait before the next attempt (the loop has already added ``ms`` to its clock)."""
        if ms > 0:
            self.sleep(ms / 1000)

    def close(self) -> None:
        self.client.close()

    def send(self, request: HttpRequest) -> Exchange:
        feed = _TextFeed(self._new_folder(), self.on_text, self._secret) \
            if self.on_text is not None and self._new_folder is not None and request.stream else None
        interrupted = False
        try:
            exchange = self._send(request, feed)
        except _Interrupted as stop:
            exchange, interrupted = stop.exchange, True
        exchange = self._recordable(_scrubbed(exchange, self._secret))
        if feed is not None:
            feed.close()
        self.exchanges.append(exchange)
        if feed is not None and feed.count and self.on_stream_end is not None:
            try:
                self.on_stream_end(exchange)
            except Exception:  # noqa: BLE001 - as for on_text: display only
                pass
        if interrupted:
            raise KeyboardInterrupt
        return exchange

    def _recordable(self, exchange: Exchange) -> Exchange:
        """The exchange, or its too-large stand-in when recording it would take the run past its cap."""
        cap = self.caps.max_recorded_bytes
        if cap is None:
            return exchange
        size = len(orjson.dumps(exchange.to_record()))
        if self.recorded_bytes + size > cap:
            exchange = _too_large(exchange.status, exchange.headers, exchange.latency_ms,
                                  f"recording this response ({bytes_words(size)} as JSON) would take the run's "
                                  f"recorded responses past {bytes_words(cap)}, more than a trace may hold and "
                                  f"still replay")
            size = len(orjson.dumps(exchange.to_record()))
        self.recorded_bytes += size
        return exchange

    def _send(self, request: HttpRequest, feed: _TextFeed | None = None) -> Exchange:
        headers = {**request.headers, **self._auth, "accept-encoding": ACCEPT_ENCODING,
                   "accept": "text/event-stream" if request.stream else "application/json"}
        seconds = request.timeout_ms / 1000
        connect = seconds if self.connect_timeout_ms is None else min(seconds, self.connect_timeout_ms / 1000)
        header_seconds = seconds if self.header_timeout_ms is None else self.header_timeout_ms / 1000
        caps = self.caps
        start = self.clock()
        status: int | None = None
        kept: dict[str, str] = {}
        events: list[dict[str, Any]] | None = None

        def elapsed() -> int:
            return int(round((self.clock() - start) * 1000))

        self._headers_due.start(header_seconds)
        try:
            with self.client.stream("POST", request.url, content=orjson.dumps(request.body), headers=headers,
                                    timeout=httpx.Timeout(seconds, connect=connect)) as response:
                self._headers_due.stop()
                status = response.status_code
                kept = {k: v for k, v in ((k.lower(), v) for k, v in response.headers.items()) if k in KEPT}
                sse = request.stream and status == 200 and \
                    response.headers.get("content-type", "").startswith("text/event-stream")
                what = "the stream" if sse else "the response"
                body = DecodedBody(response.headers.get("content-encoding", ""), caps.max_response_bytes, what)
                length = response.headers.get("content-length", "")
                if not body.coding and length.isdigit() and int(length) > caps.max_response_bytes:
                    raise TooLarge(f"{what} announced {bytes_words(int(length))} (content-length), over the "
                                   f"{bytes_words(caps.max_response_bytes)} cap (--max-response-bytes); none was read")
                if sse:
                    events = []
                    parser = SSEParser()
                    for raw in response.iter_raw():
                        self._arrived(parser.feed(body.feed(raw)), events, feed)
                    self._arrived(parser.feed(body.finish()) + parser.close(), events, feed)
                    return Exchange(status, kept, None, elapsed(), events=events)
                data = bytearray()
                for raw in response.iter_raw():
                    data += body.feed(raw)
                data += body.finish()
                return Exchange(status, kept, _decode(bytes(data)), elapsed())
        except TooLarge as exc:
            return _too_large(status, kept, elapsed(), str(exc))
        except httpx.TimeoutException:
            if events is not None:
                return Exchange(status, kept, None, elapsed(), error="stream_interrupted", events=events)
            return Exchange(None, kept, None, elapsed(), error="timeout")
        except httpx.ConnectError:
            return Exchange(None, kept, None, elapsed(), error="connect")
        except (httpx.TransportError, httpx.DecodingError, zlib.error) as exc:
            # reset, or the peer closed before the whole body arrived, or its compressed data was corrupt
            if events is not None:
                return Exchange(status, kept, None, elapsed(), error="stream_interrupted", events=events)
            return Exchange(None, kept, _connection_words(exc), elapsed(), error="connection")
        except KeyboardInterrupt:
            raise _Interrupted(Exchange(status, kept, None, elapsed(), error=INTERRUPTED, events=events)) from None
        finally:
            self._headers_due.stop()

    def _arrived(self, arrived: list[dict[str, Any]], events: list[dict[str, Any]], feed: _TextFeed | None) -> None:
        events.extend(arrived)  # recorded first; the display only reads them
        if len(events) > self.caps.max_stream_events:
            raise TooLarge(f"the stream passed {self.caps.max_stream_events:,} events (--max-stream-events); "
                           f"reading stopped there")
        if feed is not None and arrived:
            feed(arrived)


class _Interrupted(Exception):
    """Ctrl-C during an attempt: carries the attempt as far as it got."""

    def __init__(self, exchange: Exchange):
        super().__init__("interrupted")
        self.exchange = exchange


#: the most of a connection error's words kept: h11 quotes the line it could not read, which may be long
MAX_ERROR_WORDS = 300


def _connection_words(exc: BaseException) -> dict[str, Any] | None:
    """What the HTTP library said went wrong (h11's "illegal status line: …", "peer closed connection
    without sending complete message body …"), as an error body, so the trace keeps the reason and not only
    ``connection``; None when it said nothing."""
    words = str(exc).strip()
    if not words:
        return None
    if len(words) > MAX_ERROR_WORDS:
        words = redacted_prefix(words, MAX_ERROR_WORDS - 1) + "…"
    return {"error": {"type": "connection", "message": words}}


def _too_large(status: int | None, headers: dict[str, str], latency_ms: int, reason: str) -> Exchange:
    """An attempt that reached a cap: its status and headers, the reason as its error body, nothing else."""
    return Exchange(status, headers, {"error": {"type": RESPONSE_TOO_LARGE, "message": reason}}, latency_ms,
                    error=RESPONSE_TOO_LARGE)


def _decode(data: bytes) -> Any:
    """The body as JSON when it is JSON a trace can hold, else as text (an HTML error page stays readable).
    A leading byte-order mark is read past, as httpx's ``response.json()`` (and so each SDK) reads it."""
    try:
        value = orjson.loads(data[len(BOM):] if data.startswith(BOM) else data)
    except orjson.JSONDecodeError:
        return data.decode("utf-8", errors="replace")
    return data.decode("utf-8", errors="replace") if too_deep(value) else value


def _scrubbed(exchange: Exchange, secret: KnownSecret | None) -> Exchange:
    """A server that echoes the key back (in any form, or split across events) must not put it in a trace."""
    if secret is None and exchange.events is None:
        return exchange
    scrub = secret.scrub if secret is not None else (lambda value: value)
    return Exchange(exchange.status, scrub(exchange.headers), scrub(exchange.body), exchange.latency_ms,
                    exchange.error, None if exchange.events is None else redact_events(exchange.events, secret))
