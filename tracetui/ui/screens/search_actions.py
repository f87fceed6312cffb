"""Search inside events: the worker that scans them, n/N between matches (issue 24).

A mixin of :class:`~tracetui.ui.screens.main.MainScreen`. Typing in the filter box matches run ids and
statuses at once (:class:`~tracetui.ui.model.RunQuery`); here the same text is searched for in the
runs' records, in a thread worker over the indexed file (:mod:`tracetui.triage.event_search`), and the
runs it finds join the list as they are found. A new text, or clearing the box, cancels the search.
While a text is searched, ``n``/``N`` move between the events that hold it, as ``n`` in less or vim:
inside the run, then on to the next run that holds it (the first of its matches), wrapping at the end.
"""
from __future__ import annotations

from time import monotonic
from dataclasses import replace
from itertools import islice
from typing import Any

from rich.text import Text
from textual import work
from textual.binding import Binding
from textual.message import Message
from textual.timer import Timer
from textual.worker import get_current_worker

from tracetui.trace.safe_text import printable
from tracetui.triage.event_search import EventSearch, Needle, matching_events, run_matches
from tracetui.ui.model import EventMatches

#: n/N are the main screen's (next failed run); with a search text they move between matches instead
#: n and N while a search text is set (the footer then says so): the main screen's n/N step aside for them
SEARCH_BINDINGS: list[Binding] = [
    Binding("n", "next_match(1)", "next match", key_display="n", tooltip="the next event holding the search text",
            id="next_match"),
    Binding("N", "next_match(-1)", "previous match", show=False, tooltip="the previous event holding the search text",
            id="prev_match"),
]
#: how long typing pauses before the events are searched for the text, in seconds
SEARCH_DELAY = 0.15
#: how often the run list takes in the runs found meanwhile, in seconds (each pass re-filters every row)
REPORT_SECONDS = 0.25
#: the most of the UI thread's time re-filtering the list for the runs found may take while a search goes
#: on (the rest is typing's): a pass over 10k runs costs a good part of a second on a loaded machine
APPLY_SHARE = 0.2
#: runs loaded at the most to tell whether a key typed in the filter box still finds a run by its events
HAND_OVER_CHECKS = 64


class SearchFound(Message):
    """The search inside events found more runs (``finished``: it is done)."""

    def __init__(self, generation: int, found: EventMatches, runs: list[tuple[int, str]], fraction: float,
                 finished: bool, error: str | None = None) -> None:
        super().__init__()
        self.generation, self.found, self.runs = generation, found, runs
        self.fraction, self.finished, self.error = fraction, finished, error


