"""Ctrl-C held back while output is being written, so what was printed stays whole.

``check --json`` prints one JSON document as the verdicts come. A KeyboardInterrupt
raised in the middle of a write (Python raises it as soon as the write returns
EINTR) would leave half a verdict on standard output, which no parser reads. While
:attr:`HeldInterrupt.busy` is set, SIGINT is only noted; :meth:`HeldInterrupt.release`
raises it once the output is whole. Outside a busy section Ctrl-C interrupts at
once, as usual, so a scan waiting on standard input still stops.
"""
from __future__ import annotations

import signal
import threading
from types import FrameType
from typing import Any


class HeldInterrupt:
    def __init__(self) -> None:
        self.busy = False
        self.pending = False
        self._previous: Any = None
        self._installed = False

    def __enter__(self) -> "HeldInterrupt":
        if threading.current_thread() is threading.main_thread():  # only the main thread may set a handler
            self._previous = signal.signal(signal.SIGINT, self._on_sigint)
            self._installed = True
        return self

    def __exit__(self, *exc: object) -> None:
        if self._installed:
            signal.signal(signal.SIGINT, self._previous)
            self._installed = False

    def _on_sigint(self, signum: int, frame: FrameType | None) -> None:
        if self.busy:
            self.pending = True
            return
        raise KeyboardInterrupt

    def release(self) -> None:
        """End a busy section; raise the Ctrl-C that came during it, if one did."""
        self.busy = False
        if self.pending:
            self.pending = False
            raise KeyboardInterrupt

    def hold_for_good(self) -> None:
        """From now on Ctrl-C is ignored: the output is being closed (its last lines are short)."""
        self.busy = True
        self.pending = False
