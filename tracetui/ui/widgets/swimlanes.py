"""Six lanes on one shared step axis: where the selected run crossed each boundary.

A line-API ScrollView: the lane labels stay put while the steps scroll sideways,
so runs with hundreds of events stay readable. The cells fit the terminal
(:mod:`.cell_words`): a short run is shown whole, a long one scrolls by whole cells.
Only the cells on screen are drawn, when they are painted: a move along a run of
20,000 steps draws what a move along one of twenty does (drawing every column on
each move took seconds: benchmarks/bench_huge_run.py).
"""
from __future__ import annotations

from typing import Any, Sequence

from rich.cells import cell_len, set_cell_size
from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.geometry import Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip

from tracetui.trace.format import FAILED, LANES, OK, RECOVERED
from tracetui.trace.source import RunEntry
from tracetui.ui.model import cell_icon, cell_label
from tracetui.ui.widgets.cell_words import WIDE, CellLayout, choose_layout, lane_label, short_word, visible_steps

LABEL_W = WIDE.label_w  # the widest layout's (a wide terminal's) label column and cell
COL_W = WIDE.col_w
TAIL_W = 17
OUTCOME_STYLES = {OK: Style(color="green", dim=True), RECOVERED: Style(color="#ffaf00"),
                  FAILED: Style(color="red")}
DECIDING = Style(color="bright_white", bgcolor="red", bold=True)
DIM = Style(dim=True)
MARK = Style(color="red", bold=True)
CURSOR = Style(bgcolor="grey35", bold=True, underline=True)