class SearchActions:
    """Mixed into the main screen (which defines ``query_state``, ``entries``, ``source``, ``apply_query``)."""

    _search_generation = 0
    _event_search: EventSearch | None = None
    _search_timer: Timer | None = None
    _revealing = False  # the event shown was reached by n/N: scroll the detail pane to the match
    _apply_due = 0.0  # (monotonic) the list is re-filtered for runs found no sooner than this
    _apply_timer: Timer | None = None

    # -- the search ------------------------------------------------------------------------------
    def search_text_changed(self, text: str) -> None:
        """The filter box's text changed: stop searching for the old one; search events for the new one
        once typing pauses."""
        self._stop_event_search()
        if not text:
            self.query_state = replace(self.query_state, found=None)  # type: ignore[attr-defined]
            return
        found = EventMatches(text)
        self.query_state = replace(self.query_state, found=found)  # type: ignore[attr-defined]
        generation = self._search_generation
        self._search_timer = self.set_timer(  # type: ignore[attr-defined]
            SEARCH_DELAY, lambda: self._start_event_search(generation, found))

    def _stop_event_search(self) -> None:
        self._search_generation += 1
        if self._search_timer is not None:
            self._search_timer.stop()
            self._search_timer = None
        if self._event_search is not None:
            self._event_search.cancel()
            self._event_search = None
        self.workers.cancel_group(self, "event-search")  # type: ignore[attr-defined]
        if self._apply_timer is not None:
            self._apply_timer.stop()
            self._apply_timer = None

    def _start_event_search(self, generation: int, found: EventMatches) -> None:
        if generation != self._search_generation:
            return
        self._event_search = EventSearch(self.source, Needle.of(found.text))  # type: ignore[attr-defined]
        self._search_events(generation, self._event_search, found)

    @work(thread=True, exclusive=True, group="event-search")
    def _search_events(self, generation: int, search: EventSearch, found: EventMatches) -> None:
        """Search the runs' records off the UI thread, telling the screen a few times a second."""
        worker = get_current_worker()
        post = self.post_message  # type: ignore[attr-defined]
        pending: list[tuple[int, str]] = []
        last = monotonic()
        try:
            for step in search.steps():
                if worker.is_cancelled:
                    search.cancel()
                    return
                pending += step.found
                now = monotonic()
                if step.finished or now - last >= REPORT_SECONDS:
                    post(SearchFound(generation, found, pending, step.fraction, step.finished))
                    pending, last = [], now
        except Exception as exc:  # noqa: BLE001 - a file that changed, a run that cannot be read: said, not raised
            if not worker.is_cancelled:
                post(SearchFound(generation, found, pending, 1.0, True, error=f"the search inside events stopped: {exc}"))

    def on_search_found(self, message: SearchFound) -> None:
        if message.generation != self._search_generation or self.query_state.found is not message.found:  # type: ignore[attr-defined]
            return
        found = message.found
        found.runs.update(message.runs)
        found.progress = None if message.finished else message.fraction
        if message.error:
            self.notify(printable(message.error), severity="error", markup=False)  # type: ignore[attr-defined]
        if message.finished:
            self._event_search = None
        wait = self._apply_due - monotonic()
        if message.finished or wait <= 0:
            self._apply_found()
        elif self._apply_timer is None:
            self._apply_timer = self.set_timer(wait, self._apply_found)  # type: ignore[attr-defined]

    def _apply_found(self) -> None:
        """Re-filter the list for the runs found so far, then wait long enough that re-filtering takes at
        most APPLY_SHARE of the UI thread's time (keys typed meanwhile are answered at once)."""
        if self._apply_timer is not None:
            self._apply_timer.stop()
            self._apply_timer = None
        start = monotonic()
        self.apply_query()  # type: ignore[attr-defined]
        end = monotonic()
        self._apply_due = end + (end - start) * (1 / APPLY_SHARE - 1)

    # -- the filter box's key rule ------------------------------------------------------------------
    def events_may_hold(self, text: str) -> bool:
        """Whether runs of the list found by their events may hold ``text`` too (a key typed in the filter
        box then stays text). Only runs found for a text ``text`` holds can: they are looked at again, a
        few; beyond that many they are taken to hold it (a key is handed over only when surely no run
        is left)."""
        found = self.query_state.found  # type: ignore[attr-defined]
        if found is None or not found.runs or found.text.casefold() not in text.casefold():
            return False
        from tracetui.ui.widgets.run_list import RunList

        entries = self.entries  # type: ignore[attr-defined]
        view = self.query_one(RunList).view  # type: ignore[attr-defined]
        candidates = list(islice((entries[i] for i in view if (entries[i].source, entries[i].run_id) in found.runs),
                                 HAND_OVER_CHECKS + 1))
        needle = Needle.of(text)
        for entry in candidates[:HAND_OVER_CHECKS]:
            try:
                if run_matches(self.source.load(entry), needle):  # type: ignore[attr-defined]
                    return True
            except Exception:  # noqa: BLE001 - a run that cannot be read holds nothing
                continue
        return len(candidates) > HAND_OVER_CHECKS

    # -- n / N ------------------------------------------------------------------------------------
    @property
    def searching_text(self) -> bool:
        """Whether n/N move between matches (a search text is set) rather than between failed runs."""
        return bool(self.query_state.text)  # type: ignore[attr-defined]

    def action_next_match(self, direction: int) -> None:
        """Select the next (or previous) event holding the search text: in this run, else in the next
        run of the list that holds it (its first match; its last, going back), wrapping at the end."""
        from tracetui.ui.widgets.run_list import RunList
        from tracetui.ui.widgets.swimlanes import SwimLanes

        query = self.query_state  # type: ignore[attr-defined]
        needle = Needle.of(query.text)
        runs, lanes = self.query_one(RunList), self.query_one(SwimLanes)  # type: ignore[attr-defined]
        current = runs.current
        if current is not None and lanes.entry is current:
            hits = matching_events(lanes.events, needle)
            ahead = [i for i in hits if (i > lanes.cursor if direction > 0 else i < lanes.cursor)]
            if ahead:
                self._select_match(lanes, ahead[0] if direction > 0 else ahead[-1])
                return
        view, n = runs.view, len(runs.view)
        for step in range(1, n + 1):
            pos = (runs.cursor + direction * step) % n
            entry = self.entries[view[pos]]  # type: ignore[attr-defined]
            if not query.found_in_events(entry):
                continue
            try:
                events = sorted(self.source.load(entry).events, key=_seq)  # type: ignore[attr-defined]
            except Exception:  # noqa: BLE001 - a run that cannot be read: the next one
                continue
            hits = matching_events(events, needle)
            if not hits:  # the text is in its inputs or its summary, not in an event
                continue
            wrapped = pos <= runs.cursor if direction > 0 else pos >= runs.cursor
            if pos != runs.cursor:
                runs.action_cursor(pos - runs.cursor)
                self.show_run(runs.current)  # type: ignore[attr-defined]
            self._select_match(lanes, hits[0] if direction > 0 else hits[-1])
            if wrapped:
                self.notify("search went past the " + ("last" if direction > 0 else "first")  # type: ignore[attr-defined]
                            + " run: continued at the " + ("top" if direction > 0 else "bottom"), timeout=2, markup=False)
            return
        still = query.found is not None and query.found.progress is not None
        self.notify(f"no event holds “{printable(query.text)}”" + (" yet: the search goes on" if still else ""),  # type: ignore[attr-defined]
                    timeout=3, markup=False)

    def _select_match(self, lanes: Any, index: int) -> None:
        self._revealing = True
        if index == lanes.cursor:
            lanes._changed()  # (re-selected: the detail pane shows it again, scrolled to the match)
        else:
            lanes.move_to(index)

    def reveal_match(self) -> None:
        """The detail pane shows an event: mark the search text in it, and scroll to it when n/N chose it."""
        from tracetui.ui.widgets.detail import DetailPane

        text = self.query_state.text  # type: ignore[attr-defined]
        revealing, self._revealing = self._revealing, False
        if not text:
            return
        detail = self.query_one(DetailPane)  # type: ignore[attr-defined]
        shown = getattr(detail, "text", None)
        if not isinstance(shown, Text) or detail.event is None:
            return
        marked = shown.copy()
        if not marked.highlight_words([text], "reverse", case_sensitive=False):
            return
        detail.query_one("#detail-body").update(marked)
        if revealing:
            first = marked.plain.lower().find(text.lower())
            line = marked.plain.count("\n", 0, max(first, 0))
            detail.call_after_refresh(detail.scroll_to, y=max(0, line - 2), animate=False)


def _seq(event: dict[str, Any]) -> int:
    seq = event.get("seq")
    return seq if isinstance(seq, int) else 0
