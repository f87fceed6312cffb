"""The verdict: did a run reach a verified answer, and if not, where did it first fail?

This is the one place the rule lives. The loop writes the verdict into a run's
summary with it, the reader re-derives it when a summary is missing or malformed,
and every surface (the run list, the banner, the lane chart, the header counts,
``check``, ``check --json``, ``replay``) reads a run's verdict through
:func:`decide` (or :func:`outcome_of`, for the index's summary-only fast path),
so a run never gets two different verdicts.

A verdict has an *outcome*, one of three that never overlap:

- ``ready``: the run's answer was verified (status ``answer_ready``);
- ``failed``: it did not get there; ``first_failure`` says where, unless nothing
  in the trace shows it (a summary that claims a status its events do not explain);
- ``incomplete``: the run stopped without a summary and without a failed event.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from tracetui.trace.format import ANSWER_READY, CODE_RECORDING_ENDED, FAILED, LANES
from tracetui.trace.responsibility import responsibility

READY, INCOMPLETE = "ready", "incomplete"
#: the outcomes, in the order the CLI and the explorer count them
OUTCOMES: tuple[str, ...] = (READY, FAILED, INCOMPLETE)
#: How an outcome is drawn in a list: ready, ready after recovered failures, failed, incomplete.
ICONS = {READY: "✓", "recovered": "!", FAILED: "✗", INCOMPLETE: "…"}

#: Failures the loop sends back for the model to repair: being handled until the run ends.
REPAIRABLE_CODES = frozenset({"invalid_json", "schema_error"})
#: The code of the attempt a recorded run makes after its recording has no response left.
RECORDING_ENDED = CODE_RECORDING_ENDED


def first_failure(events: Sequence[Mapping[str, Any]]) -> dict[str, Any] | None:
    """The boundary that decided the run, or None when nothing failed.

    The run ends at its last failed event (the *deciding* failure). Its boundary is
    the first failing boundary, pointed at the first failed event on that lane, so
    a retry or repair streak is reported where it began (``seq``) and where it gave
    up (``decided_at``, ``code``, ``reason``). Failures the loop overcame are marked
    ``recovered`` and never count.

    Two deciding failures are consequences, not causes, when a failure before them
    was still unresolved (a repair or a retry pending, a tool error handed to the
    model): an answer that no receipt backs, and the end of a recording. Then the
    earliest unresolved failure is the first failing boundary, and its reason says
    what became of it.
    """
    failed = [e for e in events if e.get("outcome") == FAILED]
    if not failed:
        return None
    if any(type(a.get("seq")) is int and type(b.get("seq")) is int and a["seq"] > b["seq"]
           for a, b in zip(failed, failed[1:])):
        failed.sort(key=_seq)  # a file may hold a run's events out of order: the rule reads them by step
    deciding, unresolved = failed[-1], failed[:-1]
    note = ""
    if unresolved and deciding.get("code") == RECORDING_ENDED:
        candidates = unresolved
        note = "; the recording ended before it was resolved"
    elif unresolved and deciding.get("lane") == "answer":
        candidates = unresolved
        code = unresolved[0].get("code")
        if isinstance(code, str) and code in REPAIRABLE_CODES:  # a trace's code may be any JSON value
            note = "; never repaired: the model answered instead"
    else:
        candidates = failed
    lane = candidates[0].get("lane") if candidates is unresolved else deciding.get("lane")
    on_lane = [e for e in candidates if e.get("lane") == lane]
    first, last = on_lane[0], on_lane[-1]
    reason = last.get("summary") or ""
    return {"lane": lane, "seq": first.get("seq"), "code": last.get("code") or "failed",
            "reason": (reason if isinstance(reason, str) else str(reason)) + note, "decided_at": last.get("seq")}


def _seq(event: Mapping[str, Any]) -> int:
    seq = event.get("seq")
    return seq if type(seq) is int else 0


def status_of(failure: Mapping[str, Any] | None) -> str:
    """The status a verdict's first failure gives a run: its code, or ``answer_ready``."""
    if failure is None:
        return ANSWER_READY
    code = failure["code"]
    return code if isinstance(code, str) else str(code)  # a trace may give any JSON value


def _positive_int(value: Any) -> bool:
    return type(value) is int and value > 0


