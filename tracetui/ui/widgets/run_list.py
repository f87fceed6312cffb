"""The run list: a line-API ScrollView that renders only the visible rows.

DataTable took over a minute to first paint for a million rows; this widget's
cost per frame is the number of visible rows, whatever the number of runs.
"""
from __future__ import annotations

from pathlib import PurePath
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
from tracetui.ui.model import LANE_ABBR, run_icon
from tracetui.ui.widgets.cell_words import LANE_TAGS

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
    RunList { overflow-x: hidden; scrollbar-size-vertical: 1; }  /* at 80 columns each cell is a letter of a name */
    RunList > .run-list--cursor { background: $block-cursor-blurred-background; text-style: bold; }
    RunList:focus > .run-list--cursor { background: $block-cursor-background; color: $block-cursor-foreground; }
    RunList > .run-list--dim { color: $text-muted; }
    """

    class Highlighted(Message):
        """The cursor moved to another run (``entry`` is None when the view is empty)."""

        def __init__(self, entry: RunEntry | None) -> None:
            super().__init__()
            self.entry = entry

    def __init__(self, *, id: str | None = None, files: Sequence[str] | None = None) -> None:
        super().__init__(id=id)
        self.file_labels = file_labels(files)  # a column saying which file a run is from, when several are open
        self._needs: tuple[int, int, int] = (0, 0, 0)  # the widest id, status and scenario shown
        self.entries: Sequence[RunEntry] = ()
        self.view: Sequence[int] = ()
        self.cursor = 0
        self.empty_message = "no runs"
        self.marked: tuple[str, int] | None = None  # (run id, file) of the run m marked for d to compare with

    # -- data ---------------------------------------------------------------------------
    def set_view(self, entries: Sequence[RunEntry], view: Sequence[int]) -> None:
        """Show ``view`` (indices into ``entries``), keeping the cursor on the same run when it is still shown.

        Runs are tracked by index: a source only appends entries or replaces one in place.
        """
        before_index, before = self.current_index, self.current
        self.entries, self.view = entries, view
        self._measure()
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

    def _measure(self) -> None:
        """The widest id, status and scenario among (a sample of) the rows shown, so the widths the
        row layout hands out go to a column that needs them (see :func:`share_widths`)."""
        view, entries = self.view, self.entries
        step = max(1, len(view) // SAMPLE_ROWS)
        needs = [0, 0, 0]
        shapes: set[int] = set()  # rows share shapes: a shape's status and scenario are measured once
        for pos in range(0, len(view), step):
            entry = entries[view[pos]]
            needs[0] = max(needs[0], _width(entry.run_id))
            shape = entry.shape
            if id(shape) in shapes:
                continue
            shapes.add(id(shape))
            needs[1] = max(needs[1], _width(entry.status) + (0 if entry.complete else 1))
            needs[2] = max(needs[2], _width(_scenario(entry)))
        self._needs = tuple(needs)

    def row_segments(self, entry: RunEntry, width: int, style: Style, selected: bool) -> list[Segment]:
        show_lane, show_status, show_counts, show_scenario = self.columns(width)
        narrow = width < 28
        icon = run_icon(entry)
        right: list[tuple[str, Style | None]] = []
        files = self.file_labels
        file_w = 0
        if files:  # more than one file open: which one the run is from
            digits = len(str(len(files)))  # narrow: the file's number (help's legend says so), whole
            file_w = min(FILE_W, width // 4, max(cell_len(f) for f in files)) if width >= 40 else digits
        lane_w = 4 if narrow else 9  # narrow: the lane tags (rcpt, args…) and 1↺ are four cells at most
        fixed = 3 + (lane_w + 1 if show_lane else 0) + (6 if show_counts else 0) + (file_w + 1 if file_w else 0)
        id_w, status_w, scen_w = share_widths(width - fixed, self._needs, show_status, show_scenario)
        if file_w:
            label = files[entry.source] if 0 <= entry.source < len(files) else "?"
            label = fit(label, file_w) if width >= 40 else str(entry.source + 1).rjust(digits)
            right.append((label + " ", Style(color="cyan", dim=True)))
        if show_scenario:
            right.append((fit(printable(_scenario(entry)), scen_w - 1) + " ", Style(dim=True)))
        if show_status:
            status = entry.status if entry.complete else f"{entry.status}*"
            right.append((fit(printable(status), status_w - 1) + " ", None))
        if show_lane:
            names = LANE_TAGS if narrow else LANE_ABBR
            lane = "ready" if entry.ready else ("…" if narrow else "incompl.") if entry.outcome == INCOMPLETE \
                else names.get(entry.failing_lane or "", "—")
            if entry.ready and entry.recovered:
                lane = f"{entry.recovered}↺" if narrow else f"ready {entry.recovered}↺"
            elif entry.ready and narrow:
                lane = ""  # the ✓ says it: the room goes to the run's name
            right.append((set_cell_size(lane, lane_w) + " ", ICON_STYLES.get(icon)))
        if show_counts:  # a run without its summary line has no counts: "?" rather than a wrong 0
            counts = f"{entry.model_calls}m {entry.tool_calls}t" if entry.complete else "?m ?t"
            right.append((set_cell_size(counts, 6), Style(dim=True)))
        marker = "▶" if selected else "m" if (entry.run_id, entry.source) == self.marked else " "  # m: marked (d)
        segs = [Segment(marker, style), Segment(icon, style + ICON_STYLES.get(icon, Style())),
                Segment(" ", style), Segment(fit(printable(entry.run_id), max(4, id_w - 1)) + " ", style)]
        segs += [Segment(text, style + s if s else style) for text, s in right]
        return segs


#: rows measured for the column widths (evenly spread over the view): a million rows cost no more
SAMPLE_ROWS = 4_000
#: the file column's widest; the status and scenario columns' widths before any spare width is shared
FILE_W, STATUS_W, SCENARIO_W = 16, 18, 17


def share_widths(room: int, needs: tuple[int, int, int], status: bool, scenario: bool) -> tuple[int, int, int]:
    """(id, status, scenario) widths, each with its gap, in ``room`` cells. The status and scenario take
    their usual widths (less when nothing shown needs them); the id the rest. When the id then has more
    than its widest, the spare goes to the status, then the scenario, up to what they need: the
    column that is cut gets the width, not the one with free room."""
    id_need, status_need, scen_need = (n + 1 for n in needs)
    status_w = min(STATUS_W, status_need) if status else 0
    scen_w = min(SCENARIO_W, scen_need) if scenario else 0
    id_w = room - status_w - scen_w
    spare = id_w - max(5, id_need)
    if spare > 0 and status:
        grow = min(spare, max(0, status_need - status_w))
        status_w, id_w, spare = status_w + grow, id_w - grow, spare - grow
    if spare > 0 and scenario:
        grow = min(spare, max(0, scen_need - scen_w))
        scen_w, id_w = scen_w + grow, id_w - grow
    return max(5, id_w), status_w, scen_w


def _width(text: str) -> int:
    """About the cells ``text`` takes as the list draws it: only sizes columns, and is measured on every
    refresh for thousands of rows. A short plain ASCII text (nearly every id) counts as its length: were
    it redacted, it would be drawn a few cells narrower at most. Others pay for :func:`printable`."""
    if len(text) <= 64 and text.isascii() and text.isprintable():
        return len(text)
    return cell_len(printable(text))


def _scenario(entry: RunEntry) -> str:
    scen = entry.scenario or ""
    if entry.ablation and entry.ablation != "complete":
        scen += f"/{entry.ablation}"
    return scen


def file_labels(paths: Sequence[str] | None) -> list[str] | None:
    """Short names telling the open files apart (None for one file): their names, or their paths
    when two share a name."""
    if not paths or len(paths) < 2:
        return None
    names = [printable(PurePath(p).name or str(p)) for p in paths]
    if len(set(names)) < len(names):
        names = [printable(str(p)) for p in paths]
    return names
