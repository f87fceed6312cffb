"""The help screen: every key, what the colours mean, generated from the live bindings."""
from __future__ import annotations

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

LEGEND = [
    ("✓", "green", "run ready: every boundary passed"),
    ("!", "bold yellow", "ready after recovered failures (a retried 429, repaired arguments)"),
    ("✗", "bold red", "failed: the list shows its first failing lane"),
    ("…", "bright_black", "incomplete: the trace has no summary line"),
    ("● 200", "green", "a boundary crossed fine"),
    ("↺ 429", "#ffaf00", "a failure the loop overcame: visible, never the verdict"),
    ("✗ denied◀", "bold bright_white on red", "the first failing boundary (also ▶ on its lane)"),
    ("─ not reached", "dim", "a lane the run never got to"),
]


def key_rows(bindings: list[Binding]) -> list[tuple[str, str]]:
    rows = []
    for b in bindings:
        if b.description:
            rows.append((b.key_display or b.key, b.description))
    return rows


class HelpScreen(ModalScreen[None]):
    BINDINGS = [Binding("escape,question_mark,q", "dismiss", "close", id="close_help")]
    DEFAULT_CSS = """
    HelpScreen { align: center middle; }
    HelpScreen > VerticalScroll { width: 84; max-width: 100%; height: auto; max-height: 90%;
                                  border: round $accent; background: $surface; padding: 0 1; }
    """

    def __init__(self, sections: list[tuple[str, list[Binding]]]) -> None:
        super().__init__()
        self.sections = sections

    def compose(self) -> ComposeResult:
        with VerticalScroll() as scroll:
            scroll.border_title = "tracetui help — esc to close"
            yield Static(self._keys())
            yield Static(self._legend())

    def _keys(self) -> Table:
        table = Table.grid(padding=(0, 2))
        table.add_column(style="bold cyan", no_wrap=True, min_width=14)
        table.add_column()
        for title, bindings in self.sections:
            table.add_row(Text(title, style="bold underline"), "")
            for key, description in key_rows(bindings):
                table.add_row(Text(key), Text(description))
        table.add_row(Text("tab", style="bold cyan"), "next pane (runs, swimlanes, detail, lane summary)")
        table.add_row(Text("in the compare view", style="bold underline"), "")
        table.add_row(Text("e"), Text("edit the edited run again"))
        table.add_row(Text("w"), Text("write the edited run to a new file (the original is never modified)"))
        table.add_row(Text("esc"), Text("back to the original"))
        return table

    def _legend(self) -> Table:
        table = Table.grid(padding=(0, 2))
        table.add_column(no_wrap=True, min_width=14)
        table.add_column()
        table.add_row(Text("\nlegend", style="bold underline"), "")
        for sample, style, meaning in LEGEND:
            table.add_row(Text(sample, style=style), meaning)
        return table
