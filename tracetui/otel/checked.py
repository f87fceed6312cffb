"""``check`` of an OTLP/JSON file in bounded memory: each trace read into runs as it is released
(:mod:`tracetui.otel.stream`), its runs kept only as their verdicts, named once the file is read.

A run's verdict needs its events, not their data (the spans' attributes: the messages, most of a file's
bytes), so the runs are made without it (nothing of the content to redact) and dropped once judged. What is
kept per run is its verdict and where it came from (trace id, service: :func:`tracetui.otel.origin.origin`),
encoded.
The names wait for the end of the file, since a later trace may share a name's digits
(:mod:`tracetui.otel.naming`); so do the verdicts' order (that of each trace's first span, as read whole).
"""
from __future__ import annotations

import os
from typing import Any, Iterator

import orjson

from tracetui.otel.clean import Cleaner
from tracetui.otel.importer import SOURCE, plan_trace, unit_run
from tracetui.otel.naming import run_names
from tracetui.otel.no_runs import no_runs_error
from tracetui.otel.stream import Released, traces_of
from tracetui.trace.reader import Problem, TraceFile


class CheckedRun:
    """What ``check`` reads of a run: its name, where it came from and its verdict (kept encoded: a file of
    a million runs keeps a million)."""

    __slots__ = ("run_id", "_origin", "_verdict")

    def __init__(self, run_id: str, origin: str, verdict: str):
        self.run_id, self._origin, self._verdict = run_id, origin, verdict

    @property
    def run(self) -> dict[str, Any]:
        """The part of its run record :func:`tracetui.otel.origin.origin` reads."""
        return {"rec": "run", "run_id": self.run_id, "source": SOURCE, "otel": orjson.loads(self._origin)}

    def verdict(self) -> dict[str, Any]:
        return {"run_id": self.run_id, **orjson.loads(self._verdict)}  # (its run id first, as a verdict has it)


def _where(run: Any) -> str:
    """(Text, not orjson's bytes: those keep the room they were written in, kilobytes each.)"""
    otel = (run.run or {}).get("otel") or {}
    return orjson.dumps({k: otel[k] for k in ("trace_id", "service_name") if k in otel}).decode()


def named_runs(traces: Iterator[Released], verdict_only: bool) -> Iterator[tuple[int, int, tuple, Any]]:
    """(place of its trace, place in the trace, naming key, the run under a provisional name) per run."""
    cleaner = Cleaner()
    for place, spans in traces:
        for n, (root, members, complete, label, suffix) in enumerate(plan_trace(spans)):
            key = (label, suffix, members[0].trace_id)
            yield place, n, key, unit_run(root, members, complete, label, cleaner, verdict_only)


def read_checked(path: str | os.PathLike[str]) -> TraceFile:
    """The runs of an OTLP/JSON file as ``check`` needs them (see the module docstring); raises
    :class:`TraceReadError` as :func:`tracetui.otel.detect.read_otlp` does."""
    problems: list[Problem] = []
    kept: list[tuple[int, int, tuple, str, str]] = []
    shared: dict[str, str] = {}  # a verdict's text (its run id apart) once: most runs share theirs with others
    for place, n, key, run in named_runs(traces_of(path, problems), verdict_only=True):
        verdict = run.verdict()
        del verdict["run_id"]
        text = orjson.dumps(verdict).decode()
        kept.append((place, n, key, _where(run), shared.setdefault(text, text)))
    kept.sort(key=lambda k: (k[0], k[1]))
    names = run_names([k[2] for k in kept])
    runs = {name: CheckedRun(name, where, verdict) for name, (_, _, _, where, verdict) in zip(names, kept)}
    del kept
    if not runs:
        raise no_runs_error(problems, str(path))
    return TraceFile(str(path), runs, problems)
