"""The local HTTP endpoint both the recording proxy and the replay server are: 127.0.0.1, a thread per
connection, nothing printed (the agent owns the terminal), each request numbered in order of arrival.

Built on the standard library's ``ThreadingHTTPServer``: an agent's SDK speaks plain HTTP/1.1 to it
(keep-alive, a ``content-length`` or chunked body), and a thread per connection lets an agent's
concurrent requests proceed side by side while the arrival order fixes their numbers.
"""
from __future__ import annotations

import errno
import re
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable

#: headers that describe one hop of a connection, never passed from one side to the other
HOP_BY_HOP = frozenset({"connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "te", "trailer",
                        "trailers", "transfer-encoding", "upgrade", "proxy-connection", "host", "content-length",
                        "expect"})
#: the most of a request body read from an agent (an SDK sends a few MiB at most)
MAX_REQUEST_BYTES = 64 * 1024 * 1024
#: the names an agent's SDK reaches this endpoint by (a DNS-rebinding web page sends its own domain)
LOCAL_HOSTS = frozenset({"127.0.0.1", "localhost"})
#: what a header name or value must never hold when sent: a CR or LF would start a header (or a body) of its own
_UNSENDABLE = re.compile(r"[\x00-\x08\x0a-\x1f\x7f]")
_TOKEN = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")


def sendable(name: str, value: str) -> bool:
    """Whether a header can go on the wire as it is: a token for a name, a value of one latin-1 line."""
    if not _TOKEN.match(name) or _UNSENDABLE.search(value):
        return False
    try:
        value.encode("latin-1")
    except UnicodeEncodeError:
        return False
    return True


class EndpointError(OSError):
    """The endpoint could not start (a port already taken); the message says so in words."""


class BadRequest(Exception):
    """A request the endpoint cannot read (its body framing is broken or too large)."""