def checked_failure(failure: Any) -> dict[str, Any] | None:
    """A summary's ``first_failure`` when it is well formed, else None (derive it from the events).

    Well formed: a dict with ``lane`` one of :data:`LANES`, ``seq`` a positive int,
    ``code`` and ``reason`` strings, and ``decided_at`` a positive int or absent/null
    (then it is ``seq``: a copy is returned). Other keys are kept.
    """
    if (type(failure) is not dict or failure.get("lane") not in LANES or not _positive_int(failure.get("seq"))
            or not isinstance(failure.get("code"), str) or not isinstance(failure.get("reason"), str)):
        return None
    decided_at = failure.get("decided_at")
    if decided_at is None:
        return {**failure, "decided_at": failure["seq"]}
    return failure if _positive_int(decided_at) else None


def summary_status(summary: Mapping[str, Any]) -> str | None:
    """A summary's ``status`` when it is a non-empty string, else None (derive it)."""
    status = summary.get("status")
    return status if isinstance(status, str) and status else None


def outcome_of(status: str, failure: Any, complete: bool) -> str:
    """The outcome of a run with this status and first failure (see the module docstring)."""
    if failure is not None:
        return FAILED
    if not complete:
        return INCOMPLETE
    return READY if status == ANSWER_READY else FAILED


def needs_events(summary: Mapping[str, Any]) -> bool:
    """Whether a summary alone cannot give the verdict: its status or first failure is malformed,
    or it claims a failure without saying where (the events may show it)."""
    status = summary_status(summary)
    failure = summary.get("first_failure")
    if status is None:
        return True
    if failure is None:
        return status != ANSWER_READY
    return checked_failure(failure) is None


@dataclass(frozen=True, slots=True)
class Verdict:
    status: str  # "answer_ready", a failure code, "incomplete", or whatever status a summary claims
    outcome: str  # READY, FAILED or INCOMPLETE
    complete: bool  # False when the run's summary line is missing
    first_failure: dict[str, Any] | None

    @property
    def ready(self) -> bool:
        return self.outcome == READY

    def as_dict(self, run_id: str) -> dict[str, Any]:
        """The verdict as ``check --json`` and ``replay --json`` print it, with who is responsible for a failure
        (:mod:`tracetui.trace.responsibility`; None for a run that did not fail)."""
        return {"run_id": run_id, "status": self.status, "outcome": self.outcome, "ready": self.ready,
                "complete": self.complete, "first_failure": self.first_failure,
                "responsibility": responsibility(self.first_failure) if self.outcome == FAILED else None}


def decide(summary: Mapping[str, Any] | None, events: Sequence[Mapping[str, Any]]) -> Verdict:
    """A run's verdict from its summary line (None when missing) and its events.

    A well-formed summary is taken at its word; a malformed ``first_failure`` or
    ``status`` is derived from the events by :func:`first_failure`, and so is the
    failure of a summary that claims one without saying where.
    """
    if summary is None:
        failure = first_failure(events)
        status = status_of(failure) if failure else INCOMPLETE
        return Verdict(status, outcome_of(status, failure, False), False, failure)
    status = summary_status(summary)
    failure = summary.get("first_failure")
    if failure is not None:
        failure = checked_failure(failure)
        if failure is None:
            failure = first_failure(events)
    elif status != ANSWER_READY:
        failure = first_failure(events)
    if status is None:
        status = status_of(failure)
    elif failure is not None and status == ANSWER_READY:
        status = status_of(failure)  # a summary that contradicts itself: the failure wins
    return Verdict(status, outcome_of(status, failure, True), True, failure)


def verdict_line(run_id: str, verdict: Mapping[str, Any], recovered: int = 0) -> str:
    """One line per run, as ``check``, ``run`` and ``replay`` print it (raw: escape before printing)."""
    return "".join(verdict_line_parts(run_id, verdict, recovered))


def verdict_line_parts(run_id: str, verdict: Mapping[str, Any], recovered: int = 0) -> tuple[str, str]:
    """:func:`verdict_line` as (its icon and run id, the rest): the rest repeats across runs that failed alike."""
    outcome = verdict.get("outcome") or (READY if verdict.get("ready") else FAILED)
    icon = ICONS["recovered"] if outcome == READY and recovered else ICONS.get(outcome, "?")
    rest = f"  {verdict.get('status')}"
    if verdict.get("complete") is False:  # words that agree with the tally: a failed run is counted failed
        rest += "  (incomplete: no summary)" if outcome == INCOMPLETE else "  (no summary: failed by its events)"
    ff = verdict.get("first_failure")
    if ff:
        rest += f"  {ff.get('lane')}@{ff.get('seq')}: {ff.get('reason')}"
    elif outcome == FAILED:
        rest += "  (no event shows where it failed)"
    if verdict.get("responsibility"):
        rest += f"  [{verdict['responsibility']}]"
    return f"{icon} {run_id}", rest
