"""The recording proxy: the agent's requests forwarded upstream, the answers passed back as they arrive,
each exchange recorded as the built-in loop records its HTTP attempts.

Passing through comes first: every chunk the upstream sends is written to the agent the moment it is
read (a stream event by event, chunked), and only then parsed on the side — SSE events with
:class:`~tracetui.providers.sse.SSEParser`, content-coding undone with
:class:`~tracetui.providers.response_caps.DecodedBody` — into what is recorded. The caps bound what is
*recorded* (the agent still gets everything); past a cap the exchange is recorded as
``response_too_large``. Redirects are never followed: the 3xx goes back to the agent, and is recorded.

Timeouts are the SDKs': each read may take ``read_timeout`` (600 s, as the openai and anthropic SDKs
wait), the headers must all arrive within it (:mod:`~tracetui.providers.header_deadline`). An upstream
that cannot be reached gets the agent a 502 (which its SDK retries, as it would a real 502) and is
recorded as ``connect``; one that does not answer in time, a 504 and ``timeout``. An exchange still on
the wire when the proxy closes (the agent exited, or was killed, mid-request) is recorded as
``interrupted``.
"""
from __future__ import annotations

import threading
import time
import zlib
from typing import Any

import httpx

from tracetui.providers.base import INTERRUPTED, Exchange
from tracetui.providers.header_deadline import HeaderDeadline, bound_header_reads
from tracetui.providers.http_transport import KEPT, _connection_words, _decode, _too_large, is_loopback
from tracetui.providers.response_caps import DecodedBody, ResponseCaps, TooLarge
from tracetui.providers.sse import SSEParser
from tracetui.record.endpoint import HOP_BY_HOP, Endpoint, WireHandler
from tracetui.record.exchange import WireExchange
from tracetui.record.hangup import AgentHungUp, await_answer, in_background
from tracetui.record.request_record import Credentials, request_record
from tracetui.record.routes import DEFAULT_UPSTREAMS, child_env, provider_of, public_root, recorded_url, upstream_url, vendor_for

#: the SDKs' own timeouts (openai, anthropic: 600 s a read, 5 s to connect)
READ_TIMEOUT = 600.0
CONNECT_TIMEOUT = 5.0
#: seconds an exchange still finishing when the agent has ended is waited for
SETTLE = 2.0
#: response headers a trace keeps besides http_transport's: every rate-limit and vendor header, never cookies
KEPT_PREFIXES = ("x-ratelimit-", "anthropic-", "openai-")
#: content-codings the recorder can undo (see response_caps); the agent is offered no other
CODINGS = ("gzip", "x-gzip", "deflate", "identity")


def kept_headers(headers: httpx.Headers) -> dict[str, str]:
    return {k: v for k, v in ((k.lower(), v) for k, v in headers.items())
            if (k in KEPT or k.startswith(KEPT_PREFIXES)) and k != "set-cookie"}


def _accept_encoding(value: str | None) -> str:
    """The agent's Accept-Encoding, narrowed to what the recorder can read (br or zstd would record noise)."""
    if value is None:
        return "identity"
    offered = [part.strip() for part in value.split(",")]
    kept = [part for part in offered if part.split(";")[0].strip().lower() in CODINGS]
    return ", ".join(kept) or "identity"


