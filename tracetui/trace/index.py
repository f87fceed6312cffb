"""Opening huge traces fast: a line index over read-only mmapped JSONL files.

:class:`IndexedSource` never holds parsed records for the whole file. A scan walks
the file in chunks, finds line ends with ``bytes.find`` (memchr; measured ~3x
faster than ``re.finditer`` or ``split`` over the same chunks) and classifies each
line by the byte prefix the writer guarantees (:data:`~tracetui.trace.format.PREFIX_EVENT`
…). It keeps per line only its offset, line number and a link to the next line of
the same run (16 bytes), and per run a small :class:`~tracetui.trace.source.RunEntry`.

Only ``run`` lines (scenario, ablation) and ``summary`` lines (the verdict) are
parsed during the scan; event lines are checked cheaply (prefix, a plain run id,
a closing ``}``, valid UTF-8) and parsed only when their run is loaded, or at the
end of the scan for runs whose summary is missing (their verdict comes from their
events through the shared rule, :meth:`~tracetui.trace.reader.RunData.verdict`).
A line that fails a cheap check, or has no known prefix (another writer, another
key order), goes through :func:`~tracetui.trace.reader.parse_line` exactly as
:func:`~tracetui.trace.reader.read_trace` would read it, so the runs, verdicts and
problems equal the whole-file reader's. The one difference, by design: an event
line that passes the cheap checks but is still not a valid record (broken JSON
between a good prefix and a closing brace, an unknown lane) is reported when its
run is loaded, not during the scan.
"""
from __future__ import annotations

import mmap
import os
import re
import sys
import threading
from array import array
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator, Sequence

import orjson

from tracetui.trace.format import PREFIX_EVENT, PREFIX_RUN, PREFIX_SUMMARY
from tracetui.trace.reader import MAX_LINE_BYTES, Problem, RunData, TraceReadError, open_checked, parse_line
from tracetui.trace.source import RunEntry, TraceSource, entry_from_run

#: Chunk size of one scan step: small enough for a smooth progress bar and an early
#: first partial run list, large enough that the per-step overhead is nil.
DEFAULT_CHUNK_BYTES = 4 * 1024 * 1024
#: Problems kept per file; a file that is not a trace at all would otherwise cost a
#: Problem per line. The rest are counted in :attr:`IndexedSource.problem_count`.
MAX_PROBLEMS_PER_FILE = 10_000

_LEN_EVENT = len(PREFIX_EVENT)
_QUOTE, _BRACE, _CR = 0x22, 0x7D, 0x0D
# A run id the fast path may take verbatim: its JSON bytes are its UTF-8 bytes.
_NOT_PLAIN_ID = re.compile(rb'[\x00-\x1f"\\]').search


@dataclass(frozen=True, slots=True)
class ScanProgress:
    """One scan step: how far the scan is, over all files, and how many runs it has published."""

    bytes_done: int
    bytes_total: int
    runs: int
    problems: int
    source: int  # the file being scanned (index into ``paths``)
    done: bool = False

    @property
    def fraction(self) -> float:
        return 1.0 if self.done or not self.bytes_total else self.bytes_done / self.bytes_total


class _FileIndex:
    """The index of one file: per line (offset, line number, next line of its run), per run a few slots."""

    def __init__(self, source: int, path: str, size: int):
        self.source = source
        self.path = path
        self.size = size
        self.pos = 0  # scan position: everything before it is indexed
        self.lineno = 0  # lines fully scanned (line numbers are 1-based)
        self.done = size == 0
        self.fh = None
        self.mm: mmap.mmap | None = None
        # per line
        self.off = array("Q")
        self.num = array("L")
        self.nxt = array("l")
        # per run (index r): id bytes -> r
        self.ids: dict[bytes, int] = {}
        self.head = array("l")
        self.tail = array("l")
        self.nevents = array("l")
        self.pub = array("l")  # position in the source's entry list, -1 until published
        self.scenario: list[str | None] = []
        self.ablation: list[str | None] = []
        self.dirty: set[int] = set()  # published runs that changed afterwards
        self.problems: list[Problem] = []
        self.problem_count = 0
        self.runs_found = 0

    def open(self) -> None:
        if self.mm is None and self.size:
            self.fh = open(self.path, "rb")
            self.mm = mmap.mmap(self.fh.fileno(), 0, access=mmap.ACCESS_READ)
            self.size = min(self.size, len(self.mm))

    def close(self) -> None:
        if self.mm is not None:
            self.mm.close()
            self.mm = None
        if self.fh is not None:
            self.fh.close()
            self.fh = None

    def line_bytes(self, i: int) -> bytes:
        mm = self.mm
        if mm is None:
            raise ValueError(f"{self.path}: the source is closed")
        start = self.off[i]
        end = mm.find(b"\n", start, self.size)
        return mm[start:end if end >= 0 else self.size].rstrip(b"\r\n")


