"""Two recorded runs, one above the other, on one cursor over their aligned steps (``m`` then ``d``).

The edited-run compare view (:mod:`tracetui.ui.screens.compare`) generalised to any two runs: the same
sides (a verdict banner over swimlanes each), its styles and key line, and the same one cursor for both
runs. Here the cursor moves over the rows :func:`tracetui.replay.run_diff.diff_runs` aligned (by turn
and lane), so ←→ put each run on its own counterpart step even where one run has an extra retry; a row
only one run has leaves the other where it was. The first divergence, in words, and both verdicts
head the screen; the aligned rows follow, the current one highlighted.
"""
from __future__ import annotations

from typing import Any, Sequence

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import Screen
from textual.widgets import Static

from tracetui.replay.run_diff import DiffRow, RunDiff, Step
from tracetui.trace.format import OUTCOME_ICONS
from tracetui.trace.reader import RunData
from tracetui.trace.safe_text import one_line, printable
from tracetui.trace.source import RunEntry
from tracetui.ui.screens.compare import COLOURS, key_hints, verdict_words
from tracetui.ui.widgets.swimlanes import SwimLanes
from tracetui.ui.widgets.verdict import VerdictBanner

#: aligned rows listed at most (a longer run's rows are reached with ←→ in the lanes)
LISTED_ROWS = 400


def _side(step: Step | None, width: int) -> Text:
    if step is None:
        return Text("·".ljust(width), style="dim")
    outcome = step.facts.outcome
    text = Text.assemble((f"{OUTCOME_ICONS.get(outcome, '?')} ", COLOURS.get(outcome, "white")),
                         one_line(str(step.event.get("summary") or step.event.get("kind")), max(1, width - 2)))
    text.truncate(width, pad=True)
    return text


def row_line(row: DiffRow, width: int, first: bool, current: bool) -> Text:
    """One aligned row: a mark (> the first divergence, * another difference), the turn, the lane, both sides."""
    side = max(12, (width - 24) // 2)
    turns = sorted({s.turn for s in (row.a, row.b) if s is not None})
    mark = Text(">" if first else " " if row.same else "*", style="bold yellow")
    line = Text.assemble(mark, (f" {'/'.join(map(str, turns)):<5}", "dim"), (f"{row.lane:<14}", "bold"),
                         _side(row.a, side), " ", _side(row.b, side))
    if current:
        line.stylize("bold on #303a4a")
    return line


class RunDiffScreen(Screen[None]):
    """The marked run (A) above the run it is compared with (B); the first divergence and verdicts on top."""

    CSS_PATH = "../styles/replay.tcss"
    DEFAULT_CSS = """
    #diff-summary { height: auto; padding: 0 1; }
    #diff-keys { dock: bottom; height: 1; background: $panel; }
    """

    BINDINGS = [
        Binding("escape", "back", "back", key_display="esc", id="run_diff.back"),
        Binding("right", "step(1)", "steps", key_display="←→", priority=True, id="run_diff.step_next"),
        Binding("left", "step(-1)", "previous step", show=False, priority=True, id="run_diff.step_prev"),
        Binding("f", "first_divergence", "first divergence", id="run_diff.first_divergence"),
        Binding("q", "quit", "quit", id="run_diff.quit"),
    ]

    def __init__(self, diff: RunDiff, entries: tuple[RunEntry, RunEntry], runs: Sequence[RunData],
                 names: tuple[str, str]) -> None:
        super().__init__()
        self.diff = diff
        self.entries = entries
        self.runs = list(runs)
        self.names = names
        self.row = diff.first_index or 0

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="compare-scroll"):
            yield Static(id="diff-summary")
            for side in ("a", "b"):
                with Vertical(id=f"diff-{side}", classes="compare-side"):
                    yield VerdictBanner(id=f"verdict-{side}")
                    yield SwimLanes(id=f"lanes-{side}")
            yield Static(id="compare-list")
        yield Static(key_hints(self.BINDINGS), id="diff-keys")

    def on_mount(self) -> None:
        d = self.diff
        for side, label, name, entry, run in zip("ab", (d.a_label, d.b_label), self.names, self.entries, self.runs):
            self.query_one(f"#diff-{side}").border_title = Text(one_line(f"{label} · {name}", 100))  # never markup
            self.query_one(f"#verdict-{side}", VerdictBanner).show(entry, None, run.inputs)
            self.query_one(f"#lanes-{side}", SwimLanes).show_run(entry, run.events)
        self.show_summary()
        self.show_row()
        self.query_one("#compare-scroll").focus()

    def on_resize(self) -> None:
        self.show_rows()

    def show_summary(self) -> None:
        d = self.diff
        a, b = d.verdicts
        said = Text()
        if d.first_divergence is None:
            said.append("no step differs", "bold green")
        else:
            said.append("first divergence: ", "bold")
            said.append(printable(d.first_divergence))
        said.append("\n")
        said.append_text(Text.assemble(
            (f"{printable(d.a_label)} ", "dim"), (verdict_words(a), "green" if a.get("ready") else "red"),
            ("  ·  ", "dim"), (f"{printable(d.b_label)} ", "dim"),
            (verdict_words(b), "green" if b.get("ready") else "red"),
            (f"   {'same verdict' if d.same_verdict else 'verdicts differ'} · {d.differing} of {len(d.rows)} "
             f"aligned step(s) differ", "dim")))
        self.query_one("#diff-summary", Static).update(said)

    def show_rows(self) -> None:
        width = self.size.width or 80
        rows = self.diff.rows
        start = max(0, min(self.row - LISTED_ROWS // 2, len(rows) - LISTED_ROWS))
        shown = rows[start:start + LISTED_ROWS]
        lines = [row_line(r, width - 2, start + i == self.diff.first_index, start + i == self.row)
                 for i, r in enumerate(shown)]
        if len(rows) > len(shown):
            lines.append(Text(f"… rows {start + 1}-{start + len(shown)} of {len(rows)}: ←→ move", style="dim"))
        self.query_one("#compare-list", Static).update(Text("\n").join(lines) if lines else Text(
            "neither run has a step", style="dim"))

    def show_row(self) -> None:
        """Each run's lanes on its step of the current row (a row only one run has leaves the other as it was)."""
        if self.diff.rows:
            row = self.diff.rows[self.row]
            for side, step in (("a", row.a), ("b", row.b)):
                if step is not None:
                    self.query_one(f"#lanes-{side}", SwimLanes).select_seq(step.seq)
        self.show_rows()

    # -- actions ----------------------------------------------------------------------------
    def action_step(self, delta: int) -> None:
        if self.diff.rows:
            self.row = max(0, min(self.row + delta, len(self.diff.rows) - 1))
            self.show_row()

    def action_first_divergence(self) -> None:
        if self.diff.first_index is None:
            self.notify("no step differs", timeout=2)
            return
        self.row = self.diff.first_index
        self.show_row()

    def action_back(self) -> None:
        self.dismiss(None)

    def action_quit(self) -> None:
        self.app.exit()

    def current(self) -> dict[str, Any]:
        """The current row's events (for tests and callers): ``{"a": event|None, "b": event|None}``."""
        row = self.diff.rows[self.row] if self.diff.rows else None
        return {"a": row.a.event if row and row.a else None, "b": row.b.event if row and row.b else None}
