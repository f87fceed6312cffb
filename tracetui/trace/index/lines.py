"""One trace file as the index reads it: a descriptor read with ``pread``, and its line table.

The line table is kept per run as *segments*: byte ranges of consecutive lines that
belong to one run, chained from a run's first segment to its last. A run written
in one go is one segment however many lines it has; two writers appending to one
file make a segment per line where their runs interleave. Loading a run reads its
segments back and splits them into lines, numbered from each segment's first line.

Nothing is read through a memory map: a file cut short while it is read makes a
read come back short (:class:`~tracetui.trace.index.changes.TraceChanged`), never
a SIGBUS that would kill the process and leave the terminal raw.
"""
from __future__ import annotations

import os
from array import array
from typing import Any, Callable, Iterator

from tracetui.trace.index.changes import REWRITTEN, TRUNCATED, Change, Snapshot, TraceChanged
from tracetui.trace.reader import TraceReadError, open_trace

#: the most of one run read back in one ``pread`` (a run's lines are split at line ends between reads)
LOAD_BLOCK = 8 * 1024 * 1024


class FileLines:
    """A file's descriptor, how far it is indexed, and its runs' segments.

    ``fd`` may be given (standard input spooled to an unnamed file): then the file has
    no name to watch, and ``growing`` tells whether more is still being written to it.
    """

    def __init__(self, source: int, path: str, size: int, fd: int | None = None,
                 growing: Callable[[], bool] | None = None,
                 long_lines: dict[int, int] | None = None, by_name: bool | None = None,
                 copy_error: Callable[[], str | None] | None = None):
        self.source = source
        self.path = path
        self.size = size  # bytes the scan will read (grows when following)
        self.fd = fd
        self.by_name = fd is None if by_name is None else by_name  # a named file: watched by its name too
        self.growing = growing
        self.long_lines = long_lines  # line start -> true length, for lines a spool cut short
        self.copy_error = copy_error  # why the spool's copy stopped before its input ended, once it has
        self.pos = 0  # scan position: every whole line before it is indexed
        self.lineno = 0  # lines fully scanned (line numbers are 1-based)
        self.done = False  # scanned to its end for good (not following)
        self.snapshot: Snapshot | None = None
        # segments: bytes [start, end) holding consecutive lines of one run, from line number ``line``
        self.seg_start = array("q")
        self.seg_end = array("q")
        self.seg_line = array("q")
        self.seg_next = array("q")

    def copy_failure(self) -> str | None:
        """Why the copy this reads stopped short of its input (a full disk, a failed read), once it has stopped
        growing; None while it grows or when it holds all of it. A copy cut short ends in part of a line: its
        whole lines are read, the rest is the failure's, not a malformed line of the input."""
        if self.copy_error is None or (self.growing is not None and self.growing()):
            return None
        return self.copy_error() or None

    # -- the descriptor -------------------------------------------------------------------------
    def open(self) -> None:
        if self.fd is None:
            self.fd = open_trace(self.path)
            self.by_name = True

    def current_size(self) -> int:
        self.open()
        return os.fstat(self.fd).st_size

    def read(self, start: int, length: int) -> bytes:
        """Exactly ``length`` bytes from ``start``; a shorter file raises TraceChanged (truncated)."""
        if self.fd is None:
            raise ValueError(f"{self.path}: the source is closed")
        data = os.pread(self.fd, length, start)
        while len(data) < length:
            more = os.pread(self.fd, length - len(data), start + len(data))
            if not more:
                raise TraceChanged(Change(self.path, TRUNCATED))
            data += more
        return data

    def true_length(self, start: int, length: int) -> int:
        """The length of the line at ``start`` as it was written (a spool keeps only the start of an
        over-long line)."""
        return self.long_lines.get(start, length) if self.long_lines else length

    def remember(self) -> None:
        """Note what has been indexed, to tell later whether the file still holds it. A file already
        changed otherwise than by lines added keeps the note that shows it (a newer one would hide a
        rewrite made while it was being read)."""
        if self.fd is None:
            return
        if self.snapshot is not None:
            change = self.change()
            if change is not None and not change.appended_only and (change.kind != REWRITTEN
                                                                    or self.snapshot.edges_moved(self.fd)):
                return  # (a same-size write that left both edges alone may be a touch: not kept)
        self.snapshot = Snapshot.take(self.fd, self.pos, self.size)

    def change(self) -> Change | None:
        """How the file differs from what was indexed, or None."""
        if self.snapshot is None or self.fd is None:
            return None
        try:
            return self.snapshot.compare(self.path, self.fd, self.by_name)
        except OSError:
            return Change(self.path, TRUNCATED)

    def close(self) -> None:
        if self.fd is not None:
            try:
                os.close(self.fd)
            finally:
                self.fd = None

    def __del__(self) -> None:
        try:
            self.close()
        except OSError:
            pass

    # -- the line table -------------------------------------------------------------------------
    def link(self, tail: int, start: int, end: int, line: int) -> int:
        """Add lines [start, end) (from line number ``line``) after segment ``tail`` (-1: a run's
        first); returns the run's new last segment, which is ``tail`` grown when they touch."""
        if tail >= 0 and self.seg_end[tail] == start:
            self.seg_end[tail] = end
            return tail
        k = len(self.seg_start)
        self.seg_start.append(start)
        self.seg_end.append(end)
        self.seg_line.append(line)
        self.seg_next.append(-1)
        if tail >= 0:
            self.seg_next[tail] = k
        return k

    def add_segments(self, runs: Any, starts: Any, ends: Any, numbers: Any, table: Any) -> None:
        """Segments [starts[j], ends[j]) from line ``numbers[j]``, each chained after the last one of run
        ``runs[j]`` (in order: a run's segments in a chunk follow one another), for every j; the
        runs' first and last segments (``table.head``, ``table.tail``) are updated."""
        import numpy as np

        k0, m = len(self.seg_start), len(runs)
        self.seg_start.frombytes(starts.astype(np.int64).tobytes())
        self.seg_end.frombytes(ends.astype(np.int64).tobytes())
        self.seg_line.frombytes(numbers.astype(np.int64).tobytes())
        self.seg_next.frombytes(np.full(m, -1, np.int64).tobytes())
        by_run = np.argsort(runs, kind="stable")
        ordered_runs = runs[by_run]
        segments = by_run + k0
        first = np.ones(m, bool)
        first[1:] = ordered_runs[1:] != ordered_runs[:-1]
        last = np.ones(m, bool)
        last[:-1] = first[1:]
        seg_next = np.frombuffer(self.seg_next, np.int64)
        seg_next[segments[:-1][~first[1:]]] = segments[1:][~first[1:]]  # within a run: the next one
        head, tail = np.frombuffer(table.head, np.int64), np.frombuffer(table.tail, np.int64)
        opening = ordered_runs[first]
        before = tail[opening]
        continued = before >= 0
        seg_next[before[continued]] = segments[first][continued]
        head[opening[~continued]] = segments[first][~continued]
        tail[ordered_runs[last]] = segments[last]
        del seg_next, head, tail

    def lines(self, head: int) -> Iterator[tuple[int, bytes]]:
        """(line number, line without its line end) for every line of the segments from ``head``."""
        k = head
        while k >= 0:
            yield from self._segment_lines(self.seg_start[k], self.seg_end[k], self.seg_line[k])
            k = self.seg_next[k]

    def _segment_lines(self, start: int, end: int, number: int) -> Iterator[tuple[int, bytes]]:
        while start < end:
            data = self.read(start, min(end - start, LOAD_BLOCK))
            cut = len(data) if start + len(data) == end else data.rfind(b"\n") + 1
            if cut == 0:  # one line longer than a block: read it whole
                cut = self._line_end(start, end) - start
                data = self.read(start, cut)
            pieces = data[:cut].split(b"\n")
            if pieces[-1] == b"":
                pieces.pop()
            for piece in pieces:
                yield number, piece.rstrip(b"\r")
                number += 1
            start += cut

    def _line_end(self, start: int, end: int) -> int:
        pos = start + LOAD_BLOCK
        while pos < end:
            data = self.read(pos, min(LOAD_BLOCK, end - pos))
            nl = data.find(b"\n")
            if nl >= 0:
                return pos + nl + 1
            pos += len(data)
        return end

    def last_line(self, tail: int) -> bytes:
        """The last line of segment ``tail`` (a run's summary, when it has one)."""
        start, end = self.seg_start[tail], self.seg_end[tail]
        want = 4096
        while True:
            begin = max(start, end - want)
            data = self.read(begin, end - begin)
            body = data[:-1] if data.endswith(b"\n") else data
            nl = body.rfind(b"\n")
            if nl >= 0 or begin == start:
                return body[nl + 1:].rstrip(b"\r")
            want *= 4


class CopyStoppedShort(TraceReadError):
    """Standard input's copy stopped before the input ended: what was read of it is reported, then this."""
