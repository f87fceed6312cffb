"""Edit one field of a run before re-running it.

Everything is validated by the core (``tracetui.replay.edit``) as the user types:
the path must exist (or be a new key where keys are data: a typo is refused with the
nearest field), the value must be JSON of the field's type (string fields take text
as typed). When the path changes, the value box follows it, unless the user has
typed a value of their own. An object or a list is edited as JSON over several lines.
Nothing runs until the edit is valid; Enter (ctrl+s in the JSON editor) applies,
one Escape cancels (the JSON editor never keeps it). The dialog fits the terminal: the JSON
editor is as tall as the room left, so the keys below it stay on screen.
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
from textual.widgets import Input, Label, Static, TextArea

from tracetui.loop.inputs import inputs_problem
from tracetui.replay.edit import current_value, editable_paths, edited_inputs, parse_value
from tracetui.replay.pointer import EditError, format_pointer, parse_pointer
from tracetui.trace.reader import RunData
from tracetui.trace.redact import redact_field, redact_text
from tracetui.trace.safe_text import has_control, json_for_terminal, printable


def value_text(value: Any, pretty: bool = False) -> str:
    """How a current value is offered for editing: strings as they are, everything else as JSON.

    Trace text never reaches the terminal raw: a string holding a control character is offered
    as a JSON string, whose escapes read back to the same value; JSON has its controls escaped.
    """
    if isinstance(value, str) and not has_control(value):
        return value
    return json_for_terminal(orjson.dumps(value, option=orjson.OPT_INDENT_2 if pretty else 0).decode())


def shown_path(path: str) -> str:
    """``path``, or its nearest ancestor a terminal may show (a key holding a control character or a secret is
    edited from its parent, as JSON); the path box shows what it holds as it is."""
    try:
        parts = parse_pointer(path)
    except EditError:  # not a pointer: the editor says so
        return path
    while parts and printable(format_pointer(parts)) != format_pointer(parts):
        parts = parts[:-1]
    return format_pointer(parts)


#: the JSON editor's height when the terminal has the room
JSON_ROWS = 12


def is_container(value: Any) -> bool:
    return isinstance(value, (dict, list))


class EditScreen(ModalScreen[tuple[str, Any] | None]):
    """Dismisses with ``(path, value)`` when applied, ``None`` when cancelled."""

    CSS_PATH = "../styles/replay.tcss"

    BINDINGS = [
        # priority: the JSON editor (tab indents) would take escape to move the focus on, leaving the dialog open
        Binding("escape", "cancel", "cancel", key_display="esc", priority=True, id="edit.cancel"),
        Binding("ctrl+s", "apply", "re-run with this edit", priority=True, id="edit.apply"),
    ]

    def __init__(self, run: RunData, path: str, title: str = "") -> None:
        super().__init__()
        self.run = run
        self.initial_path = shown_path(path)
        self.title_text = title
        self.filled: str | None = None  # what the value box was filled with for the current path
        self.multiline = False

    def compose(self) -> ComposeResult:
        with Vertical(id="edit-box"):
            yield Label(Text(printable(self.title_text or f"edit run {self.run.run_id}")), id="edit-title")
            yield Label("path (JSON Pointer into {inputs, responses}; → completes)", classes="edit-label")
            safe = [p for p in editable_paths(self.run) if printable(p) == p]  # a suggestion is shown as it is
            yield Input(self.initial_path, id="edit-path", suggester=SuggestFromList(safe, case_sensitive=True))
            yield Static("", id="edit-current")
            yield Label("new value", classes="edit-label")
            yield Input("", id="edit-value")
            yield TextArea("", id="edit-json", soft_wrap=False, tab_behavior="indent")
            yield Static("", id="edit-error")
            yield Static("", id="edit-help")

    def on_mount(self) -> None:
        self._load_current(self.initial_path, fill=True)
        self._value_widget().focus()
        self.call_after_refresh(self._fit_json)

    def on_resize(self) -> None:
        self.call_after_refresh(self._fit_json)

    def _fit_json(self) -> None:
        """The JSON editor takes the rows the rest of the dialog leaves (3 to 12), so the dialog never
        runs past the screen's bottom and hides its keys."""
        box = self.query_one("#edit-box")
        editor = self.query_one("#edit-json", TextArea)
        others = sum(w.outer_size.height for w in box.children if w is not editor and w.display)
        room = self.size.height - others - box.styles.gutter.height
        height = max(3, min(JSON_ROWS, room))
        if editor.styles.height is None or editor.styles.height.value != height:
            editor.styles.height = height

    # -- the value box: one line for a value, several for an object or list ------------------------
    def _value_widget(self) -> Input | TextArea:
        return self.query_one("#edit-json", TextArea) if self.multiline else self.query_one("#edit-value", Input)

    def _value(self) -> str:
        widget = self._value_widget()
        return widget.text if isinstance(widget, TextArea) else widget.value

    def _set_value(self, text: str, multiline: bool) -> None:
        self.multiline = multiline
        self.query_one("#edit-value", Input).display = not multiline
        self.query_one("#edit-json", TextArea).display = multiline
        if multiline:
            self.query_one("#edit-json", TextArea).load_text(text)
        else:
            self.query_one("#edit-value", Input).value = text
        self.filled = text
        keys = "ctrl+s re-run with this edit" if multiline else "enter re-run with this edit"
        self.query_one("#edit-help", Static).update(
            Text(f"{keys} · esc cancel · the original trace is never modified", style="dim"))
        self.call_after_refresh(self._fit_json)

    def _load_current(self, path: str, fill: bool) -> None:
        current = self.query_one("#edit-current", Static)
        try:
            value, exists = current_value(self.run, path)
        except EditError as exc:
            current.update(Text("✗ " + printable(str(exc)), style="yellow"))
            return
        if not exists:
            current.update(Text("a new field: type any JSON value", style="dim"))
            if fill:
                self._set_value("", self.multiline)
            return
        kind = {dict: "object", list: "list", str: "text", bool: "true/false", int: "whole number",
                float: "number"}.get(type(value), "null")
        parts = parse_pointer(path)
        secret = redact_field(str(parts[-1]), value) if parts else value  # shown apart from its key: the key decides
        shown = printable(value_text(secret))
        current.update(Text.assemble(("current ", "dim"), (f"({kind}) ", "dim"),
                                     shown if len(shown) < 400 else shown[:399] + "…"))
        if fill:
            self._set_value(redact_text(value_text(secret, pretty=is_container(secret))), is_container(value))  # never shows a secret
        elif is_container(value) != self.multiline:  # the field's kind decides the box; what was typed moves along
            typed, filled = self._value(), self.filled
            self._set_value(typed, is_container(value))
            self.filled = filled

    def on_input_changed(self, event: Input.Changed) -> None:
        if event.input.id == "edit-path":
            # the value follows the path unless the user typed one of their own: a stale value from the
            # previous field must never be applied to this one
            untouched = self.filled is not None and self._value() == self.filled
            self._load_current(event.value.strip(), fill=untouched)
        self.query_one("#edit-error", Static).update("")

    def on_text_area_changed(self) -> None:
        self.query_one("#edit-error", Static).update("")

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        if event.input.id == "edit-path":
            self._load_current(event.value.strip(), fill=True)
            self._value_widget().focus()
            return
        self.apply()

    def validate(self) -> tuple[str, Any]:
        path = self.query_one("#edit-path", Input).value.strip()
        current, exists = current_value(self.run, path)
        value = parse_value(current, self._value(), exists=exists)
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

    def action_apply(self) -> None:
        self.apply()

    def action_cancel(self) -> None:
        self.dismiss(None)
