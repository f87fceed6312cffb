"""Re-run a recorded run, with or without one edited field, and compare.

Re-running starts from the run's recorded inputs through the same loop, so with no
edit it reproduces the original byte for byte. Tool state is rebuilt from the
inputs and recorded/real exchanges are played from the trace: a replay never has
a side effect outside the process.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

from tracetui.loop.inputs import inputs_problem
from tracetui.loop.runner import run_inputs
from tracetui.replay.edit import edited_inputs, editable_document
from tracetui.replay.pointer import EditError
from tracetui.trace.reader import RunData
from tracetui.trace.source import run_data_from_records

COMPARED = ("lane", "kind", "outcome", "code", "call_id", "summary")


@dataclass
class EventChange:
    seq: int
    before: dict[str, Any] | None
    after: dict[str, Any] | None

    @property
    def verdict_changed(self) -> bool:
        """True when the event's outcome or words changed, not only the data it carries."""
        if self.before is None or self.after is None:
            return True
        return any(self.before.get(k) != self.after.get(k) for k in COMPARED)


@dataclass
class ReplayOutcome:
    original: RunData
    replayed: RunData
    edits: list[tuple[str, Any]]
    changes: list[EventChange]

    @property
    def before(self) -> dict[str, Any]:
        return self.original.verdict()

    @property
    def after(self) -> dict[str, Any]:
        return self.replayed.verdict()

    @property
    def records(self) -> list[dict[str, Any]]:
        return [r for r in (self.replayed.run, *self.replayed.events, self.replayed.summary) if r is not None]


def replay(run: RunData, edits: list[tuple[str, Any]] = (), command: Sequence[str] | None = None,
           **options: Any) -> ReplayOutcome:
    """Re-run ``run`` with ``edits`` (JSON Pointer, value) applied in order.

    A recording of the user's own agent (``source: record``) is re-run by running ``command`` (the user's,
    from their command line; never one read from a trace) against its recording; ``options`` go to
    :func:`tracetui.replay.agent_replay.rerun_records` (where the agent's output goes). A built-in run
    takes no command."""
    from tracetui.replay import agent_replay

    if agent_replay.is_recorded(run):
        return _replay_agent(run, list(edits), command, **options)
    if command:
        raise EditError(f"run {run.run_id} is a run of tracetui's built-in loop: it re-runs from its recorded "
                        f"inputs, without a command; leave out the -- COMMAND")
    editable_document(run)  # raises EditError when the run cannot be re-run
    current = run
    for path, value in edits:
        inputs = edited_inputs(current, path, value)
        current = RunData(current.run_id, run={**(current.run or {}), "inputs": inputs},
                          events=current.events, summary=current.summary)
    problem = inputs_problem(current.inputs)
    if problem:
        raise EditError(f"cannot re-run: {problem}")
    try:
        # the id the records were written with (a listed name may carry a "#2" for a repeated id)
        result = run_inputs((run.run or {}).get("run_id", run.run_id), current.inputs)
    except Exception as exc:  # noqa: BLE001 - an edit the loop cannot take must not crash the caller
        raise EditError(f"cannot re-run with this edit: {loop_failure_words(exc)}") from exc
    replayed = run_data_from_records(result.records)
    return ReplayOutcome(run, replayed, list(edits), diff_events(run.events, replayed.events))


def _replay_agent(run: RunData, edits: list[tuple[str, Any]], command: Sequence[str] | None,
                  **options: Any) -> ReplayOutcome:
    from tracetui.replay import agent_replay

    records = agent_replay.rerun_records(run, edits, command or (), **options)
    if agent_replay.interrupted(records):  # stopped by the user: no result to compare, nor to judge an edit by
        raise agent_replay.RerunInterrupted("the re-run was stopped before the agent ended")
    why = agent_replay.not_started(records)
    if why:
        raise EditError(f"cannot re-run: {why}")
    replayed = run_data_from_records(records)
    return ReplayOutcome(run, replayed, list(edits), diff_events(run.events, replayed.events))


def loop_failure_words(exc: BaseException) -> str:
    """Why the loop stopped on an edited input, in words rather than the exception's own message."""
    from tracetui.trace.tool_schema import SchemaUnusable

    if isinstance(exc, SchemaUnusable):  # its words name the $ref or pattern, and say nothing was fetched
        return f"a tool's parameters are not a JSON Schema the loop can check arguments with: {exc}"
    module = type(exc).__module__ or ""
    if module.startswith(("jsonschema", "referencing")):
        return "a tool's parameters are not a JSON Schema the loop can check arguments with " \
               "(a $ref that points nowhere, or a keyword of the wrong type)"
    if isinstance(exc, (TypeError, ValueError, ArithmeticError)):
        return "a value has a type or form the loop cannot work with (text where a number is needed, say)"
    if isinstance(exc, (KeyError, IndexError)):
        return "a field the loop needs is missing from the edited inputs"
    if isinstance(exc, RecursionError):
        return "the edited inputs nest too deeply"
    return "the loop stopped on it"


def _facts(event: dict[str, Any]) -> dict[str, Any]:
    """An event's data without its clock stamps, which shift whenever anything before them does."""
    data = event.get("data") or {}
    # ``request_match``: how a re-run's request compares with the recording's, which only a re-run has
    # (a request that differs is its own event, http.request_changed)
    return {k: v for k, v in data.items() if not k.endswith("_at") and k != "request_match"} \
        if isinstance(data, dict) else data


def diff_events(before: list[dict[str, Any]], after: list[dict[str, Any]]) -> list[EventChange]:
    changes = []
    for i in range(max(len(before), len(after))):
        a = before[i] if i < len(before) else None
        b = after[i] if i < len(after) else None
        if a is None or b is None or any(a.get(k) != b.get(k) for k in COMPARED) or _facts(a) != _facts(b):
            changes.append(EventChange(i + 1, a, b))
    return changes


def replay_further(outcome: ReplayOutcome, path: str, value: Any, command: Sequence[str] | None = None,
                   **options: Any) -> ReplayOutcome:
    """Edit the already-edited run again; still compared against the original."""
    step = replay(outcome.replayed, [(path, value)], command, **options)
    return ReplayOutcome(outcome.original, step.replayed, [*outcome.edits, (path, value)],
                         diff_events(outcome.original.events, step.replayed.events))
