"""Reading what an explorer on a pseudo-terminal draws, for the signal tests: until a text shows, the process
ends, or the safety net (never a timer the test depends on) runs out."""
from __future__ import annotations

import os
import select
import subprocess
import time

SAFETY_S = 60


def read_until(leader: int, wanted: bytes, proc: subprocess.Popen) -> bytes:
    """What the terminal ``leader`` showed until ``wanted`` appeared in it (or the process ended)."""
    seen = b""
    deadline = time.monotonic() + SAFETY_S
    while wanted not in seen and time.monotonic() < deadline and proc.poll() is None:
        ready, _, _ = select.select([leader], [], [], 1.0)
        if ready:
            try:
                seen += os.read(leader, 65536)
            except OSError:
                break
    return seen


def exit_status(leader: int, proc: subprocess.Popen) -> int:
    """The process's exit status, the terminal read meanwhile (a terminal nobody reads blocks the writer)."""
    drained = time.monotonic() + SAFETY_S
    while proc.poll() is None and time.monotonic() < drained:
        ready, _, _ = select.select([leader], [], [], 0.2)
        if ready:
            try:
                os.read(leader, 65536)
            except OSError:
                break
    return proc.wait(timeout=SAFETY_S)
