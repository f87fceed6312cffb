"""Real HTTP to a provider, shaped like the other transports: one request in, one Exchange out.

It measures latency, keeps only the response headers that explain a failure,
and turns every network fault into a recorded outcome (``timeout``,
``connection``, ``stream_interrupted`` with the events that did arrive) instead of
an exception, so the loop classifies it like any other attempt.

The API key lives only here: it is added to the outgoing headers, which no trace
records, and scrubbed from anything the server echoes back, in any form
(``tracetui.trace.redact.KnownSecret``). Waiting between
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
from typing import Any, Callable
from urllib.parse import urlsplit

import httpx
import orjson

from tracetui.providers.anthropic import API_VERSION, AnthropicStreamAssembler
from tracetui.providers.base import Exchange, HttpRequest
from tracetui.providers.gemini import GeminiStreamAssembler
from tracetui.providers.openai_chat import ChatStreamAssembler
from tracetui.providers.openai_responses import StreamAssembler
from tracetui.providers.stream import EventFolder
from tracetui.providers.sse import SSEParser
from tracetui.trace.redact import TEXT_MARKER, KnownSecret, StreamRedactor, redact_events

KEY_ENV = {"openai-responses": "OPENAI_API_KEY", "openai-chat": "OPENAI_API_KEY",
           "anthropic": "ANTHROPIC_API_KEY", "gemini": "GEMINI_API_KEY"}
#: response headers worth a trace: retry advice, request ids, rate-limit state; never cookies or auth.
#: ``date`` lets a Retry-After given as a date be measured against the server's own clock.
KEPT = ("retry-after", "retry-after-ms", "x-should-retry", "x-request-id", "request-id", "content-type",
        "openai-processing-ms", "anthropic-ratelimit-requests-remaining", "date", "x-ratelimit-remaining-requests",
        "x-ratelimit-remaining-tokens", "x-ratelimit-reset-requests", "anthropic-ratelimit-tokens-remaining")
REDACTED = TEXT_MARKER
MIN_SECRET_CHARS = 12
#: each API's stream folder: the same rules the adapters assemble with decide what text may be shown
FOLDERS: dict[str, Callable[[], EventFolder]] = {
    "openai-responses": StreamAssembler, "openai-chat": ChatStreamAssembler,
    "anthropic": AnthropicStreamAssembler, "gemini": GeminiStreamAssembler,
}


class _Deadline(Exception):
    """The whole exchange took longer than the request's timeout."""