class SwimLanes(ScrollView, can_focus=True, inherit_bindings=False):
    """The selected run's events as coloured cells; the first failure is marked ◀."""

    DEFAULT_CSS = "SwimLanes { overflow-y: hidden; overflow-x: auto; height: 9; }"

    class EventSelected(Message):
        def __init__(self, event: dict[str, Any] | None) -> None:
            super().__init__()
            self.event = event

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.events: Sequence[dict[str, Any]] = ()
        self.entry: RunEntry | None = None
        self.cursor = 0
        self.cells: CellLayout = WIDE
        self._index: dict[Any, int] = {}  # seq -> the first step holding it
        self._reached: frozenset[Any] = frozenset()  # the lanes some step is on

    # -- data -----------------------------------------------------------------------------
    def show_run(self, entry: RunEntry | None, events: Sequence[dict[str, Any]], seq: int | None = None) -> None:
        """Show a run; put the cursor on ``seq``, else on the first failure, else on step 1."""
        self.entry = entry
        self.events = sorted(events, key=lambda e: e.get("seq") if isinstance(e.get("seq"), int) else 0)
        self._index = {}
        for i, event in enumerate(self.events):
            try:
                self._index.setdefault(event.get("seq"), i)
            except TypeError:  # a malformed event's unhashable seq: found by looking (index_of)
                pass
        self._reached = frozenset(e.get("lane") for e in self.events)
        target = seq if seq is not None else self.first_failure_seq
        self.cursor = self.index_of(target) if target is not None else 0
        self.scroll_to(x=0, animate=False, immediate=True)
        self._changed()

    @property
    def label_w(self) -> int:
        return self.cells.label_w

    @property
    def col_w(self) -> int:
        return self.cells.col_w

    @property
    def first_failure_seq(self) -> int | None:
        ff = self.entry.first_failure if self.entry else None
        return ff.get("seq") if ff else None

    @property
    def current(self) -> dict[str, Any] | None:
        return self.events[self.cursor] if 0 <= self.cursor < len(self.events) else None

    def index_of(self, seq: int | None) -> int:
        try:
            return self._index[seq]
        except KeyError:
            pass
        except TypeError:  # an unhashable seq (a malformed event's): looked for step by step
            for i, event in enumerate(self.events):
                if event.get("seq") == seq:
                    return i
        return self.cursor if self.cursor < len(self.events) else 0

    def select_seq(self, seq: int | None) -> None:
        self.move_to(self.index_of(seq))

    def move_to(self, index: int) -> None:
        if not self.events:
            return
        index = max(0, min(index, len(self.events) - 1))
        if index != self.cursor:
            self.cursor = index
            self._changed()

    def _changed(self) -> None:
        self._relayout()
        self._scroll_to_cursor()
        self.call_after_refresh(self._scroll_to_cursor)  # the new virtual size applies after layout
        self.refresh()
        self.post_message(self.EventSelected(self.current))

    def _relayout(self) -> None:
        """Choose the cells' width for this width and run (the cells are drawn as they are painted)."""
        width = self.scrollable_content_region.width or self.size.width
        self.cells = choose_layout(width, len(self.events)) if width else WIDE
        layout, steps = self.cells, len(self.events)
        # room to scroll until the last step is shown whole (cells shown whole leave a few columns spare)
        last_first = max(0, steps - visible_steps(layout, width)) if width else 0
        self.virtual_size = Size(max(layout.label_w + steps * layout.col_w, last_first * layout.col_w + width),
                                 len(LANES) + 1)

    def on_resize(self, event: events.Resize) -> None:
        self._relayout()
        self._scroll_to_cursor()
        self.refresh()

    @property
    def first_shown(self) -> int:
        """The step shown first: the grid scrolls by whole cells, never showing part of one."""
        return round(self.scroll_x / self.cells.col_w)

    def _scroll_to_cursor(self) -> None:
        shown = visible_steps(self.cells, self.scrollable_content_region.width)
        first = self.first_shown
        if self.cursor < first:
            first = self.cursor
        elif self.cursor >= first + shown:
            first = self.cursor - shown + 1
        self.scroll_to(x=first * self.cells.col_w, animate=False, immediate=True)

    def on_click(self, event: events.Click) -> None:
        x = event.x - self.cells.label_w
        if x >= 0:
            index = self.first_shown + x // self.cells.col_w
            if index < len(self.events):
                self.move_to(index)

    # -- rendering ------------------------------------------------------------------------
    def _cell(self, event: dict[str, Any], marked: bool) -> tuple[str, str]:
        """A cell's text (``col_w - 1`` cells: glyph, space, word) and what follows it: a gap, or the ◀
        of the deciding cell when the word leaves no room for it inside."""
        layout = self.cells
        body = f"{cell_icon(event)} {short_word(cell_label(event), layout.word_w)}"
        if layout.col_w >= 12:  # the wide layout: ◀ after the word
            if marked:
                body = (f"{body} ◀" if cell_len(body) + 2 <= layout.col_w - 1
                        else set_cell_size(body, layout.col_w - 2) + "◀")
            return set_cell_size(body, layout.col_w - 1), " "
        return set_cell_size(body, layout.col_w - 1), "◀" if marked else " "

    def _row(self, y: int, start: int, stop: int) -> Strip:
        """Row ``y`` (0 the step axis, then the lanes) of steps ``start`` to ``stop``, without the label column."""
        col_w = self.cells.col_w
        ff = (self.entry.first_failure if self.entry else None) or {}
        ff_lane, ff_seq, decided = ff.get("lane"), ff.get("seq"), ff.get("decided_at")
        segs: list[Segment] = []
        if y == 0:
            for i in range(start, stop):
                seq = self.events[i].get("seq")
                style = MARK if seq == ff_seq else DIM
                text = f"{seq}▼" if seq == ff_seq else str(seq)
                if cell_len(text) >= col_w:  # a step number too long for its cell: its last digits, marked
                    text = "…" + text[-(col_w - 2):]
                segs.append(Segment(set_cell_size(text, col_w), style + CURSOR if i == self.cursor else style))
            return Strip(segs)
        lane = LANES[y - 1]
        for i in range(start, stop):
            event = self.events[i]
            if event.get("lane") != lane:
                segs.append(Segment(set_cell_size("·", col_w), DIM))
                continue
            seq = event.get("seq")
            marked = lane == ff_lane and seq == ff_seq
            style = DECIDING if marked else OUTCOME_STYLES.get(event.get("outcome"), Style())
            if seq == decided and not marked and event.get("outcome") == FAILED:
                style = MARK
            body, after = self._cell(event, marked)
            if i == self.cursor:  # the deciding failure keeps its red under the cursor
                style = CURSOR + style if marked else style + CURSOR
            segs.append(Segment(body, style))
            segs.append(Segment(after, style if after.strip() else Style()))
        return Strip(segs)

    def _tail(self, lane: str, reached: bool) -> tuple[str, Style]:
        """What follows a lane's last step when there is room: the first failure, or why it is empty."""
        if self.entry is not None and lane == self.entry.failing_lane:
            return " ◀ first failure", MARK
        if reached:
            return "", Style()
        passed = self.entry is not None and self.entry.ready
        return (" ─ not needed" if passed else " ─ not reached"), DIM

    def _label(self, y: int) -> list[Segment]:
        label_w = self.cells.label_w
        if y == 0:
            return [Segment(set_cell_size(" step", label_w), DIM)]
        lane = LANES[y - 1]
        ff_lane = self.entry.failing_lane if self.entry else None
        reached = lane in self._reached
        marker = "▶" if lane == ff_lane else " "
        style = MARK if lane == ff_lane else (Style() if reached else DIM)
        return [Segment(marker, MARK), Segment(set_cell_size(lane_label(lane, self.cells), label_w - 1), style)]

    def render_line(self, y: int) -> Strip:
        width = self.scrollable_content_region.width
        base = self.rich_style
        if y > len(LANES) or not self.events:
            if y == 1 and not self.events and self.entry is not None:
                return Strip([Segment(" this run has no events", DIM)]).adjust_cell_length(width, base)
            return Strip.blank(width, base)
        layout = self.cells
        label = Strip(self._label(y))
        first = self.first_shown
        shown = min(visible_steps(layout, width), max(0, len(self.events) - first))
        parts = [label, self._row(y, first, first + shown)]
        room = width - layout.label_w - shown * layout.col_w
        if y > 0 and first + shown >= len(self.events):  # the run's end is on screen: say what the lane lacks
            lane = LANES[y - 1]
            tail, style = self._tail(lane, lane in self._reached)
            if tail and cell_len(tail) <= room:
                parts.append(Strip([Segment(tail, style)]))
        elif y == 0 and first + shown < len(self.events) and room >= 2:
            parts.append(Strip([Segment(" →", DIM)]))  # more steps to the right
        return Strip.join(parts).adjust_cell_length(width, base).apply_style(base)
