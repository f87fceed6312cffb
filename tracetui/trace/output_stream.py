"""Standard output for ``check``: written in whole pieces, and ended quietly when its reader closes it.

``tracetui check runs.jsonl | head -1`` closes the pipe after one line; the next write
fails with EPIPE. That says nothing about the input, so it ends the command without a
word, with the status a shell reports for a program that SIGPIPE stopped (Python
ignores SIGPIPE, so the write fails instead of the signal ending the process).
"""
from __future__ import annotations

import io
import os
import sys

#: characters written at a time: a write bigger than the stream's buffer that a signal interrupts part-way
#: loses its tail in CPython's buffered writer, even when the signal's handler returns (seen with a held
#: Ctrl-C); pieces within the 8 KiB buffer are written whole
WRITE_SLICE = 2048

#: the exit status when standard output was closed by its reader: 128 + SIGPIPE, as a shell reports it
OUTPUT_CLOSED = 141


def output_closed() -> None:
    """End the command quietly with :data:`OUTPUT_CLOSED`. Standard output is pointed at the null device
    first, so what is still buffered (and the interpreter's last flush) has somewhere to go."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(devnull, sys.stdout.fileno())
        finally:
            os.close(devnull)
    except (OSError, ValueError, AttributeError, io.UnsupportedOperation):
        pass  # an in-memory stream (a test's) has no descriptor to replace
    sys.exit(OUTPUT_CLOSED)


def write_out(text: str, flush: bool = False) -> None:
    """``text`` on standard output in :data:`WRITE_SLICE` pieces; a closed output ends the command
    (:func:`output_closed`)."""
    stdout = sys.stdout
    try:
        for at in range(0, len(text), WRITE_SLICE):
            stdout.write(text[at:at + WRITE_SLICE])
        if flush:
            stdout.flush()
    except BrokenPipeError:
        output_closed()
