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
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable

import orjson

from tracetui.trace.format import LANES, OUTCOMES, RECORD_KINDS
from tracetui.trace.verdict import Verdict, decide

MAX_LINE_BYTES = 16 * 1024 * 1024


class TraceReadError(Exception):
    """The input cannot be read at all (missing, a directory, no runs)."""


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
    if len(raw) > MAX_LINE_BYTES:
        return None, f"line is {len(raw)} bytes, over the {MAX_LINE_BYTES}-byte limit"
    try:
        obj = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        try:
            raw.decode("utf-8")
        except UnicodeDecodeError as uexc:
            return None, f"not valid UTF-8 at byte {uexc.start}"
        return None, f"malformed JSON: {exc}"
    problem = check_record(obj)
    return (None, problem) if problem else (obj, None)


def iter_lines(path: str | os.PathLike[str]) -> Iterable[tuple[int, bytes]]:
    with open(path, "rb") as fh:
        for number, raw in enumerate(fh, 1):
            raw = raw.rstrip(b"\r\n")
            if raw.strip():
                yield number, raw


def open_checked(path: str | os.PathLike[str]) -> Path:
    p = Path(path)
    if not p.exists():
        raise TraceReadError(f"{path}: no such file")
    if p.is_dir():
        raise TraceReadError(f"{path}: is a directory, not a trace file")
    if not os.access(p, os.R_OK):
        raise TraceReadError(f"{path}: permission denied")
    return p


def read_trace(path: str | os.PathLike[str]) -> TraceFile:
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
        problem = run.add(obj)
        if problem:
            problems.append(Problem(number, problem, str(path)))
    if not runs:
        detail = "it is empty" if p.stat().st_size == 0 else "no line is a trace record"
        raise TraceReadError(f"{path}: no runs found ({detail})")
    return TraceFile(str(path), runs, problems)