class IndexedSource:
    """A :class:`~tracetui.trace.source.TraceSource` over JSONL files, indexed in the background.

    Constructing it only checks the paths (missing file, directory, unreadable,
    every file empty: :class:`TraceReadError`). Then either iterate :meth:`scan`
    (the UI does, in a thread worker, showing :attr:`ScanProgress.fraction`) or
    call :meth:`scan_all`. A scan that finds no run in any file raises
    TraceReadError at its end; with several files, a file without runs is a
    :class:`Problem` (line 0) and the others still open.

    Threads: one thread scans (a second concurrent :meth:`scan` raises
    RuntimeError); any thread may call :meth:`runs`, :meth:`problems` and
    :meth:`load` at any time, typically the UI thread after a progress message.
    :meth:`runs` returns the live entry list, without copying: while the scan goes
    on it only grows by appending, so ``entries[n:]`` are the new runs. When an
    already published entry must change (its run line came after its summary, a
    second summary, a bad event line found by :meth:`load`), the source swaps in a
    *new* list object with the corrected entry, so ``runs() is not previous``
    tells a consumer to recount. Treat entries and their dicts as read-only.

    Order of runs: a run is published when its summary line is read, so complete
    runs come in the order they finished; runs without a summary follow at the end
    of each file, in order of their first line.
    """

    def __init__(self, paths: Sequence[str | os.PathLike[str]], label: str | None = None):
        if not paths:
            raise TraceReadError("no trace file given")
        self.paths = [str(p) for p in paths]
        self.label = label or (self.paths[0] if len(self.paths) == 1 else f"{len(self.paths)} files")
        files = []
        for n, path in enumerate(self.paths):
            p = open_checked(path)
            files.append(_FileIndex(n, path, p.stat().st_size))
        if all(f.size == 0 for f in files):
            raise TraceReadError(f"{self.paths[0]}: no runs found (it is empty)" if len(files) == 1
                                 else "no runs found (every file is empty)")
        self._files = files
        self._entries: list[RunEntry] = []
        self._where: list[tuple[int, int]] = []  # per entry: (file, run index)
        self._problems: list[Problem] = []
        self._lazy: dict[tuple[int, int], Problem] = {}  # found by load(): (file, line) -> problem
        self._validated: set[tuple[int, int]] = set()  # (file, run) loaded and checked
        self._scan_lock = threading.Lock()
        self._lock = threading.Lock()  # guards swapping the entry list
        self.bytes_total = sum(f.size for f in files)
        self.bytes_done = 0
        for f in files:
            if f.size == 0:
                self._file_problem(f, "no runs found (it is empty)")

    # -- the TraceSource protocol -----------------------------------------------------------
    def runs(self) -> Sequence[RunEntry]:
        """The runs indexed so far (the live list: see the class docstring)."""
        return self._entries

    def problems(self) -> Sequence[Problem]:
        """Lines that are not trace records, by file and line (a new list each call)."""
        found = self._problems + list(self._lazy.values())
        found.sort(key=lambda p: (self.paths.index(p.path) if p.path in self.paths else -1, p.line))
        return found

    def load(self, entry: RunEntry) -> RunData:
        """One run's records, parsed now from its lines only, events sorted by ``seq``."""
        f = self._files[entry.source]
        r = f.ids.get(_id_key(entry.run_id))
        if r is None:
            raise KeyError(f"{entry.run_id!r} is not a run of {f.path}")
        data = self._load_run(f, r, entry.run_id)
        if (f.source, r) not in self._validated:
            self._validated.add((f.source, r))
            k = f.pub[r]
            if k >= 0 and data.first_line and entry_from_run(data, f.source) != self._entries[k]:
                self._replace({k: entry_from_run(data, f.source)})
        data.events.sort(key=_seq)
        return data

    # -- scanning ---------------------------------------------------------------------------
    @property
    def done(self) -> bool:
        return all(f.done for f in self._files)

    @property
    def problem_count(self) -> int:
        """All problems, including those beyond the per-file cap."""
        return sum(f.problem_count for f in self._files) + len(self._lazy)

    def scan(self, chunk_bytes: int = DEFAULT_CHUNK_BYTES) -> Iterator[ScanProgress]:
        """Index the files, yielding after each chunk; resumable if the iteration stops early."""
        if not self._scan_lock.acquire(blocking=False):
            raise RuntimeError("this source is already being scanned")
        try:
            for f in self._files:
                if f.done:
                    continue
                f.open()
                while f.pos < f.size:
                    before = f.pos
                    self._scan_chunk(f, max(1, chunk_bytes))
                    self.bytes_done += f.pos - before
                    yield ScanProgress(self.bytes_done, self.bytes_total, len(self._entries),
                                       len(self._problems), f.source)
                self._finish_file(f)
            if not self._entries:
                if len(self._files) == 1:
                    f = self._files[0]
                    raise TraceReadError(f"{f.path}: no runs found (no line is a trace record)")
                raise TraceReadError("no runs found in any file")
            yield ScanProgress(self.bytes_total, self.bytes_total, len(self._entries), len(self._problems),
                               len(self._files) - 1, done=True)
        finally:
            self._scan_lock.release()

    def scan_all(self, chunk_bytes: int = 64 * 1024 * 1024) -> "IndexedSource":
        """Scan to the end (for the CLI and tests); returns self."""
        for _ in self.scan(chunk_bytes):
            pass
        return self

    def close(self) -> None:
        for f in self._files:
            f.close()

    def __enter__(self) -> "IndexedSource":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # -- internals --------------------------------------------------------------------------
    def _scan_chunk(self, f: _FileIndex, chunk_bytes: int) -> None:
        """Index whole lines from ``f.pos`` up to about ``chunk_bytes`` further."""
        mm = f.mm
        start, size = f.pos, f.size
        end = min(start + chunk_bytes, size)
        if end < size:
            cut = mm.rfind(b"\n", start, end)
            if cut < 0:  # one line longer than a chunk
                cut = mm.find(b"\n", end, size)
                if cut < 0:
                    cut = size - 1
                if cut + 1 - start > MAX_LINE_BYTES + 2:
                    self._oversized(f, start, cut)
                    return
            end = cut + 1
        buf = mm[start:end]
        self._index_lines(f, buf, start)
        f.pos = end
        if hasattr(mm, "madvise"):  # drop the scanned pages from our RSS; they stay in the page cache
            page = start - start % mmap.PAGESIZE
            try:
                mm.madvise(mmap.MADV_DONTNEED, page, end - page)
            except (OSError, ValueError, AttributeError):
                pass

    def _oversized(self, f: _FileIndex, start: int, nl: int) -> None:
        """A line over the limit: reported without copying it (it may be huge)."""
        f.lineno += 1
        end = nl + 1 if f.mm[nl:nl + 1] == b"\n" else nl + 1
        stop = end
        while stop > start and f.mm[stop - 1:stop] in (b"\n", b"\r"):
            stop -= 1
        length = stop - start
        self._problem(f, f.lineno, f"line is {length} bytes, over the {MAX_LINE_BYTES}-byte limit")
        if hasattr(f.mm, "madvise"):
            page = start - start % mmap.PAGESIZE
            try:
                f.mm.madvise(mmap.MADV_DONTNEED, page, end - page)
            except (OSError, ValueError, AttributeError):
                pass
        f.pos = end

    def _index_lines(self, f: _FileIndex, buf: bytes, base: int) -> None:
        """The hot loop: classify each line of ``buf`` by prefix; parse run and summary lines only."""
        find, startswith = buf.find, buf.startswith
        ascii_only = buf.isascii()
        ids, off, num, nxt, head, tail, nevents, pub = (
            f.ids, f.off, f.num, f.nxt, f.head, f.tail, f.nevents, f.pub)
        lineno = f.lineno
        n = len(buf)
        pos = 0
        while pos < n:
            nl = find(b"\n", pos)
            if nl < 0:
                nl = n
            lineno += 1
            if startswith(PREFIX_EVENT, pos):
                p = pos + _LEN_EVENT
                q = find(b'"', p + 1, nl)
                last = buf[nl - 1]
                if (q > p + 1 and buf[p] == _QUOTE and nl - pos <= MAX_LINE_BYTES
                        and (last == _BRACE or (last == _CR and buf[nl - 2] == _BRACE))
                        and (ascii_only or _utf8(buf, pos, nl))):
                    key = buf[p + 1:q]
                    r = ids.get(key)
                    if r is None and not _NOT_PLAIN_ID(key):
                        try:
                            key.decode("utf-8")
                        except UnicodeDecodeError:
                            pass
                        else:
                            r = self._new_run(f, key, lineno)
                    if r is not None:
                        i = len(off)
                        off.append(base + pos)
                        num.append(lineno)
                        nxt.append(-1)
                        t = tail[r]
                        if t < 0:
                            head[r] = i
                        else:
                            nxt[t] = i
                        tail[r] = i
                        nevents[r] += 1
                        if pub[r] >= 0:
                            f.dirty.add(r)
                        pos = nl + 1
                        continue
            # the slow path, exactly as the reader reads a line: run and summary lines, other
            # writers' key orders, and anything that failed a cheap check
            line_start = pos
            raw = buf[pos:nl].rstrip(b"\r\n")
            pos = nl + 1
            if not raw.strip():
                continue
            obj, problem = parse_line(raw)
            if problem:
                self._problem(f, lineno, problem)
            else:
                self._add_record(f, obj, base + line_start, lineno)
        f.lineno = lineno

    def _add_record(self, f: _FileIndex, obj: dict[str, Any], offset: int, lineno: int) -> None:
        """A parsed, checked record: link its line to its run; a summary publishes the run."""
        run_id = obj["run_id"]
        key = _id_key(run_id)
        r = f.ids.get(key)
        if r is None:
            r = self._new_run(f, key, lineno)
        i = len(f.off)
        f.off.append(offset)
        f.num.append(lineno)
        f.nxt.append(-1)
        t = f.tail[r]
        if t < 0:
            f.head[r] = i
        else:
            f.nxt[t] = i
        f.tail[r] = i
        rec = obj["rec"]
        if rec == "event":
            f.nevents[r] += 1
            if f.pub[r] >= 0:
                f.dirty.add(r)
        elif rec == "run":
            inputs = obj.get("inputs")
            inputs = inputs if isinstance(inputs, dict) else {}
            f.scenario[r] = _intern(inputs.get("scenario"))
            f.ablation[r] = _intern(inputs.get("ablation"))
            if f.pub[r] >= 0:
                f.dirty.add(r)
        else:
            entry = self._entry_from_summary(f, r, run_id, obj)
            if entry is None:
                f.dirty.add(r)
            elif f.pub[r] >= 0:
                self._replace({f.pub[r]: entry})
            else:
                self._publish(f, r, entry)

    def _new_run(self, f: _FileIndex, key: bytes, lineno: int) -> int:
        r = len(f.head)
        f.ids[key] = r
        f.head.append(-1)
        f.tail.append(-1)
        f.nevents.append(0)
        f.pub.append(-1)
        f.scenario.append(None)
        f.ablation.append(None)
        return r

    def _entry_from_summary(self, f: _FileIndex, r: int, run_id: str, summary: dict[str, Any]) -> RunEntry | None:
        """The run's entry from its summary and what the scan counted (None: needs its events)."""
        metrics = summary.get("metrics")
        if not metrics or not isinstance(metrics, dict):
            return None  # recovered must be counted from the events: done at the end of the file
        ff = summary.get("first_failure")
        if isinstance(ff, dict):
            for k in ("lane", "code"):
                if isinstance(ff.get(k), str):
                    ff[k] = sys.intern(ff[k])
        if isinstance(summary.get("status"), str):
            summary["status"] = sys.intern(summary["status"])
        stub = RunData(run_id, run={"inputs": {"scenario": f.scenario[r], "ablation": f.ablation[r]}},
                       summary=summary, events=_Counted(f.nevents[r]))
        return entry_from_run(stub, f.source)

    def _publish(self, f: _FileIndex, r: int, entry: RunEntry) -> None:
        with self._lock:
            f.pub[r] = len(self._entries)
            self._where.append((f.source, r))
            self._entries.append(entry)
            f.runs_found += 1

    def _replace(self, changes: dict[int, RunEntry]) -> None:
        """Change published entries: on a new list object, so consumers see that rows changed."""
        with self._lock:
            entries = list(self._entries)
            for k, entry in changes.items():
                entries[k] = entry
            self._entries = entries

    def _finish_file(self, f: _FileIndex) -> None:
        """End of a file: runs without a summary get their verdict from their events; fix dirty runs."""
        changes = {}
        for r in sorted(f.dirty):
            if f.pub[r] >= 0:
                data = self._load_run(f, r, None)
                changes[f.pub[r]] = entry_from_run(data, f.source)
                self._validated.add((f.source, r))
        if changes:
            self._replace(changes)
        pending = [(f.head[r], r, key) for key, r in f.ids.items() if f.pub[r] < 0 and f.head[r] >= 0]
        pending.sort()
        for _, r, key in pending:
            data = self._load_run(f, r, key.decode("utf-8"))
            self._validated.add((f.source, r))
            if data.first_line:  # at least one good line
                self._publish(f, r, entry_from_run(data, f.source))
        f.dirty.clear()
        f.done = True
        if f.runs_found == 0 and len(self._files) > 1 and f.size:
            self._file_problem(f, "no runs found (no line is a trace record)")

    def _load_run(self, f: _FileIndex, r: int, run_id: str | None) -> RunData:
        """Parse one run's lines, in file order; bad lines become problems (found at load time)."""
        data = RunData(run_id or "")
        i = f.head[r]
        while i >= 0:
            obj, problem = parse_line(f.line_bytes(i))
            if problem:
                key = (f.source, f.num[i])
                if key not in self._lazy and not any(p.line == f.num[i] for p in f.problems[-1:]):
                    self._lazy[key] = Problem(f.num[i], problem, f.path)
            else:
                if not data.first_line:
                    data.first_line = f.num[i]
                    data.run_id = obj["run_id"]
                rec = obj["rec"]
                if rec == "run":
                    data.run = obj
                elif rec == "event":
                    data.events.append(obj)
                else:
                    data.summary = obj
            i = f.nxt[i]
        return data

    def _problem(self, f: _FileIndex, line: int, message: str) -> None:
        f.problem_count += 1
        if len(f.problems) < MAX_PROBLEMS_PER_FILE:
            p = Problem(line, message, f.path)
            f.problems.append(p)
            self._problems.append(p)

    def _file_problem(self, f: _FileIndex, message: str) -> None:
        self._problem(f, 0, message)


