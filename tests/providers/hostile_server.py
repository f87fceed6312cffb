"""A raw-socket server on 127.0.0.1 for the bounds tests: it writes whatever bytes a test scripts.

The scripted server speaks well-formed HTTP; a hostile server does not: it drips
its headers a byte at a time, sends a body larger than any cap, a gzip bomb, or an
event stream that never ends. Each connection runs ``respond(conn, request_bytes)``
in its own daemon thread; every write stops quietly when the client hangs up, and
the server stops when the test leaves the ``with`` block. ``sent`` counts the bytes
each response got out before the client hung up.
"""
from __future__ import annotations

import socket
import threading
import zlib
from typing import Callable, Iterator

Respond = Callable[[socket.socket], Iterator[bytes]]


class HostileServer:
    def __init__(self, respond: Respond):
        self.respond = respond
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.sock.settimeout(0.1)
        self.stopping = threading.Event()
        self.sent: list[int] = []
        self.thread = threading.Thread(target=self._serve, daemon=True)

    @property
    def url(self) -> str:
        host, port = self.sock.getsockname()
        return f"http://{host}:{port}"

    def __enter__(self) -> "HostileServer":
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stopping.set()
        self.thread.join(timeout=5)
        self.sock.close()

    def _serve(self) -> None:
        while not self.stopping.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            threading.Thread(target=self._one, args=(conn,), daemon=True).start()

    def _one(self, conn: socket.socket) -> None:
        index = len(self.sent)
        self.sent.append(0)
        with conn:
            conn.settimeout(5)
            try:
                _read_request(conn)
                for piece in self.respond(conn):
                    if self.stopping.is_set():
                        return
                    conn.sendall(piece)
                    self.sent[index] += len(piece)
            except OSError:
                pass  # the client hung up: that is the point of most of these tests


def _read_request(conn: socket.socket) -> bytes:
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(65536)
        if not chunk:
            return data
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = next((int(line.split(b":", 1)[1]) for line in head.split(b"\r\n")
                   if line.lower().startswith(b"content-length:")), 0)
    while len(body) < length:
        chunk = conn.recv(65536)
        if not chunk:
            break
        body += chunk
    return head + b"\r\n\r\n" + body


def head(status: str = "200 OK", **headers: str) -> bytes:
    lines = [f"HTTP/1.1 {status}"] + [f"{k.replace('_', '-')}: {v}" for k, v in headers.items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def chunk(data: bytes) -> bytes:
    """One chunk of a chunked body."""
    return f"{len(data):x}\r\n".encode() + data + b"\r\n"


def gzip_bomb(decoded_mib: int) -> Iterator[bytes]:
    """A gzip stream of ``decoded_mib`` MiB of zeros in about 1 KiB per MiB, built without compressing it all.

    After a full flush a deflate block does not refer back, so one compressed MiB
    of zeros can be repeated; the trailer is never reached by a capped reader.
    """
    deflate = zlib.compressobj(9, zlib.DEFLATED, -zlib.MAX_WBITS)
    block = deflate.compress(b"\0" * (1 << 20)) + deflate.flush(zlib.Z_FULL_FLUSH)
    yield b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff"  # gzip header: deflate, no name, no time
    for _ in range(decoded_mib):
        yield block
