"""m marks a run; d compares the marked run with the run under the cursor (issue 24).

A mixin of :class:`~tracetui.ui.screens.main.MainScreen`: its bindings are listed in MAIN_BINDINGS.
As lazygit marks one commit and diffs another: the mark stays (an ``m`` in the run list's first
column) until ``m`` is pressed on it again, so one run can be compared with several in turn. The
runs may come from two files of one ``tracetui open a.jsonl b.jsonl``: a run is named by its id and
its file. The comparison is the core's (:func:`tracetui.replay.run_diff.diff_runs`).
"""
from __future__ import annotations

from typing import Any

from textual import work
from textual.binding import Binding
from textual.worker import get_current_worker

from tracetui.trace.safe_text import printable
from tracetui.trace.source import RunEntry
from tracetui.ui.widgets.run_list import RunList

RUN_COMPARE_BINDINGS: list[Binding] = [
    Binding("m", "mark_run", "mark run", show=False,
            tooltip="mark this run to compare another with it (d); m again unmarks", id="mark_run"),
    Binding("d", "diff_runs", "diff with marked", show=False,
            tooltip="compare the marked run (m) with this one: steps aligned, the first divergence named",
            id="diff_runs"),
]


class RunCompareActions:
    """Mixed into :class:`~tracetui.ui.screens.main.MainScreen`."""

    marked_entry: RunEntry | None = None

    def _run_name(self, entry: RunEntry) -> str:
        """The run's id, with its file when several files are open (two runs may share an id)."""
        paths = getattr(self.source, "paths", None) or ()  # type: ignore[attr-defined]
        if len(paths) > 1 and entry.source < len(paths):
            return f"{paths[entry.source]}:{entry.run_id}"
        return entry.run_id

    def action_mark_run(self) -> None:
        runs = self.query_one(RunList)  # type: ignore[attr-defined]
        entry = runs.current
        if entry is None:
            self.notify("no run selected", timeout=2)  # type: ignore[attr-defined]
            return
        key = (entry.run_id, entry.source)
        if runs.marked == key:
            runs.marked, self.marked_entry = None, None
            self.notify(f"unmarked run {printable(self._run_name(entry))}", timeout=2, markup=False)  # type: ignore[attr-defined]
        else:
            runs.marked, self.marked_entry = key, entry
            self.notify(f"marked run {printable(self._run_name(entry))}: d on another run compares them",
                        timeout=4, markup=False)  # type: ignore[attr-defined]
        runs.refresh()

    def action_diff_runs(self) -> None:
        runs = self.query_one(RunList)  # type: ignore[attr-defined]
        entry, marked = runs.current, self.marked_entry
        if marked is None:
            self.notify("no run is marked: m marks one, then d on another compares them", timeout=3)  # type: ignore[attr-defined]
            return
        if entry is None:
            self.notify("no run selected", timeout=2)  # type: ignore[attr-defined]
            return
        if (entry.run_id, entry.source) == (marked.run_id, marked.source):
            self.notify("this is the marked run: move to another run and press d", timeout=3)  # type: ignore[attr-defined]
            return
        names = (self._run_name(marked), self._run_name(entry))
        self.notify(f"comparing {printable(names[0])} with {printable(names[1])}…", timeout=2, markup=False)  # type: ignore[attr-defined]
        self.compare_runs((marked, entry), names)

    @work(thread=True, exclusive=True, group="run_diff")
    def compare_runs(self, entries: tuple[RunEntry, RunEntry], names: tuple[str, str]) -> None:
        """Load and align the two runs off the UI thread (a run of thousands of steps takes seconds to read and
        to align: the explorer stays usable meanwhile), then show them."""
        from tracetui.replay.run_diff import diff_runs
        from tracetui.ui.screens.run_diff import RunDiffScreen

        loaded: list[Any] = []
        for one in entries:
            try:
                loaded.append(self.source.load(one))  # type: ignore[attr-defined]
            except Exception as exc:  # noqa: BLE001 - shown, never a traceback
                self.app.call_from_thread(  # type: ignore[attr-defined]
                    self.notify, f"could not load run {printable(one.run_id)}: {printable(str(exc))}",  # type: ignore[attr-defined]
                    severity="error", markup=False)
                return
        result = diff_runs(*loaded)
        differing = result.differing  # (a pass over every row: here, not on the UI thread)
        if not get_current_worker().is_cancelled:
            self.app.call_from_thread(self.app.push_screen,  # type: ignore[attr-defined]
                                      RunDiffScreen(result, entries, loaded, names, differing))
