"""``check`` and ``replay`` without holding the trace: a strict scan through the index.

Reading a 1.6 GB trace whole held every parsed record (and Python's cyclic GC
re-scanned them all, again and again). Here a strict scan (:mod:`.index.scanner`,
every line validated as the reader would) links each line to its run and keeps
per run only a few numbers; a run's verdict is decided as soon as its summary is
read (:func:`~tracetui.trace.verdict.decide`; its events are read back only when
the summary alone cannot give it) and handed on in the order runs first appear,
which is the order :func:`~tracetui.trace.reader.read_trace` lists them. So the
verdicts, problems and counts are exactly the whole-file reader's, in memory that
grows only by a few hundred bytes per run (the run ids the reader's naming of repeated ids must
remember, each run's line segments and counts; ~70 KiB per MiB of a realistic trace, with the verdicts
waiting: benchmarks/bench_open.py), beside a bounded part: the chunk being read, verdicts waiting
behind an undecided run (at most :attr:`.in_order.InOrder.MAX_WAITING`, then spilled to a file) and
the memos of verdicts and verdict lines (:data:`_KNOWN_VERDICTS`, 1,024 entries each).

:func:`find_run` stops as soon as the run asked for has ended, so ``replay`` of a run
near the start of a huge file reads only that far; a small file is read whole by the
reader instead, which costs less than importing the scanner (numpy, the index's
machinery): the scanner is imported only when a scan starts.
"""
from __future__ import annotations

import gc
import os
from typing import TYPE_CHECKING, Any, Callable, Iterator, Sequence

from tracetui.trace.in_order import InOrder
from tracetui.trace.index.changes import TraceChanged
from tracetui.trace.index.memo import forget as forget_lines_read
from tracetui.trace.index.lines import CopyStoppedShort, FileLines
from tracetui.trace.index.runs import RunTable
from tracetui.trace.reader import Problem, RunData, TraceReadError, open_trace, parse_line, read_trace
from tracetui.trace.format import ANSWER_READY
from tracetui.trace.verdict import READY, checked_failure, decide

if TYPE_CHECKING:
    from tracetui.trace.index.scanner import Scanner
    from tracetui.trace.index.source import Input

#: a file this small is read whole by :func:`find_run`: the reader does it in less time than the scanner's
#: imports take (numpy alone: ~0.1 s), so a replay of a small trace costs what its run costs
SMALL_FILE_BYTES = 4 * 1024 * 1024
#: chunk size of a headless scan (its working memory is a few times this)
CHUNK_BYTES = 4 * 1024 * 1024
#: verdicts remembered by the summary's status and first failure (runs mostly fail in a few hundred ways;
#: on real traces most failures are each their own, so this is also what they cost while they never repeat)
_KNOWN_VERDICTS = 1024
#: how often a growing input (standard input still arriving) is looked at again, in seconds
POLL_SECONDS = 0.05


class StrictScan:
    """One file scanned strictly, as the sink of its :class:`~.index.scanner.Scanner`."""

    def __init__(self, item: str | os.PathLike[str] | Input):
        if not isinstance(item, (str, os.PathLike)):  # an Input: standard input, or a file already open
            self.label = item.label
            self.lines = FileLines(0, item.label, 0, fd=os.dup(item.fd), growing=item.growing,
                                   long_lines=item.long_lines, copy_error=lambda: item.error)
        else:
            self.label = str(item)
            fd = open_trace(item)
            self.lines = FileLines(0, self.label, os.fstat(fd).st_size, fd=fd, by_name=True)
        self.runs = RunTable()
        from tracetui.trace.index.scanner import Scanner  # (numpy and the index: only once a scan is made)

        self.scanner = Scanner(self.lines, self.runs, self, strict=True)

    def scan(self, chunk_bytes: int | None = None) -> Iterator[None]:
        """Scan to the end, yielding after each chunk. Raises TraceChanged when the file is cut
        short or rewritten meanwhile."""
        import time

        chunk_bytes = chunk_bytes or CHUNK_BYTES
        lines = self.lines
        try:
            while True:
                growing = lines.growing is not None and lines.growing()
                failed = None if growing else lines.copy_failure()
                size = lines.current_size()
                if size < lines.pos:
                    raise TraceChanged(self._change("truncated"))
                if lines.growing is not None or lines.snapshot is None:  # read as it was when first scanned
                    lines.size = size
                for _ in self.scanner.steps(chunk_bytes, final=not growing and not failed):
                    lines.remember()
                    gc.freeze()  # what waits to be printed stays: no collection need look at it again
                    yield
                if failed:  # its whole lines were read: the runs decided so far stand, the rest is unknown
                    raise CopyStoppedShort(f"{self.label}: {failed}")
                if not growing:
                    break
                time.sleep(POLL_SECONDS)
        finally:
            gc.unfreeze()
            forget_lines_read()
        lines.remember()
        lines.done = True
        change = lines.change()
        if change is not None and not change.appended_only:
            raise TraceChanged(change)

    def load(self, r: int) -> RunData:
        """Run ``r``'s records (its problems were reported by the scan)."""
        data = RunData(self.runs.names[r])
        for number, raw in self.lines.lines(self.runs.head[r]):
            obj, problem = parse_line(raw)
            if not problem:
                if not data.first_line:
                    data.first_line = number
                data.add(obj)
        return data

    def close(self) -> None:
        self.lines.close()

    def _change(self, kind: str) -> Any:
        from tracetui.trace.index.changes import Change

        return Change(self.label, kind)

    # -- the scanner's sink (overridden) --------------------------------------------------------
    def run_ended(self, scan: Scanner, r: int, summary: dict[str, Any]) -> None:
        pass

    def run_grew(self, scan: Scanner, r: int) -> None:
        pass

    def problem(self, scan: Scanner, line: int, message: str) -> None:
        pass


