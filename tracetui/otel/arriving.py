"""OTLP/JSON on standard input, read as it arrives: ``cat spans.jsonl | tracetui check -`` (and ``open -``).

Standard input is copied to an unnamed temporary file as it arrives (:class:`tracetui.trace.spool.Spool`);
:func:`tracetui.otel.stream.traces_of` reads that copy's lines through :class:`Arriving` as a named
file's, waiting for more where it has caught up with the pipe, so a trace is released as soon as the
input is past it and memory holds only the traces in flight, as for a file. The lines are numbered
exactly as a file's (the same line reader), so the runs, names, verdicts and problems are the file's.

Only a first line that is not a JSON document of its own (one pretty-printed ``{"resourceSpans": …}``)
makes it wait for the end of the input: that document is parsed whole, as a file holding it is.
"""
from __future__ import annotations

import os
import queue
import threading
from typing import Any, Callable, Iterable, Iterator

from tracetui.trace import limits
from tracetui.trace.reader import TraceReadError, _lines_of

#: how long a read that caught up with the pipe waits before it looks again (the spool says when it ends)
POLL_SECONDS = 0.02


class Arriving:
    """Standard input (a spool still being written) as :func:`tracetui.otel.stream.traces_of` reads it."""

    def __init__(self, spool: Any):
        self.spool = spool
        self.label = spool.label
        # its own descriptor of the copy: closing the spool (the explorer closing) never leaves a read of it
        # going on a descriptor number the process may have given to another file since
        self._copy = os.fdopen(os.dup(spool.fd), "rb", buffering=0)
        self.fd = self._copy.fileno()
        self.stopped = threading.Event()
        self.waiting = False  # a read has caught up with standard input and waits for more

    def __str__(self) -> str:  # (what problems and errors name: "-")
        return self.label

    def lines(self, seen: list[int] | None = None) -> Iterator[tuple[int, bytes]]:
        """Its numbered lines from the start, as :func:`tracetui.trace.reader.iter_lines` gives a file's,
        each once it has arrived whole; ``seen[0]``: the bytes read so far."""
        return _lines_of(_Reader(self, seen))

    def size(self) -> int:
        """Its size, for the choice between JSON lines and one document: once its first line has arrived,
        what has arrived when that line parses alone (JSON lines: the size plays no part), else its whole
        size, waiting for the end of it (a document is parsed whole)."""
        from tracetui.otel import salvage

        first = next(iter(self.lines()), None)
        if first is not None and len(first[1]) <= limits.MAX_LINE_BYTES and salvage.loads(first[1])[2] is None:
            return os.fstat(self.fd).st_size
        self.spool.wait()
        self._check_read()
        if self.spool.long_lines:  # kept cut short, as a trace's lines are: a document needs every byte
            raise TraceReadError(f"{self.label}: OTLP/JSON read as one document with a line over "
                                 f"{limits.MAX_LINE_BYTES:,} bytes cannot be read from standard input; "
                                 f"give the file's name")
        return os.fstat(self.fd).st_size

    def whole(self) -> bytes:
        """Everything it holds, once it has ended (a single document: parsed whole)."""
        self.spool.wait()
        self._check_read()
        return os.pread(self.fd, os.fstat(self.fd).st_size, 0)

    def close(self) -> None:
        """Stop reading (a read waiting for more ends as the input would), stop copying standard input."""
        self.stopped.set()
        self.spool.close()

    def arrived(self) -> int:
        """Bytes arrived so far."""
        return os.fstat(self.fd).st_size

    def _check_read(self) -> None:
        if self.spool.error:
            raise TraceReadError(f"{self.label}: {self.spool.error}")


class _Reader:
    """A file object over the copy that, at its end, waits for more until standard input ends (or the
    reading is stopped)."""

    def __init__(self, arriving: Arriving, seen: list[int] | None):
        self.arriving, self.spool, self.seen, self.at = arriving, arriving.spool, seen, 0

    def read(self, n: int) -> bytes:
        while not self.arriving.stopped.is_set():
            ended = not self.spool.growing()  # (asked first: what was written before it ended is read below)
            block = os.pread(self.arriving.fd, n, self.at)
            if block or ended:
                self.at += len(block)
                if self.seen is not None:
                    self.seen[0] += len(block)
                if not block and self.spool.error:
                    raise TraceReadError(f"{self.spool.label}: {self.spool.error}")
                return block
            self.arriving.waiting = True
            self.spool.wait(POLL_SECONDS)
            self.arriving.waiting = False
        return b""


def pulled(make: Callable[[], Iterable[Any]], arriving: Arriving, wait: float = 0.25) -> Iterator[Any]:
    """The items of ``make()``, made on a thread of their own, with :data:`WAITING` between them whenever
    ``wait`` seconds pass without one: a scan of standard input still yields while the writer is quiet (or a
    big trace is being read), so the explorer's worker can end (the explorer quits; its executor would wait
    for a read blocked forever).
    Closing the iterator stops the reading. Errors are raised here."""
    items: queue.Queue = queue.Queue(maxsize=4)  # (runs made ahead of the scan: a few at the most)
    end = object()

    def put(item: Any) -> bool:
        while not arriving.stopped.is_set():
            try:
                items.put(item, timeout=wait)
                return True
            except queue.Full:
                continue
        return False

    def pull() -> None:
        try:
            for item in make():
                if not put(item):
                    return
            put((end, None))
        except BaseException as exc:  # noqa: BLE001 - raised in the scan, on the explorer's worker
            put((end, exc))

    threading.Thread(target=pull, name="tracetui-otlp-stdin", daemon=True).start()
    try:
        while True:
            try:
                item = items.get(timeout=wait)
            except queue.Empty:
                yield WAITING
                continue
            if type(item) is tuple and item and item[0] is end:
                if item[1] is not None:
                    raise item[1]
                return
            yield item
    finally:
        arriving.stopped.set()


#: what :func:`pulled` yields while nothing arrives
WAITING = object()
