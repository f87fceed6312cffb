"""Proving candidates by replay, ranking the proofs, and pairs when no single edit fixes a run.

Each candidate is re-run from the original run with exactly the edits a pasted
``tracetui replay --set …`` command applies (:func:`tracetui.replay.replay.replay`),
so what is listed is what the command reproduces. A candidate is kept only when
the verdict changes for the better: a *fix* turns the run answer-ready by an edit in
the user's control; a *what-if* turns it answer-ready by an edit that is not advice
(the environment, or what a guard protects: :mod:`tracetui.explain.kinds`); a
*partial* moves its first failure later. Nothing else is ever shown.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Iterator

import copy

from tracetui.explain.candidate import RESPONSE, SIDES, Candidate, Edit
from tracetui.explain.command import set_text
from tracetui.explain.evidence import Evidence
from tracetui.explain.generate import candidates
from tracetui.explain.kinds import FIX, PARTIAL, WHAT_IF, guard_held, headline, kind_of, partial_why_not, whose
from tracetui.replay.edit import editable_document, exchanges_of
from tracetui.replay.pointer import EditError, assign, format_pointer, list_index, parse_pointer
from tracetui.replay.replay import ReplayOutcome, replay
from tracetui.trace.reader import RunData

__all__ = ["FIX", "PARTIAL", "WHAT_IF", "Explanation", "Proof", "Search", "explain"]
_SIDE_ORDER = {side: i for i, side in enumerate(SIDES)}
#: the furthest partials that are extended into pairs, and how many pairs are tried at most
PAIR_SEEDS, PAIR_TRIES = 4, 60


@dataclass
class Proof:
    """A candidate and the replay that proved it."""

    candidate: Candidate
    outcome: ReplayOutcome
    kind: str  # FIX, WHAT_IF or PARTIAL
    at_first_failure: bool  # the edit acts on the run's first failing boundary
    progress: tuple[int, int]  # how far the edited run got (for partials)
    order: int  # when it was tried: the last tie-break, so rankings are stable
    why_not: str | None = None  # for a what-if (or a partial of its kind): why it is not a fix, in one line

    @property
    def edits(self) -> tuple[Edit, ...]:
        return self.candidate.edits

    @property
    def rank_key(self) -> tuple[Any, ...]:
        """Fixes first, then what-ifs: the smallest change first (every one of that size, grouped by the side
        it edits), then at the first failing boundary; partials last, the furthest first."""
        c = self.candidate
        if self.kind in (FIX, WHAT_IF):
            side = _SIDE_ORDER.get(c.side.split(" + ")[0], len(_SIDE_ORDER))
            return (0 if self.kind == FIX else 1, len(c.edits), c.cost, side, not self.at_first_failure, self.order)
        return (2, -self.progress[0], -self.progress[1], len(c.edits), c.cost, self.order)  # the furthest first


@dataclass
class Explanation:
    run: RunData
    before: dict[str, Any]
    fixes: list[Proof] = field(default_factory=list)  # answer-ready by an edit in the user's control, best first
    what_ifs: list[Proof] = field(default_factory=list)  # answer-ready, but not advice; after every fix
    partials: list[Proof] = field(default_factory=list)  # the furthest first
    tried: int = 0
    refused: int = 0  # candidates the loop could not run (an edit it refuses)
    reason: str | None = None  # why there is nothing to explain (a ready run, no inputs)
    responsibility: str | None = None  # model, harness, environment or guard (tracetui.trace.responsibility)
    headline: str | None = None  # what a guard that held, or an environment that failed, means for the fixes
    guard_held: bool = False  # a guard refused what the user asked for: nothing needs fixing

    @property
    def single_edit_fix(self) -> bool:
        return any(len(p.edits) == 1 for p in self.fixes)

    @property
    def best(self) -> Proof | None:
        return self.fixes[0] if self.fixes else None


class Search:
    """Proves a run's candidates one by one; :meth:`proofs` yields each as soon as it is proven."""

    def __init__(self, run: RunData, pairs: bool = True, cancelled: Callable[[], bool] = lambda: False) -> None:
        self.run = run
        self.pairs = pairs
        self.cancelled = cancelled  # asked before each replay: the explorer's worker stops when its panel closes
        self.tried = 0
        self.refused = 0
        self.reason: str | None = None
        self.found: list[Proof] = []
        try:
            editable_document(run)
        except EditError as exc:
            self.reason = str(exc)
        self.evidence = Evidence(run)
        if self.reason is None and self.evidence.ready:
            self.reason = f"run {run.run_id} is already answer-ready: nothing to fix"
        self.responsibility = whose(self.evidence)
        self.headline = headline(self.evidence)
        self.guard_held = guard_held(self.evidence)

    def proofs(self) -> Iterator[Proof]:
        if self.reason is not None:
            return
        ended: set[str] = set()  # ladders that found their fix
        best_in_group: dict[str, Proof] = {}
        said: set[str] = set()  # one fix per claim (the same repair at a later attempt says nothing new)
        for candidate in candidates(self.evidence):
            if self.cancelled():
                return
            if candidate.group in ended or candidate.words in said:
                continue
            proof = self._prove(candidate)
            if proof is None:
                continue
            said.add(candidate.words)
            if candidate.group:
                if proof.kind != PARTIAL:
                    ended.add(candidate.group)
                elif candidate.group in best_in_group:
                    continue  # a bigger step of the same ladder that gets no further than a smaller one
                best_in_group[candidate.group] = proof
            self.found.append(proof)
            yield proof
        if self.pairs and not any(p.kind == FIX for p in self.found):
            yield from self._pairs()

    def _prove(self, candidate: Candidate) -> Proof | None:
        self.tried += 1
        if any(set_text(self.run, e) is None for e in candidate.edits):  # no command could reproduce it
            self.refused += 1
            return None
        try:
            outcome = replay(self.run, [(e.path, e.value) for e in candidate.edits])
        except EditError:
            self.refused += 1
            return None
        after = Evidence(outcome.replayed)
        before = self.evidence
        why = None
        if after.ready:
            kind, why = kind_of(candidate, before)
        elif after.progress() > before.progress() and after.failure_key != before.failure_key:
            kind, why = PARTIAL, partial_why_not(candidate, before)
        else:
            return None
        return Proof(candidate, outcome, kind, candidate.lane == before.lane, after.progress(), self.tried, why)

    def _pairs(self) -> Iterator[Proof]:
        """Each of the furthest partials, followed by a candidate its own re-run's evidence suggests."""
        seeds = sorted((p for p in self.found if p.kind == PARTIAL and len(p.edits) == 1),
                       key=lambda p: p.rank_key)[:PAIR_SEEDS]
        seen = {p.candidate.key for p in self.found}
        tries = 0
        for seed in seeds:
            for follow in candidates(Evidence(seed.outcome.replayed)):
                if self.cancelled():
                    return
                follow = self._from_original(seed, follow)
                if follow is None or follow.edits[0].path == seed.edits[0].path:
                    continue
                pair = seed.candidate.then(follow)
                if pair.key in seen or tries >= PAIR_TRIES:
                    continue
                seen.add(pair.key)
                tries += 1
                proof = self._prove(pair)
                if proof is not None and proof.kind != PARTIAL:
                    self.found.append(proof)
                    yield proof

    def _from_original(self, seed: Proof, follow: Candidate) -> Candidate | None:
        """A follow-up edit written against the original run, as a second ``--set`` is read.

        An edit inside an exchange the seed's re-run made differently (or made for the
        first time) becomes that whole exchange as the re-run made it, with the edit in it.
        """
        if len(follow.edits) != 1:
            return None
        edit = follow.edits[0]
        parts = parse_pointer(edit.path)
        if parts[0] != "responses" or len(parts) < 2:
            return follow
        k = list_index(parts[1])
        original, replayed = exchanges_of(self.run), exchanges_of(seed.outcome.replayed)
        if k is None or k > len(original):
            return None
        if len(parts) == 2 or (k < len(original) and k < len(replayed) and original[k] == replayed[k]):
            return follow
        if k >= len(replayed):
            return None
        whole = copy.deepcopy(replayed[k])
        try:
            assign({"x": whole}, format_pointer(["x", *parts[2:]]), edit.value)
        except EditError:
            return None
        return Candidate((Edit(format_pointer(["responses", k]), whole),), follow.words, follow.side, follow.lane,
                         max(follow.cost, RESPONSE))


def explain(run: RunData, pairs: bool = True) -> Explanation:
    """Every proven fix of ``run`` and every what-if (each ranked), and its partial fixes when nothing
    makes it answer-ready."""
    search = Search(run, pairs)
    found = list(search.proofs())
    result = Explanation(run, run.verdict(), tried=search.tried, refused=search.refused, reason=search.reason,
                         responsibility=search.responsibility, headline=search.headline, guard_held=search.guard_held)
    result.fixes = sorted((p for p in found if p.kind == FIX), key=lambda p: p.rank_key)
    result.what_ifs = sorted((p for p in found if p.kind == WHAT_IF), key=lambda p: p.rank_key)
    result.partials = sorted((p for p in found if p.kind == PARTIAL), key=lambda p: p.rank_key)
    return result
