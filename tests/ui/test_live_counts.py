"""While a file is being indexed: counts never drift, and the run shown is the run under the cursor."""
from __future__ import annotations

import threading
from typing import Sequence

from tracetui.loop.runner import run_scenario
from tracetui.loop.scenarios import SCENARIOS
from tracetui.trace.index import IndexedSource
from tracetui.trace.reader import read_trace
from tracetui.trace.source import MemorySource, RunEntry, run_data_from_records
from tracetui.trace.writer import write_trace
from tracetui.ui.app import TraceApp
from tracetui.ui.screens.main import MainScreen
from tracetui.ui.widgets.header import HeaderBar
from tracetui.ui.widgets.run_list import RunList
from tracetui.ui.widgets.verdict import VerdictBanner

from ui_helpers import wait_until

SIZE = (160, 45)


class RacingList(list):
    """A run list the 'scan thread' appends to right after the screen reads a slice of it."""

    def __init__(self, entries: Sequence[RunEntry], pending: list[RunEntry]):
        super().__init__(entries)
        self.pending = pending

    def __getitem__(self, key):
        got = super().__getitem__(key)
        if isinstance(key, slice) and self.pending:
            self.append(self.pending.pop(0))  # a run published between the slice and anything after it
        return got


class RacingSource(MemorySource):
    def __init__(self, runs, label):
        super().__init__(runs, label)
        entries = list(self._entries)
        self._entries = RacingList(entries[:3], entries[3:])


async def test_runs_appended_while_counting_are_counted_once_indexing_ends():
    runs = [run_data_from_records(run_scenario(name).records) for name in SCENARIOS]
    source = RacingSource(runs, "racing")
    truth = sum(1 for r in runs if r.decide().outcome == "failed")
    app = TraceApp(source)
    async with app.run_test(size=SIZE) as pilot:
        screen: MainScreen = app.screen  # type: ignore[assignment]
        for _ in range(len(runs) + 2):  # one refresh per progress message, as the scan sends them
            screen.refresh_runs()
            await pilot.pause()
        assert len(source.runs()) == len(runs) and not source.runs().pending
        assert screen.failed == truth
        assert app.screen.query_one(HeaderBar).failed == truth
        assert sum(screen.counts.values()) == sum(1 for r in runs if r.decide().first_failure)


def big_file(tmp_path, copies: int = 60) -> str:
    records = []
    for n in range(copies):
        for name in SCENARIOS:
            records += run_scenario(name, run_id=f"{name}-{n}").records
    path = tmp_path / "big.jsonl"
    write_trace(path, records)
    return str(path)


class SlowIndex(IndexedSource):
    """An index whose scan waits for the test between chunks, so keys land mid-scan every time."""

    def __init__(self, paths):
        super().__init__(paths)
        self.step = threading.Semaphore(0)

    def scan(self, chunk_bytes: int = 64 * 1024):
        for progress in super().scan(chunk_bytes=64 * 1024):
            self.step.acquire(timeout=5)
            yield progress


def shown_matches_cursor(app) -> bool:
    screen = app.screen
    runs = screen.query_one(RunList)
    banner = screen.query_one(VerdictBanner)
    current = runs.current
    if current is None:
        return screen.shown is None
    return screen.shown is current and f"run {current.run_id} " in str(screen.query_one("#run-pane").border_title) \
        and banner.plain.split(" ")[1] in (current.status, "incomplete")


async def test_the_detail_follows_the_cursor_through_n_and_a_search_while_indexing(tmp_path):
    path = big_file(tmp_path)
    source = SlowIndex([path])
    app = TraceApp(source)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        for _ in range(3):
            source.step.release()
        await wait_until(pilot, lambda: len(source.runs()) > 0)
        for key in ["n", "slash", "c", "r", "o", "s", "s", "enter", "n", "down", "N"]:
            await pilot.press(key)
            source.step.release()  # the scan moves on between keys
            await pilot.pause()
            assert shown_matches_cursor(app), key
        for _ in range(1000):  # let the scan finish
            source.step.release()
        await app.workers.wait_for_complete()
        await pilot.pause()
        await pilot.pause()
        assert shown_matches_cursor(app)
        trace = read_trace(path)
        truth = sum(1 for r in trace.runs.values() if r.decide().outcome == "failed")
        assert screen.failed == truth == screen.query_one(HeaderBar).failed
        assert len(source.runs()) == len(trace.runs)
