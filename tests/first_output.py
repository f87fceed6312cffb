"""Interrupt a command once its first output has arrived: never on a timer, so the signal lands while it runs."""
from __future__ import annotations

import os
import select
import signal
import subprocess


def interrupted_at_first_output(child: subprocess.Popen, safety_s: float) -> tuple[int, bytes, bytes]:
    """(exit status, stdout, stderr) of ``child`` sent SIGINT after its first bytes; ``safety_s`` is only a net."""
    ready, _, _ = select.select([child.stdout], [], [], safety_s)
    assert ready, "no output from check"
    first = os.read(child.stdout.fileno(), 64)
    assert first
    child.send_signal(signal.SIGINT)
    out, err = child.communicate(timeout=safety_s)
    return child.returncode, first + out, err
