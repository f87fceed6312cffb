"""Reading traces whole: for ``check``, ``replay`` and tests.

Tolerant by design: a malformed, truncated or non-UTF-8 line becomes a
:class:`Problem` with its line number and every good run still loads. A run
without a summary (its writer crashed) is kept, marked incomplete, with its
verdict derived from its events by the same rule the loop uses. (The explorer
opens huge files through :mod:`tracetui.trace.index` instead, which never holds
parsed records for the whole file.)
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

import orjson

from tracetui.loop.recorder import first_failure, verdict_status
from tracetui.trace.format import LANES, OUTCOMES, RECORD_KINDS

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

    def add(self, record: dict[str, Any]) -> None:
        """File a parsed record under this run by its kind."""
        kind = record["rec"]
        if kind == "run":
            self.run = record
        elif kind == "event":
            self.events.append(record)
        else:
            self.summary = record

    @property
    def complete(self) -> bool:
        return self.summary is not None

    @property
    def inputs(self) -> dict[str, Any] | None:
        return self.run.get("inputs") if self.run else None

    def verdict(self) -> dict[str, Any]:
        """Status and first failing boundary; derived from events when the summary is missing."""
        if self.summary is not None:
            failure = self.summary.get("first_failure")
            if not isinstance(failure, dict) or not isinstance(failure.get("lane"), str):
                failure = first_failure(self.events) if failure is not None else None
            status = self.summary.get("status")
            if not isinstance(status, str) or not status:
                status = verdict_status(failure)
        else:
            failure = first_failure(self.events)
            status = verdict_status(failure) if failure else "incomplete"
        return {"run_id": self.run_id, "status": status, "ready": status == "answer_ready",
                "complete": self.complete, "first_failure": failure}


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
    runs: dict[str, RunData] = {}
    problems: list[Problem] = []
    for number, raw in iter_lines(p):
        obj, problem = parse_line(raw)
        if problem:
            problems.append(Problem(number, problem, str(path)))
            continue
        run = runs.get(obj["run_id"])
        if run is None:
            run = runs[obj["run_id"]] = RunData(obj["run_id"], first_line=number)
        run.add(obj)
    if not runs:
        detail = "it is empty" if p.stat().st_size == 0 else "no line is a trace record"
        raise TraceReadError(f"{path}: no runs found ({detail})")
    return TraceFile(str(path), runs, problems)