def auth_headers(provider: str, api_key: str | None) -> dict[str, str]:
    """How each API takes its key (headers only, never the URL, so no log line carries it)."""
    headers: dict[str, str] = {"anthropic-version": API_VERSION} if provider == "anthropic" else {}
    if api_key:
        if provider == "anthropic":
            headers["x-api-key"] = api_key
        elif provider == "gemini":
            headers["x-goog-api-key"] = api_key
        else:
            headers["authorization"] = f"Bearer {api_key}"
    return headers


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

    ``on_text(delta)``, if given, receives the model's text deltas of each streamed
    (SSE, status 200) exchange while it is being read, in order; tool-call
    arguments never. ``on_stream_end(exchange)``, if given, is called after each
    streamed exchange in which at least one delta was passed on (to end the line,
    say, or mark a cut stream); it sees the exchange as recorded.
    """

    def __init__(self, provider: str, api_key: str | None, *, sleep: Callable[[float], None] = time.sleep,
                 client: httpx.Client | None = None, clock: Callable[[], float] = time.monotonic,
                 trust_env: bool = True, on_text: Callable[[str], None] | None = None,
                 on_stream_end: Callable[[Exchange], None] | None = None):
        self._auth = auth_headers(provider, api_key)
        self._new_folder = FOLDERS.get(provider)
        self.on_text = on_text
        self.on_stream_end = on_stream_end
        # A placeholder key such as "EMPTY" or "ollama" (local servers) is no secret, and scrubbing
        # so short a string would corrupt the recorded bodies; real keys are far longer.
        self._secret = KnownSecret(api_key) if api_key and len(api_key) >= MIN_SECRET_CHARS else None
        self.sleep = sleep
        self.clock = clock
        # proxies from the environment are never right for a server on this machine
        self.client = client or httpx.Client(trust_env=trust_env, follow_redirects=False)
        self.exchanges: list[Exchange] = []

    def wait(self, ms: int) -> None:
        """Really wait before the next attempt (the loop has already added ``ms`` to its clock)."""
        if ms > 0:
            self.sleep(ms / 1000)

    def close(self) -> None:
        self.client.close()

    def send(self, request: HttpRequest) -> Exchange:
        feed = _TextFeed(self._new_folder(), self.on_text, self._secret) \
            if self.on_text is not None and self._new_folder is not None and request.stream else None
        exchange = _scrubbed(self._send(request, feed), self._secret)
        if feed is not None:
            feed.close()
        self.exchanges.append(exchange)
        if feed is not None and feed.count and self.on_stream_end is not None:
            try:
                self.on_stream_end(exchange)
            except Exception:  # noqa: BLE001 - as for on_text: display only
                pass
        return exchange

    def _send(self, request: HttpRequest, feed: _TextFeed | None = None) -> Exchange:
        headers = {**request.headers, **self._auth,
                   "accept": "text/event-stream" if request.stream else "application/json"}
        seconds = request.timeout_ms / 1000
        start = self.clock()
        deadline = start + seconds
        status: int | None = None
        kept: dict[str, str] = {}
        events: list[dict[str, Any]] | None = None

        def elapsed() -> int:
            return int(round((self.clock() - start) * 1000))

        try:
            with self.client.stream("POST", request.url, content=orjson.dumps(request.body), headers=headers,
                                    timeout=httpx.Timeout(seconds)) as response:
                status = response.status_code
                kept = {k: v for k, v in ((k.lower(), v) for k, v in response.headers.items()) if k in KEPT}
                sse = request.stream and status == 200 and \
                    response.headers.get("content-type", "").startswith("text/event-stream")
                if sse:
                    events = []
                    parser = SSEParser()
                    for chunk in response.iter_bytes():
                        arrived = parser.feed(chunk)
                        events.extend(arrived)  # recorded first; the display only reads them
                        if feed is not None and arrived:
                            feed(arrived)
                        if self.clock() > deadline:
                            raise _Deadline
                    arrived = parser.close()
                    events.extend(arrived)
                    if feed is not None and arrived:
                        feed(arrived)
                    return Exchange(status, kept, None, elapsed(), events=events)
                data = bytearray()
                for chunk in response.iter_bytes():
                    data += chunk
                    if self.clock() > deadline:
                        raise _Deadline
                return Exchange(status, kept, _decode(bytes(data)), elapsed())
        except (_Deadline, httpx.TimeoutException):
            if events is not None:
                return Exchange(status, kept, None, elapsed(), error="stream_interrupted", events=events)
            return Exchange(None, kept, None, elapsed(), error="timeout")
        except httpx.TransportError:
            # connect refused, reset, or the peer closed before the whole body arrived
            if events is not None:
                return Exchange(status, kept, None, elapsed(), error="stream_interrupted", events=events)
            return Exchange(None, kept, None, elapsed(), error="connection")


def _decode(data: bytes) -> Any:
    """The body as JSON when it is JSON, else as text (an HTML error page stays readable)."""
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        return data.decode("utf-8", errors="replace")


def _scrubbed(exchange: Exchange, secret: KnownSecret | None) -> Exchange:
    """A server that echoes the key back (in any form, or split across events) must not put it in a trace."""
    if secret is None and exchange.events is None:
        return exchange
    scrub = secret.scrub if secret is not None else (lambda value: value)
    return Exchange(exchange.status, scrub(exchange.headers), scrub(exchange.body), exchange.latency_ms,
                    exchange.error, None if exchange.events is None else redact_events(exchange.events, secret))
