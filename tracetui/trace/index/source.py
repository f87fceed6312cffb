"""The explorer's source of runs: files indexed in the background, published as RunEntry rows.

:class:`IndexedSource` never holds parsed records for the whole file. Its scan
(:mod:`.scanner`) links each line to its run and parses only summary lines; a run is
published as a :class:`~tracetui.trace.source.RunEntry` when its summary is read,
mirroring :func:`~tracetui.trace.source.entry_from_run` (the tests hold the two
equal) without building a RunData per run. Runs whose summary is missing, or needs
their events (no metrics, no status, a malformed first failure), get their verdict
from their parsed lines at the end of each file, through the shared rule.

Following (``tracetui open --follow``, standard input): once the scan has caught up
with a file it waits for more; a half-written last line is waited for, never
reported. Runs still being written are listed as they are (incomplete) and their
rows are replaced as their lines arrive.
"""
from __future__ import annotations

import gc
import os
import threading
import time
from dataclasses import dataclass
from typing import Any, Iterator, Sequence

from tracetui.trace import limits
from tracetui.trace.index.changes import Change, TraceChanged
from tracetui.trace.index.entries import RowMaker
from tracetui.trace.index.files import FileIndex, Input
from tracetui.trace.index.memo import forget as forget_lines_read
from tracetui.trace.index.lines import FileLines
from tracetui.trace.index.runs import RunTable
from tracetui.trace.index.publishing import Publishing
from tracetui.trace.index.scanner import Scanner
from tracetui.trace.reader import Problem, RunData, TraceReadError, open_trace
from tracetui.trace.source import RunEntry, entry_from_run

#: Chunk size of one scan step: small enough for a smooth progress bar and an early
#: first partial run list, large enough that the per-step overhead is nil.
DEFAULT_CHUNK_BYTES = 4 * 1024 * 1024
#: How often a followed file is looked at for more lines, in seconds.
POLL_SECONDS = 0.25


@dataclass(frozen=True, slots=True)
class ScanProgress:
    """One scan step: how far the scan is, over all files, and how many runs it has published."""

    bytes_done: int
    bytes_total: int
    runs: int
    problems: int
    source: int  # the file being scanned (index into ``paths``)
    done: bool = False
    caught_up: bool = False  # following: everything written so far is indexed; waiting for more

    @property
    def fraction(self) -> float:
        return 1.0 if self.done or self.caught_up or not self.bytes_total else self.bytes_done / self.bytes_total