class Checker(StrictScan):
    """Verdicts in the order runs first appear, and problems in line order, as they are found.

    ``on_verdict(verdict_dict, recovered)`` gets each run's ``check --json`` verdict;
    ``on_problem(problem)`` each problem line; ``vouch(run_ids)``, when given, the ids of the runs of a
    chunk whose verdicts ``keep`` is about to be given (:meth:`.verdict_lines.PrintableVerdicts.vouch`).
    """

    def __init__(self, item: str | os.PathLike[str] | Input, on_verdict: Callable[[Any], None],
                 on_problem: Callable[[Problem], None], keep: Callable[[dict[str, Any]], Any] | None = None,
                 vouch: Callable[[list[str]], None] | None = None,
                 keep_ready: Callable[[list[str]], list[Any]] | None = None):
        super().__init__(item)
        self.on_verdict = on_verdict
        self.on_problem = on_problem
        # what is held of a verdict that waits for an earlier run (a run without a summary decides only
        # at the end of the file): its printed form is far smaller than the dict
        self.keep = keep or (lambda verdict: verdict)
        # the same for the runs of a chunk whose summaries say they are ready, given their ids: most runs are, and
        # their verdicts are the same dict but for the id (default: keep of each dict)
        self.keep_ready = keep_ready or (lambda run_ids: [self.keep(ready_verdict(run_id)) for run_id in run_ids])
        self._order = InOrder(self.on_verdict)
        self.vouch = vouch
        self._verdicts: dict[tuple, Any] = {}  # (status, first failure's items) -> the verdict they give
        self.problem_count = 0

    def run(self, chunk_bytes: int | None = None) -> None:
        """Scan to the end and hand on every verdict; TraceReadError when the file holds no run.

        The file and the verdicts spilled to a temporary file are closed when it ends, however it ends
        (a Ctrl-C, an error handing a verdict on): a scan is a reference cycle, so they would otherwise
        stay open until a full collection, whether or not the caller closes the checker."""
        stopped_short = None
        try:
            try:
                for _ in self.scan(chunk_bytes):
                    pass
            except CopyStoppedShort as exc:  # the runs read so far are still handed on, then the error
                stopped_short = exc
            self._order.finish(len(self.runs), lambda r: self.keep(self.load(r).verdict()))
        finally:
            self._order.close()
            self.close()
        if stopped_short is not None:
            raise stopped_short
        if not len(self.runs):
            detail = "it is empty" if self.lines.size == 0 else "no line is a trace record"
            raise TraceReadError(f"{self.label}: no runs found ({detail})")

    def run_ended(self, scan: Scanner, r: int, summary: dict[str, Any]) -> None:
        self._order.decided(r, self.keep(decide(summary, _Events(self, r)).as_dict(self.runs.names[r])))

    def runs_ended(self, scan: Scanner, rs: list[int], summaries: list[Any]) -> None:
        """:meth:`run_ended` for the runs of a chunk linked in bulk: a summary that says its run is
        ready is taken at its word without the verdict rule's round trip (:func:`decide` would
        give the same verdict), and those runs are kept together (:attr:`keep_ready`)."""
        names, keep, known = self.runs.names, self.keep, self._verdicts
        ids = [names[r] for r in rs]
        if self.vouch is not None:
            self.vouch(ids)
        kept: list[Any] = [None] * len(rs)
        ready_at = []
        for j, summary in enumerate(summaries):
            status, failure = summary.get("status"), summary.get("first_failure")
            if failure is None and status == ANSWER_READY:
                ready_at.append(j)
                continue
            try:
                key = (status, tuple(failure.items())) if type(failure) is dict else None
                verdict = known.get(key) if key is not None else None
            except TypeError:  # a value that is a list or an object
                key = verdict = None
            if verdict is None:
                verdict = decide(summary, _Events(self, rs[j]))
                if key is not None and len(known) < _KNOWN_VERDICTS and checked_failure(failure) is not None:
                    known[key] = verdict  # from the summary alone (a well-formed failure): the same for every run
            kept[j] = keep(verdict.as_dict(ids[j]))
        if ready_at:
            for j, ready in zip(ready_at, self.keep_ready([ids[j] for j in ready_at])):
                kept[j] = ready
        self._order.decided_all(rs, kept)

    def problem(self, scan: Scanner, line: int, message: str) -> None:
        self.problem_count += 1
        self.on_problem(Problem(line, message, self.label))


