"""Converted runs kept on disk instead of in memory, for ``open`` of an OTLP/JSON file of any size.

A run read from OTLP holds its spans' attributes (the messages: most of a file's bytes), so holding
every run made ``open`` of 256 MiB of OTLP cost gigabytes. Each run is written once, as the native trace
lines it would be written as (its run line, its events, its summary), to a temporary file, and read
back when the explorer shows it. The file has no name (``tempfile.TemporaryFile``: ``O_TMPFILE`` where
the kernel has it, else created ``0600`` with ``O_EXCL`` and unlinked at once), so no other user can
open it, it never needs cleaning up, and it goes with the process however that ends (SIGKILL too);
closing it frees the disk at once. A run that cannot be encoded (an integer beyond 64 bits, say) is
kept in memory as it is: exceptional, and never data a file cannot hold. A temporary directory that
cannot hold the file (none writable, a full disk) is said in words that name it and ``TMPDIR``.
"""
from __future__ import annotations

import errno
import os
import tempfile
import threading
from typing import Any

import orjson

from tracetui.trace.reader import RunData, TraceReadError

#: where a run is: (offset, length) of its lines in the file, or the run itself when it could not be encoded
Slot = tuple[int, int] | RunData


class RunSpool:
    """Runs appended to an unnamed temporary file and read back one at a time (any thread)."""

    def __init__(self, directory: str | None = None, label: str = "OTLP/JSON"):
        self.where = directory or tempfile.gettempdir()
        try:
            self._file = tempfile.TemporaryFile(dir=directory)
        except OSError as exc:
            raise TraceReadError(f"{label}: the runs read from it are kept in a temporary file, and none can be "
                                 f"made in {self.where} ({exc.strerror or exc}); set TMPDIR to a writable "
                                 f"directory") from None
        self.fd = self._file.fileno()
        self._end = 0
        self._lock = threading.Lock()  # a write, a read and close never overlap (close frees the descriptor)
        self.closed = False

    def add(self, run: RunData) -> Slot:
        """Write a run's records; returns where to find it again."""
        records = [r for r in (run.run, *run.events, run.summary) if r is not None]
        try:
            data = b"".join([orjson.dumps(r) + b"\n" for r in records])
        except (TypeError, orjson.JSONEncodeError):
            return run
        with self._lock:
            if self.closed:
                return run
            at = self._end
            try:
                _write_all(self.fd, data, at)
            except OSError as exc:
                raise OSError(self._failed(exc)) from None
            self._end += len(data)
        return at, len(data)

    def load(self, slot: Slot, name: str, first_line: int) -> RunData:
        """The run at ``slot``, as a new RunData named ``name`` (its records' ``run_id`` too)."""
        if isinstance(slot, RunData):
            return slot
        at, length = slot
        with self._lock:
            if self.closed:
                raise ValueError("the runs read from this OTLP file were closed")
            data = os.pread(self.fd, length, at)
        run = RunData(name, first_line=first_line)
        for line in data.splitlines():
            record: dict[str, Any] = orjson.loads(line)
            record["run_id"] = name
            run.add(record)
        return run

    def _failed(self, exc: OSError) -> str:
        """Why a run could not be written, in words that say where and what to do (a full disk, mostly)."""
        if exc.errno in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG):
            return (f"the temporary file of the runs read, in {self.where}, is full ({exc.strerror}): the runs "
                    f"listed so far can be shown; set TMPDIR to a directory with more room for the rest")
        return f"writing the temporary file of the runs read, in {self.where}, failed: {exc.strerror or exc}"

    @property
    def size(self) -> int:
        """Bytes written so far."""
        return self._end

    def close(self) -> None:
        with self._lock:
            if not self.closed:
                self.closed = True
                self._file.close()


def _write_all(fd: int, data: bytes, at: int) -> None:
    view = memoryview(data)
    while view:
        n = os.pwrite(fd, view, at)
        view, at = view[n:], at + n
