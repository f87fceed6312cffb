"""Opening huge traces fast: a line index over read-only mmapped JSONL files.

:class:`IndexedSource` never holds parsed records for the whole file. A scan walks
the file in chunks (one copy out of the map per chunk, whose pages are then
dropped from RSS), finds line ends with ``bytes.find`` (memchr; faster than
``re.finditer`` or ``split`` over the same chunk) and classifies each line by the
byte prefix the writer guarantees (:data:`~tracetui.trace.format.PREFIX_EVENT` …).
It keeps per line its offset, line number and a link to the next line of the same
run (16 bytes), and per run a few slots and one small
:class:`~tracetui.trace.source.RunEntry`.

Only ``summary`` lines are parsed during the scan. A ``run`` line gives its
scenario and ablation through a regex over the writer's layout (parsed whole when
the layout differs: run lines can be megabytes of recorded responses). Event lines
are only checked cheaply: the prefix, a plain run id, a closing ``}``, valid UTF-8.
Runs whose summary is missing have their lines parsed at the end of the scan and
their verdict comes from their events through the shared rule
(:meth:`~tracetui.trace.reader.RunData.verdict`). A line that fails a cheap check,
or has no known prefix (another writer, another key order), goes through
:func:`~tracetui.trace.reader.parse_line` exactly as
:func:`~tracetui.trace.reader.read_trace` reads it, so runs, verdicts and problems
equal the whole-file reader's. The one difference, by design: an event or run line
that passes the cheap checks yet is not a valid record (broken JSON between a good
prefix and a closing brace, an unknown lane), and an event whose ``seq`` repeats in
its run, are reported when its run is loaded, not during the scan; the run's entry
is corrected then.

Repeated run ids follow the reader's rule (:meth:`~tracetui.trace.reader.RunData.accepts`):
``ids`` maps a run id to the newest run of that id, stored as ``~r`` once that run has
read its summary, so a further line of that id starts the next run; a run line for a
run that already has lines parses them (rare) to tell whether it is a second run line.
Runs of a repeated id are listed under :func:`~tracetui.trace.reader.run_name` names
(``id#2``…), kept in ``named``; such a run is only started by a line known to be a
record, so names are given out in the reader's order.
"""
from __future__ import annotations

import mmap
import os
import re
import threading
from array import array
from dataclasses import dataclass
from itertools import compress
from pathlib import Path
from typing import Any, Iterator, Sequence

import orjson

from tracetui.trace.failure import DeferredFailure, Failure
from tracetui.trace.format import ANSWER_READY, PREFIX_EVENT, PREFIX_RUN, PREFIX_SUMMARY
from tracetui.trace.reader import (MAX_LINE_BYTES, Problem, RunData, TraceReadError, open_checked,
                                   parse_line, run_name)
from tracetui.trace.source import RunEntry, TraceSource, entry_from_run
from tracetui.trace.verdict import checked_failure, outcome_of

#: Chunk size of one scan step: small enough for a smooth progress bar and an early
#: first partial run list, large enough that the per-step overhead is nil.
DEFAULT_CHUNK_BYTES = 4 * 1024 * 1024
#: Problems kept per file; a file that is not a trace at all would otherwise cost a
#: Problem per line. The rest are counted in :attr:`IndexedSource.problem_count`.
MAX_PROBLEMS_PER_FILE = 10_000

