"""Any two recorded runs side by side: aligned step by step, the first divergence named, both verdicts.

Events are aligned by turn (the model call an event belongs to) and lane, never by raw position,
so one extra HTTP retry or one extra repair turn in one run stays one row "only in B" and every
step after it still lines up with its counterpart. Turns are matched first, by what the model did
in each (the tools it asked for, or an answer) and how the turn went, so a repair turn that only one
run needed is not compared with the other's next turn; within a pair of turns each lane's events
are matched the same way. What two steps are compared on is :mod:`tracetui.replay.step_facts`:
the same on every provider's wire and for imported runs. Each run keeps its own verdict, by the one
rule (:meth:`~tracetui.trace.reader.RunData.verdict`).
"""
from __future__ import annotations

from dataclasses import dataclass
from difflib import SequenceMatcher
from typing import Any, Callable, Sequence, TypeVar

from tracetui.replay.comparison import event_brief
from tracetui.replay.diff_words import divergence_words
from tracetui.replay.step_facts import StepFacts, step_facts
from tracetui.trace.format import LANES
from tracetui.trace.reader import RunData

T = TypeVar("T")


@dataclass(frozen=True)
class Step:
    """One event of one run, with the turn it belongs to and what it says."""

    event: dict[str, Any]
    turn: int
    facts: StepFacts

    @property
    def seq(self) -> Any:
        return self.event.get("seq")

    @property
    def lane(self) -> str:
        return self.facts.lane


@dataclass(frozen=True)
class DiffRow:
    """One aligned step: the event of each run (None where only the other run has one)."""

    lane: str
    a: Step | None
    b: Step | None

    @property
    def same(self) -> bool:
        return self.a is not None and self.b is not None and self.a.facts.same_as(self.b.facts)

    def as_dict(self) -> dict[str, Any]:
        def side(step: Step | None) -> dict[str, Any] | None:
            if step is None:
                return None
            return {"seq": step.seq, "turn": step.turn, **(event_brief(step.event) or {})}
        return {"lane": self.lane, "same": self.same, "a": side(self.a), "b": side(self.b)}


@dataclass
class RunDiff:
    """Two runs aligned: ``rows`` in step order, the first divergence in words, each run's verdict."""

    a_label: str
    b_label: str
    a_run_id: str
    b_run_id: str
    rows: list[DiffRow]
    verdicts: tuple[dict[str, Any], dict[str, Any]]
    first_divergence: str | None = None
    first_index: int | None = None  # the row of the first divergence

    @property
    def same_verdict(self) -> bool:
        """Whether both runs reached the same verdict: the same outcome, status and first failing lane."""
        a, b = self.verdicts

        def key(v: dict[str, Any]) -> tuple[Any, ...]:
            ff = v.get("first_failure") or {}
            return v.get("outcome"), v.get("status"), ff.get("lane"), ff.get("code")
        return key(a) == key(b)

    @property
    def differing(self) -> int:
        return sum(not r.same for r in self.rows)

    def to_json(self) -> dict[str, Any]:
        """``diff --json``'s document (trace text as the trace holds it: already redacted when written)."""
        return {"a": {"label": self.a_label, "run_id": self.a_run_id, "verdict": self.verdicts[0]},
                "b": {"label": self.b_label, "run_id": self.b_run_id, "verdict": self.verdicts[1]},
                "same_verdict": self.same_verdict, "first_divergence": self.first_divergence,
                "first_divergence_row": self.first_index, "rows_differing": self.differing,
                "rows": [r.as_dict() for r in self.rows]}


def steps_of(run: RunData) -> list[Step]:
    """A run's events in step order, each with its turn (an event without one takes the turn before it)."""
    events = sorted(run.events, key=lambda e: e.get("seq") if type(e.get("seq")) is int else 0)
    steps, turn = [], 0
    for event in events:
        t = event.get("turn")
        turn = t if type(t) is int else turn
        steps.append(Step(event, turn, step_facts(event)))
    return steps


def turns_of(steps: list[Step]) -> list[list[Step]]:
    """Steps grouped by turn, in the order the turns begin."""
    order: dict[int, list[Step]] = {}
    for step in steps:
        order.setdefault(step.turn, []).append(step)
    return list(order.values())


def _turn_key(turn: list[Step]) -> tuple[Any, ...]:
    """What a turn did (the model's calls or answer) and how it went: turns that agree on this are matched."""
    did = next(((s.facts.calls or ("answer",) if s.facts.code is None else (s.facts.code,))
                for s in turn if s.lane == "generation"), ())
    worst = "failed" if any(s.facts.outcome == "failed" for s in turn) else \
        "recovered" if any(s.facts.outcome == "recovered" for s in turn) else "ok"
    return did, worst


def _step_key(step: Step) -> tuple[Any, ...]:
    f = step.facts
    return f.calls, f.tool, f.outcome


#: the largest stretch (A's steps × B's) matched by longest common runs (difflib: its cost grows with that
#: product); a longer one is matched by a longest common subsequence (rapidfuzz, in C: a bit per pair, so about
#: 50 MB and a fraction of a second at 20,000 × 20,000)
MATCHED_AT_MOST = 250_000
#: the largest stretch matched at all; a longer one is paired position by position (two runs of more than
#: 20,000 turns each that differ at both ends)
LCS_AT_MOST = 400_000_000


