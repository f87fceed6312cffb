"""``y`` opens a copy menu for what is selected (issue 24): the value and JSON Pointer path of the field ``e``
would edit for the selected event, the event's JSON, the run id, and the replay and explain commands.

A mixin of :class:`~tracetui.ui.screens.main.MainScreen`: its bindings are listed in MAIN_BINDINGS. How
each thing is copied (and what is never copied) is :mod:`tracetui.ui.clipboard`'s.
"""
from __future__ import annotations

from typing import Any, Callable

import orjson
from textual.binding import Binding

from tracetui.replay.run_copy import has_own_file
from tracetui.trace.reader import RunData
from tracetui.trace.safe_text import has_control, json_for_terminal, printable
from tracetui.ui.clipboard import clipboard_value, command_file_or_say, copy_command, copy_text, not_copied
from tracetui.ui.screens.copy_menu import CopyChoice, open_copy_menu
from tracetui.ui.widgets.detail import DetailPane
from tracetui.ui.widgets.swimlanes import SwimLanes

COPY_BINDINGS: list[Binding] = [
    Binding("y", "copy_menu", "copy", show=False,
            tooltip="copy the selected value, its path, the event, the run id, or its replay or explain command",
            id="copy"),
]


def edit_target(run: RunData, event: dict[str, Any] | None) -> tuple[str, Any, bool] | None:
    """The field ``e`` offers for ``event`` (``(path, value, exists)``), or None when the run has no inputs to
    edit (an import)."""
    from tracetui.explain.command import needs_agent_command
    from tracetui.replay.cause import REQUEST, cause_path
    from tracetui.replay.edit import current_value
    from tracetui.replay.pointer import EditError

    try:
        if needs_agent_command(run):  # as e does: a recorded agent's inputs are its code; offer what the model said
            from tracetui.explain.agent_side import edit_path
            from tracetui.explain.evidence import Evidence

            path = edit_path(Evidence(run), event)
        else:
            path = cause_path(event, run) if event else REQUEST
        value, exists = current_value(run, path)
    except EditError:
        return None
    return path, value, exists


def preview(value: Any) -> str:
    """A value for the menu's row, which shows (and so redacts) only its start: text as it is, the rest as JSON."""
    if isinstance(value, str):
        return value
    try:
        return orjson.dumps(value, default=repr).decode()
    except TypeError:
        return repr(value)[:200]


def event_json(event: dict[str, Any]) -> str:
    """The event as one line of JSON, as the file would hold it (redacted; terminal controls as JSON escapes)."""
    from tracetui.trace.safe_text import printable_json

    try:
        return printable_json(event, indent=False)
    except TypeError:
        return json_for_terminal(clipboard_value(event))


class CopyActions:
    """Mixed into :class:`~tracetui.ui.screens.main.MainScreen` (with ReplayActions and ExplainActions, whose
    helpers it uses: the selected run, its file, the user's command for a recorded agent)."""

    def action_copy_menu(self) -> None:
        selected = self._selected()  # type: ignore[attr-defined]
        if selected is None:
            return
        entry, run = selected
        event = self.query_one(DetailPane).event or self.query_one(SwimLanes).current  # type: ignore[attr-defined]
        original = self.source_path(entry)  # type: ignore[attr-defined]
        choices: list[CopyChoice] = []

        def add(key: str, label: str, shown: str, copy: Callable[[], None]) -> None:
            choices.append(CopyChoice(key, label, shown, copy))

        target = edit_target(run, event)
        if target is not None:
            path, value, exists = target
            if exists:  # what is copied is made (redacted whole) when chosen: a recorded response may be megabytes
                add("v", "value", preview(value),
                    lambda: copy_text(self, f"the value of {path}", clipboard_value(value)))
            add("p", "path", path, lambda: self._copy_plain("the path", path))
        if event is not None:
            add("j", "event JSON", preview(event),
                lambda: copy_text(self, f"event {event.get('seq')} as JSON", event_json(event)))
        add("i", "run id", run.run_id, lambda: self._copy_plain("the run id", run.run_id))
        shown_file = original if has_own_file(original) else "<a copy of this run>"
        add("r", "replay command", f"tracetui replay {shown_file} --run {run.run_id}",
            lambda: self._copy_run_command(run, original, "replay"))
        add("x", "explain command", f"tracetui explain {shown_file} --run {run.run_id}",
            lambda: self._copy_run_command(run, original, "explain"))
        open_copy_menu(self, f"copy from run {run.run_id}" + (f" · event {event.get('seq')}" if event else ""),
                       choices)

    def _copy_plain(self, what: str, text: str) -> None:
        """Text from the trace (a run id, a path): as it is, or as a JSON string when it holds a control character."""
        copied = clipboard_value(text)
        if copied != text:  # said apart: a redacted id or path is no longer the one in the trace
            what += " (redacted)" if not has_control(text) else " (as JSON: it holds a control character)"
        copy_text(self, what, copied)

    def _copy_run_command(self, run: RunData, original: str | None, verb: str) -> None:
        """``tracetui replay|explain FILE --run ID`` (``-- COMMAND`` for a recorded agent's run: the user's, asked
        for once per file); FILE is a copy of the run when it has no file of its own."""
        from tracetui.explain.command import printed_command
        from tracetui.replay.edit import editable_document
        from tracetui.replay.pointer import EditError

        try:
            editable_document(run)
        except EditError as exc:  # an import: its inputs are not recorded, so no command re-runs it
            not_copied(self, printable(str(exc)))
            return

        def with_command(command: list[str] | None) -> None:
            file = command_file_or_say(self, original, run)
            if file is not None:
                copy_command(self, f"the {verb} command", printed_command(file, run.run_id, run, (), command, verb))

        self.with_agent_command(run, original, with_command)  # type: ignore[attr-defined]
