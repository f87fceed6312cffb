"""Six lanes on one shared step axis: where the selected run crossed each boundary.

A line-API ScrollView: the lane labels stay put while the steps scroll sideways,
so runs with hundreds of events stay readable.
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

from tracetui.trace.format import FAILED, LANE_TITLES, LANES, OK, RECOVERED
from tracetui.trace.source import RunEntry
from tracetui.ui.model import cell_icon, cell_label

LABEL_W = 15
COL_W = 12
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
        self._rows: list[Strip] = []

    # -- data -----------------------------------------------------------------------------
    def show_run(self, entry: RunEntry | None, events: Sequence[dict[str, Any]], seq: int | None = None) -> None:
        """Show a run; put the cursor on ``seq``, else on the first failure, else on step 1."""
        self.entry = entry
        self.events = sorted(events, key=lambda e: e.get("seq") if isinstance(e.get("seq"), int) else 0)
        self.virtual_size = Size(LABEL_W + len(self.events) * COL_W + TAIL_W, len(LANES) + 1)
        target = seq if seq is not None else self.first_failure_seq
        self.cursor = self.index_of(target) if target is not None else 0
        self.scroll_to(x=0, animate=False, immediate=True)
        self._changed()

    @property
    def first_failure_seq(self) -> int | None:
        ff = self.entry.first_failure if self.entry else None
        return ff.get("seq") if ff else None

    @property
    def current(self) -> dict[str, Any] | None:
        return self.events[self.cursor] if 0 <= self.cursor < len(self.events) else None

    def index_of(self, seq: int | None) -> int:
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
        self._rows = self._build_rows()
        self._scroll_to_cursor()
        self.call_after_refresh(self._scroll_to_cursor)  # the new virtual size applies after layout
        self.refresh()
        self.post_message(self.EventSelected(self.current))

    def _scroll_to_cursor(self) -> None:
        left = self.cursor * COL_W
        visible = max(COL_W, self.scrollable_content_region.width - LABEL_W)
        if left < self.scroll_x:
            self.scroll_to(x=left, animate=False, immediate=True)
        elif left + COL_W > self.scroll_x + visible:
            self.scroll_to(x=left + COL_W - visible, animate=False, immediate=True)

    def on_click(self, event: events.Click) -> None:
        x = event.x + round(self.scroll_x) - LABEL_W
        if x >= 0 and x // COL_W < len(self.events):
            self.move_to(x // COL_W)

    # -- rendering ------------------------------------------------------------------------
    def _build_rows(self) -> list[Strip]:
        """One strip per row (step axis, then lanes), full width, without the label column."""
        ff = (self.entry.first_failure if self.entry else None) or {}
        ff_lane, ff_seq, decided = ff.get("lane"), ff.get("seq"), ff.get("decided_at")
        axis: list[Segment] = []
        for i, event in enumerate(self.events):
            seq = event.get("seq")
            style = MARK if seq == ff_seq else DIM
            text = f"{seq}▼" if seq == ff_seq else str(seq)
            axis.append(Segment(set_cell_size(text, COL_W), style + CURSOR if i == self.cursor else style))
        rows = [axis]
        for lane in LANES:
            segs: list[Segment] = []
            reached = False
            for i, event in enumerate(self.events):
                if event.get("lane") != lane:
                    segs.append(Segment(set_cell_size("·", COL_W), DIM))
                    continue
                reached = True
                seq = event.get("seq")
                marked = lane == ff_lane and seq == ff_seq
                label = f"{cell_icon(event)} {cell_label(event)}"
                if marked:
                    label = (f"{label} ◀" if cell_len(label) + 2 <= COL_W - 1
                             else set_cell_size(label, COL_W - 2) + "◀")
                style = DECIDING if marked else OUTCOME_STYLES.get(event.get("outcome"), Style())
                if seq == decided and not marked and event.get("outcome") == FAILED:
                    style = MARK
                cell = set_cell_size(label, COL_W - 1)
                if i == self.cursor:  # the deciding failure keeps its red under the cursor
                    style = CURSOR + style if marked else style + CURSOR
                segs.append(Segment(cell, style))
                segs.append(Segment(" "))
            tail = ""
            if lane == ff_lane:
                tail, tail_style = " ◀ first failure", MARK
            elif not reached:
                tail, tail_style = " ─ not reached", DIM
            segs.append(Segment(set_cell_size(tail, TAIL_W), tail_style if tail else Style()))
            rows.append(segs)
        return [Strip(r) for r in rows]

    def _label(self, y: int) -> list[Segment]:
        if y == 0:
            return [Segment(set_cell_size(" step", LABEL_W), DIM)]
        lane = LANES[y - 1]
        ff_lane = self.entry.failing_lane if self.entry else None
        reached = any(e.get("lane") == lane for e in self.events)
        marker = "▶" if lane == ff_lane else " "
        style = MARK if lane == ff_lane else (Style() if reached else DIM)
        return [Segment(marker, MARK), Segment(set_cell_size(LANE_TITLES[lane], LABEL_W - 1), style)]

    def render_line(self, y: int) -> Strip:
        width = self.scrollable_content_region.width
        base = self.rich_style
        if y > len(LANES) or not self.events:
            if y == 1 and not self.events and self.entry is not None:
                return Strip([Segment(" this run has no events", DIM)]).adjust_cell_length(width, base)
            return Strip.blank(width, base)
        label = Strip(self._label(y))
        x = round(self.scroll_x)
        cells = self._rows[y].crop(x, x + max(0, width - LABEL_W)) if y < len(self._rows) else Strip([])
        return Strip.join([label, cells]).adjust_cell_length(width, base).apply_style(base)