def _lcs_opcodes(ka: list[Any], kb: list[Any]) -> list[tuple[str, int, int, int, int]]:
    """difflib-style opcodes of a longest common subsequence: what lies between two matched blocks is one
    "replace" (paired position by position), as difflib gives it."""
    from rapidfuzz.distance import Indel

    opcodes: list[tuple[str, int, int, int, int]] = []
    for op in Indel.opcodes(ka, kb):
        if op.tag != "equal" and opcodes and opcodes[-1][0] != "equal":
            _, i1, _, j1, _ = opcodes.pop()
            opcodes.append(("replace", i1, op.src_end, j1, op.dest_end))
        else:
            opcodes.append((op.tag, op.src_start, op.src_end, op.dest_start, op.dest_end))
    return opcodes


def align(a: Sequence[T], b: Sequence[T], key: Callable[[T], Any]) -> list[tuple[T | None, T | None]]:
    """Pairs of ``a`` and ``b`` in order: equal keys matched (longest common run first; a longest common
    subsequence for a long stretch); a replaced stretch paired position by position, what is left of it
    one-sided. What both begin and end with is matched first."""
    ka, kb = [key(x) for x in a], [key(x) for x in b]
    head = 0
    while head < len(ka) and head < len(kb) and ka[head] == kb[head]:
        head += 1
    tail = 0
    while tail < len(ka) - head and tail < len(kb) - head and ka[-1 - tail] == kb[-1 - tail]:
        tail += 1
    pairs: list[tuple[T | None, T | None]] = [(a[i], b[i]) for i in range(head)]
    mid_a, mid_b = range(head, len(a) - tail), range(head, len(b) - tail)
    stretch, mid_ka, mid_kb = len(mid_a) * len(mid_b), ka[mid_a.start:mid_a.stop], kb[mid_b.start:mid_b.stop]
    if stretch > LCS_AT_MOST or not stretch:  # (one side empty: what difflib gives, without building it)
        opcodes = [("replace", mid_a.start, mid_a.stop, mid_b.start, mid_b.stop)]
    else:
        found = (SequenceMatcher(None, mid_ka, mid_kb, autojunk=False).get_opcodes() if stretch <= MATCHED_AT_MOST
                 else _lcs_opcodes(mid_ka, mid_kb))
        opcodes = [(op, i1 + head, i2 + head, j1 + head, j2 + head) for op, i1, i2, j1, j2 in found]
    for op, i1, i2, j1, j2 in opcodes:
        for k in range(max(i2 - i1, j2 - j1)):
            pairs.append((a[i1 + k] if i1 + k < i2 else None, b[j1 + k] if j1 + k < j2 else None))
    pairs.extend((a[len(a) - tail + i], b[len(b) - tail + i]) for i in range(tail))
    return pairs


def _turn_rows(a: list[Step], b: list[Step]) -> list[DiffRow]:
    """The rows of a pair of turns: each lane aligned on its own, then put back in step order (a step only
    B has goes just after the A step matched with the B step before it)."""
    a_pos = {id(s): i for i, s in enumerate(a)}
    rows: list[DiffRow] = []
    matched: dict[int, int] = {}  # id of a B step -> the position of its A step
    for lane in LANES:
        for x, y in align([s for s in a if s.lane == lane], [s for s in b if s.lane == lane], _step_key):
            rows.append(DiffRow(lane, x, y))
            if x is not None and y is not None:
                matched[id(y)] = a_pos[id(x)]
    after: dict[int, float] = {}  # id of a B-only step -> where it goes
    last = -1.0
    for j, step in enumerate(b):
        if id(step) in matched:
            last = max(last, float(matched[id(step)]))
        else:
            after[id(step)] = last + 0.5 + j / (2 * len(b) + 1)

    def order(row: DiffRow) -> float:
        return float(a_pos[id(row.a)]) if row.a is not None else after[id(row.b)]
    return sorted(rows, key=order)


def diff_runs(a: RunData, b: RunData, a_label: str = "A", b_label: str = "B") -> RunDiff:
    """Align run ``a`` with run ``b`` and name where they first part ways (None: every step reads the same)."""
    a_turns, b_turns = turns_of(steps_of(a)), turns_of(steps_of(b))
    rows: list[DiffRow] = []
    for x, y in align(a_turns, b_turns, _turn_key):
        rows.extend(_turn_rows(x or [], y or []))
    diff = RunDiff(a_label, b_label, a.run_id, b.run_id, rows, (a.verdict(), b.verdict()))
    first = next((i for i, r in enumerate(rows) if not r.same), None)
    if first is not None:
        diff.first_index = first
        diff.first_divergence = divergence_words(rows, first, a_label, b_label)
    elif not diff.same_verdict:  # every step agrees, yet the verdicts do not (a summary that says otherwise)
        diff.first_divergence = (f"every step reads the same, yet run {b_label}'s summary says "
                                 f"{diff.verdicts[1].get('status')} where {a_label}'s says "
                                 f"{diff.verdicts[0].get('status')}")
    return diff
