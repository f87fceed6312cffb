"""Where the explorer's runs come from: the contract between loading and the UI.

The UI only ever sees :class:`RunEntry` rows (small: one per run, enough for the
run list, filters and lane counts) and asks for one run's full records with
:meth:`TraceSource.load` when it is selected. A source may be a file indexed in
the background (:mod:`tracetui.trace.index`), a small file read whole, or runs
made in memory (the built-in demo, :mod:`tracetui.loop.demo`).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol, Sequence

from tracetui.trace.failure import Failure
from tracetui.trace.reader import Problem, RunData, read_trace
from tracetui.trace.verdict import FAILED, READY


@dataclass(slots=True)
class RunEntry:
    run_id: str
    source: int  # which file of a multi-file source (0 for memory)
    scenario: str | None
    ablation: str | None
    status: str  # "answer_ready", a failure code, or "incomplete"
    outcome: str  # "ready", "failed" or "incomplete": see tracetui.trace.verdict
    complete: bool  # False when the run's summary line is missing
    first_failure: Failure | None  # {"lane", "seq", "code", "reason", "decided_at"}, compact
    model_calls: int
    tool_calls: int
    recovered: int
    events: int

    @property
    def ready(self) -> bool:
        return self.outcome == READY

    @property
    def failed(self) -> bool:
        return self.outcome == FAILED

    @property
    def failing_lane(self) -> str | None:
        return self.first_failure.lane if self.first_failure is not None else None


def _count(metrics: dict[str, Any], key: str) -> int:
    value = metrics.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


def _name(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def entry_from_run(data: RunData, source: int = 0) -> RunEntry:
    """The run-list row for a parsed run; tolerant of odd field types (trace content is untrusted)."""
    verdict = data.decide()
    inputs = data.inputs if isinstance(data.inputs, dict) else {}
    metrics = (data.summary or {}).get("metrics")
    metrics = metrics if isinstance(metrics, dict) else {}
    return RunEntry(
        run_id=data.run_id, source=source, scenario=_name(inputs.get("scenario")),
        ablation=_name(inputs.get("ablation")), status=verdict.status, outcome=verdict.outcome,
        complete=verdict.complete, first_failure=Failure.of(verdict.first_failure),
        model_calls=_count(metrics, "model_calls"), tool_calls=_count(metrics, "tool_calls"),
        recovered=_count(metrics, "recovered") if metrics else sum(
            1 for e in data.events if e.get("outcome") == "recovered"),
        events=len(data.events),
    )


class TraceSource(Protocol):
    label: str

    def runs(self) -> Sequence[RunEntry]: ...

    def problems(self) -> Sequence[Problem]: ...

    def load(self, entry: RunEntry) -> RunData: ...


class MemorySource:
    """Runs held as parsed records: the demo, replays, and small files."""

    def __init__(self, runs: Sequence[RunData], label: str, problems: Sequence[Problem] = ()):
        self.label = label
        self._data = {r.run_id: r for r in runs}
        self._entries = [entry_from_run(r) for r in runs]
        self._problems = list(problems)

    def runs(self) -> Sequence[RunEntry]:
        return self._entries

    def problems(self) -> Sequence[Problem]:
        return self._problems

    def load(self, entry: RunEntry) -> RunData:
        return self._data[entry.run_id]


def run_data_from_records(records: list[dict[str, Any]]) -> RunData:
    data = RunData(records[0]["run_id"])
    for record in records:
        data.add(record)
    return data


def file_source(path: str) -> MemorySource:
    """Read a small trace whole. Raises :class:`~tracetui.trace.reader.TraceReadError`."""
    trace = read_trace(path)
    return MemorySource(list(trace.runs.values()), path, trace.problems)