class _QuietServer(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    allow_reuse_address = False  # a port in use must be refused, not shared

    def handle_error(self, request: Any, client_address: Any) -> None:  # never a traceback on the agent's terminal
        pass


class WireHandler(BaseHTTPRequestHandler):
    """Reads one request; the subclass answers it (``answer(method, path, headers, body)``)."""

    protocol_version = "HTTP/1.1"
    endpoint: "Endpoint"

    def setup(self) -> None:
        super().setup()
        try:  # each event written goes out at once, not held for the next (Nagle's algorithm)
            self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        except OSError:
            pass

    def log_message(self, *args: Any) -> None:
        pass

    def handle_one_request(self) -> None:
        try:
            super().handle_one_request()
        except (BrokenPipeError, ConnectionResetError, TimeoutError):
            self.close_connection = True

    def __getattr__(self, name: str) -> Any:
        if name.startswith("do_"):  # every method is answered alike (POST mostly; GET /v1/models too)
            return self._dispatch
        raise AttributeError(name)

    def _dispatch(self) -> None:
        refused = self.refusal()
        if refused is not None:  # not the agent's: answered, never numbered nor recorded
            self.close_connection = True
            self.send_json(refused[0], {"error": {"type": "tracetui_refused", "message": f"tracetui: {refused[1]}"}})
            return
        try:
            body = self.read_body()
        except BadRequest as exc:
            self.close_connection = True
            self.send_json(400, {"error": {"type": "invalid_request", "message": f"tracetui: {exc}"}})
            return
        headers = [(k, v) for k, v in self.headers.items()]
        self.endpoint.answer(self, self.command, self.path, headers, body)

    def refusal(self) -> tuple[int, str] | None:
        """Why a request is not one the agent's SDK sent (status, words), None when it may be.

        The endpoint forwards to the upstream whatever it is sent, so what it is sent must be an SDK's
        request to it: a path (a target such as ``@host/x`` or ``http://host/x`` would name another
        host), addressed to 127.0.0.1 or localhost (a web page rebinding its own domain to 127.0.0.1
        sends that domain), and not from a browser (every page's cross-site request carries ``Origin``).
        """
        if self.command == "CONNECT":
            return 405, "CONNECT is refused: this endpoint forwards an SDK's API requests, it is no general proxy"
        if not self.path.startswith("/"):
            return 400, "the request target must be a path such as /v1/chat/completions (this is no general proxy)"
        host = (self.headers.get("host") or "").strip()
        if host:
            name = host.rsplit(":", 1)[0] if not host.endswith("]") else host
            if name.lower() not in LOCAL_HOSTS:
                return 421, f"requests are served for 127.0.0.1 only, not for the host {host[:200]!r}"
        if self.headers.get("origin") is not None:
            return 403, "requests from a web page (they carry an Origin header) are refused"
        return None

    def read_body(self) -> bytes:
        if "chunked" in (self.headers.get("transfer-encoding") or "").lower():
            return self._read_chunked()
        length = (self.headers.get("content-length") or "0").strip()
        if not (length.isascii() and length.isdigit()):  # str.isdigit alone takes '²', which int() does not
            raise BadRequest(f"the request's content-length {length!r} is not a number")
        if int(length) > MAX_REQUEST_BYTES:
            raise BadRequest(f"the request body ({int(length):,} bytes) is over {MAX_REQUEST_BYTES:,} bytes")
        return self.rfile.read(int(length))

    def _read_chunked(self) -> bytes:
        data = bytearray()
        while True:
            line = self.rfile.readline(1024).split(b";")[0].strip()
            try:
                size = int(line, 16)
            except ValueError:
                raise BadRequest("the request's chunked body is broken") from None
            if size == 0:
                while self.rfile.readline(1024).strip():  # trailers
                    pass
                return bytes(data)
            if len(data) + size > MAX_REQUEST_BYTES:
                raise BadRequest(f"the request body is over {MAX_REQUEST_BYTES:,} bytes")
            data += self.rfile.read(size)
            self.rfile.readline(16)

    # -- answering

    def start_response(self, status: int, headers: list[tuple[str, str]], chunked: bool) -> None:
        """Status line and headers, as given (no Server or Date of ours); ``chunked`` frames the body."""
        self.send_response_only(status)
        for name, value in headers:
            if sendable(name, value):  # a header read from a trace never splits the response
                self.send_header(name, value)
        if chunked:
            self.send_header("transfer-encoding", "chunked")
        if self.close_connection:
            self.send_header("connection", "close")
        self.end_headers()

    def write_chunk(self, data: bytes) -> None:
        if data:
            self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))

    def end_chunks(self) -> None:
        self.wfile.write(b"0\r\n\r\n")

    def send_json(self, status: int, body: bytes | dict[str, Any], headers: list[tuple[str, str]] = ()) -> None:
        import orjson

        payload = body if isinstance(body, bytes) else orjson.dumps(body)
        names = {k.lower() for k, _ in headers}
        extra = [] if "content-type" in names else [("content-type", "application/json")]
        self.start_response(status, [*headers, *extra, ("content-length", str(len(payload)))], chunked=False)
        if self.command != "HEAD":
            self.wfile.write(payload)

    def hang_up(self) -> None:
        """End the connection at once (a broken stream, a dropped connection), unread and unanswered."""
        self.close_connection = True
        try:
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


class Endpoint:
    """A server on 127.0.0.1; ``answer`` is called in the connection's thread for each request."""

    def __init__(self, port: int = 0):
        endpoint = self
        handler = type("Handler", (WireHandler,), {"endpoint": endpoint})
        try:
            self.server = _QuietServer(("127.0.0.1", port), handler)
        except OSError as exc:
            if exc.errno == errno.EADDRINUSE:
                raise EndpointError(exc.errno, f"port {port} on 127.0.0.1 is already taken by another program; "
                                               f"leave the port out and a free one is chosen") from None
            raise EndpointError(exc.errno, f"cannot listen on 127.0.0.1:{port}: {exc.strerror or exc}") from None
        self.port: int = self.server.server_address[1]
        self.stopped = threading.Event()
        self._lock = threading.Lock()
        self._count = 0
        self._thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05},
                                        name=f"tracetui-endpoint-{self.port}", daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def next_index(self, then: Callable[[int], Any] | None = None) -> int:
        """The next request's number, in order of arrival (``then(index)`` runs under the same lock)."""
        with self._lock:
            index = self._count
            self._count += 1
            if then is not None:
                then(index)
            return index

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self.stopped.set()
        self.server.shutdown()
        self.server.server_close()
        self._thread.join(timeout=5)

    def answer(self, handler: WireHandler, method: str, path: str, headers: list[tuple[str, str]],
               body: bytes) -> None:  # pragma: no cover - overridden
        raise NotImplementedError