def ready_verdict(run_id: str) -> dict[str, Any]:
    """The verdict of a run whose summary says it is answer-ready and names no failure, as :func:`decide` gives
    it (``check --json``'s form)."""
    return {"run_id": run_id, "status": ANSWER_READY, "outcome": READY, "ready": True, "complete": True,
            "first_failure": None, "responsibility": None}


class _Events(Sequence[dict[str, Any]]):
    """A run's events, read back only if the verdict rule asks for them (a summary that cannot say)."""

    def __init__(self, scan: StrictScan, r: int):
        self.scan, self.r = scan, r
        self._events: list[dict[str, Any]] | None = None

    def _all(self) -> list[dict[str, Any]]:
        if self._events is None:
            self._events = self.scan.load(self.r).events
        return self._events

    def __getitem__(self, i: Any) -> Any:
        return self._all()[i]

    def __len__(self) -> int:
        return len(self._all())

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return iter(self._all())


class _Finder(StrictScan):
    def __init__(self, item: str | os.PathLike[str] | Input, name: str):
        super().__init__(item)
        self.name = name
        self.found: int | None = None

    def run_ended(self, scan: Scanner, r: int, summary: dict[str, Any]) -> None:
        if self.found is None and self.runs.names[r] == self.name:
            self.found = r


class ScanCancelled(Exception):
    """A scan given up because its caller said so (``cancelled``): a time limit ran out."""


def find_run(item: str | os.PathLike[str] | Input, name: str, chunk_bytes: int = 1024 * 1024,
             cancelled: Callable[[], bool] = lambda: False) -> tuple[RunData | None, list[str], int]:
    """The run listed as ``name`` (as :func:`~tracetui.trace.reader.read_trace` lists it), read only
    as far as its summary line; else None, the first run names in the file and how many there are.

    Raises TraceReadError when the file holds no run, and :class:`ScanCancelled` when ``cancelled()``
    says so after a chunk of a big file (the MCP server's time limit: a run that is not there means
    reading the whole file).
    """
    if isinstance(item, (str, os.PathLike)):
        fd = open_trace(item)  # (says why a path cannot be read)
        try:
            small = os.fstat(fd).st_size <= SMALL_FILE_BYTES
        finally:
            os.close(fd)
        if small:
            runs = read_trace(item).runs
            return (runs[name], [], 0) if name in runs else (None, list(runs)[:12], len(runs))
    finder = _Finder(item, name)
    try:
        for _ in finder.scan(chunk_bytes):
            if finder.found is not None:
                return finder.load(finder.found), [], 0
            if cancelled():
                raise ScanCancelled
        runs = finder.runs
        if not len(runs):
            detail = "it is empty" if finder.lines.size == 0 else "no line is a trace record"
            raise TraceReadError(f"{finder.label}: no runs found ({detail})")
        try:
            return finder.load(runs.number(name)), [], 0  # a run without a summary
        except KeyError:
            return None, runs.names[:12], len(runs)
    finally:
        finder.close()


class ProblemLog:
    """Problems in line order, held in memory up to a point, then in an unnamed temporary file."""

    def __init__(self, keep: int = 10_000):
        self._keep = keep
        self._held: list[Problem] = []
        self._file: Any = None
        self._count = 0

    def append(self, problem: Problem) -> None:
        self._count += 1
        if len(self._held) < self._keep:
            self._held.append(problem)
            return
        if self._file is None:
            import tempfile

            self._file = tempfile.TemporaryFile()
        import orjson

        self._file.write(orjson.dumps([problem.line, problem.message]) + b"\n")

    def __len__(self) -> int:
        return self._count

    def __iter__(self) -> Iterator[Problem]:
        yield from self._held
        if self._file is not None:
            import orjson

            self._file.seek(0)
            for raw in self._file:
                line, message = orjson.loads(raw)
                yield Problem(line, message)
