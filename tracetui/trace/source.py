"""Where the explorer's runs come from: the contract between loading and the UI.

The UI only ever sees :class:`RunEntry` rows (small: one per run, enough for the
run list, filters and lane counts) and asks for one run's full records with
:meth:`TraceSource.load` when it is selected. A source may be a file indexed in
the background (:mod:`tracetui.trace.index`), a small file read whole, or runs
made in memory (the built-in demo, :mod:`tracetui.loop.demo`).
"""
from __future__ import annotations

from operator import attrgetter
from typing import Any, Protocol, Sequence

import msgspec

from tracetui.trace.failure import Failure
from tracetui.trace.reader import Problem, RunData, read_trace
from tracetui.trace.verdict import FAILED, READY


class RunShape(msgspec.Struct, frozen=True, gc=False):
    """Everything a run-list row says but its run id. Runs of a huge trace mostly end alike, so rows
    that say the same share one (:meth:`RunEntry.of` with a table of them)."""

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


def _shape_field(name: str) -> Any:
    return property(attrgetter(f"shape.{name}"), doc=f"The run's {name} (its shape's).")


#: rows' shapes shared through one table at the most (beyond it, each new one is a row's own)
MAX_SHARED_SHAPES = 1 << 14


class RunEntry(msgspec.Struct, gc=False):
    """One run-list row: its run id and its :class:`RunShape`, whose fields it reads as its own.

    32 bytes a row when shapes are shared (a huge trace has one row per run), and a struct the
    garbage collector does not track (a row leads to no other row, so to no cycle).
    """

    run_id: str
    shape: RunShape

    @classmethod
    def of(cls, run_id: str, source: int, scenario: str | None, ablation: str | None, status: str, outcome: str,
           complete: bool, first_failure: Failure | None, model_calls: int, tool_calls: int, recovered: int,
           events: int, shapes: dict[tuple, RunShape] | None = None) -> "RunEntry":
        """A row from its fields; its shape taken from ``shapes`` when one says the same (and added)."""
        fields = (source, scenario, ablation, status, outcome, complete, first_failure, model_calls, tool_calls,
                  recovered, events)
        if shapes is None:
            return cls(run_id, RunShape(*fields))
        return cls(run_id, shared_shape(shapes, fields))

    # its shape's fields, read as its own (through C: the run list reads them for every row)
    source = _shape_field("source")
    scenario = _shape_field("scenario")
    ablation = _shape_field("ablation")
    status = _shape_field("status")
    outcome = _shape_field("outcome")
    complete = _shape_field("complete")
    first_failure = _shape_field("first_failure")
    model_calls = _shape_field("model_calls")
    tool_calls = _shape_field("tool_calls")
    recovered = _shape_field("recovered")
    events = _shape_field("events")

    @property
    def ready(self) -> bool:
        return self.shape.outcome == READY

    @property
    def failed(self) -> bool:
        return self.shape.outcome == FAILED

    @property
    def failing_lane(self) -> str | None:
        failure = self.shape.first_failure
        return failure.lane if failure is not None else None


def shape_key(fields: tuple) -> tuple:
    """What tells shapes apart: their fields, the first failure by identity (failures are shared
    objects, and unhashable). Counts are ints, never bools (1 and True would be equal keys)."""
    return (*fields[:6], id(fields[6]), *fields[7:])


def shared_shape(shapes: dict[tuple, RunShape], fields: tuple) -> RunShape:
    """The shape of ``fields`` from the table, added when new and the table has room."""
    key = shape_key(fields)
    shape = shapes.get(key)
    if shape is None:
        shape = RunShape(*fields)
        if len(shapes) < MAX_SHARED_SHAPES:
            shapes[key] = shape  # (the shape holds its failure: its identity stays its own)
    return shape


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
    return RunEntry.of(
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
