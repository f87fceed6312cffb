"""The help screen: every key, in the order Textual resolves them, and what the colours mean.

Built from the live bindings of the screen it was opened over (``Screen.active_bindings``):
the focused pane's own keys first, then the screen's, then the app's (the command
palette included), so it can never list a key that does not work or miss one that does.
The panes are listed in their real ``tab`` order.
"""
from __future__ import annotations

from typing import Iterable

from rich.console import Group
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen, Screen
from textual.widgets import Static

from tracetui.ui.widgets.verdict import RESPONSIBILITY_STYLES

LEGEND = [
    ("✓", "green", "run ready: every boundary passed"),
    ("!", "bold yellow", "ready after recovered failures (a retried 429, repaired arguments)"),
    ("✗", "bold red", "failed: the list shows its first failing lane"),
    ("…", "bright_black", "incomplete: the trace has no summary line"),
    ("● 200", "green", "a boundary crossed fine"),
    ("↺ 429", "#ffaf00", "a failure the loop overcame: visible, never the verdict"),
    ("✗ denied◀", "bold bright_white on red", "the first failing boundary (also ▶ on its lane)"),
    ("─ not reached", "dim", "a lane a failed run never got to (“not needed” on a run that passed)"),
    ("1 2 …", "cyan", "in a narrow run list of several files: the run's file, in the order they were named"),
    ("● fn  ✗ no", "dim", "on a narrow terminal, short words (fn: tool calls, txt: text, no: denied); the event pane says it whole"),
    ("guard", RESPONSIBILITY_STYLES["guard"],
     "whose failure (model, harness, environment, or a guard that held): the banner says; b filters"),
]
#: What each focusable pane is called, for the tab order.
PANE_NAMES = {"filter": "filter box", "runs": "run list", "lanes": "lane summary", "swimlanes": "swimlanes",
              "detail": "event detail", "compare-scroll": "compare view", "groups": "failure groups"}

Row = tuple[str, str]
ARROWS = {"down": "↓", "up": "↑", "left": "←", "right": "→"}


#: Textual's own keys, in this project's words (its defaults are capitalised sentences of another voice)
TEXTUAL_WORDS = {"quit": "quit (as q)", "command_palette": "the command palette: find any command by name"}


def describe(binding: Binding) -> str:
    """A binding's words for the help: its tooltip when it has one (the footer label is kept short)."""
    if binding.action in TEXTUAL_WORDS and binding.description[:1].isupper():
        return TEXTUAL_WORDS[binding.action]
    if binding.tooltip:
        return binding.tooltip
    words = binding.description or binding.action.replace("_", " ")
    return words.lower() if words[:1].isupper() else words  # Textual's "Scroll Up" in this help's voice


#: Textual's own keys that the help says once, elsewhere (tab and shift+tab head the list, with the
#: real pane order) or that mean nothing here (copying selected text: there is no text selection).
SAID_ELSEWHERE = frozenset({"tab", "shift+tab", "ctrl+c", "super+c"})


def key_rows(bindings: Iterable[Binding], display=lambda b: b.key_display or b.key) -> list[Row]:
    rows, seen = [], set()
    for b in bindings:
        if (b.key, b.action) in seen or b.key in SAID_ELSEWHERE:
            continue
        seen.add((b.key, b.action))
        rows.append((ARROWS.get(b.key) or display(b), describe(b)))  # one arrow per row, whatever the footer shows
    return rows


def screen_sections(screen: Screen) -> tuple[list[tuple[str, list[Row]]], list[str]]:
    """The keys that work on ``screen`` right now, grouped by who handles them, and its panes' tab order."""
    app = screen.app
    groups: dict[int, tuple[str, list[Binding]]] = {}
    for active in screen.active_bindings.values():
        node = active.node
        title = ("app" if node is app else getattr(screen, "HELP_TITLE", "this screen") if node is screen
                 else PANE_NAMES.get(node.id or "", type(node).__name__.lower()))
        groups.setdefault(id(node), (title, []))[1].append(active.binding)
    sections = [(title, key_rows(bindings, app.get_key_display)) for title, bindings in groups.values()]
    order = [PANE_NAMES.get(w.id or "", type(w).__name__.lower()) for w in screen.focus_chain]
    return sections, order


class HelpScreen(ModalScreen[None]):
    BINDINGS = [Binding("escape,question_mark,q", "dismiss", "close", id="close_help")]
    DEFAULT_CSS = """
    HelpScreen { align: center middle; }
    HelpScreen > VerticalScroll { width: 84; max-width: 100%; height: auto; max-height: 90%;
                                  border: round $accent; background: $surface; padding: 0 1; }
    """

    def __init__(self, sections: list[tuple[str, list[Row]]], focus_order: list[str] | None = None,
                 elsewhere: list[tuple[str, list[Row]]] | None = None) -> None:
        super().__init__()
        self.sections = sections
        self.focus_order = focus_order or []
        self.elsewhere = elsewhere or []

    def compose(self) -> ComposeResult:
        with VerticalScroll() as scroll:
            scroll.border_title = "tracetui help — esc to close"
            yield Static(self._keys())
            yield Static(self._legend())

    def _keys(self) -> Group:
        """One titled grid per section; the titles stand apart so they never widen the key column."""
        parts: list[Text | Table] = []
        sections = [*self.sections, *self.elsewhere]
        if self.focus_order:
            sections.insert(0, ("panes", [("tab / shift+tab", "next / previous pane: " + " → ".join(self.focus_order))]))
        for title, rows in sections:
            parts.append(Text(title, style="bold underline"))
            table = Table.grid(padding=(0, 2))
            table.add_column(style="bold cyan", no_wrap=True, width=15)
            table.add_column()
            for key, description in rows:
                table.add_row(Text(key), Text(description))
            parts.append(table)
        return Group(*parts)

    def _legend(self) -> Table:
        table = Table.grid(padding=(0, 2))
        table.add_column(no_wrap=True, min_width=14)
        table.add_column()
        table.add_row(Text("\nlegend", style="bold underline"), "")
        for sample, style, meaning in LEGEND:
            table.add_row(Text(sample, style=style), meaning)
        return table
