"""Publishing an indexed file's runs as run-list rows: the scanner's sink, for :class:`.source.IndexedSource`.

A run is listed when its summary line is read (its row made from the summary alone,
:mod:`.entries`), or, when it has no summary or its summary needs its events, at the
end of its file from its parsed lines. Rows listed during a scan step join the live
list at the step's end; a row that must change (a bad event line found by loading the
run, a followed run that got more lines) is changed on a new list object, so the UI
can tell.
"""
from __future__ import annotations

import threading
from itertools import compress, repeat
from operator import is_not
from typing import Any

from tracetui.trace.index.changes import REWRITTEN, Change, TraceChanged
from tracetui.trace.index.entries import ChunkRows, RowMaker
from tracetui.trace.index.files import FileIndex
from tracetui.trace.index.scanner import Scanner
from tracetui.trace.reader import Problem, RunData, parse_line
from tracetui.trace.source import RunEntry, entry_from_run

#: Problems kept per file; a file that is not a trace at all would otherwise cost a
#: Problem per line. The rest are counted in :attr:`IndexedSource.problem_count`.
MAX_PROBLEMS_PER_FILE = 10_000
_UNMADE = object()


class Publishing:
    """The sink half of :class:`.source.IndexedSource` (which sets the attributes below)."""

    _files: list[FileIndex]
    _row_maker: RowMaker
    _entries: list[RunEntry]
    _unlisted: list[RunEntry]
    _problems: list[Problem]
    _lazy: dict[tuple[int, int], Problem]
    _validated: set[tuple[int, int]]
    _lock: threading.Lock
    _scanner_thread: int | None

    # -- the scanner's sink -----------------------------------------------------------------
    def run_ended(self, scan: Scanner, r: int, summary: Any, entry: Any = _UNMADE) -> None:
        """A run's summary line, its last: publish the run (at the file's end when it needs its events).
        ``entry``: its row, when already made from the summary (None: it needs its events)."""
        f = self._files[scan.lines.source]
        runs = f.runs
        if entry is _UNMADE:
            entry = self._row_maker.from_summary(f, r, runs.names[r], summary)
        if runs.pub[r] >= 0:  # listed while it was being written: now it is complete
            f.grown.add(r)
            if entry is not None:
                f.grown.discard(r)
                self._replace({runs.pub[r]: entry})
        elif entry is not None:
            runs.pub[r] = len(self._entries) + len(self._unlisted)
            self._unlisted.append(entry)
            f.runs_found += 1

    def rows_ended(self, scan: Scanner, rs: list[int], rows: ChunkRows) -> None:
        """:meth:`run_ended` for the runs of a chunk linked in bulk, in order, from their summaries' fields."""
        import numpy as np

        f = self._files[scan.lines.source]
        pub = f.runs.pub
        entries = self._row_maker.entries(f, rs, rows)
        unlisted = self._unlisted
        listed = np.frombuffer(pub, np.int64)
        if not (listed[rs] >= 0).any() and all(map(is_not, entries, repeat(None))):  # all new rows: listed at once
            first = len(self._entries) + len(unlisted)
            listed[rs] = np.arange(first, first + len(rs))
            del listed
            unlisted += entries
            f.runs_found += len(entries)
            return
        del listed
        for r, entry in zip(rs, entries):
            if entry is None or pub[r] >= 0:
                self.run_ended(scan, r, None, entry)
            else:
                pub[r] = len(self._entries) + len(unlisted)
                unlisted.append(entry)
                f.runs_found += 1

    def run_grew(self, scan: Scanner, r: int) -> None:
        self._files[scan.lines.source].grown.add(r)

    def problem(self, scan: Scanner, line: int, message: str) -> None:
        self._problem(self._files[scan.lines.source], line, message)

    # -- publishing -------------------------------------------------------------------------
    def _publish(self, f: FileIndex, r: int, entry: RunEntry) -> None:
        self._list()
        with self._lock:
            f.runs.pub[r] = len(self._entries)
            self._entries.append(entry)
            f.runs_found += 1

    def _list(self) -> None:
        """Add the runs published during a scan step to the live list, at once (see run_ended)."""
        if self._unlisted:
            with self._lock:
                self._entries.extend(self._unlisted)
            self._unlisted.clear()

    def _replace(self, changes: dict[int, RunEntry]) -> None:
        """Change published entries: on a new list object, so consumers see that rows changed."""
        if threading.get_ident() == self._scanner_thread:
            self._list()
        with self._lock:
            entries = list(self._entries)
            for k, entry in changes.items():
                entries[k] = entry
            self._entries = entries

    def _publish_pending(self, f: FileIndex, final: bool) -> None:
        """Runs without a summary, or whose summary needs their events, get their verdict from their
        lines: at the end of a file, or each time a followed file is caught up with."""
        runs = f.runs
        head = runs.head
        unpublished = compress(range(len(runs.pub)), map((-1).__eq__, runs.pub))  # without a loop in Python
        pending = sorted((r for r in unpublished if head[r] >= 0), key=head.__getitem__)
        for r in pending:
            data = self._load_run(f, r)
            if final:
                self._validated.add((f.source, r))
            if data.first_line:  # at least one good line
                self._publish(f, r, entry_from_run(data, f.source))
        if f.grown:
            changed = {}
            for r in sorted(f.grown):
                if runs.pub[r] >= 0:
                    data = self._load_run(f, r)
                    if data.first_line:
                        changed[runs.pub[r]] = entry_from_run(data, f.source)
            f.grown.clear()
            if changed:
                self._replace(changed)
        if final:
            f.lines.done = True
            if f.runs_found == 0 and len(self._files) > 1 and f.lines.size:
                self._file_problem(f, "no runs found (no line is a trace record)")

    def _load_run(self, f: FileIndex, r: int) -> RunData:
        """Parse one run's lines, in file order; bad lines become problems (found at load time)."""
        name = f.runs.names[r]
        data = RunData(name)
        first_id: Any = None
        for number, raw in f.lines.lines(f.runs.head[r]):
            obj, problem = parse_line(raw)
            if not problem:
                run_id = obj["run_id"]
                if first_id is None:
                    first_id = run_id
                    if not (name == run_id or name.startswith(f"{run_id}#")) and name.split("#")[0].encode() not in raw:
                        raise TraceChanged(Change(f.path, REWRITTEN))  # another run's line where this one was
                if not data.first_line:
                    data.first_line = number
                problem = data.add(obj)
            if problem:
                with self._lock:
                    self._lazy.setdefault((f.source, number), Problem(number, problem, f.path))
        return data

    def _problem(self, f: FileIndex, line: int, message: str) -> None:
        f.problem_count += 1
        if len(f.problems) < MAX_PROBLEMS_PER_FILE:
            p = Problem(line, message, f.path)
            f.problems.append(p)
            with self._lock:
                self._problems.append(p)

    def _file_problem(self, f: FileIndex, message: str) -> None:
        self._problem(f, 0, message)
