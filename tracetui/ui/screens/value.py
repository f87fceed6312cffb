"""One event whole, however large: its JSON in lines that are drawn only as they scroll into view.

The detail pane shows a bounded preview of an event (a trace may hold a 15 MB
response body); ``v`` opens this screen with all of it. Its lines are cut to
:data:`LINE_CHARS` so that no single line is laid out whole, and each is made
safe for the terminal (:func:`~tracetui.trace.safe_text.printable`).
"""
from __future__ import annotations

from typing import Any, Iterator

import orjson
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import ModalScreen
from textual.widgets import Label, Log

from tracetui.trace.redact import redact_value
from tracetui.trace.safe_text import escape_controls, printable

#: the longest line drawn; longer lines continue on the next ones
LINE_CHARS = 2_000


def value_lines(value: Any) -> Iterator[str]:
    """``value`` as indented JSON, in lines of at most LINE_CHARS characters, safe to print.

    The value is redacted whole first, as the file would hold it: a line or a piece of one
    cannot tell an object under a credential key, nor a secret cut at a piece's edge.
    """
    show = escape_controls  # each piece of a value redacted whole needs only its controls escaped
    try:
        value = redact_value(value)
    except TypeError:
        show = printable
    try:
        text = orjson.dumps(value, option=orjson.OPT_INDENT_2, default=repr).decode()
    except TypeError:
        text, show = repr(value), printable
    for line in text.split("\n"):
        for start in range(0, max(1, len(line)), LINE_CHARS):
            yield show(line[start:start + LINE_CHARS])


class ValueScreen(ModalScreen[None]):
    """The whole event; esc or v closes it."""

    BINDINGS = [Binding("escape,v,q", "dismiss", "close", id="close_value"),
                Binding("y", "copy", "copy", tooltip="copy the whole value as JSON", id="value.copy")]
    DEFAULT_CSS = """
    ValueScreen { align: center middle; }
    ValueScreen > Log { width: 95%; height: 90%; border: round $accent; }
    """

    def __init__(self, title: str, value: Any):
        super().__init__()
        self.title_text = title
        self.value = value

    def compose(self) -> ComposeResult:
        yield Log(id="value", highlight=False)
        yield Label("")

    def on_mount(self) -> None:
        log = self.query_one(Log)
        log.border_title = printable(self.title_text)[:200]
        log.write_lines(value_lines(self.value), scroll_end=False)
        log.scroll_home(animate=False)
        log.focus()

    def action_copy(self) -> None:
        """The whole value as JSON, as shown (indented) or on one line: redacted, as :func:`value_lines` shows it."""
        from tracetui.trace.safe_text import printable_json
        from tracetui.ui.clipboard import copy_text
        from tracetui.ui.screens.copy_menu import CopyChoice, open_copy_menu

        def copy(indent: bool) -> None:
            try:
                text = printable_json(self.value, indent=indent)
            except TypeError:
                text = printable(repr(self.value))
            copy_text(self, f"{self.title_text} as JSON ({len(text):,} characters)", text)

        open_copy_menu(self, f"copy {self.title_text}", [
            CopyChoice("j", "JSON", "indented, as shown", lambda: copy(True)),
            CopyChoice("l", "one line", "compact JSON on one line", lambda: copy(False)),
        ])
