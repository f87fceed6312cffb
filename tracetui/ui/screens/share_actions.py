"""The main screen's ``S``: the selected run as one self-contained HTML page, written beside the trace.

The page (:mod:`tracetui.share`) proves the run's fixes by replay, which takes a moment, so it is
made on a worker thread and the result is said in a notification.
"""
from __future__ import annotations

from typing import Any, Sequence

from textual import work
from textual.binding import Binding

from tracetui.trace.safe_text import printable

SHARE_BINDINGS = [
    Binding("S", "share_run", "share", show=False,
            tooltip="write the selected run as one HTML page to share", id="share"),
]


class ShareActions:
    """Mixed into :class:`~tracetui.ui.screens.main.MainScreen` (with ReplayActions, whose helpers it uses)."""

    def action_share_run(self) -> None:
        selected = self._selected()  # type: ignore[attr-defined]
        if selected is None:
            return
        entry, run = selected
        original = self.source_path(entry)  # type: ignore[attr-defined]
        # the lines of its file the reader skipped: the page says them, as the explorer's p does
        problems = [p for p in self.source.problems() if p.path == original]  # type: ignore[attr-defined]
        from tracetui.ui.clipboard import command_file_or_say

        # the page's commands name the trace: standard input's run is named by a copy of it (else FILE, and why)
        file = command_file_or_say(self, original, run, "its page names FILE instead")
        self._say(f"writing a page of run {printable(entry.run_id)}…", timeout=2)
        self.share_run(run, original, problems, file)

    def _say(self, message: str, **options: Any) -> None:
        self.notify(message, markup=False, **options)  # type: ignore[attr-defined]

    @work(thread=True, exclusive=True, group="share")
    def share_run(self, run: Any, original: str | None, problems: Sequence[Any] = (), file: str | None = None) -> None:
        from tracetui.share import share_page, write_beside

        label = file or original or "FILE"
        try:
            page = share_page([run], label, f"S in tracetui open {label}, on run {run.run_id}", problems=problems)
            path = write_beside(page, original, run.run_id)
        except OSError as exc:
            self.app.call_from_thread(self._say, f"could not write the page: {printable(exc.strerror or str(exc))}",  # type: ignore[attr-defined]
                                      severity="error")
            return
        self.app.call_from_thread(self._say, f"wrote a page of run {printable(run.run_id)} to {printable(str(path))}")  # type: ignore[attr-defined]
