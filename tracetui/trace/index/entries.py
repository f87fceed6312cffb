"""Run-list rows made from summary lines alone, equal to :func:`~tracetui.trace.source.entry_from_run`.

A huge trace has one row per run, and most runs fail in a few hundred ways: first
failures are shared between rows (one :class:`~tracetui.trace.failure.Failure` per
distinct one), and beyond :data:`MAX_SHARED_FAILURES` distinct ones, a row's reason
stays in the file (:class:`~tracetui.trace.failure.DeferredFailure`) until it is shown.

A chunk linked in bulk has its summaries' fields read where it is read
(:func:`summary_rows`, maybe in the worker process); only the rows are made here.
"""
from __future__ import annotations

from dataclasses import dataclass
from itertools import compress, repeat
from typing import Any

from tracetui.trace.failure import DeferredFailure, Failure, ReasonSource
from tracetui.trace.format import ANSWER_READY
from tracetui.trace.index.runs import intern_name
from tracetui.trace.source import MAX_SHARED_SHAPES, RunEntry, RunShape
from tracetui.trace.verdict import FAILED, READY, checked_failure

#: Distinct first failures shared between entries; beyond it, each entry's reason stays in the file.
MAX_SHARED_FAILURES = 4096
_STATUSES = {ANSWER_READY: ANSWER_READY}
_UNSEEN = object()
_PER_RUN = object()  # a failure not shared: each run's row keeps its own


class _Outcomes(dict):
    """A row's outcome by the number of its first failure: READY without one (-1), else FAILED."""

    def __missing__(self, key: int) -> str:
        return FAILED


_OUTCOMES = _Outcomes({-1: READY})


def failure_key(failure: Any) -> Any:
    """What tells first failures apart for sharing: their items with each value's type, since
    ``1``, ``1.0`` and ``true`` are equal in Python yet not alike to the verdict rule (TypeError:
    unhashable values, not shared)."""
    return tuple([(k, v, type(v)) for k, v in failure.items()])


class Rows:
    """Makes rows from summaries, sharing their first failures."""

    def __init__(self) -> None:
        self.failures: dict[tuple, Failure | None] = {}  # by failure_key of the raw or checked failure
        self.shapes: dict[tuple, RunShape] = {}  # rows' shapes, by shape_key

    def from_summary(self, f: Any, r: int, run_id: str, summary: dict[str, Any]) -> RunEntry | None:
        """The run's entry from its summary and the scan's counts; None when it needs its events.

        Mirrors :func:`~tracetui.trace.source.entry_from_run` for a complete run (the
        tests hold the two equal) without building a RunData per run.
        """
        get = summary.get
        metrics, status, ff = get("metrics"), get("status"), get("first_failure")
        if not metrics or type(metrics) is not dict or not status or not isinstance(status, str):
            return None  # recovered counted from events, or status derived: done from the parsed run
        if ff is not None:
            ff = self.shared(ff, f, run_id)
            if ff is None:
                return None  # malformed: derived from the events, as the reader does
            if status == ANSWER_READY:
                return None  # a summary that contradicts itself: decided from the parsed run
            outcome = FAILED
            status = ff.code if ff.code == status else (_STATUSES.get(status) or intern_name(status))
        elif status != ANSWER_READY:
            return None  # a failure claimed without saying where: the events may show it
        else:
            outcome, status = READY, ANSWER_READY
        runs = f.runs
        model_calls, tool_calls, recovered = metrics.get("model_calls"), metrics.get("tool_calls"), metrics.get("recovered")
        return RunEntry.of(run_id, f.source, runs.scenario[r], runs.ablation[r], status, outcome, True, ff,
                           model_calls if type(model_calls) is int else _int(model_calls),
                           tool_calls if type(tool_calls) is int else _int(tool_calls),
                           recovered if type(recovered) is int else _int(recovered), runs.nevents[r],
                           None if type(ff) is DeferredFailure else self.shapes)

    def entries(self, f: Any, rs: list[int], rows: "SummaryRows") -> list[RunEntry | None]:
        """The entries of runs ``rs`` from their summaries' fields (:func:`summary_rows`, made where the
        chunk was read), None where a run needs its events; no Python work per run but the row itself."""
        import numpy as np

        runs = f.runs
        failures = [self.shared_checked(checked) for checked in rows.failures] + [None]  # [-1]: none
        statuses = [_STATUSES.get(status) or intern_name(status) for status in rows.statuses]
        made = rows.made
        every = all(made)
        picked = rs if every else list(compress(rs, made))
        failure = rows.failure if every else list(compress(rows.failure, made))
        names = list(map(runs.names.__getitem__, picked))
        ffs = list(map(failures.__getitem__, failure))
        if any(ff is _PER_RUN for ff in failures):  # beyond the shared ones: each run's reason stays in the file
            for j in [j for j, ff in enumerate(ffs) if ff is _PER_RUN]:
                ffs[j] = DeferredFailure(rows.failures[failure[j]], f, names[j])
        nevents = np.frombuffer(runs.nevents, np.int64)[picked].tolist()
        columns = (repeat(f.source), map(runs.scenario.__getitem__, picked), map(runs.ablation.__getitem__, picked),
                   map(statuses.__getitem__, rows.status if every else compress(rows.status, made)),
                   map(_OUTCOMES.__getitem__, failure), repeat(True))
        counts = [column if every else list(compress(column, made))
                  for column in (rows.model_calls, rows.tool_calls, rows.recovered)]
        keys = list(zip(*columns, map(id, ffs), *counts, nevents))  # shape_key's, made without Python per run
        shapes = list(map(self.shapes.get, keys))
        if None in shapes:
            for j in [j for j, shape in enumerate(shapes) if shape is None]:
                key = keys[j]
                shape = RunShape(*key[:6], ffs[j], *key[7:])
                if len(self.shapes) < MAX_SHARED_SHAPES and type(ffs[j]) is not DeferredFailure:
                    self.shapes[key] = shape
                shapes[j] = shape
        made_rows = map(RunEntry, names, shapes)
        if every:
            return list(made_rows)
        return [next(made_rows) if ok else None for ok in made]

    def shared_checked(self, checked: dict[str, Any]) -> Any:
        """The shared Failure for a checked first failure; _PER_RUN when no more are shared."""
        try:
            key = failure_key(checked)
            found = self.failures.get(key, _UNSEEN)
        except TypeError:  # unhashable values: not shared
            return Failure.of(checked)
        if found is _UNSEEN:
            if len(self.failures) >= MAX_SHARED_FAILURES:
                return _PER_RUN
            found = self.failures[key] = Failure.of(checked)
        return found

    def shared(self, failure: Any, f: ReasonSource, run_name: str) -> Failure | None:
        """The checked first failure (:func:`~tracetui.trace.verdict.checked_failure`: None when
        malformed), one record per distinct one: 200,000 runs mostly fail in a few hundred ways.
        Beyond MAX_SHARED_FAILURES distinct ones, each keeps its reason in the file."""
        try:
            key = failure_key(failure)
            found = self.failures.get(key, _UNSEEN)
        except (AttributeError, TypeError):  # not a dict, or unhashable values: not shared
            return Failure.of(checked_failure(failure))
        if found is _UNSEEN:
            checked = checked_failure(failure)
            if len(self.failures) < MAX_SHARED_FAILURES:
                found = self.failures[key] = Failure.of(checked)
            else:
                found = None if checked is None else DeferredFailure(checked, f, run_name)
        return found


