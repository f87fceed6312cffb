"""`/` searches inside events: runs found by what their events hold, n/N between the matching events."""
from __future__ import annotations

import threading

from tracetui.trace.index import IndexedSource
from tracetui.triage import event_search
from tracetui.triage.event_search import Needle, matching_events, search_runs
from tracetui.ui.app import TraceApp
from tracetui.ui.screens.edit import EditScreen
from tracetui.ui.widgets.detail import DetailPane
from tracetui.ui.widgets.run_list import RunList
from tracetui.ui.widgets.swimlanes import SwimLanes

from ui_helpers import wait_until

SIZE = (160, 45)


async def scanned(pilot) -> None:
    await pilot.pause()
    await wait_until(pilot, lambda: not getattr(pilot.app.screen, "scanning", False), tries=500)


def shown_ids(screen) -> list[str]:
    runs = screen.query_one(RunList)
    return [runs.entries[i].run_id for i in runs.view]


def searched(screen) -> bool:
    found = screen.query_state.found
    return found is not None and found.text == screen.query_state.text and found.progress is None


async def test_slash_finds_runs_by_what_their_events_hold(scenarios_file):
    app = TraceApp(IndexedSource([scenarios_file]))
    async with app.run_test(size=SIZE) as pilot:
        await scanned(pilot)
        screen = app.screen
        await pilot.press("slash", *"cancel_order")
        await wait_until(pilot, lambda: searched(screen), tries=500)
        assert shown_ids(screen) == ["unknown_tool"]  # no run id or status says it: its events do
        for key in ["backspace"] * len("cancel_order"):
            await pilot.press(key)
        await pilot.press(*"o-1")
        await wait_until(pilot, lambda: searched(screen), tries=500)
        expected = [e.run_id for e in screen.entries if (e.source, e.run_id) in search_runs(screen.source, "o-1")]
        assert expected and shown_ids(screen) == expected
        assert not any("o-1" in run_id for run_id in expected)


async def test_n_and_N_move_between_matching_events_across_runs_and_wrap(scenarios_file):
    app = TraceApp(IndexedSource([scenarios_file]))
    async with app.run_test(size=SIZE) as pilot:
        await scanned(pilot)
        screen = app.screen
        await pilot.press("slash", *"o-2")
        await wait_until(pilot, lambda: searched(screen), tries=500)
        await pilot.press("enter")
        runs, lanes = screen.query_one(RunList), screen.query_one(SwimLanes)
        needle = Needle.of("o-2")
        order = []  # every matching event in list order: (run, seq)
        for i in runs.view:
            entry = runs.entries[i]
            events = sorted(screen.source.load(entry).events, key=lambda e: e["seq"])
            order += [(entry.run_id, events[k]["seq"]) for k in matching_events(events, needle)]
        assert len({run for run, _ in order}) >= 2  # (the test needs matches in more than one run)
        seen = []
        for _ in range(len(order) + 1):
            await pilot.press("n")
            await pilot.pause()
            seen.append((runs.current.run_id, lanes.current["seq"]))
            detail = screen.query_one(DetailPane)
            assert detail.event is lanes.current and "o-2" in detail.text.plain  # the match is in the detail
        assert seen == order + order[:1]  # past the last match: the first again
        for expected in (order[-1], order[-2]):  # back past the first: the last, then the one before
            await pilot.press("N")
            await pilot.pause()
            assert (runs.current.run_id, lanes.current["seq"]) == expected
        await pilot.press("escape", "escape")  # no search: n is the next failed run again
        await pilot.press("n")
        await pilot.pause()
        assert runs.current.failed and lanes.current["seq"] == runs.current.first_failure["seq"]


async def test_clearing_the_box_cancels_the_search(scenarios_file, monkeypatch):
    gate = threading.Semaphore(0)
    searching = threading.Event()
    search_block = event_search.EventSearch._search_block

    def slow_block(self, *args):
        searching.set()
        gate.acquire(timeout=5)  # (a safety net: the test releases it)
        return search_block(self, *args)

    monkeypatch.setattr(event_search, "BLOCK_BYTES", 512)
    monkeypatch.setattr(event_search.EventSearch, "_search_block", slow_block)
    app = TraceApp(IndexedSource([scenarios_file]))
    async with app.run_test(size=SIZE) as pilot:
        await scanned(pilot)
        screen = app.screen
        await pilot.press("slash", *"o-1")
        # (a search for "o" may have started, and been cancelled, while "-1" was typed)
        await wait_until(pilot, lambda: searching.is_set() and screen._event_search is not None
                         and screen._event_search.needle.text == "o-1", tries=500)
        search = screen._event_search
        assert search is not None and search.needle.text == "o-1" and not search.cancelled
        assert "searching events" in str(screen.query_one("#query").render())  # progress is shown
        await pilot.press("escape")
        await pilot.pause()
        assert search.cancelled and screen.query_state.found is None
        for _ in range(50):
            gate.release()
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert len(shown_ids(screen)) == len(screen.entries)  # nothing found late comes back