_EVENT_Q, _RUN_Q, _SUMMARY_Q = PREFIX_EVENT + b'"', PREFIX_RUN + b'"', PREFIX_SUMMARY + b'"'
_FOLIO_MARGIN = 2 * 1024 * 1024
#: Distinct first failures shared between entries; beyond it, each entry's reason stays in the file.
MAX_SHARED_FAILURES = 4096
_LEN_EVENT_Q, _LEN_RUN_Q, _LEN_SUMMARY_Q = len(_EVENT_Q), len(_RUN_Q), len(_SUMMARY_Q)
_EVENT, _RUN, _SUMMARY = 1, 2, 3
_BRACE, _CR = 0x7D, 0x0D
# A run id the fast path may take verbatim: its JSON bytes are its UTF-8 bytes.
_NOT_PLAIN_ID = re.compile(rb'[\x00-\x1f"\\]').search
# The writer's run line up to the two fields a RunEntry needs, matched from the quote
# that closes the run id. Any other layout is parsed whole instead.
_STR = rb'"[^"\\\x00-\x1f]*"'
_RUN_LAYOUT = re.compile(
    rb'","trace_version":-?\d+,"producer":' + _STR + rb',"inputs":\{"source":' + _STR
    + rb',"scenario":(?:"([^"\\\x00-\x1f]*)"|null),"ablation":(?:"([^"\\\x00-\x1f]*)"|null)[,}]').match


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
        self.fd: int | None = None  # a raw descriptor: load() reads with pread
        self.mm: mmap.mmap | None = None  # only while scanning
        # per line (up to 2**31 lines per file)
        self.off = array("Q")
        self.num = array("I")
        self.nxt = array("i")
        # per run (index r): id bytes -> newest r of that id (~r once it has ended with its summary)
        self.ids: dict[bytes, int] = {}
        self.named: dict[str, int] = {}  # listed name -> r, for runs of an id that repeats (and odd names)
        self.repeats: dict[bytes, int] = {}  # id bytes -> how many runs have that id, once it repeats
        self.names: list[str] = []  # listed name (the run id, or id#2…)
        self.head = array("i")
        self.tail = array("i")
        self.nevents = array("i")
        self.pub = array("i")  # position in the source's entry list, -1 until published
        self.scenario: list[str | None] = []
        self.ablation: list[str | None] = []
        self.problems: list[Problem] = []
        self.problem_count = 0
        self.runs_found = 0

    def open(self) -> None:
        if self.fd is None:
            self.fd = os.open(self.path, os.O_RDONLY | getattr(os, "O_BINARY", 0))
        if self.mm is None and not self.done:
            self.size = os.fstat(self.fd).st_size  # the file may have changed since it was checked
            if self.size:
                self.mm = mmap.mmap(self.fd, 0, access=mmap.ACCESS_READ)
                self.size = len(self.mm)

    def unmap(self) -> None:
        if self.mm is not None:
            self.mm.close()
            self.mm = None

    def close(self) -> None:
        self.unmap()
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None

    def __del__(self) -> None:
        try:
            self.close()
        except OSError:
            pass

    def run_number(self, name: str) -> int:
        """The run listed as ``name`` (its id, or ``id#2``…). Raises KeyError."""
        r = self.named.get(name)
        if r is None:
            r = self.ids.get(_id_key(name))
            if r is None:
                raise KeyError(f"{name!r} is not a run of {self.path}")
            if r < 0:
                r = ~r
        return r

    def failure_reason(self, run_name: str) -> str:
        """The first failure's reason in a run's summary line (its last), read back from the file."""
        try:
            summary = orjson.loads(self.line_bytes(self.tail[self.run_number(run_name)]))
            run_id, reason = summary["run_id"], summary["first_failure"]["reason"]
            if (summary["rec"] == "summary" and isinstance(reason, str) and isinstance(run_id, str)
                    and (run_name == run_id or run_name.startswith(run_id + "#"))):  # still this run's line
                return reason
        except (OSError, ValueError, KeyError, TypeError):
            pass
        return "(the reason could not be read back: the trace file changed or was closed since it was opened)"

    def line_bytes(self, i: int) -> bytes:
        """Line ``i`` without its line end, read with pread, not through the map.

        Touching a mapped page maps its whole page-cache folio (up to megabytes on
        recent kernels) into our RSS, so loading runs spread over a 1 GB file through
        the map would count hundreds of megabytes; pread copies only what it reads.
        """
        if self.fd is None:
            raise ValueError(f"{self.path}: the source is closed")
        fd, start = self.fd, self.off[i]
        want = 4096
        data = os.pread(fd, want, start)
        while b"\n" not in data and start + len(data) < self.size and len(data) == want:
            want *= 4
            data = os.pread(fd, want, start)
        end = data.find(b"\n")
        line = data if end < 0 else data[:end]
        return line[:self.size - start].rstrip(b"\r\n")


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
    already published entry must change (:meth:`load` found a bad event line or a
    repeated ``seq``), the source swaps in a *new* list object with the corrected
    entry, so ``runs() is not previous`` tells a consumer to recount. Treat entries
    and their first failures as read-only.

    Order of runs: a run ends with its summary line (a later line with its id starts
    the next run of that id, ``id#2``…) and is published then, so complete runs come
    in the order they finished; runs without a summary, or whose summary needs their
    events (no metrics, no status, a malformed first failure), follow at the end of
    each file, in order of their first line.
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
        self._problems: list[Problem] = []
        self._lazy: dict[tuple[int, int], Problem] = {}  # found by load(): (file, line) -> problem
        self._validated: set[tuple[int, int]] = set()  # (file, run) fully parsed once the file was done
        self._order = {path: n for n, path in enumerate(self.paths)}
        self._failures: dict[tuple, Failure | None] = {}  # see _shared
        self._scan_lock = threading.Lock()
        self._lock = threading.Lock()  # guards swapping the entry list and the load-time problems
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
        with self._lock:
            found = self._problems + list(self._lazy.values())
        found.sort(key=lambda p: (self._order.get(p.path, -1), p.line))
        return found

    def load(self, entry: RunEntry) -> RunData:
        """One run's records, parsed now from its lines only, events sorted by ``seq``."""
        f = self._files[entry.source]
        r = f.run_number(entry.run_id)
        data = self._load_run(f, r)
        if f.done and (f.source, r) not in self._validated:
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
                known = f.size
                f.open()
                self.bytes_total += f.size - known
                while f.pos < f.size:
                    before = f.pos
                    self._scan_chunk(f, min(max(1, chunk_bytes), MAX_LINE_BYTES))
                    self.bytes_done += f.pos - before
                    yield ScanProgress(self.bytes_done, self.bytes_total, len(self._entries),
                                       len(self._problems) + len(self._lazy), f.source)
                self._finish_file(f)
            if not self._entries:
                if len(self._files) == 1:
                    f = self._files[0]
                    raise TraceReadError(f"{f.path}: no runs found (no line is a trace record)")
                raise TraceReadError("no runs found in any file")
            yield ScanProgress(self.bytes_total, self.bytes_total, len(self._entries),
                               len(self._problems) + len(self._lazy), len(self._files) - 1, done=True)
        finally:
            self._scan_lock.release()

    def scan_all(self, chunk_bytes: int = 16 * 1024 * 1024) -> "IndexedSource":
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
        """Index the whole lines in the next ``chunk_bytes`` (or the one line longer than that)."""
        mm = f.mm
        start, size = f.pos, f.size
        end = min(start + chunk_bytes, size)
        buf = mm[start:end]  # one copy; the hot loop then works on bytes, never on the map
        n = len(buf)
        if end < size:
            n = buf.rfind(b"\n") + 1
            if n == 0:  # one line longer than a chunk
                cut = mm.find(b"\n", end, size)
                n = (cut if cut >= 0 else size - 1) + 1 - start
                length = n
                while length and mm[start + length - 1] in (0x0A, 0x0D):
                    length -= 1
                if length > MAX_LINE_BYTES:  # reported without copying it: it may be huge
                    f.lineno += 1
                    self._problem(f, f.lineno, f"line is {length} bytes, over the {MAX_LINE_BYTES}-byte limit")
                    f.pos = start + n
                    _drop_pages(mm, start, f.pos)
                    return
                buf = mm[start:start + n]
        self._index_lines(f, buf, start, n)
        f.pos = start + n
        _drop_pages(mm, start, f.pos)

    def _index_lines(self, f: _FileIndex, buf: bytes, base: int, n: int) -> None:
        """The hot loop: classify each line of ``buf`` by prefix; parse run and summary lines only."""
        find, startswith = buf.find, buf.startswith
        ascii_only = buf.isascii()
        ids, off, num, nxt, head, tail, nevents = f.ids, f.off, f.num, f.nxt, f.head, f.tail, f.nevents
        lineno = f.lineno
        i = len(off)  # the next line's index
        pos = 0
        while pos < n:
            nl = find(b"\n", pos)
            if nl < 0:
                nl = n
            lineno += 1
            # The fast path: a writer's event or run line (prefix, quoted plain run id, closing
            # brace, UTF-8). Lines are never longer than a chunk here (see _scan_chunk).
            if startswith(_EVENT_Q, pos):
                p, kind = pos + _LEN_EVENT_Q, _EVENT
            elif startswith(_RUN_Q, pos):
                p, kind = pos + _LEN_RUN_Q, _RUN
            elif startswith(_SUMMARY_Q, pos):
                p, kind = pos + _LEN_SUMMARY_Q, _SUMMARY
            else:
                p = 0
            if p:
                q = find(b'"', p, nl)
                if (q > p and (buf[nl - 1] == _BRACE or (buf[nl - 1] == _CR and buf[nl - 2] == _BRACE))
                        and (ascii_only or _utf8(buf, pos, nl))
                        and (kind == _EVENT or (m := _RUN_LAYOUT(buf, q, nl) if kind == _RUN
                                                else _summary(buf[pos:nl])) is not None)):
                    key = buf[p:q]
                    r = ids.get(key)
                    # A run that may be listed as id#n, or whose id looks like one, is only made from
                    # a line known to be a record, so that names are given out as the reader does.
                    if r is None:
                        if not _NOT_PLAIN_ID(key):
                            try:
                                name = key.decode("utf-8")
                            except UnicodeDecodeError:
                                pass
                            else:
                                if b"#" not in key or kind == _SUMMARY or _is_record(buf, pos, nl):
                                    r = self._new_run(f, key, name, None)
                    elif r < 0:  # its newest run has ended: this line starts the next one
                        r = (self._new_run(f, key, None, ~r) if kind == _SUMMARY or _is_record(buf, pos, nl)
                             else None)
                    elif kind == _RUN and head[r] >= 0:
                        r = self._run_line(f, key, r, buf, pos, nl)
                    if r is not None:
                        off.append(base + pos)
                        num.append(lineno)
                        nxt.append(-1)
                        t = tail[r]
                        if t < 0:
                            head[r] = i
                        else:
                            nxt[t] = i
                        tail[r] = i
                        i += 1
                        if kind == _EVENT:
                            nevents[r] += 1
                        elif kind == _RUN:
                            scenario, ablation = m.group(1, 2)
                            f.scenario[r] = None if scenario is None else _intern_bytes(scenario)
                            f.ablation[r] = None if ablation is None else _intern_bytes(ablation)
                        else:
                            ids[key] = ~r
                            self._summary_read(f, r, m)
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
                i = len(off)
        f.lineno = lineno

    def _add_record(self, f: _FileIndex, obj: dict[str, Any], offset: int, lineno: int) -> None:
        """A parsed, checked record: link its line to its run; a summary publishes the run."""
        run_id = obj["run_id"]
        key = _id_key(run_id)
        r = f.ids.get(key)
        rec = obj["rec"]
        if r is None:
            r = self._new_run(f, key, run_id, None)
        elif r < 0:
            r = self._new_run(f, key, None, ~r)
        elif rec == "run" and f.head[r] >= 0 and self._has_run_line(f, r):
            r = self._new_run(f, key, None, r)
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
        if rec == "event":
            f.nevents[r] += 1
        elif rec == "run":
            inputs = obj.get("inputs")
            inputs = inputs if isinstance(inputs, dict) else {}
            f.scenario[r] = _intern(inputs.get("scenario"))
            f.ablation[r] = _intern(inputs.get("ablation"))
        else:
            f.ids[key] = ~r
            self._summary_read(f, r, obj)

    def _summary_read(self, f: _FileIndex, r: int, summary: dict[str, Any]) -> None:
        """A run's summary line, its last: publish the run (at the file's end when it needs its events)."""
        entry = self._entry_from_summary(f, r, f.names[r], summary)
        if entry is not None:
            self._publish(f, r, entry)

    def _new_run(self, f: _FileIndex, key: bytes, run_id: str | None, previous: int | None) -> int:
        """A run of id ``key``: its first (``run_id`` decoded), or the next after run ``previous``."""
        r = len(f.head)
        if previous is not None or (f.named and run_id in f.named):
            run_id = self._name(f, key, run_id, previous, r)
        f.ids[key] = r
        f.names.append(run_id)
        f.head.append(-1)
        f.tail.append(-1)
        f.nevents.append(0)
        f.pub.append(-1)
        f.scenario.append(None)
        f.ablation.append(None)
        return r

    def _name(self, f: _FileIndex, key: bytes, run_id: str | None, previous: int | None, r: int) -> str:
        """How new run ``r`` of id ``key`` is listed, when that is not its id (see ``_new_run``)."""
        named = f.named

        def taken(name: str) -> bool:
            return name in named or _id_key(name) in f.ids

        if previous is None:  # its id is taken by an earlier id's id#2…
            name = run_name(run_id, 1, taken)
        else:
            nth = f.repeats.get(key, 1) + 1
            f.repeats[key] = nth
            if nth == 2:
                named[f.names[previous]] = previous
            name = run_name(orjson.loads(b'"' + key + b'"'), nth, taken)
        named[name] = r
        return name

    def _entry_from_summary(self, f: _FileIndex, r: int, run_id: str, summary: dict[str, Any]) -> RunEntry | None:
        """The run's entry from its summary and the scan's counts; None when it needs its events.

        Mirrors :func:`~tracetui.trace.source.entry_from_run` for a complete run (the
        tests hold the two equal) without building a RunData per run.
        """
        metrics = summary.get("metrics")
        status = summary.get("status")
        ff = summary.get("first_failure")
        if not metrics or not isinstance(metrics, dict) or not status or not isinstance(status, str):
            return None  # recovered counted from events, or status derived: done from the parsed run
        if ff is not None:
            ff = self._shared(ff, f, run_id)
            if ff is None:
                return None  # malformed: derived from the events, as the reader does
            if status == ANSWER_READY:
                return None  # a summary that contradicts itself: decided from the parsed run
        elif status != ANSWER_READY:
            return None  # a failure claimed without saying where: the events may show it
        status = _INTERNED.get(status) or _intern(status)
        get = metrics.get
        return RunEntry(run_id, f.source, f.scenario[r], f.ablation[r], status, outcome_of(status, ff, True), True,
                        ff, _int(get("model_calls")), _int(get("tool_calls")), _int(get("recovered")), f.nevents[r])

    def _shared(self, failure: Any, f: _FileIndex, run_name: str) -> Failure | None:
        """The checked first failure (:func:`~tracetui.trace.verdict.checked_failure`: None when
        malformed), one record per distinct one: 200,000 runs mostly fail in a few hundred ways.
        Beyond MAX_SHARED_FAILURES distinct ones, each keeps its reason in the file."""
        try:
            key = tuple(failure.items())
            found = self._failures.get(key, _UNSEEN)
        except (AttributeError, TypeError):  # not a dict, or unhashable values: not shared
            return Failure.of(checked_failure(failure))
        if found is _UNSEEN:
            checked = checked_failure(failure)
            if len(self._failures) < MAX_SHARED_FAILURES:
                found = self._failures[key] = Failure.of(checked)
            else:
                found = None if checked is None else DeferredFailure(checked, f, run_name)
        return found

    def _publish(self, f: _FileIndex, r: int, entry: RunEntry) -> None:
        with self._lock:
            f.pub[r] = len(self._entries)
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
        """End of a file: runs without a summary, or whose summary needs their events, get their verdict."""
        head = f.head
        unpublished = compress(range(len(f.pub)), map((-1).__eq__, f.pub))  # without a loop in Python
        pending = sorted((r for r in unpublished if head[r] >= 0), key=head.__getitem__)
        for r in pending:
            data = self._load_run(f, r)
            self._validated.add((f.source, r))
            if data.first_line:  # at least one good line
                self._publish(f, r, entry_from_run(data, f.source))
        f.done = True
        f.unmap()
        if f.runs_found == 0 and len(self._files) > 1 and f.size:
            self._file_problem(f, "no runs found (no line is a trace record)")

    def _load_run(self, f: _FileIndex, r: int) -> RunData:
        """Parse one run's lines, in file order; bad lines become problems (found at load time)."""
        data = RunData(f.names[r])
        i = f.head[r]
        while i >= 0:
            obj, problem = parse_line(f.line_bytes(i))
            if not problem:
                if not data.first_line:
                    data.first_line = f.num[i]
                problem = data.add(obj)
            if problem:
                with self._lock:
                    self._lazy.setdefault((f.source, f.num[i]), Problem(f.num[i], problem, f.path))
            i = f.nxt[i]
        return data

    def _run_line(self, f: _FileIndex, key: bytes, r: int, buf: bytes, start: int, end: int) -> int | None:
        """A fast-path run line for open run ``r``, which has lines: the run it belongs to, None for the slow path.

        Only a record (it may just look valid) after a run line that is a record starts the next run;
        a broken line goes to the slow path, which reports it.
        """
        if not _is_record(buf, start, end):
            return None
        return self._new_run(f, key, None, r) if self._has_run_line(f, r) else r

    def _has_run_line(self, f: _FileIndex, r: int) -> bool:
        """Whether run ``r`` has a valid run line: its lines parsed (rare: a run line came for a run with lines)."""
        i = f.head[r]
        while i >= 0:
            obj, _ = parse_line(f.line_bytes(i))
            if obj is not None and obj["rec"] == "run":
                return True
            i = f.nxt[i]
        return False

    def _problem(self, f: _FileIndex, line: int, message: str) -> None:
        f.problem_count += 1
        if len(f.problems) < MAX_PROBLEMS_PER_FILE:
            p = Problem(line, message, f.path)
            f.problems.append(p)
            self._problems.append(p)

    def _file_problem(self, f: _FileIndex, message: str) -> None:
        self._problem(f, 0, message)


_UNSEEN = object()


def _is_record(buf: bytes, start: int, end: int) -> bool:
    """Whether a line the fast path took (maybe only looking valid) is a record."""
    return parse_line(buf[start:end].rstrip(b"\r"))[1] is None


def _int(value: Any) -> int:
    try:
        return int(value or 0)
    except (TypeError, ValueError):
        return 0


def _drop_pages(mm: mmap.mmap, start: int, end: int) -> None:
    """Unmap scanned pages so a 1 GB scan does not count 1 GB of RSS; they stay in the page cache."""
    if hasattr(mm, "madvise") and hasattr(mmap, "MADV_DONTNEED"):
        # from a little before: a fault maps the page's whole folio, which may begin before ``start``
        start = max(0, start - _FOLIO_MARGIN)
        page = start - start % mmap.PAGESIZE
        try:
            mm.madvise(mmap.MADV_DONTNEED, page, end - page)
        except (OSError, ValueError):
            pass


def _summary(raw: bytes) -> dict[str, Any] | None:
    """A summary line parsed, or None to leave it to the slow path (which words the problem)."""
    try:
        obj = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return None
    if type(obj) is dict and obj.get("rec") == "summary" and type(obj.get("run_id")) is str:
        return obj
    return None


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


_INTERNED_BYTES: dict[bytes, str] = {}


def _intern_bytes(value: bytes) -> str:
    """A scenario or ablation name read from raw bytes, decoded once per distinct name."""
    name = _INTERNED_BYTES.get(value)
    if name is None:
        name = _intern(value.decode("utf-8"))
        if len(_INTERNED_BYTES) < 10_000:
            _INTERNED_BYTES[value] = name
    return name


def _id_key(run_id: str) -> bytes:
    """A run id as its JSON bytes without quotes: what the fast path reads between the quotes."""
    return orjson.dumps(run_id)[1:-1]
