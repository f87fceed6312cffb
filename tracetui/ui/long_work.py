"""Work on a thread that the explorer cannot interrupt: a re-run, an explain search.

Textual runs a thread worker on asyncio's default executor, whose threads the
interpreter joins at exit. Cancelling a worker (``q``, ``ctrl+q``, SIGTERM close the
app, and cancel every worker) only sets a flag its work asks about between replays; a
replay that takes long never asks, and the process would stay alive, busy, after the
terminal is restored. Each such worker runs inside :func:`long_work`, so that when
the app has closed :func:`still_running` says whether the process must exit without
waiting for them (:func:`tracetui.ui.app.run_app`): their results are dropped anyway.
"""
from __future__ import annotations

import contextlib
import threading
from typing import Iterator

_lock = threading.Lock()
_running = 0  # how many such workers are inside long_work now


@contextlib.contextmanager
def long_work() -> Iterator[None]:
    global _running
    with _lock:
        _running += 1
    try:
        yield
    finally:
        with _lock:
            _running -= 1


def still_running() -> bool:
    with _lock:
        return _running > 0
