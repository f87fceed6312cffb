"""Standard input as a trace: spooled to an unnamed temporary file as it arrives.

``cat x.jsonl | tracetui check -`` and ``… | tracetui open -`` read standard input,
the one input that is deliberately not a regular file. A pipe can be read only
once and not from the middle, so a thread copies it to an unnamed temporary file
(no name: nothing to clean up, whatever ends the process) and the index reads and
follows that file like any other while the copy goes on. The line limit holds
here too: of a line longer than :data:`~tracetui.trace.limits.MAX_LINE_BYTES`, only
the first bytes are kept and its true length is noted (``long_lines``), so an
endless line (``cat /dev/zero | tracetui check -``) costs neither memory nor disk.
"""
from __future__ import annotations

import os
import tempfile
import threading
from typing import Any, BinaryIO, Callable

from tracetui.trace import limits
from tracetui.trace.index.source import Input

#: bytes read from the pipe at a time
READ_BYTES = 1 << 20
LABEL = "-"


class Spool(Input):
    """Copies ``source`` (a binary file, or a descriptor) to an unnamed temporary file, in a thread."""

    def __init__(self, source: BinaryIO | int, label: str = LABEL, directory: str | None = None):
        self.label = label
        if isinstance(source, int):
            self._read: Callable[[int], bytes] = lambda n: os.read(source, n)
        else:
            self._read = getattr(source, "read1", source.read)  # what has arrived, without waiting for more
        self._directory = directory or tempfile.gettempdir()
        self._file = tempfile.TemporaryFile(dir=directory)  # unnamed where the platform allows
        self.fd = self._file.fileno()
        # the copy's own descriptor: closing the spool under it never sends a write to a file given its number
        self._write_fd = os.dup(self.fd)
        self.long_lines: dict[int, int] = {}
        self.error: str | None = None
        self._complete = threading.Event()
        self._stop = False
        self._thread = threading.Thread(target=self._copy, name="tracetui-stdin-spool", daemon=True)
        self._thread.start()

    def growing(self) -> bool:
        """True while standard input may still bring more."""
        return not self._complete.is_set()

    def wait(self, timeout: float | None = None) -> bool:
        """Wait until standard input has ended (or failed); returns whether it has."""
        return self._complete.wait(timeout)

    def head(self, size: int, enough: Callable[[bytes], Any] = lambda head: False,
             timeout: float | None = None) -> bytes:
        """The first ``size`` bytes once that many have arrived, or fewer: when standard input ends first,
        as soon as ``enough`` says what has arrived is enough (a writer still running may send little
        for a long time), or after ``timeout`` seconds."""
        import time

        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            ended = self._complete.is_set()
            head = os.pread(self.fd, size, 0)
            if ended or len(head) >= size or enough(head) or (deadline is not None and time.monotonic() > deadline):
                return head
            self.wait(0.02)

    def close(self) -> None:
        self._stop = True
        self._file.close()

    def _copy(self) -> None:
        limit = limits.MAX_LINE_BYTES
        written = 0
        line_start, line_length = 0, 0  # the line being copied: where it starts, how long it is so far
        try:
            while not self._stop:
                block = self._read(READ_BYTES)
                if not block:
                    break
                out = []
                start = 0
                while start < len(block):
                    nl = block.find(b"\n", start)
                    end = len(block) if nl < 0 else nl
                    piece = end - start
                    keep = max(0, min(piece, limit + 1 - line_length))  # at most limit + 1 bytes of a line
                    if keep:
                        out.append(block[start:start + keep])
                    line_length += piece
                    if line_length > limit + 1:
                        self.long_lines[line_start] = line_length
                    if nl < 0:
                        break
                    if line_length > limit + 1:  # the limit counts a line without its line end
                        tail = block[max(start, end - 64):end]
                        self.long_lines[line_start] = line_length - (len(tail) - len(tail.rstrip(b"\r")))
                    out.append(b"\n")
                    kept = min(line_length, limit + 1)
                    line_start += kept + 1
                    line_length = 0
                    start = nl + 1
                written = self._write(b"".join(out), written)
        except _CopyFailed as failed:
            if not self._stop:  # (closed under the copy: nothing failed, the input is no longer wanted)
                self.error = (f"copying standard input to a temporary file in {self._directory} failed "
                              f"({failed.reason}) after {failed.at:,} bytes: set TMPDIR to a folder with room, "
                              f"or give the trace's file name")
        except (OSError, ValueError) as exc:
            if not self._stop:
                self.error = f"reading standard input failed: {getattr(exc, 'strerror', None) or exc}"
        except BaseException as exc:  # (never a copy taken for whole when it is not)
            self.error = f"copying standard input stopped: {type(exc).__name__}"
            raise
        finally:
            os.close(self._write_fd)
            self._complete.set()

    def _write(self, data: bytes, at: int) -> int:
        """``data`` written whole at ``at`` (a write to a nearly full disk may write part of it); where it ends."""
        view = memoryview(data)
        while view:
            try:
                done = os.pwrite(self._write_fd, view, at)
            except OSError as exc:
                raise _CopyFailed(exc.strerror or str(exc), at) from None
            if not done:
                raise _CopyFailed("nothing more could be written", at)
            at += done
            view = view[done:]
        return at


class _CopyFailed(Exception):
    """The temporary copy of standard input could not be written (a full disk, a file size limit)."""

    def __init__(self, reason: str, at: int):
        super().__init__(reason)
        self.reason, self.at = reason, at  # (bytes of the copy written whole before it)
