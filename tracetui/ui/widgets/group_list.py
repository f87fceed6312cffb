"""The grouped view of the run list: one row per failure signature, with its count (``g``).

Drawn in place of the run list; enter on a row shows that group's runs. Rows are few (a trace fails
in a few hundred ways at most), so the whole list is set again when counts change, the cursor kept
on the same signature. Trace content is untrusted: every part is printed as plain text.
"""
from __future__ import annotations

from typing import Sequence

from rich.cells import cell_len
from rich.text import Text
from textual.message import Message
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from tracetui.trace.safe_text import printable
from tracetui.triage.groups import FailureGroup
from tracetui.ui.model import LANE_ABBR, LANE_SHORT
#: below this many columns, lanes are named in their shortest form (gen, args, auth), as the run list does
NARROW = 40


class GroupList(OptionList):
    """Failure groups, the biggest first; enter (or a click) posts :class:`GroupList.Chosen`."""

    DEFAULT_CSS = """
    GroupList, GroupList:focus { height: 1fr; border: none; padding: 0; }
    GroupList { text-wrap: nowrap; text-overflow: ellipsis; }
    """

    class Chosen(Message):
        """Enter on a group: show its runs."""

        def __init__(self, group: FailureGroup) -> None:
            super().__init__()
            self.group = group

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.groups: Sequence[FailureGroup] = ()
        self.note = ""

    def show(self, groups: Sequence[FailureGroup], note: str = "") -> None:
        """Show ``groups`` (and ``note``, a line above them: still indexing, nothing failed…)."""
        current = self.current
        self.groups, self.note = list(groups), note
        options: list[Option] = [Option(Text(note, style="dim"), disabled=True)] if note else []
        options += [Option(row) for row in group_rows(self.groups, self.size.width - 2)]
        self.clear_options()
        self.add_options(options)
        keep = next((k for k, g in enumerate(self.groups) if current is not None and g.signature == current.signature),
                    0 if self.groups else None)
        if keep is not None:
            self.highlighted = keep + (1 if note else 0)

    def on_resize(self) -> None:  # (a row of one line may need two, or fit on one again)
        if self.groups or self.note:
            self.show(self.groups, self.note)

    @property
    def current(self) -> FailureGroup | None:
        k = self.highlighted
        if k is None:
            return None
        k -= 1 if self.note else 0
        return self.groups[k] if 0 <= k < len(self.groups) else None

    def on_option_list_option_selected(self, message: OptionList.OptionSelected) -> None:
        """Enter (or a click) on a group."""
        message.stop()
        group = self.current
        if group is not None:
            self.post_message(self.Chosen(group))


def group_rows(groups: Sequence[FailureGroup], width: int) -> list[Text]:
    """A row per group: count, lane and code, then the masked reason, which tells groups of one code
    apart. When that is wider than ``width`` (a narrow pane: 80 columns) the reason goes on a line of
    its own, so it is not cut away; lines are cut with an ellipsis (the widget's CSS), never wrapped."""
    counts = len(f"{groups[0].count:,}") if groups else 1
    names, pad = (LANE_SHORT, 5) if width < NARROW else (LANE_ABBR, 10)
    rows = []
    for group in groups:
        row = Text(f"{group.count:>{counts},}× ", style="bold")
        row.append(f"{names.get(group.lane, printable(group.lane or '—')):<{pad}}", style="red")
        row.append(printable(group.code), style="bold")
        if group.reason:
            reason = printable(group.reason)
            if row.cell_len + 3 + cell_len(reason) <= width:
                row.append(f" · {reason}", style="dim")
            else:
                row.append(f"\n{' ' * (counts + 2)}{reason}", style="dim")
        rows.append(row)
    return rows
