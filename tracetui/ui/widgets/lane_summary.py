"""Failures by lane: a small bar chart whose bars filter the run list when clicked."""
from __future__ import annotations

from rich.style import Style
from rich.text import Text
from textual import events
from textual.binding import Binding
from textual.message import Message
from textual.widget import Widget

from tracetui.trace.format import LANES
from tracetui.ui.model import LANE_SHORT


class LaneSummary(Widget, can_focus=True):
    """Counts of runs per first failing lane; ←→ pick a lane, enter filters by it."""

    BINDINGS = [
        Binding("left", "pick(-1)", "lane", show=False),
        Binding("right", "pick(1)", "lane", show=False),
        Binding("enter,space", "choose", "filter by lane", show=False),
    ]
    DEFAULT_CSS = "LaneSummary { height: auto; padding: 0 1; }"

    class LaneChosen(Message):
        def __init__(self, lane: str | None) -> None:
            super().__init__()
            self.lane = lane

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.counts: dict[str, int] = dict.fromkeys(LANES, 0)
        self.active: str | None = None
        self.pick = 0

    def update_counts(self, counts: dict[str, int], active: str | None) -> None:
        if counts == self.counts and active == self.active:
            return  # nothing to draw (the index reports progress several times a second)
        self.counts, self.active = dict(counts), active
        self.refresh()  # the same rows whatever the counts: no layout

    def action_pick(self, delta: int) -> None:
        self.pick = (self.pick + delta) % len(LANES)
        self.refresh()

    def action_choose(self) -> None:
        self.choose(LANES[self.pick])

    def action_pick_lane(self, lane: str) -> None:
        if lane in LANES:
            self.pick = LANES.index(lane)
            self.choose(lane)

    def choose(self, lane: str) -> None:
        self.post_message(self.LaneChosen(None if lane == self.active else lane))

    def _grid(self) -> tuple[int, int]:
        """(lanes per row, cells per lane) for the current width."""
        width = max(12, self.content_region.width)
        per_row = 2 if width >= 30 else 1
        return per_row, width // per_row

    def on_click(self, event: events.Click) -> None:
        offset = event.get_content_offset(self)
        if offset is None:
            return
        per_row, cell_w = self._grid()
        index = offset.y * per_row + min(per_row - 1, offset.x // cell_w)
        if 0 <= offset.y and index < len(LANES):
            self.action_pick_lane(LANES[index])

    def render(self) -> Text:
        per_row, cell_w = self._grid()
        top = max(self.counts.values()) or 1
        bar_room = max(1, cell_w - 16)
        text = Text(no_wrap=True, overflow="crop")
        for i, lane in enumerate(LANES):
            if i and i % per_row == 0:
                text.append("\n")
            count = self.counts.get(lane, 0)
            bar = "▇" * (max(1, round(count / top * bar_room)) if count else 0)
            style = Style()
            if lane == self.active:
                style += Style(reverse=True, bold=True)
            if self.has_focus and i == self.pick:
                style += Style(underline=True)
            cell = Text(f"{LANE_SHORT[lane]:<8}", style=style)
            cell.append(bar, Style(color="red" if count else "bright_black") + style)
            cell.append(f" {count:,}", style)
            cell.truncate(cell_w - 1, pad=True)
            text.append_text(cell)
            text.append(" ")
        return text