class _Counted(list):
    """Stands in for a run's events when only their number is known (entry_from_run takes len)."""

    def __init__(self, n: int):
        super().__init__()
        self._n = n

    def __len__(self) -> int:
        return self._n


def _utf8(buf: bytes, start: int, end: int) -> bool:
    try:
        buf[start:end].decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _seq(event: dict[str, Any]) -> int:
    return event["seq"]


_INTERNED: dict[str, str] = {}


def _intern(value: Any) -> Any:
    """Scenario and ablation names repeat across runs: keep one string per name."""
    if not isinstance(value, str):
        return value
    return _INTERNED.setdefault(value, value) if len(_INTERNED) < 10_000 else value


def _id_key(run_id: str) -> bytes:
    """A run id as its JSON bytes without quotes: what the fast path reads between the quotes."""
    return orjson.dumps(run_id)[1:-1]


def open_source(paths: Sequence[str | os.PathLike[str]]) -> TraceSource:
    """What ``tracetui open`` explores: the built-in demo for no path, else an (unscanned) index.

    Raises :class:`TraceReadError` for a missing, unreadable or directory path, or
    when every file is empty. The caller scans the index (:meth:`IndexedSource.scan`).
    """
    if not paths:
        from tracetui.trace.source import demo_source

        return demo_source()
    return IndexedSource(list(paths))
