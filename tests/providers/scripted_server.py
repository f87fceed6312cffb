"""A scripted HTTP server on 127.0.0.1 for provider tests: real sockets, canned replies, faults.

Each request takes the next :class:`Reply` in the script. Replies can be JSON,
text (an HTML error page), a server-sent event stream (optionally cut in the
middle by closing the socket mid-chunk), or come too late for the client's
timeout. Every request is recorded (path, headers, JSON body) for assertions.

A stream can also be paced: with ``pause_after=n`` the server sends events
``0..n``, then waits for the test to set ``resume`` before sending the rest, so a
test can prove the client acted on the first events while the rest were unsent.
The wait is bounded (``PAUSE_LIMIT``); ``Reply.resumed`` says whether it was
released in time, and ``Reply.sent`` counts the events sent (or being sent) so far.
"""
from __future__ import annotations

import json
import socket
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

FIXED_DATE = "Mon, 30 Nov 2026 00:00:00 GMT"
from typing import Any

PAUSE_LIMIT = 2.0  # seconds a paused stream waits for its release before going on anyway (and failing the test)


@dataclass
class Reply:
    status: int = 200
    body: Any = None  # dict/list → JSON, str → text as it is
    headers: dict[str, str] = field(default_factory=dict)
    events: list[Any] | None = None  # SSE: dicts become `data: {json}`, strings are sent as data verbatim
    cut_after: int | None = None  # close the socket mid-event after this many events
    delay: float = 0.0  # seconds before the status line
    pause_after: int | None = None  # after sending this event (0-based), wait for ``resume``
    resume: threading.Event = field(default_factory=threading.Event)
    resumed: bool | None = None  # set by the server: was the pause released before PAUSE_LIMIT?
    sent: int = 0  # events the server has started to write
    frames: list[bytes] | None = None  # SSE: bytes framed by the test (event names, CRLF), each sent as a chunk
    drop: bool = False  # hang up without a response (a dropped connection)


class ScriptedServer:
    def __init__(self, replies: list[Reply]):
        self.replies = list(replies)
        self.requests: list[dict[str, Any]] = []
        self.lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):  # keep test output clean
                pass

            def date_time_string(self, timestamp=None):  # a fixed Date header: recorded traces stay comparable
                return FIXED_DATE

            def do_POST(self):
                raw = self.rfile.read(int(self.headers.get("content-length") or 0))
                with server.lock:
                    server.requests.append({"path": self.path, "headers": {k.lower(): v for k, v in self.headers.items()},
                                            "body": json.loads(raw) if raw else None})
                    reply = server.replies.pop(0) if server.replies else Reply(500, {"error": {"message": "script exhausted"}})
                self.close_connection = True
                try:
                    server.answer(self, reply)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (a timeout test)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    @property
    def url(self) -> str:
        host, port = self.httpd.server_address[:2]
        return f"http://{host}:{port}"

    def __enter__(self) -> "ScriptedServer":
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(timeout=2)

    @staticmethod
    def answer(handler: BaseHTTPRequestHandler, reply: Reply) -> None:
        if reply.delay:
            time.sleep(reply.delay)
        if reply.drop:
            handler.connection.shutdown(socket.SHUT_RDWR)
            return
        if reply.frames is not None:
            handler.send_response(reply.status)
            for k, v in {"content-type": "text/event-stream", **reply.headers}.items():
                handler.send_header(k, v)
            handler.send_header("transfer-encoding", "chunked")
            handler.send_header("connection", "close")
            handler.end_headers()
            for frame in reply.frames:
                handler.wfile.write(f"{len(frame):x}\r\n".encode() + frame + b"\r\n")
            handler.wfile.write(b"0\r\n\r\n")
            handler.wfile.flush()
            return
        if reply.events is not None:
            handler.send_response(reply.status)
            for k, v in {"content-type": "text/event-stream", **reply.headers}.items():
                handler.send_header(k, v)
            handler.send_header("transfer-encoding", "chunked")
            handler.send_header("connection", "close")
            handler.end_headers()
            for n, event in enumerate(reply.events):
                data = event if isinstance(event, str) else json.dumps(event)
                frame = f"data: {data}\n\n".encode()
                if reply.cut_after is not None and n == reply.cut_after:
                    half = frame[: len(frame) // 2]
                    handler.wfile.write(f"{len(frame):x}\r\n".encode() + half)  # promise more than we send
                    handler.wfile.flush()
                    handler.connection.shutdown(socket.SHUT_RDWR)
                    return
                reply.sent = n + 1  # counted before it goes out, so a client that saw it never reads a stale count
                handler.wfile.write(f"{len(frame):x}\r\n".encode() + frame + b"\r\n")
                handler.wfile.flush()
                if n == reply.pause_after:
                    reply.resumed = reply.resume.wait(PAUSE_LIMIT)
            handler.wfile.write(b"0\r\n\r\n")
            return
        if isinstance(reply.body, (dict, list)):
            payload, ctype = json.dumps(reply.body).encode(), "application/json"
        else:
            payload, ctype = str(reply.body or "").encode(), "text/html; charset=utf-8"
        handler.send_response(reply.status)
        for k, v in {"content-type": ctype, **reply.headers}.items():
            handler.send_header(k, v)
        handler.send_header("content-length", str(len(payload)))
        handler.send_header("connection", "close")
        handler.end_headers()
        handler.wfile.write(payload)
