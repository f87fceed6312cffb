"""Collects a run's boundary events and derives its verdict.

The verdict rule (:func:`first_failure`) is shared with readers of traces whose
summary is missing. A failure the loop overcame is re-marked ``recovered`` and
never decides the run.
"""
from __future__ import annotations

from typing import Any, Iterable

from tracetui.trace.format import ANSWER_READY, FAILED, RECOVERED


class Recorder:
    __slots__ = ("run_id", "events")

    def __init__(self, run_id: str):
        self.run_id = run_id
        self.events: list[dict[str, Any]] = []

    def add(self, lane: str, kind: str, outcome: str, turn: int, t_ms: int, summary: str,
            call_id: str | None = None, code: str | None = None, data: dict[str, Any] | None = None) -> dict[str, Any]:
        event = {"rec": "event", "run_id": self.run_id, "seq": len(self.events) + 1, "lane": lane, "kind": kind,
                 "outcome": outcome, "turn": turn, "t_ms": t_ms, "call_id": call_id, "code": code,
                 "summary": summary, "data": data or {}}
        self.events.append(event)
        return event

    def recover(self, events: Iterable[dict[str, Any]]) -> None:
        for event in events:
            if event["outcome"] == FAILED:
                event["outcome"] = RECOVERED


#: Failures the loop sends back for the model to repair: being handled, never an upstream cause.
REPAIRABLE_CODES = frozenset({"invalid_json", "schema_error"})


def first_failure(events: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The boundary that decided the run, or None when nothing failed.

    The run ends at its last failed event (the *deciding* failure). Its boundary is
    the first failing boundary, pointed at the first failed event on that lane, so
    a retry or repair streak is reported where it began (``seq``) and where it gave
    up (``decided_at``, ``code``, ``reason``). Failures on other lanes that the
    loop handed back to the model were being handled, not decisive. One exception:
    when the run ends with an answer that no receipt backs, the cause lies upstream
    (a tool failed, so nothing could back the answer): the earliest failure the
    model could not repair is the first failing boundary.
    """
    failed = [e for e in events if e.get("outcome") == FAILED]
    if not failed:
        return None
    candidates = failed
    if failed[-1].get("lane") == "answer":
        upstream = [e for e in failed[:-1] if e.get("code") not in REPAIRABLE_CODES]
        if upstream:
            candidates = upstream
            lane = upstream[0].get("lane")
        else:
            lane = "answer"
    else:
        lane = failed[-1].get("lane")
    on_lane = [e for e in candidates if e.get("lane") == lane]
    first, last = on_lane[0], on_lane[-1]
    return {"lane": lane, "seq": first.get("seq"), "code": last.get("code") or "failed",
            "reason": last.get("summary") or "", "decided_at": last.get("seq")}


def verdict_status(failure: dict[str, Any] | None) -> str:
    return ANSWER_READY if failure is None else failure["code"]
