"""Pure presentation helpers: filtering, sorting, short cell labels, call-id partners.

Kept free of Textual so the rules the screens rely on are testable on their own.
Verdicts (status, first failure) are never derived here: they come from
:class:`~tracetui.trace.source.RunEntry`, which the core computes.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field, replace
from operator import attrgetter, countOf
from typing import Any, Iterable, Sequence

from tracetui.trace.format import FAILED, LANE_TITLES, LANES, OK, OUTCOME_ICONS
from tracetui.trace.responsibility import RESPONSIBILITIES, WORDS as RESPONSIBILITY_WORDS, responsibility
from tracetui.trace.safe_text import printable
from tracetui.trace.source import RunEntry
from tracetui.trace.verdict import ICONS as VERDICT_ICONS, INCOMPLETE, READY

#: the status filter: everything, or one outcome of the core's verdict
STATUS_FILTERS: tuple[str, ...] = ("all", FAILED, READY, INCOMPLETE)
SORTS: tuple[str, ...] = ("file", "status", "lane", "id")
LANE_SHORT = {"http": "http", "generation": "gen", "arguments": "args", "authorization": "auth",
              "receipt": "receipt", "answer": "answer"}
LANE_ABBR = {"http": "http", "generation": "generat.", "arguments": "argument", "authorization": "authoriz.",
             "receipt": "receipt", "answer": "answer"}

#: Short words for failure codes, so a swimlane cell stays about eight cells wide.
SHORT_CODES = {
    "permission_denied": "denied", "tool_failed": "tool err", "loop_detected": "loop", "refused": "refused",
    "incomplete": "cut off", "duplicate_call_id": "dup id", "unknown_tool": "no tool",
    "unverified_answer": "unbacked", "response_failed": "failed", "response_cancelled": "cancel",
    "budget_exhausted": "budget", "schema_error": "schema", "invalid_json": "bad json", "handoff_required": "handoff",
    "business_rule_violation": "rule", "write_outcome_unknown": "unknown", "duplicate_execution": "twice",
    "protocol_error": "protocol", "unexpected_body": "bad body", "stream_interrupted": "stream",
    "timeout": "timeout",
}
OK_WORDS = {"arguments": "valid", "authorization": "allowed", "receipt": "receipt", "answer": "verified"}
ICONS = OUTCOME_ICONS


def run_icon(entry: RunEntry) -> str:
    """✓ ready, ! ready after recovered failures, ✗ failed, … incomplete (the core's outcome, drawn)."""
    if entry.ready and entry.recovered:
        return VERDICT_ICONS["recovered"]
    return VERDICT_ICONS.get(entry.outcome, "?")


@dataclass(eq=False)
class EventMatches:
    """The runs whose events hold ``text``, as a search inside events finds them (it adds to ``runs``
    as it goes: :mod:`tracetui.triage.event_search`); ``progress`` is None once it is done."""

    text: str
    runs: set[tuple[int, str]] = field(default_factory=set)  # (file, listed run id)
    progress: float | None = 0.0


@dataclass(frozen=True)
class RunQuery:
    """What the run list shows: a text filter, a status filter, a lane filter, a responsibility
    filter (whose failure it was: see :mod:`tracetui.trace.responsibility`) and a sort. The text
    matches a run's id, scenario, ablation or status at once, and its events through ``found``
    (the runs a search of their events found for that same text)."""

    text: str = ""
    status: str = "all"
    lane: str | None = None
    sort: str = "file"
    responsibility: str | None = None
    found: EventMatches | None = field(default=None, compare=False)
    #: a failure group expanded from the grouped view (g, enter): only its runs (its rows grow while indexing)
    group: Any = field(default=None, compare=False)

    @property
    def is_identity(self) -> bool:
        return not self._filters and self.group is None and self.sort == "file"

    def cycled(self, field: str) -> "RunQuery":
        if field == "status":
            return replace(self, status=_next(STATUS_FILTERS, self.status))
        if field == "sort":
            return replace(self, sort=_next(SORTS, self.sort))
        if field == "lane":
            return replace(self, lane=_next((None, *LANES), self.lane))
        if field == "responsibility":
            return replace(self, responsibility=_next((None, *RESPONSIBILITIES), self.responsibility))
        raise ValueError(field)

    def describe(self) -> str:
        parts = [f"group {self.group.count:,}× {printable(self.group.lane or '—')} "
                 f"{printable(self.group.code)}"] if self.group is not None else []
        if self.text:
            parts.append(f"“{printable(self.text)}”")
            if self.found is not None and self.found.text == self.text and self.found.progress is not None:
                parts.append(f"searching events {self.found.progress:.0%}")
        if self.status != "all":
            parts.append(self.status)
        if self.lane:
            parts.append(f"lane {self.lane}")
        if self.responsibility:
            parts.append(f"whose: {self.responsibility}")
        if self.sort != "file":
            parts.append(f"by {self.sort}")
        return " · ".join(parts)

    def matches(self, entry: RunEntry, memo: dict[int, str | None] | None = None) -> bool:
        """Whether the run list shows ``entry``; ``memo`` (one per pass over the rows) keeps each
        shared failure's responsibility, so a pass decides it once per failure, not once per row."""
        if self.status != "all" and entry.outcome != self.status:
            return False
        if self.lane is not None and entry.failing_lane != self.lane:
            return False
        if self.responsibility is not None and run_responsibility(entry, memo) != self.responsibility:
            return False
        if self.text:
            needle = self.text.lower()
            hay = (entry.run_id, entry.scenario or "", entry.ablation or "", entry.status)
            if not any(needle in h.lower() for h in hay) and not self.found_in_events(entry):
                return False
        return True

    def found_in_events(self, entry: RunEntry) -> bool:
        """Whether the search inside events found the query's text in this run."""
        found = self.found
        return found is not None and found.text == self.text and (entry.shape.source, entry.run_id) in found.runs

    def apply(self, entries: Sequence[RunEntry]) -> Sequence[int]:
        """Indices into ``entries`` in display order; a ``range`` (no copy) when nothing filters."""
        if self.is_identity:
            return range(len(entries))
        memo: dict[int, str | None] = {}  # within the pass the rows hold their failures: ids stay theirs
        rows = range(len(entries)) if self.group is None else _group_rows(self.group, len(entries))
        view = [i for i in rows if self.matches(entries[i], memo)] if self._filters else list(rows)
        key = _SORT_KEYS.get(self.sort)
        if key is not None:
            view.sort(key=lambda i: key(entries[i]))
        return view

    @property
    def _filters(self) -> bool:
        return bool(self.text) or self.status != "all" or self.lane is not None or self.responsibility is not None


def _group_rows(group: Any, count: int) -> Sequence[int]:
    """A failure group's rows (a copy: they grow while indexing) that the list holds (none past its end,
    after a reload)."""
    from bisect import bisect_left

    rows = group.rows[:]
    return rows if not rows or rows[-1] < count else rows[:bisect_left(rows, count)]


def run_responsibility(entry: RunEntry, memo: dict[int, str | None] | None = None) -> str | None:
    """Whose failure a row's run was (the core's rule, from the row's first failure alone, as the
    index keeps it), or None for a run that did not fail. ``memo``: see :meth:`RunQuery.matches`."""
    if entry.shape.outcome != FAILED:
        return None
    failure = entry.shape.first_failure
    if memo is None:
        return responsibility(failure)
    key = id(failure)
    if key not in memo:
        memo[key] = responsibility(failure)
    return memo[key]


def responsibility_line(first_failure: Any, inputs: Any = None) -> tuple[str, str] | None:
    """(class, its words) for a failed run's banner, e.g. ("guard", "a check did its job"); None
    when the core sees no failure."""
    found = responsibility(first_failure, inputs if isinstance(inputs, dict) else None)
    return None if found is None else (found, RESPONSIBILITY_WORDS.get(found, found))


def _next(options: Sequence[Any], current: Any) -> Any:
    try:
        return options[(list(options).index(current) + 1) % len(options)]
    except ValueError:
        return options[0]


_LANE_ORDER = {lane: i for i, lane in enumerate(LANES)}
_SORT_KEYS = {
    "status": lambda e: (e.ready, e.status),
    "lane": lambda e: (_LANE_ORDER.get(e.failing_lane or "", len(LANES)), e.status),
    "id": lambda e: e.run_id,
}


def lane_counts(entries: Iterable[RunEntry], counts: dict[str, int] | None = None) -> dict[str, int]:
    """Runs per first failing lane (adds to ``counts`` when given, for incremental scans). Counted at C
    speed: while a big file is indexed, the interface counts every run it is told of, and each
    moment it holds the interpreter lock the index waits."""
    counts = counts if counts is not None else dict.fromkeys(LANES, 0)
    failures = filter(None, map(_FIRST_FAILURE, entries))
    for lane, n in Counter(map(_LANE, failures)).items():
        if lane in counts:
            counts[lane] += n
    return counts


def failed_count(entries: Iterable[RunEntry]) -> int:
    """How many of ``entries`` failed (counted at C speed, as :func:`lane_counts`)."""
    return countOf(map(_OUTCOME, entries), FAILED)


_FIRST_FAILURE = attrgetter("shape.first_failure")  # (a row's own fields are properties: slower to read)
_LANE = attrgetter("lane")
_OUTCOME = attrgetter("shape.outcome")


def cell_label(event: dict[str, Any]) -> str:
    """A swimlane cell's word: ``200``, ``calls``, ``denied``… (without its outcome icon), safe to print."""
    return printable(_cell_word(event))


def _cell_word(event: dict[str, Any]) -> str:
    lane, outcome, code = event.get("lane"), event.get("outcome"), event.get("code")
    data = event.get("data") if isinstance(event.get("data"), dict) else {}
    if lane == "http":
        response = data.get("response") if isinstance(data.get("response"), dict) else {}
        status = response.get("status")
        if outcome == FAILED and code in ("unexpected_body", "stream_interrupted"):
            return SHORT_CODES[code]
        if isinstance(status, int):
            return str(status)
    if outcome != OK and isinstance(code, str) and code:
        return SHORT_CODES.get(code, code)
    if lane == "generation":
        kind = data.get("kind")
        return {"tool_calls": "calls", "text": "text"}.get(kind, kind) if isinstance(kind, str) else "ok"
    if event.get("kind") == "receipt.lookup":
        return "lookup"
    if lane == "arguments" and data.get("checked") is False:  # passed on, but no schema verdict (otel.lanes)
        return "unchecked"
    return OK_WORDS.get(lane, "ok")


def cell_icon(event: dict[str, Any]) -> str:
    return ICONS.get(event.get("outcome"), "?")


def call_ids_of(event: dict[str, Any]) -> list[str]:
    """The tool call ids an event is about: its own, or the calls a model response asked for."""
    ids: list[str] = []
    if isinstance(event.get("call_id"), str):
        ids.append(event["call_id"])
    data = event.get("data") if isinstance(event.get("data"), dict) else {}
    for call in data.get("calls") or ():
        if isinstance(call, dict) and isinstance(call.get("call_id"), str) and call["call_id"] not in ids:
            ids.append(call["call_id"])
    for cid in data.get("call_ids") or ():
        if isinstance(cid, str) and cid not in ids:
            ids.append(cid)
    return ids


class CallIndex:
    """Every call id of a run's events, with the events about it in order: built once per run (a look over
    every event on each move cost ~100 ms on a run of 20,000), extended when the run grows (a live run)."""

    def __init__(self, events: Sequence[dict[str, Any]]):
        self.events = events
        self.seen = 0
        self.by_call: dict[str, list[dict[str, Any]]] = {}
        self.extend()

    def extend(self) -> None:
        """Index the events added since the last look (the list grows only at its end)."""
        for event in self.events[self.seen:]:
            for cid in call_ids_of(event):
                self.by_call.setdefault(cid, []).append(event)
        self.seen = len(self.events)


_index: CallIndex | None = None  # the run last asked about (the one on screen)


def call_index(events: Sequence[dict[str, Any]]) -> CallIndex:
    """The :class:`CallIndex` of ``events``, made once for that list of events."""
    global _index
    if _index is None or _index.events is not events or len(events) < _index.seen:
        _index = CallIndex(events)
    elif len(events) > _index.seen:
        _index.extend()
    return _index


def partners(events: Sequence[dict[str, Any]], event: dict[str, Any]) -> list[tuple[str, list[dict[str, Any]]]]:
    """For each call id of ``event``: every event of the run about that call, in step order."""
    by_call = call_index(events).by_call
    return [(cid, list(by_call.get(cid, ()))) for cid in call_ids_of(event)]


def headline(entry: RunEntry) -> tuple[str, str]:
    """(verdict line, reason line) for a run, worded from its RunEntry."""
    ff = entry.first_failure
    icon = run_icon(entry)
    if ff:
        lane = str(ff.get("lane") or "?")
        where = f"{LANE_TITLES.get(lane, lane).upper()} at step {ff.get('seq')}"
        decided = ff.get("decided_at")
        if decided is not None and decided != ff.get("seq"):
            where += f" (gave up at step {decided})"
        line = f"{icon} {entry.status} — first failing boundary: {where}"
        if not entry.complete:
            line += " · incomplete: no summary line"
        return line, str(ff.get("reason") or "")
    if entry.failed:
        return (f"{icon} {entry.status} — not ready, and no event shows where it failed",
                f"the summary gives status {entry.status!r} but records no failing boundary"
                + ("" if entry.events else "; the run has no events"))
    if not entry.complete:
        return f"{icon} incomplete — no summary line and no failed event", f"the run stopped after {entry.events} event(s)"
    if entry.recovered:
        return f"{icon} {entry.status} — ready after {entry.recovered} recovered failure(s) ↺", "every failure was overcome"
    return f"{icon} {entry.status} — every boundary passed", ""
