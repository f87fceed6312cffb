"""One run of a trace found within a time limit: :func:`tracetui.trace.checking.find_run`, stopped at the deadline.

``find_run`` reads a big file until the run asked for has ended: a call naming a run that is not there
makes it read a 2 GB file to its end (minutes), and a thread cannot be stopped from outside. Here it is
asked after each chunk whether the deadline has passed, and given up then.
"""
from __future__ import annotations

import time

from tracetui.trace.checking import ScanCancelled, find_run
from tracetui.trace.reader import RunData


class TimeUp(Exception):
    """The time limit of a call ran out before its scan ended."""


def find_run_until(path: str, name: str, deadline: float) -> tuple[RunData | None, int]:
    """The run listed as ``name`` and how many runs were seen (as ``find_run`` answers); :class:`TimeUp`
    past ``deadline`` (a ``time.monotonic()``), TraceReadError when the file holds no run."""
    try:
        run, _, count = find_run(path, name, cancelled=lambda: time.monotonic() > deadline)
    except ScanCancelled:
        raise TimeUp from None
    return run, count
