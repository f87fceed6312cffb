"""The copy menu (``y``): what can be copied from where the cursor is, one key each.

Every screen that has something selected offers its own choices (the main screen: the
value, its path, the event, the run id, the replay and explain commands). The menu only
lists them and hands back the one chosen; the choice then copies (through
:mod:`tracetui.ui.clipboard`) or says why it cannot. It fits 80×24 whatever the choices hold:
each row is one line, cut.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

from rich.text import Text
from textual import events, on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from tracetui.trace.safe_text import one_line

#: the widest the menu draws (an 80-column terminal, less its border and padding)
MENU_WIDTH = 74
LABEL_WIDTH = 16
KEY_STYLE = "bold #ffaf00"


@dataclass(frozen=True)
class CopyChoice:
    """One row: its key, what it copies (``label``), a one-line ``preview`` of it, and ``copy``, called once the
    menu has closed (it copies, or says why it cannot)."""

    key: str
    label: str
    preview: str
    copy: Callable[[], None]


def choice_prompt(choice: CopyChoice, width: int = MENU_WIDTH) -> Text:
    """`` k  label           preview…`` in one line of ``width`` cells (trace text made safe to print)."""
    text = Text()
    text.append(f" {choice.key} ", KEY_STYLE)
    text.append(" " + one_line(choice.label, LABEL_WIDTH).ljust(LABEL_WIDTH) + " ", "bold")
    text.append(one_line(choice.preview, max(8, width - LABEL_WIDTH - 6)), "dim")
    return text


class CopyMenu(ModalScreen["CopyChoice | None"]):
    """Dismisses with the chosen :class:`CopyChoice` (its key, or enter on the highlighted row), or None (esc)."""

    BINDINGS = [Binding("escape", "close", "close", key_display="esc", id="copy.close")]
    DEFAULT_CSS = """
    CopyMenu { align: center middle; }
    CopyMenu > #copy-box { width: auto; max-width: 78; height: auto; max-height: 22;
                           border: round $accent; padding: 0 1; background: $surface; }
    CopyMenu #copy-list { width: auto; height: auto; max-height: 18; border: none; padding: 0; }
    CopyMenu #copy-keys { width: auto; height: 1; }
    """

    def __init__(self, title: str, choices: Sequence[CopyChoice]) -> None:
        super().__init__()
        self.title_text = title
        self.choices = list(choices)

    def compose(self) -> ComposeResult:
        with Vertical(id="copy-box"):
            yield OptionList(*(Option(choice_prompt(c), id=f"copy-{n}") for n, c in enumerate(self.choices)),
                             id="copy-list")
            yield Static(Text.assemble(("its key", KEY_STYLE), " or ", (" enter ", KEY_STYLE), "copies  ",
                                       (" esc ", KEY_STYLE), "closes"), id="copy-keys")

    def on_mount(self) -> None:
        self.query_one("#copy-box").border_title = Text(one_line(self.title_text, MENU_WIDTH - 4))  # never markup
        self.query_one(OptionList).focus()

    def on_key(self, event: events.Key) -> None:
        for choice in self.choices:
            if event.character == choice.key:
                event.stop()
                event.prevent_default()
                self.dismiss(choice)
                return

    @on(OptionList.OptionSelected)
    def selected(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(self.choices[event.option_index])

    def action_close(self) -> None:
        self.dismiss(None)


def open_copy_menu(screen: object, title: str, choices: Sequence[CopyChoice]) -> None:
    """Push the menu over ``screen``'s app; the chosen row copies once the menu is gone (so its toast shows on
    the screen it was opened from)."""
    if not choices:
        screen.notify("nothing here to copy", timeout=2)  # type: ignore[attr-defined]
        return
    screen.app.push_screen(CopyMenu(title, choices),  # type: ignore[attr-defined]
                           lambda choice: choice.copy() if choice is not None else None)
