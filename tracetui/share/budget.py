"""How much one page may hold, so a huge trace still makes a page a browser opens (review 23a).

A run of 20 000 events made a 158 MB page in 73 s. A page now shows at most :data:`MAX_EVENTS`
events of a run (the first ones, those around the first failure and the last ones; the lanes
show the same steps) and at most :data:`PAGE_CHARS` characters of event data in all; what it
leaves out it says, with the command that shows it. Module attributes, so a test can shrink them.
"""
from __future__ import annotations

from typing import Iterable

#: the most events of one run a page lists (and steps its lanes show)
MAX_EVENTS = 400
#: of those: the first ones, the ones either side of the first failure, and the last ones
HEAD, AROUND, TAIL = 200, 50, 50
#: characters of the page's event data and run sections, all runs together
PAGE_CHARS = 25_000_000
#: runs shown in full on one page (each failed one is proved by replay, which takes a moment)
MAX_RUNS = 200


class PageBudget:
    """The characters a page has left; every run section and every event's data draws on it."""

    def __init__(self, chars: int | None = None, runs: int | None = None) -> None:
        self.left = PAGE_CHARS if chars is None else chars
        self.runs_left = MAX_RUNS if runs is None else runs

    @property
    def spent(self) -> bool:
        return self.left <= 0

    def room_for_a_run(self) -> bool:
        """Whether another run gets its full section (counting it when it does)."""
        if self.spent or self.runs_left <= 0:
            return False
        self.runs_left -= 1
        return True

    def take(self, text: str) -> str:
        self.left -= len(text)
        return text


def shown_steps(count: int, focus: Iterable[int]) -> list[int]:
    """Indexes of the events a page shows of ``count``: all when few, else the first :data:`HEAD`, the last
    :data:`TAIL` and :data:`AROUND` either side of each index in ``focus`` (the first failure), in order."""
    if count <= MAX_EVENTS:
        return list(range(count))
    keep = set(range(min(HEAD, count))) | set(range(max(0, count - TAIL), count))
    for i in focus:
        keep |= set(range(max(0, i - AROUND), min(count, i + AROUND + 1)))
    return sorted(keep)[:MAX_EVENTS]


def gaps(shown: list[int]) -> list[tuple[int, int, int]]:
    """(position in ``shown`` before which, first left-out index, how many) for every run of left-out events."""
    out, before = [], -1
    for pos, i in enumerate(shown):
        if i != before + 1:
            out.append((pos, before + 1, i - before - 1))
        before = i
    return out
