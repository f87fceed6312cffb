"""Reading traces whole: for ``check``, ``replay`` and tests.

Tolerant by design: a malformed, truncated or non-UTF-8 line becomes a
:class:`Problem` with its line number and every good run still loads. A run
without a summary (its writer crashed) is kept, marked incomplete, with its
verdict derived from its events by the same rule the loop uses (:mod:`tracetui.trace.verdict`). (The explorer
opens huge files through :mod:`tracetui.trace.index` instead, which never holds
parsed records for the whole file; it applies the same rules.)

Runs appended to one file may repeat a run id. A record starts a new run when it
cannot belong to the newest run of its id (:meth:`RunData.accepts`: that run has
ended with its summary, or the record is a second ``run`` line); the new run is
listed as ``id#2``, ``id#3``… (:func:`run_name`), its records untouched. An event
whose ``seq`` its run already has is a :class:`Problem`; the first one is kept.
"""
from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator

import orjson

from tracetui.trace import limits
from tracetui.trace.format import BOM, LANES, OUTCOMES, RECORD_KINDS, REC_RUN, version_problem
from tracetui.trace.verdict import Verdict, decide

#: bytes read at a time by :func:`iter_lines`
READ_BLOCK = 1 << 20


class TraceReadError(Exception):
    """The input cannot be read at all (missing, a directory, not a regular file, no runs).
    ``problems``: for a file without a run, its lines that are not records (they say why)."""

    def __init__(self, message: str, problems: "list[Problem] | None" = None):
        super().__init__(message)
        self.problems = problems or []


class LongLine(bytes):
    """The start of a line longer than the limit, and its true ``length``: the rest was never held."""

    length: int


@dataclass(frozen=True)
class Problem:
    line: int
    message: str
    path: str = ""


@dataclass
class RunData:
    run_id: str
    run: dict[str, Any] | None = None
    events: list[dict[str, Any]] = field(default_factory=list)
    summary: dict[str, Any] | None = None
    first_line: int = 0

    _seqs: set[int] = field(default_factory=set, init=False, repr=False, compare=False)  # of events

    def accepts(self, record: dict[str, Any]) -> bool:
        """Whether a record with this run's id can belong to it (else it starts the next run of that id).

        A run ends with its summary, and has one ``run`` line.
        """
        return self.summary is None and (self.run is None or record["rec"] != "run")

    def add(self, record: dict[str, Any]) -> str | None:
        """File a parsed record under this run by its kind.

        Returns why the record was not filed (an event whose ``seq`` this run already
        has: the first one is kept), else None.
        """
        kind = record["rec"]
        if kind == "run":
            self.run = record
        elif kind == "event":
            seq = record["seq"]
            if len(self._seqs) != len(self.events):  # events given to the constructor
                self._seqs = {e.get("seq") for e in self.events}
            if seq in self._seqs:
                return f"seq {seq} repeats in run {self.run_id}"
            self._seqs.add(seq)
            self.events.append(record)
        else:
            self.summary = record
        return None

    @property
    def complete(self) -> bool:
        return self.summary is not None

    @property
    def inputs(self) -> dict[str, Any] | None:
        return self.run.get("inputs") if self.run else None

    def decide(self) -> Verdict:
        """The run's verdict, by the one rule every surface uses (:func:`tracetui.trace.verdict.decide`)."""
        return decide(self.summary, self.events)

    def verdict(self) -> dict[str, Any]:
        """The verdict as a dict (``check --json``): run id, status, outcome, ready, complete, first failure."""
        return self.decide().as_dict(self.run_id)


def run_name(run_id: str, nth: int, taken: Callable[[str], bool]) -> str:
    """How the ``nth`` run (1-based) with this run id in one file is listed: the id, then ``id#2``, ``id#3``…

    A name already ``taken`` (a run whose own id looks like ``id#2``) is skipped for
    the next free number, so names stay distinct.
    """
    if nth <= 1 and not taken(run_id):
        return run_id
    k = max(nth, 2)
    while taken(f"{run_id}#{k}"):
        k += 1
    return f"{run_id}#{k}"


@dataclass
class TraceFile:
    path: str
    runs: dict[str, RunData]
    problems: list[Problem]