class RecordingProxy(Endpoint):
    """``with RecordingProxy(upstreams) as proxy:`` run the agent with ``proxy.env()``; then
    ``proxy.exchanges()``. ``upstreams`` maps a vendor (openai, anthropic, gemini) to its API root."""

    def __init__(self, upstreams: dict[str, str] | None = None, *, port: int = 0, read_timeout: float = READ_TIMEOUT,
                 connect_timeout: float = CONNECT_TIMEOUT, caps: ResponseCaps | None = None):
        super().__init__(port)
        self.upstreams = {**DEFAULT_UPSTREAMS, **(upstreams or {})}
        self.read_timeout = read_timeout
        self.connect_timeout = min(connect_timeout, read_timeout)
        self.caps = caps or ResponseCaps()
        self.credentials = Credentials()
        self._headers_due = HeaderDeadline()
        self._clients: dict[bool, httpx.Client] = {}
        self._slots: list[dict[str, Any]] = []  # per request, in arrival order: its record once it is done
        self._closed = False
        self._taken = False  # exchanges() has been read: closing waits no more
        self._done = threading.Condition(self._lock)

    def __enter__(self) -> "RecordingProxy":
        self.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def env(self) -> dict[str, str]:
        return child_env(self.port)

    def close(self, settle: float = SETTLE) -> None:
        """Stop; an exchange still finishing (the last chunk of a stream the agent already read to its end)
        is given ``settle`` seconds, then counts as interrupted. After :meth:`exchanges` (which has waited
        already, and counted what was still on the wire as interrupted) no more is waited."""
        if not self._taken:
            self.settle(settle)
        with self._lock:
            self._closed = True  # an exchange finishing after this point is recorded as interrupted
        self.stop()
        for client in self._clients.values():
            client.close()

    def settle(self, seconds: float = SETTLE) -> bool:
        """Wait until no exchange is on the wire (at most ``seconds``); whether none is."""
        with self._lock:
            return self._done.wait_for(lambda: all("response" in slot for slot in self._slots), seconds)

    def exchanges(self, settle: float = SETTLE) -> list[WireExchange]:
        """Every exchange so far, in order of arrival, once those on the wire have finished (at most
        ``settle`` seconds); one still on the wire then counts as interrupted."""
        self.settle(settle)
        with self._lock:
            slots = list(self._slots)
            self._taken = True
        out = []
        for index, slot in enumerate(slots):
            response = slot.get("response")
            if response is None:
                response = Exchange(None, {}, None, int(round((time.monotonic() - slot["start"]) * 1000)),
                                    error=INTERRUPTED).to_record()
            request = slot["request"]
            out.append(WireExchange(index, request["provider"], request, response, request["stream"]))
        return out

    def _client(self, url: str) -> httpx.Client:
        local = is_loopback(url)  # a proxy from the environment is never right for a server on this machine
        with self._lock:
            client = self._clients.get(local)
            if client is None:
                client = httpx.Client(trust_env=not local, follow_redirects=False,
                                      limits=httpx.Limits(max_connections=None, max_keepalive_connections=32))
                client.headers.clear()  # nothing of httpx's own (user-agent, accept-encoding): only the agent's
                bound_header_reads(client, self._headers_due)
                self._clients[local] = client
            return client

    # -- one request

    def answer(self, handler: WireHandler, method: str, path: str, headers: list[tuple[str, str]],
               body: bytes) -> None:
        self.credentials.learn(path, headers)
        slot = {"request": self.credentials.scrub(request_record(method, path, headers, body)),
                "start": time.monotonic()}
        self.next_index(lambda index: self._slots.append(slot))
        provider = provider_of(method, path)
        vendor = vendor_for(provider, path, dict(headers))
        url = upstream_url(self.upstreams, vendor, path)
        shown = public_root(self.upstreams[vendor]) + recorded_url(path)  # in words: never google's ?key=
        sent = [(k, v) for k, v in headers if k.lower() not in HOP_BY_HOP and k.lower() != "accept-encoding"]
        sent.append(("accept-encoding", _accept_encoding(handler.headers.get("accept-encoding"))))
        # as bytes: the standard library read them as latin-1, and so they go on byte for byte
        sent = [(k.encode("latin-1", "replace"), v.encode("latin-1", "replace")) for k, v in sent]
        try:
            exchange = self._forward(handler, method, url, sent, body, shown)
        except Exception as exc:  # noqa: BLE001 - a request httpx will not send (a header it rejects): said, recorded
            words = f"tracetui record could not forward the request to {shown}: {type(exc).__name__}: {exc}"
            try:
                handler.close_connection = True
                handler.send_json(502, {"error": {"type": "tracetui_proxy", "message": words}})
            except OSError:
                pass
            exchange = Exchange(None, {}, _connection_words(Exception(words)), 0, error="connection")
        exchange = Exchange(exchange.status, self.credentials.scrub(exchange.headers),
                            self.credentials.scrub(exchange.body), exchange.latency_ms, exchange.error,
                            None if exchange.events is None else self.credentials.scrub_events(exchange.events))
        with self._lock:
            if not self._closed:
                slot["response"] = exchange.to_record()
                self._done.notify_all()

    def _forward(self, handler: WireHandler, method: str, url: str, headers: list[tuple[bytes, bytes]],
                 body: bytes, shown: str) -> Exchange:
        """Send the request to ``url``; words name it ``shown`` (the URL without a credential in its query)."""
        start = time.monotonic()
        status: int | None = None
        kept: dict[str, str] = {}
        events: list[dict[str, Any]] | None = None
        answered = False  # whether the agent has been sent a status line

        def elapsed() -> int:
            return int(round((time.monotonic() - start) * 1000))

        def refuse(code: int, error: str, words: str, body_words: dict[str, Any] | None = None) -> Exchange:
            if not answered:
                handler.close_connection = True
                handler.send_json(code, {"error": {"type": "tracetui_proxy", "message": f"tracetui record: {words}"}})
            else:
                handler.hang_up()
            if events is not None:
                return Exchange(status, kept, None, elapsed(), error="stream_interrupted", events=events)
            return Exchange(None, kept, body_words, elapsed(), error=error)

        client = self._client(url)
        request = client.build_request(method, url, content=body, headers=headers,
                                       timeout=httpx.Timeout(self.read_timeout, connect=self.connect_timeout))

        def send() -> httpx.Response:  # in a worker: the headers' deadline is the thread's own
            self._headers_due.start(self.read_timeout)
            try:
                return client.send(request, stream=True)
            finally:
                self._headers_due.stop()

        try:
            response = await_answer(in_background(send), handler.connection, lambda late: late.close())
        except AgentHungUp:
            handler.close_connection = True
            return Exchange(None, {}, {"error": {"type": "timeout", "message": (
                f"the agent hung up after {elapsed()} ms, before the upstream answered (its own timeout, "
                f"or it was cancelled)")}}, elapsed(), error="timeout")
        except httpx.TimeoutException:
            return refuse(504, "timeout", f"the upstream {shown} sent no response in {self.read_timeout:g} s")
        except httpx.ConnectError as exc:
            return refuse(502, "connect", f"no connection to the upstream {shown} ({exc})")
        except httpx.TransportError as exc:
            return refuse(502, "connection", f"the upstream {shown} failed: {exc}", _connection_words(exc))
        side: _SideRecord | None = None
        try:
            status = response.status_code
            kept = kept_headers(response.headers)
            sse = status == 200 and response.headers.get("content-type", "").startswith("text/event-stream")
            length = response.headers.get("content-length")
            framed = length is not None and "transfer-encoding" not in response.headers
            passed = [(k, v) for k, v in response.headers.multi_items() if k.lower() not in HOP_BY_HOP]
            if framed:
                passed.append(("content-length", length))
            no_body = method == "HEAD" or status in (204, 304) or 100 <= status < 200
            handler.start_response(status, passed, chunked=not framed and not no_body)
            answered = True
            side = _SideRecord(response.headers.get("content-encoding", ""), self.caps, sse)
            for raw in response.iter_raw():
                if framed:
                    handler.wfile.write(raw)
                else:
                    handler.write_chunk(raw)
                side.feed(raw)
            if not framed and not no_body:
                handler.end_chunks()
            return side.exchange(status, kept, elapsed())
        except (BrokenPipeError, ConnectionResetError) as exc:  # the agent hung up: stop reading for it
            handler.close_connection = True
            events = side.events if side is not None else None
            return Exchange(status, kept, None if events is not None else _connection_words(
                ConnectionError(f"the agent hung up before the response was whole ({exc.strerror or exc})")),
                elapsed(), error="stream_interrupted" if events is not None else "connection", events=events)
        except httpx.TimeoutException:
            events = side.events if side is not None else None
            return refuse(504, "timeout", f"the upstream {shown} stopped sending for {self.read_timeout:g} s")
        except (httpx.TransportError, httpx.DecodingError) as exc:
            events = side.events if side is not None else None
            return refuse(502, "connection", f"the upstream {shown} failed: {exc}", _connection_words(exc))
        finally:
            response.close()


