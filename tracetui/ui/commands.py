"""Command palette (ctrl+p): every key binding plus the filters and sorts, by name; and runs by id.

Typing part of a run id lists the runs whose id holds it (at most :data:`MAX_RUN_HITS`, the
best first: the id itself, then ids that start with it, then the rest in list order); Enter
selects that run in the list. The ids are read once per palette, a chunk at a time between
turns of the app's loop (:class:`RunIds`); each keystroke then costs a scan in C and work
bounded by the hits kept, so a million runs keep the palette responsive.
"""
from __future__ import annotations

import asyncio
from array import array
from bisect import bisect_right
from functools import partial
from typing import Any, Callable, Iterator, Sequence

from rich.text import Text
from textual.command import DiscoveryHit, Hit, Hits, Provider
from textual.markup import escape

from tracetui.trace.format import LANES
from tracetui.trace.responsibility import RESPONSIBILITIES, WORDS as RESPONSIBILITY_WORDS
from tracetui.trace.safe_text import one_line
from tracetui.ui.model import SORTS, STATUS_FILTERS, run_icon

#: most runs listed for a typed id
MAX_RUN_HITS = 20
#: runs scanned between two turns of the app's loop
SCAN_CHUNK = 20_000
#: a hit's score: the id itself, an id that starts with the text, one that holds it
EXACT, PREFIX, INSIDE = 1.0, 0.9, 0.7


def palette_commands(screen, app) -> Iterator[tuple[str, str, Callable[[], object]]]:
    """(name, help, callback) for each command; screen actions run on the screen the palette was opened over."""
    seen = set()
    for owner, bindings in ((screen, screen.BINDINGS), (app, app.BINDINGS)):
        for binding in bindings:
            if not binding.description or binding.action in seen:
                continue
            seen.add(binding.action)
            key = binding.key_display or binding.key
            yield binding.description, f"key: {key}", partial(owner.run_action, binding.action)
    if hasattr(screen, "action_set_query"):
        for status in STATUS_FILTERS:
            yield f"show runs: {status}", "status filter", partial(screen.run_action, f"set_query('status', {status!r})")
        for lane in (None, *LANES):
            yield (f"failing lane: {lane or 'any'}", "lane filter",
                   partial(screen.run_action, f"set_query('lane', {lane!r})"))
        for whose in (None, *RESPONSIBILITIES):
            words = RESPONSIBILITY_WORDS.get(whose, whose) if whose else "every run"
            yield (f"whose failure: {whose or 'any'}", f"responsibility filter: {words}",
                   partial(screen.run_action, f"set_query('responsibility', {whose!r})"))
        for sort in SORTS:
            yield f"sort by {sort}", "sort the run list", partial(screen.run_action, f"set_query('sort', {sort!r})")


