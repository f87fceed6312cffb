"""Asking before something is lost: quitting with a re-run that was never written."""
from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Static


class ConfirmQuit(ModalScreen[str]):
    """Dismisses with ``"write"`` (write, then quit), ``"quit"`` or ``"stay"``."""

    DEFAULT_CSS = """
    ConfirmQuit { align: center middle; background: $background 60%; }
    ConfirmQuit > Vertical { width: 64; max-width: 100%; height: auto; border: round $warning;
                             background: $surface; padding: 1 2; }
    """
    BINDINGS = [
        Binding("w", "choose('write')", "write it, then quit", id="confirm.write"),
        Binding("q,y", "choose('quit')", "quit without writing", id="confirm.quit"),
        Binding("escape,n", "choose('stay')", "stay", key_display="esc", id="confirm.stay"),
    ]

    def __init__(self, what: str) -> None:
        super().__init__()
        self.what = what

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(Text(self.what, style="bold"))
            yield Static(Text.assemble("\n", (" w ", "bold #ffaf00"), "write it, then quit   ", (" q ", "bold #ffaf00"),
                                       "quit without writing   ", (" esc ", "bold #ffaf00"), "stay"))

    def action_choose(self, choice: str) -> None:
        self.dismiss(choice)
