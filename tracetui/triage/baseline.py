"""What got worse since a known-good trace: each run of a new trace judged against its baseline's verdict.

CI asks "what newly fails?", not "what fails?": a run that failed yesterday too is known; one that passed
yesterday and fails today is news. Runs are matched by the name the reader lists them under (the run id,
``id#2``, ``id#3``… for repeats: :func:`~tracetui.trace.reader.run_name`), so the second run of an id in
one file meets the second run of it in the other.

Memory stays bounded: the baseline is held as ``{name: outcome}`` (a short string per run), the new trace
is streamed verdict by verdict (:func:`each_verdict`), and each match is taken out of the baseline, so what
is left at the end is exactly the runs only the baseline holds. Runs only in the new trace are counted, and
the first few named.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any, Callable

from tracetui.trace.verdict import READY

#: how a run of the new trace compares with the baseline
NEWLY_FAILING, STILL_FAILING, FIXED, STILL_READY, ONLY_IN_NEW = (
    "newly_failing", "still_failing", "fixed", "still_ready", "only_in_new")
#: the judgements of matched runs, in the order they are counted
MATCHED = (NEWLY_FAILING, STILL_FAILING, FIXED, STILL_READY)
#: names kept of the runs only one trace holds (the rest are counted)
LISTED = 1000


def each_verdict(item: str | os.PathLike[str] | Any, on_verdict: Callable[[dict[str, Any]], None],
                 on_problem: Callable[[Any], None], query: Any = None) -> None:
    """Hand on each run's ``check --json`` verdict in the order ``check`` lists them, and each problem line.

    ``item``: a file name, a backend source (``phoenix+http://…``) or an already open input (a spool of
    standard input). A tracetui trace is streamed (:class:`~tracetui.trace.checking.Checker`: bounded
    memory); OTLP/JSON and a backend are read as ``check`` reads them (runs kept as their verdicts).
    Raises TraceReadError (no run at all), TraceChanged (the file changed while it was read) or OSError."""
    from tracetui.otel.backend import is_backend_source
    from tracetui.otel.detect import is_otlp, read_for_check, spooled_for_check

    whole = None
    if isinstance(item, (str, os.PathLike)):
        if is_backend_source(str(item)) or is_otlp(item):
            whole = read_for_check(item, query)  # OTLP/JSON: its runs kept as their verdicts (bounded memory)
    else:
        whole = spooled_for_check(item)  # OTLP/JSON on standard input: streamed, as a file of it is
    if whole is None:
        from tracetui.trace.checking import Checker

        checker = Checker(item, on_verdict, on_problem)
        try:
            checker.run()
        finally:
            checker.close()
        return
    from tracetui.otel.origin import origin  # an imported run's trace id and service: findable again

    for problem in whole.problems:
        on_problem(problem)
    for run in whole.runs.values():
        on_verdict({**run.verdict(), **origin(run)})


def baseline_outcomes(item: str | os.PathLike[str] | Any, query: Any = None) -> tuple[dict[str, str], int]:
    """The baseline's outcome per run name, and how many of its lines could not be read."""
    outcomes: dict[str, str] = {}
    problems = [0]

    def counted(_problem: Any) -> None:
        problems[0] += 1

    each_verdict(item, lambda v: outcomes.__setitem__(v["run_id"], v["outcome"]), counted, query)
    return outcomes, problems[0]


@dataclass
class Unmatched:
    """Runs one trace holds and the other does not: how many, and the first :data:`LISTED` names."""

    count: int = 0
    names: list[str] = field(default_factory=list)

    def add(self, name: str) -> None:
        self.count += 1
        if len(self.names) < LISTED:
            self.names.append(name)

    def to_json(self) -> dict[str, Any]:
        return {"count": self.count, "runs": list(self.names)}


class BaselineComparison:
    """The new trace's runs judged one by one against the baseline's outcomes (which it consumes)."""

    def __init__(self, baseline: dict[str, str]):
        self._baseline = baseline
        self.counts = dict.fromkeys(MATCHED, 0)
        self.only_in_new = Unmatched()

    def judge(self, verdict: dict[str, Any]) -> str:
        """The judgement of one new run (its ``check --json`` verdict); counted."""
        name = verdict["run_id"]
        before = self._baseline.pop(name, None)
        if before is None:
            self.only_in_new.add(name)
            return ONLY_IN_NEW
        was_ready, is_ready = before == READY, verdict["outcome"] == READY
        judgement = (STILL_READY if is_ready else NEWLY_FAILING) if was_ready else (
            FIXED if is_ready else STILL_FAILING)
        self.counts[judgement] += 1
        return judgement

    def only_in_old(self) -> Unmatched:
        """The baseline's runs no new run matched (meaningful once the whole new trace is judged)."""
        left = Unmatched(count=len(self._baseline))
        for name in self._baseline:
            if len(left.names) >= LISTED:
                break
            left.names.append(name)
        return left

    @property
    def matched(self) -> int:
        return sum(self.counts.values())

    def words(self, only_in_old: Unmatched | None) -> str:
        """The tally in a line: ``36 run(s) matched: 1 newly failing, …; 2 only in the new trace, …``."""
        tally = ", ".join(f"{self.counts[k]} {k.replace('_', ' ')}" for k in MATCHED)
        old = f", {only_in_old.count} only in the baseline" if only_in_old is not None else ""
        return f"{self.matched} run(s) matched: {tally}; {self.only_in_new.count} only in the new trace{old}"