class _SideRecord:
    """What is recorded of a response, read beside the bytes passed through; a cap ends the recording,
    never the passing through."""

    def __init__(self, content_encoding: str, caps: ResponseCaps, sse: bool):
        self.caps = caps
        self.what = "the stream" if sse else "the response"
        self.body = DecodedBody(content_encoding, caps.max_response_bytes, self.what)
        self.parser = SSEParser() if sse else None
        self.events: list[dict[str, Any]] | None = [] if sse else None
        self.data = bytearray()
        self.problem: str | None = None

    def feed(self, raw: bytes) -> None:
        if self.problem is not None:
            return
        try:
            decoded = self.body.feed(raw)
            self._take(decoded)
        except TooLarge as exc:
            self.problem = str(exc)
        except zlib.error as exc:
            self.problem = f"{self.what} could not be decoded ({exc})"

    def _take(self, decoded: bytes, final: bool = False) -> None:
        if self.parser is None:
            self.data += decoded
            return
        assert self.events is not None
        self.events.extend(self.parser.feed(decoded))
        if final:
            self.events.extend(self.parser.close())
        if len(self.events) > self.caps.max_stream_events:
            raise TooLarge(f"the stream passed {self.caps.max_stream_events:,} events (--max-stream-events); "
                           f"recording stopped there")

    def exchange(self, status: int, kept: dict[str, str], latency_ms: int) -> Exchange:
        if self.problem is None:
            try:
                self._take(self.body.finish(), final=True)
            except TooLarge as exc:
                self.problem = str(exc)
            except zlib.error as exc:
                self.problem = f"{self.what} could not be decoded ({exc})"
        if self.problem is not None:
            return _too_large(status, kept, latency_ms, self.problem)
        if self.events is not None:
            return Exchange(status, kept, None, latency_ms, events=self.events)
        return Exchange(status, kept, _decode(bytes(self.data)), latency_ms)