class IndexedSource(Publishing):
    """A :class:`~tracetui.trace.source.TraceSource` over JSONL files, indexed in the background.

    Constructing it only checks the inputs (missing file, directory, not a regular
    file, unreadable, every file empty: :class:`TraceReadError`). Then either iterate
    :meth:`scan` (the UI does, in a thread worker, showing :attr:`ScanProgress.fraction`)
    or call :meth:`scan_all`. A scan that finds no run in any file raises
    TraceReadError at its end; with several files, a file without runs is a
    :class:`Problem` (line 0) and the others still open. A scan that finds a file cut
    short or rewritten raises :class:`~tracetui.trace.index.changes.TraceChanged`.

    Memory: the objects made while scanning (rows, the line table) live as long as the source, so
    after each step they are moved out of the cyclic collector's way (``gc.freeze``) until the scan
    is done or caught up; a collection would otherwise look at all of them again and again.

    Threads: one thread scans (a second concurrent :meth:`scan` raises
    RuntimeError); any thread may call :meth:`runs`, :meth:`problems`, :meth:`load`
    and :meth:`changes` at any time, typically the UI thread after a progress message.
    :meth:`runs` returns the live entry list, without copying: while the scan goes on
    it only grows by appending, so ``entries[n:]`` are the new runs. When an already
    published entry must change (:meth:`load` found a bad event line or a repeated
    ``seq``; a followed run got more lines), the source swaps in a *new* list object
    with the corrected entries, so ``runs() is not previous`` tells a consumer to
    recount. Treat entries and their first failures as read-only.

    Order of runs: a run ends with its summary line (a later line with its id starts
    the next run of that id, ``id#2``…) and is published then, so complete runs come
    in the order they finished; runs without a summary, or whose summary needs their
    events, follow at the end of each file, in order of their first line.
    """

    def __init__(self, inputs: Sequence[str | os.PathLike[str] | Input], label: str | None = None,
                 follow: bool = False):
        if not inputs:
            raise TraceReadError("no trace file given")
        self.inputs = list(inputs)
        self.paths = [item.label if isinstance(item, Input) else str(item) for item in self.inputs]
        self.label = label or (self.paths[0] if len(self.paths) == 1 else f"{len(self.paths)} files")
        self.following = follow
        files = []
        for n, item in enumerate(self.inputs):
            if isinstance(item, Input):
                lines = FileLines(n, item.label, os.fstat(item.fd).st_size, fd=os.dup(item.fd),
                                  growing=item.growing, long_lines=item.long_lines,
                                  copy_error=lambda item=item: item.error)
            else:
                fd = open_trace(item)
                lines = FileLines(n, str(item), os.fstat(fd).st_size, fd=fd, by_name=True)
            files.append(FileIndex(lines, RunTable()))
        if not follow and all(f.lines.size == 0 and not self._may_grow(f) for f in files):
            for f in files:
                f.close()
            raise TraceReadError(f"{self.paths[0]}: no runs found (it is empty)" if len(files) == 1
                                 else "no runs found (every file is empty)")
        self._files = files
        for f in files:
            f.scanner = Scanner(f.lines, f.runs, self)
        self._entries: list[RunEntry] = []
        self._unlisted: list[RunEntry] = []  # published during the current scan step, listed at its end
        self._scanner_thread: int | None = None
        self._problems: list[Problem] = []
        self._lazy: dict[tuple[int, int], Problem] = {}  # found by load(): (file, line) -> problem
        self._validated: set[tuple[int, int]] = set()  # (file, run) fully parsed once the file was done
        self._order = {path: n for n, path in enumerate(self.paths)}
        self._row_maker = RowMaker()
        self._scan_lock = threading.Lock()
        self._lock = threading.Lock()  # guards swapping the entry list and the load-time problems
        self.bytes_total = sum(f.lines.size for f in files)
        self.bytes_done = 0
        for f in files:
            if f.lines.size == 0 and not (follow or self._may_grow(f)):
                self._file_problem(f, "no runs found (it is empty)")

    def follow(self, on: bool = True) -> None:
        """Follow the files as they grow (or stop): a scan that is done resumes where it stopped."""
        self.following = on
        if on:
            for f in self._files:
                f.lines.done = False

    def reopened(self) -> "IndexedSource":
        """A fresh source over the same inputs (``r``: reload after the files changed)."""
        return IndexedSource(self.inputs, self.label, follow=self.following)

    # -- the TraceSource protocol -----------------------------------------------------------
    def runs(self) -> Sequence[RunEntry]:
        """The runs indexed so far (the live list: see the class docstring)."""
        return self._entries

    def problems(self) -> Sequence[Problem]:
        """Lines that are not trace records, by file and line (a new list each call)."""
        with self._lock:
            found = self._problems + list(self._lazy.values())
        found.sort(key=lambda p: (self._order.get(p.path, -1), p.line))
        return found

    def load(self, entry: RunEntry) -> RunData:
        """One run's records, parsed now from its lines only, events sorted by ``seq``.

        Raises :class:`~tracetui.trace.index.changes.TraceChanged` when the file no
        longer holds what was indexed (truncated or rewritten).
        """
        f = self._files[entry.source]
        change = f.lines.change()
        if change is not None and change.kind in ("truncated", "rewritten"):
            raise TraceChanged(change)
        r = f.run_number(entry.run_id)
        data = self._load_run(f, r)
        if f.done and (f.source, r) not in self._validated:
            self._validated.add((f.source, r))
            k = f.runs.pub[r]
            if k >= 0 and data.first_line and entry_from_run(data, f.source) != self._entries[k]:
                self._replace({k: entry_from_run(data, f.source)})
        data.events.sort(key=_seq)
        return data

    def indexed_files(self) -> Sequence[FileIndex]:
        """Each file's lines and runs as indexed so far, for a search of their raw lines
        (:mod:`tracetui.triage.event_search`); read-only."""
        return self._files

    # -- watching the files ---------------------------------------------------------------------
    def changes(self) -> list[Change]:
        """How each file differs from what was indexed (nothing for a file that has not changed)."""
        found = []
        for f in self._files:
            change = f.lines.change()
            if change is not None and not (change.appended_only and (self.following or self._may_grow(f))):
                found.append(change)
        return found

    # -- scanning ---------------------------------------------------------------------------
    @property
    def done(self) -> bool:
        return all(f.done for f in self._files)

    @property
    def problem_count(self) -> int:
        """All problems, including those beyond the per-file cap."""
        return sum(f.problem_count for f in self._files) + len(self._lazy)

    def scan(self, chunk_bytes: int = DEFAULT_CHUNK_BYTES, poll: float = POLL_SECONDS) -> Iterator[ScanProgress]:
        """Index the files, yielding after each chunk; resumable if the iteration stops early.

        While following (or reading standard input that is still arriving), the scan
        does not end: once caught up it yields a ``caught_up`` progress, then looks
        again every ``poll`` seconds. Set :attr:`following` to False to finish.
        """
        if not self._scan_lock.acquire(blocking=False):
            raise RuntimeError("this source is already being scanned")
        self._scanner_thread = threading.get_ident()
        try:
            step = min(max(1, chunk_bytes), limits.MAX_LINE_BYTES)
            while True:
                for f in self._files:
                    if f.done:
                        continue
                    yield from self._scan_file(f, step)
                if self.done:
                    break
                self._check_unchanged()
                gc.unfreeze()
                yield self._progress(caught_up=True)
                time.sleep(poll)
            if not self._entries:
                if len(self._files) == 1:
                    f = self._files[0]
                    detail = "it is empty" if f.lines.pos == 0 else "no line is a trace record"
                    raise TraceReadError(f"{f.path}: no runs found ({detail})")
                raise TraceReadError("no runs found in any file")
            gc.unfreeze()
            yield self._progress(done=True)
        finally:
            gc.unfreeze()
            forget_lines_read()
            self._scan_lock.release()

    def _scan_file(self, f: FileIndex, step: int) -> Iterator[ScanProgress]:
        lines = f.lines
        failed = lines.copy_failure()  # (its copy stopped short, even while following: it will not grow again)
        growing = (self.following or self._may_grow(f)) and not failed
        size = lines.current_size()
        if size < lines.pos:
            raise TraceChanged(Change(f.path, "truncated"))
        if growing or lines.growing is not None or lines.snapshot is None:  # a file that is not followed is
            # read as it was when first scanned; standard input to its end
            self.bytes_total += size - lines.size
            lines.size = size
        final = not growing and not failed
        for consumed in f.scanner.steps(step, final):  # type: ignore[union-attr]
            self.bytes_done += consumed
            lines.remember()
            self._list()
            gc.freeze()  # the rows and the line table made so far stay: no collection need look at them again
            yield self._progress(source=f.source)
        lines.remember()
        self._list()
        if failed:  # a problem of this file (the others are still read), its runs listed as at its end
            self._file_problem(f, f"{failed}; the runs listed are what arrived before")
        self._publish_pending(f, final or bool(failed))

    def _check_unchanged(self) -> None:
        for f in self._files:
            change = f.lines.change()
            if change is not None and not change.appended_only:
                raise TraceChanged(change)

    def _progress(self, source: int | None = None, done: bool = False, caught_up: bool = False) -> ScanProgress:
        total = max(self.bytes_total, self.bytes_done)
        return ScanProgress(total if done else self.bytes_done, total, len(self._entries),
                            len(self._problems) + len(self._lazy),
                            len(self._files) - 1 if source is None else source, done=done, caught_up=caught_up)

    def scan_all(self, chunk_bytes: int = 16 * 1024 * 1024) -> "IndexedSource":
        """Scan to the end (for the CLI and tests); returns self. Not while following."""
        following, self.following = self.following, False
        try:
            for _ in self.scan(chunk_bytes):
                pass
        finally:
            self.following = following
        return self

    def close(self) -> None:
        for f in self._files:
            f.close()

    def __enter__(self) -> "IndexedSource":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    @staticmethod
    def _may_grow(f: FileIndex) -> bool:
        return f.lines.growing is not None and f.lines.growing()


def _seq(event: dict[str, Any]) -> int:
    return event["seq"]

