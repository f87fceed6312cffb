"""Run-list rows made from summary lines alone, equal to :func:`~tracetui.trace.source.entry_from_run`.

A summary gives its row's fields (:func:`row_fields`) when it says everything the row shows; a run
whose summary does not (or that has none) gets its row from its parsed lines instead. A chunk
linked in bulk has its summaries' fields read where the chunk is read (:class:`ChunkRows`); only
the rows are made here (:class:`RowMaker`).

A huge trace has one row per run, and most runs fail in a few hundred ways: first failures are
shared between rows (one :class:`~tracetui.trace.failure.Failure` per distinct one), and so are
rows' shapes (:class:`~tracetui.trace.source.RunShape`); beyond :data:`MAX_SHARED_FAILURES` distinct
failures, a row's reason stays in the file (:class:`~tracetui.trace.failure.DeferredFailure`) until
it is shown.
"""
from __future__ import annotations

from dataclasses import dataclass
from itertools import compress, repeat
from typing import Any

from tracetui.trace.failure import DeferredFailure, Failure
from tracetui.trace.format import ANSWER_READY
from tracetui.trace.index.runs import intern_name
from tracetui.trace.source import RunEntry, RunShape, shared_shape
from tracetui.trace.verdict import FAILED, READY, checked_failure

#: Distinct first failures shared between entries; beyond it, each entry's reason stays in the file.
MAX_SHARED_FAILURES = 4096
_STATUSES = {ANSWER_READY: ANSWER_READY}


class _Outcomes(dict):
    """A row's outcome by the number of its first failure: READY without one (-1), else FAILED."""

    def __missing__(self, key: int) -> str:
        return FAILED


_OUTCOMES = _Outcomes({-1: READY})

#: (made, status, checked first failure, model_calls, tool_calls, recovered): what a summary gives its
#: row; ``made``: whether it gives the row alone (else the run's events do)
RowFields = tuple[bool, str, "dict[str, Any] | None", int, int, int]
_NOT_MADE: RowFields = (False, ANSWER_READY, None, 0, 0, 0)


def row_fields(summary: Any) -> RowFields:
    """The row fields of a summary read with attributes (:class:`~tracetui.trace.index.records.SummaryRead`,
    whose metrics and first failure may be structs, or :class:`~tracetui.trace.index.records.SummaryFields`),
    read as :func:`~tracetui.trace.source.entry_from_run` reads the parsed run's."""
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
    return True, status, checked, _count(mc), _count(tc), _count(rec)


def _count(value: Any) -> int:
    """A count as the run list shows it: a non-negative int, else 0 (a bool, a float, a string…)."""
    return value if type(value) is int and value >= 0 else 0


@dataclass(slots=True)
class ChunkRows:
    """The row fields of a chunk's summaries (:func:`row_fields`), made without the scan's state, as a
    few lists.

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
    def of(cls, rows: list[RowFields]) -> "ChunkRows":
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


def failure_key(failure: Any) -> Any:
    """What tells first failures apart for sharing: their items with each value's type, since
    ``1``, ``1.0`` and ``true`` are equal in Python yet not alike to the verdict rule (TypeError:
    unhashable values, not shared)."""
    return tuple([(k, v, type(v)) for k, v in failure.items()])


class RowMaker:
    """Makes one source's run-list rows from summaries, sharing first failures and shapes."""

    def __init__(self) -> None:
        self.failures: dict[tuple, Failure] = {}  # by failure_key of the checked failure
        self.shapes: dict[tuple, RunShape] = {}  # rows' shapes, by shape_key

    def shared_failure(self, checked: dict[str, Any]) -> tuple[Failure | None, bool]:
        """(the Failure to show for a checked first failure, whether it is shared): None when no more
        are shared (each run's row then keeps its reason in the file); not shared when a value is
        unhashable (a list, an object)."""
        try:
            key = failure_key(checked)
            found = self.failures.get(key)
        except TypeError:
            return Failure.of(checked), False
        if found is None:
            if len(self.failures) >= MAX_SHARED_FAILURES:
                return None, False
            found = self.failures[key] = Failure.of(checked)
        return found, True

    def from_summary(self, f: Any, r: int, run_id: str, summary: dict[str, Any]) -> RunEntry | None:
        """Run ``r``'s row from its summary (a dict) and the scan's counts; None when it needs its events.
        The tests hold it equal to :func:`~tracetui.trace.source.entry_from_run` of the parsed run."""
        from tracetui.trace.index.records import SummaryFields

        get = summary.get
        made, status, checked, model_calls, tool_calls, recovered = row_fields(
            SummaryFields(None, None, get("status"), get("metrics"), get("first_failure")))
        if not made:
            return None
        failure, shared = self.shared_failure(checked) if checked is not None else (None, True)
        if checked is not None and failure is None:
            failure = DeferredFailure(checked, f, run_id)
        runs = f.runs
        fields = (f.source, runs.scenario[r], runs.ablation[r], _STATUSES.get(status) or intern_name(status),
                  FAILED if checked is not None else READY, True, failure, model_calls, tool_calls, recovered,
                  runs.nevents[r])
        return RunEntry(run_id, shared_shape(self.shapes, fields) if shared else RunShape(*fields))

    def entries(self, f: Any, rs: list[int], rows: ChunkRows) -> list[RunEntry | None]:
        """The rows of runs ``rs`` from their summaries' fields, None where a run needs its events;
        no Python work per run but for a row's shape seen for the first time."""
        import numpy as np

        runs = f.runs
        looked = [self.shared_failure(checked) for checked in rows.failures] + [(None, True)]  # [-1]: none
        failures, shared = [ff for ff, _ in looked], [ok for _, ok in looked]
        statuses = [_STATUSES.get(status) or intern_name(status) for status in rows.statuses]
        made = rows.made
        every = all(made)
        picked = rs if every else list(compress(rs, made))
        failure = rows.failure if every else list(compress(rows.failure, made))
        names = list(map(runs.names.__getitem__, picked))
        ffs = list(map(failures.__getitem__, failure))
        if any(ff is None for ff in failures[:-1]):  # beyond the shared ones: each run's reason stays in the file
            for j in [j for j, number in enumerate(failure) if number >= 0 and ffs[j] is None]:
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
                fields = (*key[:6], ffs[j], *key[7:])
                shapes[j] = shared_shape(self.shapes, fields) if shared[failure[j]] else RunShape(*fields)
        made_rows = map(RunEntry, names, shapes)
        if every:
            return list(made_rows)
        return [next(made_rows) if ok else None for ok in made]
