"""One deadline for a response's status line and headers, however slowly they drip in.

httpx (like the SDKs built on it) applies its read timeout to each read, so a
server that sends its headers one byte at a time, each just inside the timeout,
holds a request open for ever. Here every read made while the headers are awaited
is given only what is left of one deadline; once the headers are in, reads get
the ordinary per-read timeout again (a healthy stream may run as long as it keeps
sending).

httpx has no public hook for this, so :func:`bound_header_reads` wraps the network
backend of each connection pool an ``httpx.Client`` holds (its default transport
and any proxy mounts). tests/providers/test_bounds.py proves it still takes hold.
"""
from __future__ import annotations

import threading
import time
from typing import Any, Callable

import httpcore
import httpx


class HeaderDeadline:
    """The deadline of the request this thread is sending, or None once its headers are in."""

    def __init__(self, clock: Callable[[], float] = time.monotonic):
        self.clock = clock
        self._local = threading.local()

    def start(self, seconds: float) -> None:
        self._local.at = self.clock() + seconds

    def stop(self) -> None:
        self._local.at = None

    def limit(self, timeout: float | None) -> float | None:
        """The timeout a read may have: ``timeout``, or less when the headers' deadline is nearer."""
        at = getattr(self._local, "at", None)
        if at is None:
            return timeout
        left = at - self.clock()
        if left <= 0:
            raise httpcore.ReadTimeout("the response headers did not arrive before the timeout")
        return left if timeout is None else min(timeout, left)


class _Stream(httpcore.NetworkStream):
    def __init__(self, inner: httpcore.NetworkStream, deadline: HeaderDeadline):
        self.inner = inner
        self.deadline = deadline

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self.inner.read(max_bytes, self.deadline.limit(timeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self.inner.write(buffer, timeout)

    def close(self) -> None:
        self.inner.close()

    def start_tls(self, ssl_context: Any, server_hostname: str | None = None,
                  timeout: float | None = None) -> httpcore.NetworkStream:
        return _Stream(self.inner.start_tls(ssl_context, server_hostname, self.deadline.limit(timeout)),
                       self.deadline)

    def get_extra_info(self, info: str) -> Any:
        return self.inner.get_extra_info(info)


class _Backend(httpcore.NetworkBackend):
    def __init__(self, inner: httpcore.NetworkBackend, deadline: HeaderDeadline):
        self.inner = inner
        self.deadline = deadline

    def connect_tcp(self, host: str, port: int, timeout: float | None = None, local_address: str | None = None,
                    socket_options: Any = None) -> httpcore.NetworkStream:
        return _Stream(self.inner.connect_tcp(host, port, timeout, local_address, socket_options), self.deadline)

    def connect_unix_socket(self, path: str, timeout: float | None = None,
                            socket_options: Any = None) -> httpcore.NetworkStream:  # pragma: no cover - no UDS here
        return _Stream(self.inner.connect_unix_socket(path, timeout, socket_options), self.deadline)

    def sleep(self, seconds: float) -> None:  # pragma: no cover - httpcore's own retries are off
        self.inner.sleep(seconds)


def bound_header_reads(client: httpx.Client, deadline: HeaderDeadline) -> int:
    """Make every connection ``client`` opens read its headers against ``deadline``; returns the pools wrapped."""
    wrapped = 0
    for transport in (client._transport, *client._mounts.values()):  # noqa: SLF001 - no public hook (see above)
        pool = getattr(transport, "_pool", None)
        backend = getattr(pool, "_network_backend", None)
        if backend is not None and not isinstance(backend, _Backend):
            pool._network_backend = _Backend(backend, deadline)  # noqa: SLF001
            wrapped += 1
    return wrapped
