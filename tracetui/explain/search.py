"""Proving candidates by replay, ranking the proofs, and pairs when no single edit fixes a run.

Each candidate is re-run from the original run with exactly the edits a pasted
``tracetui replay --set …`` command applies (:func:`tracetui.replay.replay.replay`),
so what is listed is what the command reproduces. A candidate is kept only when
the verdict changes for the better: a *fix* turns the run answer-ready by an edit in
the user's control; a *what-if* turns it answer-ready by an edit that is not advice
(the environment, or what a guard protects: :mod:`tracetui.explain.kinds`); a
*partial* moves its first failure later. Nothing else is ever shown.

A run of the user's own agent (``source: record``) is re-run with the command the user
gave (never one from the trace): each re-run is a process, so two are proven at a time,
and every result is still taken in the candidates' order, so the ranking, the counts and
the words are the same as one at a time. The time each re-run took is kept for the report.
"""
from __future__ import annotations

import copy
import tempfile
import time
from collections import deque
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Sequence

from tracetui.explain.candidate import RESPONSE, SIDES, Candidate, Edit
from tracetui.explain.command import set_text
from tracetui.explain.evidence import Evidence
from tracetui.explain.generate import candidates
from tracetui.explain.kinds import FIX, PARTIAL, WHAT_IF, guard_held, headline, kind_of, partial_why_not, whose
from tracetui.replay.edit import editable_document, exchanges_of
from tracetui.replay.pointer import EditError, assign, format_pointer, list_index, parse_pointer
from tracetui.replay.replay import ReplayOutcome, replay
from tracetui.trace.redact import redact_text
from tracetui.trace.reader import RunData

__all__ = ["FIX", "PARTIAL", "WHAT_IF", "Explanation", "Proof", "Search", "explain"]
_SIDE_ORDER = {side: i for i, side in enumerate(SIDES)}
#: the furthest partials that are extended into pairs, and how many pairs are tried at most
PAIR_SEEDS, PAIR_TRIES = 4, 60
#: re-runs of the user's command proven at once (each is a process of its own; the machine's other core stays free)
AGENT_RERUNS_AT_ONCE = 2
NO_COMMAND = ("a recorded agent is re-run with your own command, never one from the trace: give it after --, "
              "e.g. tracetui explain FILE --run ID -- python agent.py")


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
    command: list[str] | None = None  # the user's command its replay re-ran (a recorded agent's run), else None

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
    command: list[str] | None = None  # the user's command a record run was re-run with (never the trace's)
    reruns: int = 0  # re-runs that ran to an outcome (of the user's command, for a record run)
    seconds: float = 0.0  # the time they took, added up

    @property
    def seconds_per_run(self) -> float | None:
        """The mean time of one re-run (None before any ran)."""
        return self.seconds / self.reruns if self.reruns else None

    @property
    def single_edit_fix(self) -> bool:
        return any(len(p.edits) == 1 for p in self.fixes)

    @property
    def best(self) -> Proof | None:
        return self.fixes[0] if self.fixes else None


