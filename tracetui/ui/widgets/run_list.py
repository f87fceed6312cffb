"""The run list: a line-API ScrollView that renders only the visible rows.

DataTable took over a minute to first paint for a million rows; this widget's
cost per frame is the number of visible rows, whatever the number of runs.
"""
from __future__ import annotations

from typing import Sequence

from rich.cells import cell_len, set_cell_size
from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.binding import Binding
from textual.geometry import Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip

from tracetui.trace.safe_text import printable
from tracetui.trace.source import RunEntry
from tracetui.trace.verdict import INCOMPLETE
from tracetui.ui.model import LANE_ABBR, LANE_SHORT, run_icon

ICON_STYLES = {"✓": Style(color="green"), "!": Style(color="yellow", bold=True),
               "✗": Style(color="red", bold=True), "…": Style(color="bright_black")}


def fit(text: str, width: int) -> str:
    """Pad or cut ``text`` to ``width`` cells, marking a cut with an ellipsis."""
    if cell_len(text) > width:
        return set_cell_size(text, max(0, width - 1)) + "…"
    return set_cell_size(text, width)


class RunList(ScrollView, can_focus=True, inherit_bindings=False):
    """Rows of runs; the cursor is an index into the current view."""

    BINDINGS = [
        Binding("pageup", "page(-1)", "a page of runs up", show=False),
        Binding("pagedown", "page(1)", "a page of runs down", show=False),
        Binding("home", "edge(0)", "first run", show=False),
        Binding("end", "edge(1)", "last run", show=False),
    ]
    COMPONENT_CLASSES = {"run-list--cursor", "run-list--dim"}
    DEFAULT_CSS = """
    RunList { overflow-x: hidden; }
    RunList > .run-list--cursor { background: $block-cursor-blurred-background; text-style: bold; }
    RunList:focus > .run-list--cursor { background: $block-cursor-background; color: $block-cursor-foreground; }
    RunList > .run-list--dim { color: $text-muted; }
    """

    class Highlighted(Message):
        """The cursor moved to another run (``entry`` is None when the view is empty)."""

        def __init__(self, entry: RunEntry | None) -> None:
            super().__init__()
            self.entry = entry

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.entries: Sequence[RunEntry] = ()
        self.view: Sequence[int] = ()
        self.cursor = 0
        self.empty_message = "no runs"

    # -- data ---------------------------------------------------------------------------
    def set_view(self, entries: Sequence[RunEntry], view: Sequence[int]) -> None:
        """Show ``view`` (indices into ``entries``), keeping the cursor on the same run when it is still shown.

        Runs are tracked by index: a source only appends entries or replaces one in place.
        """
        before_index, before = self.current_index, self.current
        self.entries, self.view = entries, view
        cursor = 0
        if before_index is not None and view:
            cursor = max(0, self._position_of(before_index, fallback=-1))
        self.virtual_size = Size(self.size.width, len(view))
        self.cursor = cursor
        self._scroll_to_cursor()
        self.refresh()
        if self.current is not before:
            self.post_message(self.Highlighted(self.current))

    def _position_of(self, index: int, fallback: int) -> int:
        view = self.view
        if 0 <= fallback < len(view) and view[fallback] == index:
            return fallback
        if isinstance(view, range):
            return index if index < len(view) else fallback
        try:
            return view.index(index)  # type: ignore[attr-defined]
        except ValueError:
            return fallback

    @property
    def current_index(self) -> int | None:
        return self.view[self.cursor] if 0 <= self.cursor < len(self.view) else None

    @property
    def current(self) -> RunEntry | None:
        index = self.current_index
        return None if index is None else self.entries[index]

    def select_index(self, index: int) -> bool:
        """Put the cursor on ``entries[index]`` if the view shows it."""
        pos = self._position_of(index, fallback=-1)
        if pos < 0:
            return False
        self._move(pos)
        return True

    # -- movement -----------------------------------------------------------------------
    def _move(self, cursor: int) -> None:
        cursor = max(0, min(cursor, len(self.view) - 1)) if self.view else 0
        if cursor == self.cursor:
            return
        self.cursor = cursor
        self._scroll_to_cursor()
        self.refresh()
        self.post_message(self.Highlighted(self.current))

    def _scroll_to_cursor(self) -> None:
        height = max(1, self.scrollable_content_region.height)
        if self.cursor < self.scroll_y:
            self.scroll_to(y=self.cursor, animate=False, immediate=True)
        elif self.cursor >= self.scroll_y + height:
            self.scroll_to(y=self.cursor - height + 1, animate=False, immediate=True)

    def action_cursor(self, delta: int) -> None:
        self._move(self.cursor + delta)

    def action_page(self, direction: int) -> None:
        self._move(self.cursor + direction * max(1, self.scrollable_content_region.height - 1))

    def action_edge(self, end: int) -> None:
        self._move(len(self.view) - 1 if end else 0)

    def on_click(self, event: events.Click) -> None:
        row = event.y + round(self.scroll_y)
        if 0 <= row < len(self.view):
            self._move(row)

    def on_resize(self, event: events.Resize) -> None:
        self.virtual_size = Size(event.size.width, len(self.view))

    # -- rendering ----------------------------------------------------------------------
    def render_line(self, y: int) -> Strip:
        width = self.scrollable_content_region.width
        row = y + round(self.scroll_y)
        base = self.rich_style
        if not self.view:
            if y == 0:
                dim = self.get_component_rich_style("run-list--dim")
                return Strip([Segment(set_cell_size(" " + self.empty_message, width), base + dim)], width)
            return Strip.blank(width, base)
        if row >= len(self.view):
            return Strip.blank(width, base)
        entry = self.entries[self.view[row]]
        style = base + self.get_component_rich_style("run-list--cursor") if row == self.cursor else base
        return Strip(self.row_segments(entry, width, style, row == self.cursor)).adjust_cell_length(width, style)

    @staticmethod
    def columns(width: int) -> tuple[bool, bool, bool, bool]:
        """Which optional columns fit: (lane, status, counts, scenario). The failing lane always does,
        in short words when the list is narrow: it is what the list is for."""
        return True, width >= 60, width >= 40, width >= 90

    def row_segments(self, entry: RunEntry, width: int, style: Style, selected: bool) -> list[Segment]:
        show_lane, show_status, show_counts, show_scenario = self.columns(width)
        narrow = width < 28
        icon = run_icon(entry)
        right: list[tuple[str, Style | None]] = []
        if show_scenario:
            scen = entry.scenario or ""
            if entry.ablation and entry.ablation != "complete":
                scen += f"/{entry.ablation}"
            right.append((fit(printable(scen), 16) + " ", Style(dim=True)))
        if show_status:
            status = entry.status if entry.complete else f"{entry.status}*"
            right.append((fit(printable(status), 17) + " ", None))
        if show_lane:
            names = LANE_SHORT if narrow else LANE_ABBR
            lane = "ready" if entry.ready else ("…" if narrow else "incompl.") if entry.outcome == INCOMPLETE \
                else names.get(entry.failing_lane or "", "—")
            if entry.ready and entry.recovered:
                lane = f"{entry.recovered}↺" if narrow else f"ready {entry.recovered}↺"
            elif entry.ready and narrow:
                lane = ""  # the ✓ says it: the room goes to the run's name
            right.append((set_cell_size(lane, 7 if narrow else 9) + " ", ICON_STYLES.get(icon)))
        if show_counts:
            right.append((set_cell_size(f"{entry.model_calls}m {entry.tool_calls}t", 6), Style(dim=True)))
        right_len = sum(cell_len(t) for t, _ in right)
        id_width = max(4, width - 3 - right_len - 1)
        segs = [Segment("▶" if selected else " ", style), Segment(icon, style + ICON_STYLES.get(icon, Style())),
                Segment(" ", style), Segment(fit(printable(entry.run_id), id_width) + " ", style)]
        segs += [Segment(text, style + s if s else style) for text, s in right]
        return segs
