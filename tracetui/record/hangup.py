"""Waiting for the upstream's answer while watching whether the agent is still there to take it.

An agent whose own timeout fires (or that is cancelled) hangs up and, often, sends the request again.
Until the upstream answers, nothing is written to the agent, so nothing would notice: the proxy
would wait up to its own timeout and then record an answer the agent never saw. So the upstream's
headers are awaited in a worker thread while the agent's socket is watched; its end of file means
it hung up, and the exchange is recorded as the agent met it.
"""
from __future__ import annotations

import select
import socket
import threading
from concurrent.futures import Future, TimeoutError as FutureTimeout
from typing import Any, Callable, TypeVar

T = TypeVar("T")
POLL = 0.2  # seconds between looks at the agent's socket (no cost to an answer that arrives: it wakes at once)


def in_background(fn: Callable[[], T]) -> "Future[T]":
    """``fn()`` in a daemon thread of its own: a request still waiting on a silent upstream when tracetui
    ends must not hold tracetui open (a thread pool's workers are joined at exit)."""
    future: "Future[T]" = Future()

    def run() -> None:
        if not future.set_running_or_notify_cancel():
            return
        try:
            future.set_result(fn())
        except BaseException as exc:  # noqa: BLE001 - handed to the waiting thread, as a pool would
            future.set_exception(exc)

    threading.Thread(target=run, name="tracetui-upstream", daemon=True).start()
    return future


class AgentHungUp(Exception):
    """The agent closed its connection before the upstream answered."""


def _hung_up(sock: socket.socket) -> bool | None:
    """True: the agent closed; False: it sent more (no longer watched); None: nothing to tell yet."""
    try:
        readable, _, _ = select.select([sock], [], [], 0)
    except (OSError, ValueError):
        return True
    if not readable:
        return None
    try:
        return sock.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT) == b""
    except BlockingIOError:
        return None
    except OSError:
        return True


def await_answer(pending: "Future[T]", sock: socket.socket, discard: Callable[[T], Any],
                 poll: float = POLL) -> T:
    """``pending``'s result, unless the agent on ``sock`` hangs up first (then :class:`AgentHungUp`, and the
    answer, when it comes, is handed to ``discard``)."""
    watching = True
    while True:
        try:
            return pending.result(timeout=poll if watching else None)
        except FutureTimeout:
            pass
        state = _hung_up(sock)
        if state is True:
            pending.add_done_callback(lambda done: done.exception() is None and discard(done.result()))
            raise AgentHungUp
        if state is False:
            watching = False  # bytes of a pipelined request: the agent is there