async def test_a_key_that_still_finds_a_run_by_its_events_stays_text(scenarios_file):
    app = TraceApp(IndexedSource([scenarios_file]))
    async with app.run_test(size=SIZE) as pilot:
        await scanned(pilot)
        screen = app.screen
        await pilot.press("slash", *"cancel_ord")
        await wait_until(pilot, lambda: searched(screen), tries=500)
        assert shown_ids(screen) == ["unknown_tool"]
        await pilot.press("e")  # "cancel_orde" is in unknown_tool's events: typed, not the edit key
        await pilot.pause()
        assert not isinstance(app.screen, EditScreen)
        assert screen.query_one("#filter").value == "cancel_orde" and app.focused is screen.query_one("#filter")
        await wait_until(pilot, lambda: searched(screen), tries=500)
        await pilot.press("x")  # "cancel_ordex" is nowhere: x is the screen's (clear filters)
        await pilot.pause()
        assert screen.query_one("#filter").value == ""
        assert len(shown_ids(screen)) == len(screen.entries)


async def test_runs_found_re_filter_the_list_no_more_often_than_typing_allows(scenarios_file, monkeypatch):
    """Each re-filter of a big list costs a good part of a second: reports arriving faster than that are
    taken in together (the UI thread stays free for keys), and the last one at once."""
    from tracetui.ui.screens import search_actions
    from tracetui.ui.screens.search_actions import SearchFound

    clock = [1000.0]
    monkeypatch.setattr(search_actions, "monotonic", lambda: clock[0])
    app = TraceApp(IndexedSource([scenarios_file]))
    async with app.run_test(size=SIZE) as pilot:
        await scanned(pilot)
        screen = app.screen
        screen._stop_event_search()
        found = search_actions.EventMatches("o-1")
        screen.query_state = screen.query_state.__class__(text="o-1", found=found)
        applied = []
        real_apply = screen.apply_query

        def slow_apply(*args, **kwargs):  # a re-filter that takes one (fake) second
            applied.append(clock[0])
            clock[0] += 1.0
            return real_apply(*args, **kwargs)

        monkeypatch.setattr(screen, "apply_query", slow_apply)
        generation = screen._search_generation
        for n in range(5):  # reports a quarter of a second apart
            screen.on_search_found(SearchFound(generation, found, [(0, screen.entries[n].run_id)], 0.1 * n, False))
            clock[0] += 0.25
        assert len(applied) == 1  # the rest wait: 4 s of typing's time for each second of re-filtering
        assert {(0, screen.entries[n].run_id) for n in range(5)} <= found.runs  # (taken in, shown later)
        screen.on_search_found(SearchFound(generation, found, [], 1.0, True))
        assert len(applied) == 2  # the search is done: shown at once
        screen._stop_event_search()


async def test_the_footer_says_what_n_does_next_match_while_a_search_text_is_set(scenarios_file):
    """n is the search's while a text is set, and the footer says so: 'next fail' would send a user elsewhere."""
    app = TraceApp(IndexedSource([scenarios_file]))
    async with app.run_test(size=(80, 24)) as pilot:
        await scanned(pilot)
        screen = app.screen

        def n_says() -> str:
            return screen.active_bindings["n"].binding.description

        assert n_says() == "next fail"
        await pilot.press("slash", *"o-2")
        await wait_until(pilot, lambda: searched(screen), tries=500)
        await pilot.press("enter")
        await pilot.pause()
        assert n_says() == "next match"
        runs, lanes = screen.query_one(RunList), screen.query_one(SwimLanes)
        await pilot.press("n")
        await pilot.pause()
        assert "o-2" in str(lanes.current).lower()  # the key did the search's work
        await pilot.press("x")
        await pilot.pause()
        assert n_says() == "next fail"
        before = runs.cursor
        await pilot.press("n")
        await pilot.pause()
        assert runs.entries[runs.view[runs.cursor]].failed and runs.cursor != before
