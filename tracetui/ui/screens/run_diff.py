"""Two recorded runs, one above the other, on one cursor over their aligned steps (``m`` then ``d``).

The edited-run compare view (:mod:`tracetui.ui.screens.compare`) generalised to any two runs: the same
sides (a verdict banner over swimlanes each), its styles and key line, and the same one cursor for both
runs. Here the cursor moves over the rows :func:`tracetui.replay.run_diff.diff_runs` aligned (by turn
and lane), so ←→ put each run on its own counterpart step even where one run has an extra retry; a row
only one run has leaves the other where it was. The first divergence, in words, and both verdicts
head the screen; the aligned rows follow, the current one highlighted. The rows are drawn as they
are painted, those on screen only, and a move repaints the two rows it changes (or, once the list
moves along with the cursor, the rows on screen): a move in two runs of 20,000 steps costs what one in
two of twenty does (benchmarks/bench_huge_run.py).
"""
from __future__ import annotations

from typing import Any, Sequence

from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.geometry import Region, Size
from textual.message import Message
from textual.screen import Screen
from textual.strip import Strip
from textual.widget import Widget
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
#: rows listed above the current one when the list jumps to it (f, or a list scrolled off screen)
ABOVE = 2


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


class AlignedRows(Widget):
    """The aligned rows from :attr:`start` (:data:`LISTED_ROWS` at most), one line each, drawn when painted.

    The list follows the current row: a move that would leave the lines on screen moves the list along by
    one row (a jump puts the row a few lines from the top), so the highlight never leaves the screen."""

    DEFAULT_CSS = "AlignedRows { height: auto; padding: 0 1; }"

    class RowChosen(Message):
        """A row clicked: the screen moves its cursor there."""

        def __init__(self, index: int) -> None:
            super().__init__()
            self.index = index

    def __init__(self, diff: RunDiff, row: int, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.diff = diff
        self.row = row
        self.start = self._clamped(row - ABOVE)

    def _clamped(self, start: int) -> int:
        return max(0, min(start, len(self.diff.rows) - 1))

    @property
    def listed(self) -> int:
        return max(0, min(LISTED_ROWS, len(self.diff.rows) - self.start))

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        rows = len(self.diff.rows)  # the same however far the list has moved: the screen's layout stays put
        return 1 if not rows else min(LISTED_ROWS, rows) + (rows > LISTED_ROWS)

    def lines_in_view(self) -> tuple[int, int]:
        """The list's lines the screen shows now, ``(first, end)``; ``first >= end`` when it is scrolled off."""
        scroll = self.parent
        if not isinstance(scroll, Widget) or not self.size.height:
            return 0, 0
        top, view = self.virtual_region.y, scroll.scroll_offset.y
        return max(0, view - top), min(self.size.height, view + scroll.scrollable_content_region.height - top)

    def move_to(self, row: int) -> None:
        """Put the highlight on ``row``: the two rows repainted, or every line when the list moves along."""
        old, self.row = self.row, row
        first, end = self.lines_in_view()  # (lines past the list's end, blank, count: the row is put there)
        end = min(end, LISTED_ROWS)
        start = self.start
        if first >= end:  # off screen: the row a few lines from the list's top, for when it is scrolled to
            start = self._clamped(row - ABOVE)
        elif not start + first <= row < start + end:
            if abs(row - old) == 1:  # one step past an edge: the list moves by one row
                start = self._clamped(row - (end - 1) if row > old else row - first)
            else:
                start = self._clamped(row - first - min(ABOVE, (end - first) // 2))
        if start != self.start:
            self.start = start
            self.refresh()
        else:
            self.refresh(*(Region(0, r - start, self.size.width, 1) for r in {old, row}))
        line = row - self.start
        if first < end and not first <= line < end:  # the list's top reached: the screen scrolls to the row
            self.parent.scroll_to_region(Region(0, self.virtual_region.y + line, 1, 1),  # type: ignore[union-attr]
                                         animate=False, immediate=True)

    def on_click(self, event: events.Click) -> None:
        index = self.start + event.y
        if event.y < self.listed and index < len(self.diff.rows):
            self.post_message(self.RowChosen(index))

    def line_text(self, y: int) -> Text:
        """Line ``y``'s text: a row, the "… rows" line under a long list, or why there is none."""
        rows = self.diff.rows
        if not rows:
            return Text("neither run has a step", style="dim")
        if y >= self.listed:
            if y == self.listed and (self.start or self.listed < len(rows)):
                return Text(f"… rows {self.start + 1}-{self.start + self.listed} of {len(rows)}: ←→ move",
                            style="dim")
            return Text()
        index = self.start + y
        width = self.screen.size.width or 80
        return row_line(rows[index], width - 2, index == self.diff.first_index, index == self.row)

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        base = self.rich_style
        if y >= self.get_content_height(Size(0, 0), Size(0, 0), width):
            return Strip.blank(width, base)
        text = self.line_text(y)
        text.no_wrap, text.overflow = True, "crop"
        return Strip(text.render(self.app.console)).crop_extend(0, width, base).apply_style(base)


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
                 names: tuple[str, str], differing: int | None = None) -> None:
        """``differing``: how many rows differ, when counted already (off the UI thread: a pass over every row)."""
        super().__init__()
        self.diff = diff
        self.differing = diff.differing if differing is None else differing
        self.entries = entries
        self.runs = list(runs)
        self.names = names
        self.row = diff.first_index or 0
        self._rows_of: dict[str, dict[int, int]] = {}  # per side: id of a step's event -> its row (made on a click)

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="compare-scroll"):
            yield Static(id="diff-summary")
            for side in ("a", "b"):
                with Vertical(id=f"diff-{side}", classes="compare-side"):
                    yield VerdictBanner(id=f"verdict-{side}")
                    yield SwimLanes(id=f"lanes-{side}")
            yield AlignedRows(self.diff, self.row, id="compare-list")
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
            (f"   {'same verdict' if d.same_verdict else 'verdicts differ'} · {self.differing} of {len(d.rows)} "
             f"aligned step(s) differ", "dim")))
        self.query_one("#diff-summary", Static).update(said)

    def show_rows(self) -> None:
        """The aligned rows with the current one highlighted (only what changed is repainted)."""
        self.query_one(AlignedRows).move_to(self.row)

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

    def on_aligned_rows_row_chosen(self, message: AlignedRows.RowChosen) -> None:
        self.row = message.index
        self.show_row()

    def on_click(self, event: events.Click) -> None:
        """A step clicked in either run's lanes (which moved that run's cursor): the row holding it becomes
        the current one, so the other run, the list and ←→ go on from there."""
        lanes = event.widget
        if not isinstance(lanes, SwimLanes) or lanes.current is None or lanes.id not in ("lanes-a", "lanes-b"):
            return
        side = lanes.id[-1]
        if side not in self._rows_of:
            self._rows_of[side] = {id(step.event): i for i, r in enumerate(self.diff.rows)
                                   if (step := r.a if side == "a" else r.b) is not None}
        index = self._rows_of[side].get(id(lanes.current))
        if index is not None and index != self.row:
            self.row = index
            self.show_row()

    def action_back(self) -> None:
        self.dismiss(None)

    def action_quit(self) -> None:
        self.app.exit()

    def current(self) -> dict[str, Any]:
        """The current row's events (for tests and callers): ``{"a": event|None, "b": event|None}``."""
        row = self.diff.rows[self.row] if self.diff.rows else None
        return {"a": row.a.event if row and row.a else None, "b": row.b.event if row and row.b else None}
