"""Lines that could not be read: line numbers and reasons. Every good run still opened."""
from __future__ import annotations

from itertools import islice
from typing import Sequence

from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.geometry import Size
from textual.screen import Screen
from textual.scroll_view import ScrollView
from textual.strip import Strip
from textual.widgets import Footer, Static

from tracetui.trace.reader import Problem
from tracetui.trace.safe_text import printable


class ProblemList(ScrollView, can_focus=True):
    """Line-API list: a garbage file may hold millions of bad lines."""

    def __init__(self, problems: Sequence[Problem], *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.problems = problems

    def on_mount(self) -> None:
        self.show_path = len({p.path for p in islice(self.problems, 10_000)}) > 1
        self.virtual_size = Size(self._widest(), len(self.problems))

    def _widest(self) -> int:
        """Scroll sideways to read long messages (measured on the first 10,000 lines)."""
        return max((len(self._text(p)) for p in islice(self.problems, 10_000)), default=0) + 2

    show_path = False

    def _text(self, p: Problem) -> str:
        where = f"{printable(p.path)}:" if self.show_path and p.path else ""
        return f" {where}line {p.line:<8} {printable(p.message)}"

    def render_line(self, y: int) -> Strip:
        width = self.scrollable_content_region.width
        row = y + round(self.scroll_y)
        if row >= len(self.problems):
            return Strip.blank(width, self.rich_style)
        p = self.problems[row]
        where = f"{printable(p.path)}:" if self.show_path and p.path else ""
        segs = [Segment(f" {where}", Style(dim=True)), Segment(f"line {p.line:<8}", Style(bold=True, color="yellow")),
                Segment(" " + printable(p.message))]
        x = round(self.scroll_x)
        return Strip(segs).crop(x, x + width).adjust_cell_length(width, self.rich_style).apply_style(self.rich_style)


class ProblemsScreen(Screen[None]):
    BINDINGS = [Binding("escape,p,q", "dismiss", "back", id="close_problems")]
    DEFAULT_CSS = """
    ProblemsScreen > #problems-head { height: auto; padding: 0 1; background: $panel; }
    ProblemsScreen > ProblemList { height: 1fr; }
    """

    def __init__(self, problems: Sequence[Problem], label: str) -> None:
        super().__init__()
        self.problems, self.label = problems, label

    def compose(self) -> ComposeResult:
        n = len(self.problems)
        head = Text(f"{n:,} problem line{'s' if n != 1 else ''} in ", style="bold")
        head.append(printable(self.label))
        if n:
            head.append("\nThese lines were skipped; every good run still opened. esc to go back.", "dim")
        else:
            head.append("\nNo problems: every line was a trace record. esc to go back.", "dim")
        yield Static(head, id="problems-head")
        yield ProblemList(self.problems, id="problem-list")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one(ProblemList).focus()