def check_record(obj: Any) -> str | None:
    """Why a parsed line is not a trace record, or None when it is one."""
    if not isinstance(obj, dict):
        return f"expected a JSON object, got {type(obj).__name__}"
    rec = obj.get("rec")
    if rec not in RECORD_KINDS:
        return f"unknown record kind {rec!r}"
    if not isinstance(obj.get("run_id"), str) or not obj["run_id"]:
        return "record has no run_id"
    if rec == "event":
        if obj.get("lane") not in LANES:
            return f"event has unknown lane {obj.get('lane')!r}"
        if obj.get("outcome") not in OUTCOMES:
            return f"event has unknown outcome {obj.get('outcome')!r}"
        if not isinstance(obj.get("seq"), int):
            return "event has no integer seq"
    return None


def parse_line(raw: bytes) -> tuple[dict[str, Any] | None, str | None]:
    """One line as a record, or why it is not one (every reader's rule for a line)."""
    problem = limits.too_long(getattr(raw, "length", len(raw)))
    if problem:
        return None, problem
    try:
        obj = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        try:
            raw.decode("utf-8")
        except UnicodeDecodeError as uexc:
            return None, f"not valid UTF-8 at byte {uexc.start}"
        return None, f"malformed JSON: {exc}"
    problem = check_record(obj)
    if problem is None and limits.may_be_too_deep(raw) and limits.too_deep(obj):
        problem = f"line nests deeper than {limits.MAX_DEPTH} levels of arrays and objects"
    return (None, problem) if problem else (obj, None)


def record_warning(obj: dict[str, Any]) -> str | None:
    """A record that reads, yet not reliably: a run line of a newer trace format (see docs/trace-format.md)."""
    return version_problem(obj.get("trace_version", None)) if obj["rec"] == REC_RUN else None


def iter_lines(path: str | os.PathLike[str]) -> Iterable[tuple[int, bytes]]:
    """Numbered non-blank lines without their line ends; a leading BOM is dropped.

    A line longer than the limit is found while reading: it yields a :class:`LongLine`
    with its first bytes and its true length, never the whole line.
    """
    fd = open_trace(path)
    with os.fdopen(fd, "rb", buffering=0) as fh:
        yield from _lines_of(fh)


def iter_fd_lines(fd: int) -> Iterable[tuple[int, bytes]]:
    """:func:`iter_lines` of an open descriptor (standard input spooled), read from its start; ``fd``
    stays open."""
    with os.fdopen(os.dup(fd), "rb", buffering=0) as fh:
        fh.seek(0)
        yield from _lines_of(fh)


def _lines_of(fh: Any) -> Iterator[tuple[int, bytes]]:
    limit = limits.MAX_LINE_BYTES
    number, parts, held, length, crs = 1, [], 0, 0, 0
    first = True
    while True:
        block = fh.read(READ_BLOCK)
        if not block:
            break
        if first:
            first = False
            if block.startswith(BOM):
                block = block[len(BOM):]
        start = 0
        while True:
            end = block.find(b"\n", start)
            piece = block[start:] if end < 0 else block[start:end]
            if piece:
                kept = piece.rstrip(b"\r")
                crs = crs + len(piece) if not kept else len(piece) - len(kept)  # trailing CRs of the line so far
                length += len(piece)
                if held <= limit:  # keep at most limit + 1 bytes of one line
                    piece = piece[:limit + 1 - held]
                    parts.append(piece)
                    held += len(piece)
            if end < 0:
                break
            yield from _finished(number, parts, length - crs)
            number, parts, held, length, crs = number + 1, [], 0, 0, 0
            start = end + 1
    if length:
        yield from _finished(number, parts, length - crs)


def _finished(number: int, parts: list[bytes], length: int) -> Iterator[tuple[int, bytes]]:
    """A whole line read: ``length`` is its true length without its line end."""
    raw = b"".join(parts)
    if length > limits.MAX_LINE_BYTES:
        line = LongLine(raw[:limits.MAX_LINE_BYTES + 1])
        line.length = length
        yield number, line
        return
    raw = raw.rstrip(b"\r\n")
    if raw.strip():
        yield number, raw


_KINDS = {stat.S_IFIFO: "a FIFO", stat.S_IFCHR: "a character device", stat.S_IFBLK: "a block device",
          stat.S_IFSOCK: "a socket", stat.S_IFDIR: "a directory"}