class Search:
    """Proves a run's candidates in order; :meth:`proofs` yields each as soon as it is proven."""

    def __init__(self, run: RunData, pairs: bool = True, cancelled: Callable[[], bool] = lambda: False,
                 command: Sequence[str] | None = None) -> None:
        self.run = run
        self.pairs = pairs
        self.cancelled = cancelled  # asked before each replay: the explorer's worker stops when its panel closes
        self.command = list(command) if command else None  # the user's, for a record run: every replay runs it
        self.at_once = AGENT_RERUNS_AT_ONCE if self.command else 1
        self.tried = 0
        self.refused = 0
        self.reruns = 0
        self.seconds = 0.0
        self.reason: str | None = None
        self.found: list[Proof] = []
        try:
            editable_document(run)
        except EditError as exc:
            self.reason = str(exc)
        self.evidence = Evidence(run)
        if self.reason is None and self.evidence.ready:
            self.reason = f"run {run.run_id} is already answer-ready: nothing to fix"
        if self.reason is None and self.evidence.agent and not self.command:
            self.reason = NO_COMMAND
        self.responsibility = whose(self.evidence)
        self.headline = headline(self.evidence)
        self.guard_held = guard_held(self.evidence)

    @property
    def seconds_per_run(self) -> float | None:
        return self.seconds / self.reruns if self.reruns else None

    def proofs(self) -> Iterator[Proof]:
        if self.reason is not None:
            return
        if self.command and self.evidence.agent and not self._reproduces():
            return
        ended: set[str] = set()  # ladders that found their fix
        best_in_group: dict[str, Proof] = {}
        said: set[str] = set()  # one fix per claim (the same repair at a later attempt says nothing new)

        def skipped(candidate: Candidate) -> bool:
            return candidate.group in ended or candidate.words in said

        wanted = (c for c in candidates(self.evidence) if not skipped(c))  # read again when its re-run is taken
        for candidate, outcome, seconds in self._rerun_in_order(wanted):
            if skipped(candidate):  # proven ahead of its turn, and a candidate before it settled it
                continue
            proof = self._judged(candidate, outcome, seconds)
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
        if self.pairs and not self.cancelled() and not any(p.kind == FIX for p in self.found):
            for pair, outcome, seconds in self._rerun_in_order(self._pair_candidates()):
                proof = self._judged(pair, outcome, seconds)
                if proof is not None and proof.kind != PARTIAL:
                    self.found.append(proof)
                    yield proof

    # -- re-running ---------------------------------------------------------------------------------
    def _reproduces(self) -> bool:
        """Your agent's command, re-run unedited, must end as the recording did; else every proof would be of
        another run (an API key missing from this shell, another working folder, a changed agent), so none
        is tried and :attr:`reason` says what the re-run did instead, with the last words the agent wrote."""
        if self.cancelled():
            return False
        with tempfile.TemporaryFile() as output:
            try:
                outcome = replay(self.run, [], command=self.command, output=output)
            except EditError as exc:
                self.reason = str(exc)
                return False
            if _verdict_key(outcome.after) == _verdict_key(self.evidence.verdict):
                return True
            said = _last_words(output)
        self.reason = (f"your command does not reproduce run {self.run.run_id}: re-run without an edit, it ends "
                       f"{_verdict_words(outcome.after)}, where the recording ends {_verdict_words(self.evidence.verdict)};"
                       f" no edit was tried (is this the agent's command, run from its folder, with its environment?)")
        if said:
            self.reason += " — the agent's last words: " + said
        return False

    def _rerun(self, candidate: Candidate) -> tuple[ReplayOutcome | None, float]:
        """The candidate's replay and the seconds it took; None when no command could reproduce it or the
        re-run refused the edit."""
        if any(set_text(self.run, e) is None for e in candidate.edits):
            return None, 0.0
        edits = [(e.path, e.value) for e in candidate.edits]
        start = time.perf_counter()
        try:
            outcome = replay(self.run, edits, command=self.command) if self.command else replay(self.run, edits)
        except EditError:
            return None, 0.0
        return outcome, time.perf_counter() - start

    def _rerun_in_order(self, wanted: Iterator[Candidate]
                        ) -> Iterator[tuple[Candidate, ReplayOutcome | None, float]]:
        """Each candidate with its replay, in the order given, :attr:`at_once` replays running at a time.

        The next candidates are started before the current one's result is taken, so a result may come for a
        candidate the caller then skips; what is counted (tried, refused, the time) is counted here, as taken.
        """
        pool = ThreadPoolExecutor(self.at_once, thread_name_prefix="explain") if self.at_once > 1 else None
        pending: deque[tuple[Candidate, Future[tuple[ReplayOutcome | None, float]]]] = deque()
        try:
            for candidate in wanted:
                if self.cancelled():
                    return
                if pool is None:
                    yield (candidate, *self._rerun(candidate))
                    continue
                pending.append((candidate, pool.submit(self._rerun, candidate)))
                if len(pending) >= self.at_once:
                    first, future = pending.popleft()
                    yield (first, *future.result())
            while pending:
                if self.cancelled():
                    return
                first, future = pending.popleft()
                yield (first, *future.result())
        except KeyboardInterrupt:  # Ctrl-C: the re-runs still going are stopped, not waited for
            from tracetui.record.child import stop_live_agents

            stop_live_agents()
            raise
        finally:
            for _, future in pending:
                future.cancel()
            if pool is not None:
                pool.shutdown(wait=True, cancel_futures=True)  # a re-run already running ends on its own

    def _judged(self, candidate: Candidate, outcome: ReplayOutcome | None, seconds: float) -> Proof | None:
        """Count the candidate as tried (and its re-run's time), and the proof its replay makes, if any."""
        self.tried += 1
        if outcome is None:  # no command could reproduce it, or the re-run refused the edit
            self.refused += 1
            return None
        self.reruns += 1
        self.seconds += seconds
        after = Evidence(outcome.replayed)
        before = self.evidence
        why = None
        if after.ready:
            kind, why = kind_of(candidate, before)
        elif after.progress() > before.progress() and after.failure_key != before.failure_key:
            kind, why = PARTIAL, partial_why_not(candidate, before)
        else:
            return None
        return Proof(candidate, outcome, kind, candidate.lane == before.lane, after.progress(), self.tried, why,
                     self.command)

    def _pair_candidates(self) -> Iterator[Candidate]:
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
                yield pair

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


