"""Fail rather than hang: for tests whose work takes milliseconds, where the code they guard against took minutes."""
from __future__ import annotations

import contextlib
import signal


@contextlib.contextmanager
def safety_net(seconds: int = 60):
    def expire(*_):
        raise TimeoutError(f"still running after {seconds} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
