"""``check --group`` without holding the trace: verdicts from the streaming check, grouped as they come.

The strict scan (:class:`~tracetui.trace.checking.Checker`) decides each run's verdict as its
summary is read; only its signature is held until it is handed on in run order, and the groups
keep a count and an example each, so memory stays flat however many runs the file holds. An
OTLP/JSON trace (or a backend's) is imported whole, as ``check`` reads it, and grouped the same way.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any, Callable

from tracetui.trace.checking import Checker, ProblemLog
from tracetui.trace.reader import Problem
from tracetui.trace.verdict import OUTCOMES
from tracetui.triage.groups import FailureGrouper, Signature


@dataclass
class GroupedCheck:
    """What ``check --group`` reports: the groups, the runs by outcome and the problem lines."""

    grouper: FailureGrouper = field(default_factory=lambda: FailureGrouper(keep_rows=False))
    counts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(OUTCOMES, 0))
    problems: Any = field(default_factory=ProblemLog)
    runs: int = 0

    @property
    def all_ready(self) -> bool:
        return self.runs == self.counts.get("ready", 0)

    def add(self, outcome: str, signature: Signature | None, run_id: str) -> None:
        """One run, in run order."""
        self.counts[outcome] = self.counts.get(outcome, 0) + 1
        if signature is None:
            self.grouper.passed += 1
        else:
            group = self.grouper.group(signature, run_id, self.runs)
            group.count += 1
        self.runs += 1

    def add_verdict(self, verdict: dict[str, Any]) -> None:
        self.add(str(verdict.get("outcome")), self.grouper.verdict_signature(verdict), str(verdict.get("run_id")))


def group_streaming(item: str | os.PathLike[str] | Any, report: GroupedCheck,
                    on_problem: Callable[[Problem], None] | None = None) -> GroupedCheck:
    """Group a tracetui trace (a path, or an :class:`~tracetui.trace.index.source.Input` such as standard
    input) into ``report`` as its verdicts are decided. Raises what :meth:`Checker.run` raises;
    ``report`` holds what was grouped before (a Ctrl-C keeps it)."""
    grouper = report.grouper

    def kept(verdict: dict[str, Any]) -> tuple[str, Signature | None, str]:
        """What waits for an earlier run: the outcome, the signature (shared) and the run id."""
        return verdict["outcome"], grouper.verdict_signature(verdict), verdict["run_id"]

    def problem(p: Problem) -> None:
        report.problems.append(p)
        if on_problem is not None:
            on_problem(p)

    checker = Checker(item, lambda kept_verdict: report.add(*kept_verdict), problem, kept)
    try:
        checker.run()
    finally:  # (run closes them too; a scan is a reference cycle: they would stay open until a collection)
        checker.close()
    return report


def group_trace(trace: Any, report: GroupedCheck) -> GroupedCheck:
    """Group a trace read whole (an OTLP import): its runs' verdicts, in the order it lists them."""
    report.problems = list(trace.problems)
    for run in trace.runs.values():
        report.add_verdict(run.verdict())
    return report