def explain(run: RunData, pairs: bool = True, command: Sequence[str] | None = None,
            cancelled: Callable[[], bool] = lambda: False) -> Explanation:
    """Every proven fix of ``run`` and every what-if (each ranked), and its partial fixes when nothing
    makes it answer-ready. A run of the user's own agent is re-run with ``command`` (the user's).
    ``cancelled`` is asked before each replay (the MCP server's time limit): what was proven by then is kept."""
    search = Search(run, pairs, cancelled, command=command)
    found = list(search.proofs())
    result = Explanation(run, run.verdict(), tried=search.tried, refused=search.refused, reason=search.reason,
                         responsibility=search.responsibility, headline=search.headline, guard_held=search.guard_held,
                         command=search.command, reruns=search.reruns, seconds=search.seconds)
    result.fixes = sorted((p for p in found if p.kind == FIX), key=lambda p: p.rank_key)
    result.what_ifs = sorted((p for p in found if p.kind == WHAT_IF), key=lambda p: p.rank_key)
    result.partials = sorted((p for p in found if p.kind == PARTIAL), key=lambda p: p.rank_key)
    return result


#: bytes of the agent's own output kept to say why its re-run did not reproduce the recording
AGENT_WORDS = 2000


def _last_words(output: Any) -> str:
    """The last lines the agent printed (at most :data:`AGENT_WORDS` characters), redacted before they are
    cut: a cut from the start would leave the end of a key (``…A1b2C3``) that has lost the shape redaction
    knows it by, so a line begun before what is read is dropped, and the rest redacted whole."""
    output.seek(0, 2)
    start = max(0, output.tell() - AGENT_WORDS - 4 * 4096)
    output.seek(start)
    text = output.read().decode("utf-8", "replace")
    if start:
        text = text.partition("\n")[2]
    lines = redact_text(text).strip().splitlines()[-3:]
    said = " / ".join(line.strip() for line in lines)
    return said if len(said) <= AGENT_WORDS else "…" + said[-AGENT_WORDS:]


def _verdict_key(verdict: dict[str, Any]) -> tuple[Any, ...]:
    failure = verdict.get("first_failure") if isinstance(verdict.get("first_failure"), dict) else {}
    return verdict.get("status"), failure.get("lane"), failure.get("code")


def _verdict_words(verdict: dict[str, Any]) -> str:
    failure = verdict.get("first_failure") if isinstance(verdict.get("first_failure"), dict) else None
    status = str(verdict.get("status"))
    return f"{status} at {failure.get('lane')}@{failure.get('seq')}" if failure else status
