"""Run-list rows made from summary lines alone, equal to :func:`~tracetui.trace.source.entry_from_run`.

A huge trace has one row per run, and most runs fail in a few hundred ways: first
failures are shared between rows (one :class:`~tracetui.trace.failure.Failure` per
distinct one), and beyond :data:`MAX_SHARED_FAILURES` distinct ones, a row's reason
stays in the file (:class:`~tracetui.trace.failure.DeferredFailure`) until it is shown.
"""
from __future__ import annotations

from typing import Any

from tracetui.trace.failure import DeferredFailure, Failure, ReasonSource
from tracetui.trace.format import ANSWER_READY
from tracetui.trace.index.runs import intern_name
from tracetui.trace.source import RunEntry
from tracetui.trace.verdict import FAILED, READY, checked_failure

#: Distinct first failures shared between entries; beyond it, each entry's reason stays in the file.
MAX_SHARED_FAILURES = 4096
_STATUSES = {ANSWER_READY: ANSWER_READY}
_UNSEEN = object()


class Rows:
    """Makes rows from summaries, sharing their first failures."""

    def __init__(self) -> None:
        self.failures: dict[tuple, Failure | None] = {}
        self.by_struct: dict[Any, Failure | None] = {}  # the same, by a summary's first failure read as a struct

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
        return RunEntry(run_id, f.source, runs.scenario[r], runs.ablation[r], status, outcome, True, ff,
                        model_calls if type(model_calls) is int else _int(model_calls),
                        tool_calls if type(tool_calls) is int else _int(tool_calls),
                        recovered if type(recovered) is int else _int(recovered), runs.nevents[r])

    def from_summaries(self, f: Any, rs: list[int], summaries: list[Any]) -> list[RunEntry | None]:
        """:meth:`from_summary` for many runs at once, with less work per run: summaries with attributes
        (:class:`~tracetui.trace.index.records.SummaryRead`, whose metrics and first failure may be
        structs, or :class:`~tracetui.trace.index.records.SummaryFields`)."""
        import numpy as np
        from msgspec.structs import asdict

        from tracetui.trace.index.records import UNSET, FirstFailure, Metrics

        runs = f.runs
        names, scenarios, ablations, source = runs.names, runs.scenario, runs.ablation, f.source
        nevents = np.frombuffer(runs.nevents, np.int64)[rs].tolist()
        shared, failures, by_struct = self.shared, self.failures, self.by_struct
        out: list[RunEntry | None] = []
        append = out.append
        for r, summary, events in zip(rs, summaries, nevents):
            metrics, status, ff = summary.metrics, summary.status, summary.first_failure
            if type(metrics) is Metrics:
                model_calls, tool_calls, recovered = metrics.model_calls, metrics.tool_calls, metrics.recovered
                if model_calls is UNSET and not any(value is not UNSET for value in asdict(metrics).values()):
                    metrics = None  # {}: recovered is counted from the events
            elif type(metrics) is dict and metrics:
                model_calls, tool_calls, recovered = metrics.get("model_calls"), metrics.get("tool_calls"), \
                    metrics.get("recovered")
            else:
                metrics = None
            if metrics is None or type(status) is not str or not status:
                append(None)
                continue
            if ff is None:
                if status != ANSWER_READY:
                    append(None)
                    continue
                outcome = READY
            else:
                if status == ANSWER_READY:
                    append(None)
                    continue
                if type(ff) is FirstFailure:
                    try:
                        found = by_struct.get(ff, _UNSEEN)
                    except TypeError:  # a value that is a list or an object
                        found = shared(asdict(ff), f, names[r])
                    else:
                        if found is _UNSEEN:
                            found = shared(asdict(ff), f, names[r])
                            if type(found) is not DeferredFailure:
                                by_struct[ff] = found
                    ff = found
                else:
                    try:
                        found = failures.get(tuple(ff.items()), _UNSEEN)
                    except (AttributeError, TypeError):
                        found = _UNSEEN
                    ff = shared(ff, f, names[r]) if found is _UNSEEN else found
                if ff is None:
                    append(None)
                    continue
                outcome = FAILED
                status = ff.code if ff.code == status else (_STATUSES.get(status) or intern_name(status))
            append(RunEntry(names[r], source, scenarios[r], ablations[r], status, outcome, True, ff,
                            model_calls if type(model_calls) is int else _int(model_calls),
                            tool_calls if type(tool_calls) is int else _int(tool_calls),
                            recovered if type(recovered) is int else _int(recovered), events))
        return out

    def shared(self, failure: Any, f: ReasonSource, run_name: str) -> Failure | None:
        """The checked first failure (:func:`~tracetui.trace.verdict.checked_failure`: None when
        malformed), one record per distinct one: 200,000 runs mostly fail in a few hundred ways.
        Beyond MAX_SHARED_FAILURES distinct ones, each keeps its reason in the file."""
        try:
            key = tuple(failure.items())
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
