"""The main screen's edit-and-re-run and write actions (issue: counterfactual replay).

Kept apart from the main screen's navigation so each stays small. The re-run
itself is the core's ``tracetui.replay.replay`` on a worker thread; the result
comes back as a message and opens the compare screen.
"""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from textual import work
from textual.binding import Binding
from textual.message import Message
from textual.worker import get_current_worker

from tracetui.replay.save import save_records
from tracetui.trace.reader import RunData
from tracetui.trace.safe_text import printable
from tracetui.trace.source import RunEntry
from tracetui.trace.writer import NothingToWrite
from tracetui.ui.long_work import long_work
from tracetui.ui.widgets.run_list import RunList
from tracetui.ui.widgets.swimlanes import SwimLanes

if TYPE_CHECKING:
    from tracetui.replay.replay import ReplayOutcome

# The re-run (the loop, its providers, jsonschema) and its screens are imported on first use,
# not when the explorer opens: most sessions only read.

REPLAY_BINDINGS = [
    Binding("e", "edit", "edit", tooltip="edit the cause of the selected step (never who the caller is) and re-run",
            id="edit"),
    Binding("w", "write_run", "write run", show=False, tooltip="write the selected run, as recorded, to a new file",
            id="write"),
]


class Replayed(Message):
    def __init__(self, outcome: ReplayOutcome, original_path: str | None, command: list[str] | None = None) -> None:
        super().__init__()
        self.outcome, self.original_path, self.command = outcome, original_path, command


class ReplayActions:
    """Mixed into :class:`~tracetui.ui.screens.main.MainScreen`."""

    def _selected(self) -> tuple[RunEntry, RunData] | None:
        entry = self.query_one(RunList).current  # type: ignore[attr-defined]
        if entry is None:
            self.notify("no run selected", timeout=2)  # type: ignore[attr-defined]
            return None
        try:
            return entry, self.source.load(entry)  # type: ignore[attr-defined]
        except Exception as exc:  # noqa: BLE001 - shown, never a traceback
            self.notify(f"could not load this run: {printable(str(exc))}", severity="error", markup=False)  # type: ignore[attr-defined]
            return None

    def source_path(self, entry: RunEntry) -> str | None:
        paths = getattr(self.source, "paths", None)  # type: ignore[attr-defined]
        if paths and entry.source < len(paths):
            return str(paths[entry.source])
        label = getattr(self.source, "label", "")  # type: ignore[attr-defined]
        return label if label and Path(label).is_file() else None

    def action_edit(self) -> None:
        """Edit one field of the selected run (the cause behind the selected event) and re-run it."""
        from tracetui.explain.command import needs_agent_command
        from tracetui.replay.cause import REQUEST, cause_path
        from tracetui.replay.edit import editable_document
        from tracetui.replay.pointer import EditError
        from tracetui.ui.screens.edit import EditScreen

        selected = self._selected()
        if selected is None:
            return
        entry, run = selected
        try:
            editable_document(run)
        except EditError as exc:  # e.g. the run's first line (its inputs) is missing
            self.notify(printable(str(exc)), severity="warning", markup=False)  # type: ignore[attr-defined]
            return
        event = self.query_one(SwimLanes).current  # type: ignore[attr-defined]
        path = cause_path(event, run) if event else REQUEST  # never a safeguard: see tracetui.replay.cause
        if needs_agent_command(run):  # a recorded agent's inputs are its own code: offer what the model answered
            from tracetui.explain.agent_side import edit_path
            from tracetui.explain.evidence import Evidence

            path = edit_path(Evidence(run), event)
        what = f"edit run {entry.run_id}" + (f" · event {event.get('seq')} · {event.get('lane')}" if event else "")
        original = self.source_path(entry)

        def edit_with(command: list[str] | None) -> None:  # a recorded agent's run re-runs the user's command
            self.app.push_screen(EditScreen(run, path, what),  # type: ignore[attr-defined]
                                 lambda result: self.rerun(run, result, original, command) if result else None)

        self.with_agent_command(run, original, edit_with)  # type: ignore[attr-defined]

    @work(thread=True, exclusive=True, group="replay")
    def rerun(self, run: RunData, edit: tuple[str, Any], original: str | None,
              command: list[str] | None = None) -> None:
        from tracetui.replay.replay import replay
        from tracetui.ui.screens.compare import replay_or_notify

        # one replay, bounded (the loop's budgets; schema checks by a budget of steps); its result is dropped once
        # the worker is cancelled (the app quitting), and the app does not wait for it to exit (long_work)
        with long_work():
            outcome = replay_or_notify(self, replay, run, [edit], command)  # type: ignore[arg-type]
        if outcome is not None and not get_current_worker().is_cancelled:
            self.post_message(Replayed(outcome, original, command))  # type: ignore[attr-defined]

    def on_replayed(self, message: Replayed) -> None:
        from tracetui.ui.screens.compare import CompareScreen

        self.app.push_screen(CompareScreen(message.outcome, message.original_path,  # type: ignore[attr-defined]
                                           message.command))

    def action_write_run(self) -> None:
        """Write the selected run, alone, to a new file beside the original."""
        selected = self._selected()
        if selected is None:
            return
        entry, run = selected
        records = [r for r in (run.run, *run.events, run.summary) if r is not None]
        try:  # as recorded, not edited: the file's name must not say "edited"
            path = save_records(records, self.source_path(entry), entry.run_id, edited=False)
        except NothingToWrite as exc:
            self.notify(f"nothing written: {printable(str(exc))}", severity="warning", markup=False)  # type: ignore[attr-defined]
            return
        except OSError as exc:
            self.notify(f"could not write: {printable(exc.strerror or str(exc))}", severity="error", markup=False)  # type: ignore[attr-defined]
            return
        self.app.wrote(f"run {entry.run_id}", path)  # type: ignore[attr-defined]
