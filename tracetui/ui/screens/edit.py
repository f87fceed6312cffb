"""Edit one field of a run before re-running it.

Everything is validated by the core (``tracetui.replay.edit``) as the user types:
the path must exist (or be a new key of an existing object), the value must be
JSON of the field's type (string fields take text as typed). Nothing runs until
the edit is valid; Enter applies, Escape cancels.
"""
from __future__ import annotations

from typing import Any

import orjson
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.suggester import SuggestFromList
from textual.widgets import Input, Label, Static

from tracetui.loop.inputs import inputs_problem
from tracetui.replay.edit import current_value, editable_paths, edited_inputs, parse_value
from tracetui.replay.pointer import EditError
from tracetui.trace.reader import RunData
from tracetui.trace.redact import redact_text
from tracetui.trace.safe_text import printable


def value_text(value: Any) -> str:
    """How a current value is offered for editing: strings as they are, everything else as JSON."""
    if isinstance(value, str):
        return value
    return orjson.dumps(value).decode()


class EditScreen(ModalScreen[tuple[str, Any] | None]):
    """Dismisses with ``(path, value)`` when applied, ``None`` when cancelled."""

    CSS_PATH = "../styles/replay.tcss"

    BINDINGS = [Binding("escape", "cancel", "cancel", id="edit.cancel")]

    def __init__(self, run: RunData, path: str, title: str = "") -> None:
        super().__init__()
        self.run = run
        self.initial_path = path
        self.title_text = title

    def compose(self) -> ComposeResult:
        with Vertical(id="edit-box"):
            yield Label(Text(printable(self.title_text or f"edit run {self.run.run_id}")), id="edit-title")
            yield Label("path (JSON Pointer into {inputs, responses}; → completes)", classes="edit-label")
            yield Input(self.initial_path, id="edit-path",
                        suggester=SuggestFromList(editable_paths(self.run), case_sensitive=True))
            yield Static("", id="edit-current")
            yield Label("new value", classes="edit-label")
            yield Input("", id="edit-value")
            yield Static("", id="edit-error")
            yield Static(Text("enter re-run with this edit · esc cancel · the original trace is never modified",
                              style="dim"), id="edit-help")

    def on_mount(self) -> None:
        self._load_current(self.initial_path, fill=True)
        self.query_one("#edit-value", Input).focus()

    def _load_current(self, path: str, fill: bool) -> None:
        current = self.query_one("#edit-current", Static)
        try:
            value, exists = current_value(self.run, path)
        except EditError as exc:
            current.update(Text("no such field: " + printable(str(exc)), style="yellow"))
            return
        if not exists:
            current.update(Text("new key: any JSON value", style="dim"))
            return
        kind = type(value).__name__ if value is not None else "null"
        shown = printable(value_text(value))
        current.update(Text.assemble(("current ", "dim"), (f"({kind}) ", "dim"),
                                     shown if len(shown) < 400 else shown[:399] + "…"))
        if fill:
            self.query_one("#edit-value", Input).value = redact_text(value_text(value))  # a secret is never shown

    def on_input_changed(self, event: Input.Changed) -> None:
        if event.input.id == "edit-path":
            self._load_current(event.value, fill=False)
        self.query_one("#edit-error", Static).update("")

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        if event.input.id == "edit-path":
            self._load_current(event.value, fill=True)
            self.query_one("#edit-value", Input).focus()
            return
        self.apply()

    def validate(self) -> tuple[str, Any]:
        path = self.query_one("#edit-path", Input).value.strip()
        text = self.query_one("#edit-value", Input).value
        current, exists = current_value(self.run, path)
        value = parse_value(current, text, exists=exists)
        problem = inputs_problem(edited_inputs(self.run, path, value))  # a dry run of the edit
        if problem:
            raise EditError(f"cannot re-run: {problem}")
        return path, value

    def apply(self) -> None:
        try:
            result = self.validate()
        except EditError as exc:
            self.query_one("#edit-error", Static).update(Text("✗ " + printable(str(exc)), style="bold red"))
            return
        self.dismiss(result)

    def action_cancel(self) -> None:
        self.dismiss(None)