#: file systems whose files the kernel makes as they are read: their size is 0 or one page, whatever they hold
_KERNEL_MADE = {"proc", "sysfs", "debugfs", "tracefs", "securityfs", "cgroup", "cgroup2", "configfs", "pstore",
                "bpf", "efivarfs", "selinuxfs", "fusectl", "binfmt_misc", "rpc_pipefs", "nfsd", "nsfs"}


def kernel_made(st: os.stat_result) -> str | None:
    """``"proc at /proc"`` when the file is on a file system of the kernel's own (procfs, sysfs…), else None.

    Only a size that such a file would report (0 or a whole number of pages) is looked up, in
    ``/proc/self/mountinfo`` (Linux); where that cannot be read, a file is taken for a plain one.
    """
    if st.st_size % 4096:
        return None
    device = f"{os.major(st.st_dev)}:{os.minor(st.st_dev)}"
    try:
        with open("/proc/self/mountinfo", "rb") as fh:
            table = fh.read().decode("utf-8", errors="replace")
    except OSError:
        return None
    for line in table.splitlines():
        fields = line.split(" ")
        if len(fields) > 6 and fields[2] == device and "-" in fields[6:]:
            kind = fields[fields.index("-", 6) + 1]
            if kind in _KERNEL_MADE:
                return f"{kind} at {fields[4].replace(chr(92) + '040', ' ')}"
    return None


def open_trace(path: str | os.PathLike[str]) -> int:
    """A read-only descriptor on a regular file, or :class:`TraceReadError` saying why not.

    Opened without blocking (a FIFO would wait for a writer forever) and checked on the
    open descriptor, so what is read is what was checked. Standard input is read
    through ``-`` instead (:mod:`tracetui.trace.spool`).
    """
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        raise TraceReadError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise TraceReadError(f"{path}: is a directory, not a trace file") from None
    except PermissionError:
        raise TraceReadError(f"{path}: permission denied") from None
    except OSError as exc:
        raise TraceReadError(f"{path}: cannot open: {exc.strerror or exc}") from None
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            raise TraceReadError(f"{path}: is a directory, not a trace file")
        if not stat.S_ISREG(mode):
            kind = _KINDS.get(stat.S_IFMT(mode), "not a regular file")
            raise TraceReadError(f"{path}: is {kind}, not a regular file; to read a stream, "
                                 f"pipe it to standard input and name the file -")
        made = kernel_made(os.fstat(fd))
        if made is not None:
            raise TraceReadError(f"{path}: is a file the kernel makes as it is read ({made}), whose size is not "
                                 f"known beforehand (it says {os.fstat(fd).st_size} bytes), so it is not read as a "
                                 f"trace file; to read it, pipe it to standard input and name the file -")
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd


def open_checked(path: str | os.PathLike[str]) -> Path:
    """Check that ``path`` is a readable regular file (:func:`open_trace`), without keeping it open."""
    os.close(open_trace(path))
    return Path(path)


def read_trace(path: str | os.PathLike[str]) -> TraceFile:
    """Read a whole (small) trace: every run's records, and the lines that are not records."""
    p = open_checked(path)
    runs: dict[str, RunData] = {}  # by listed name: the run id, or id#2, id#3… for repeats
    newest: dict[str, RunData] = {}  # by run id: the run its next records go to
    count: dict[str, int] = {}  # by run id, once it repeats: how many runs have that id
    problems: list[Problem] = []
    for number, raw in iter_lines(p):
        obj, problem = parse_line(raw)
        if problem:
            problems.append(Problem(number, problem, str(path)))
            continue
        run_id = obj["run_id"]
        run = newest.get(run_id)
        if run is None or not run.accepts(obj):
            nth = 1 if run is None else count.get(run_id, 1) + 1
            if nth > 1:
                count[run_id] = nth
            name = run_name(run_id, nth, runs.__contains__)
            run = newest[run_id] = runs[name] = RunData(name, first_line=number)
        problem = run.add(obj) or record_warning(obj)
        if problem:
            problems.append(Problem(number, problem, str(path)))
    if not runs:
        detail = "it is empty" if p.stat().st_size == 0 else "no line is a trace record"
        raise TraceReadError(f"{path}: no runs found ({detail})", problems)
    return TraceFile(str(path), runs, problems)
