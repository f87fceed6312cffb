"""Collects a run's boundary events.

A failure the loop overcame is re-marked ``recovered`` and never decides the run;
the verdict itself comes from the one rule in :mod:`tracetui.trace.verdict`.
"""
from __future__ import annotations

from typing import Any, Iterable

from tracetui.trace.format import FAILED, RECOVERED


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