def _int(value: Any) -> int:
    try:
        return int(value or 0)
    except (TypeError, ValueError):
        return 0


#: (made, status, checked first failure, model_calls, tool_calls, recovered): what a summary gives its row
#: (made: whether it gives it alone; else the run's events do)
SummaryRow = tuple[bool, str, "dict[str, Any] | None", int, int, int]
_NOT_MADE: SummaryRow = (False, ANSWER_READY, None, 0, 0, 0)


def summary_row(summary: Any) -> SummaryRow:
    """The row fields of a summary read with attributes (:class:`~tracetui.trace.index.records.SummaryRead`,
    whose metrics and first failure may be structs, or :class:`~tracetui.trace.index.records.SummaryFields`),
    exactly as :meth:`Rows.from_summary` reads its dict."""
    from msgspec.structs import asdict

    from tracetui.trace.index.records import UNSET, FirstFailure, Metrics

    metrics, status, ff = summary.metrics, summary.status, summary.first_failure
    if type(metrics) is Metrics:
        mc, tc, rec = metrics.model_calls, metrics.tool_calls, metrics.recovered
        if mc is UNSET and not any(value is not UNSET for value in asdict(metrics).values()):
            return _NOT_MADE  # {}: recovered is counted from the events
    elif type(metrics) is dict and metrics:
        mc, tc, rec = metrics.get("model_calls"), metrics.get("tool_calls"), metrics.get("recovered")
    else:
        return _NOT_MADE
    if type(status) is not str or not status:
        return _NOT_MADE  # the status is derived from the events
    if ff is None:
        if status != ANSWER_READY:
            return _NOT_MADE  # a failure claimed without saying where: the events may show it
        checked = None
    else:
        if status == ANSWER_READY:
            return _NOT_MADE  # a summary that contradicts itself: decided from the parsed run
        checked = checked_failure(asdict(ff) if type(ff) is FirstFailure else ff)
        if checked is None:
            return _NOT_MADE  # malformed: derived from the events, as the reader does
    return (True, status, checked, mc if type(mc) is int else _int(mc), tc if type(tc) is int else _int(tc),
            rec if type(rec) is int else _int(rec))


@dataclass(slots=True)
class SummaryRows:
    """The row fields of a chunk's summaries (:func:`summary_row`), made without the scan's state (in the
    worker process, when one prepares the chunk) and sent as a few lists.

    Per summary: ``made``; ``status``: a number in ``statuses``; ``failure``: a number in ``failures``
    (each distinct one once), -1 when it has none; its three counts.
    """

    made: list[bool]
    status: list[int]
    statuses: list[str]
    failure: list[int]
    failures: list[dict[str, Any]]
    model_calls: list[int]
    tool_calls: list[int]
    recovered: list[int]

    @classmethod
    def of(cls, rows: list[SummaryRow]) -> "SummaryRows":
        """The rows' fields as columns, their statuses and first failures numbered (a failure once per
        object: summaries read alike share theirs, :mod:`.items`)."""
        made, statuses, failures, model_calls, tool_calls, recovered = map(list, zip(*rows)) if rows else ([],) * 6
        status_numbers = {status: k for k, status in enumerate(dict.fromkeys(statuses))}
        distinct = {id(failure): failure for failure in failures}
        distinct.pop(id(None), None)
        numbers = {key: k for k, key in enumerate(distinct)}
        numbers[id(None)] = -1
        return cls(made, list(map(status_numbers.__getitem__, statuses)), list(status_numbers),
                   list(map(numbers.__getitem__, map(id, failures))), list(distinct.values()),
                   model_calls, tool_calls, recovered)
