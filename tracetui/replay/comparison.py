"""A re-run compared with its original, as data: what ``replay --json`` prints and the MCP server returns."""
from __future__ import annotations

from typing import Any

from tracetui.replay.replay import EventChange, ReplayOutcome, _facts
from tracetui.trace.reader import RunData
from tracetui.trace.writer import encode_record


def reproduces_exactly(run: RunData, outcome: ReplayOutcome) -> bool:
    """Whether the re-run wrote the original's records byte for byte."""
    original = b"".join(encode_record(r) for r in (run.run, *run.events, run.summary) if r is not None)
    return original == b"".join(encode_record(r) for r in outcome.records)


def event_brief(event: dict[str, Any] | None) -> dict[str, Any] | None:
    """The fields of an event a comparison shows (its data aside)."""
    if event is None:
        return None
    return {k: event.get(k) for k in ("lane", "kind", "outcome", "code", "call_id", "summary")}


def data_changed(change: EventChange) -> list[str]:
    """The fields of an event's data that differ between the two sides (its clock stamps aside): for a row that
    reads the same on both sides (same lane, outcome and words), what does differ."""
    if change.before is None or change.after is None:
        return []
    a, b = _facts(change.before), _facts(change.after)
    if not isinstance(a, dict) or not isinstance(b, dict):
        return [] if a == b else ["data"]
    return sorted(str(k) for k in set(a) | set(b) if a.get(k) != b.get(k))


def comparison_data(run_id: str, run: RunData, outcome: ReplayOutcome) -> dict[str, Any]:
    """``replay --json``'s document: the edits, the verdicts before and after, and each event that differs."""
    return {"run_id": run_id, "edits": [{"path": p, "value": v} for p, v in outcome.edits],
            "before": outcome.before, "after": outcome.after, "identical": reproduces_exactly(run, outcome),
            "changes": [{"seq": c.seq, "verdict_changed": c.verdict_changed, "data_changed": data_changed(c),
                         "before": event_brief(c.before), "after": event_brief(c.after)}
                        for c in outcome.changes]}