class RunIds:
    """Every run's id, lower case, one a line in one string, so a typed id is found by ``str.find``: the scan
    runs in C, whatever the number of runs, and the Python work per keystroke is bounded by the hits kept.

    Built while the palette is open (a provider lives as long as it), a chunk of runs at a time, and extended
    as the index adds runs; about 20 bytes a run.
    """

    def __init__(self) -> None:
        self.entries: Sequence[Any] | None = None
        self.starts = array("q")  # where each id starts in the text
        self._text = "\n"
        self._pieces: list[str] = []  # chunks taken in since the text was last joined
        self._length = 1

    def extend(self, entries: Sequence[Any], chunk: int = SCAN_CHUNK) -> Iterator[None]:
        """Take in the runs added since (all of them for a new list), yielding after each chunk."""
        if entries is not self.entries:
            self.__init__()  # type: ignore[misc]
            self.entries = entries
        end = len(entries)
        for start in range(len(self.starts), end, chunk):
            ids = [e.run_id.lower().replace("\n", " ") for e in entries[start:min(start + chunk, end)]]
            for run_id in ids:
                self.starts.append(self._length)
                self._length += len(run_id) + 1
            self._pieces.append("\n".join(ids) + "\n")
            yield

    @property
    def text(self) -> str:
        if self._pieces:
            self._text += "".join(self._pieces)
            self._pieces = []
        return self._text

    def find(self, text: str, limit: int = MAX_RUN_HITS) -> list[tuple[float, int]]:
        """``(score, index)`` of at most ``limit`` runs whose id holds ``text`` (lower case, no line break): the id
        itself first, then ids that start with it, then the rest, each in list order."""
        text = text.replace("\n", " ")  # as in the ids: a line break never spans two of them
        found: dict[int, float] = {}
        whole = self.text
        if text not in whole:  # one scan, not three, for a text no id holds (most keystrokes of a typo)
            return []
        for needle, offset, score in ((f"\n{text}\n", 1, EXACT), (f"\n{text}", 1, PREFIX), (text, 0, INSIDE)):
            pos = whole.find(needle)
            while pos >= 0 and len(found) < limit:
                index = bisect_right(self.starts, pos + offset) - 1
                found.setdefault(index, score)
                after = self.starts[index + 1] if index + 1 < len(self.starts) else len(whole)
                pos = whole.find(needle, after - offset)  # on from the next id
        return [(score, index) for index, score in sorted(found.items(), key=lambda hit: (-hit[1], hit[0]))]


def jump_to_run(screen: Any, index: int, run_id: str) -> None:
    """Select ``run_id`` (at ``index`` when the palette listed it) in the run list; filters that hide it are
    cleared first, and said."""
    from tracetui.ui.widgets.run_list import RunList

    entries = screen.entries
    if not (index < len(entries) and entries[index].run_id == run_id):  # reloaded since: find it again
        index = next((i for i, e in enumerate(entries) if e.run_id == run_id), -1)
        if index < 0:
            screen.notify(one_line(f"run {run_id} is no longer in the list", 100), markup=False, timeout=3)
            return
    runs = screen.query_one(RunList)
    if not runs.select_index(index):
        screen.action_clear_filters()
        screen.notify(one_line(f"filters cleared to show run {run_id}", 100), markup=False, timeout=3)
        runs.select_index(index)
    runs.focus()


class TraceCommands(Provider):
    """Lists the app's commands so every action is reachable without remembering its key, and runs by id."""

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for name, help_text, callback in palette_commands(self.screen, self.app):
            score = matcher.match(name)
            if score > 0:
                yield Hit(score, matcher.highlight(name), callback, help=help_text)
        async for hit in self.run_hits(query):
            yield hit

    ids: RunIds | None = None

    async def run_hits(self, query: str) -> Hits:
        """The runs whose id holds ``query`` (``run ID`` too), scanned in chunks (see the module)."""
        screen = self.screen
        entries = getattr(screen, "entries", None)
        if not entries or not hasattr(screen, "action_clear_filters"):
            return
        text = query.strip()
        if text.lower().startswith("run ") and text[4:].strip():
            text = text[4:].strip()
        text = text.lower()
        if not text:
            return
        if self.ids is None:
            self.ids = RunIds()
        for _ in self.ids.extend(entries):
            await asyncio.sleep(0)  # a newer keystroke cancels this here
        for n, (score, index) in enumerate(self.ids.find(text)):
            entry = entries[index]
            score -= n / 1e6  # the palette sorts by score: ties keep list order
            shown = one_line(entry.run_id, 60)
            prompt = Text("jump to run ")
            prompt.append(shown, "bold")
            failure = entry.first_failure
            lane = f" at {failure.lane}" if failure is not None and getattr(failure, "lane", None) else ""
            words = escape(one_line(f"{run_icon(entry)} {entry.status}{lane}", 60))
            yield Hit(score, prompt, partial(jump_to_run, screen, index, entry.run_id), help=words)

    async def discover(self) -> Hits:
        for name, help_text, callback in palette_commands(self.screen, self.app):
            yield DiscoveryHit(name, callback, help=help_text)
