"""g toggles the run list grouped by failure signature (issue 24).

A mixin of :class:`~tracetui.ui.screens.main.MainScreen`: its bindings are listed in MAIN_BINDINGS.
``g`` draws the groups (:class:`~tracetui.ui.widgets.group_list.GroupList`) in place of the run list;
enter shows one group's runs in the run list (the query label names the group: it is a filter of
:class:`~tracetui.ui.model.RunQuery`); esc or ``g`` goes back to the groups, and ``g`` there back to
every run. The grouping (:mod:`tracetui.triage.groups`) runs in a thread worker, over the rows the
index has published so far, and again as it publishes more: counts grow while a big file is read.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Any

from textual import work
from textual.binding import Binding
from textual.timer import Timer

from tracetui.triage.groups import FailureGroup, FailureGrouper

GROUP_BINDINGS: list[Binding] = [
    Binding("g", "toggle_groups", "groups", show=False, id="groups",
            tooltip="failed runs grouped by failure signature, a row per kind with its count; enter shows its runs"),
    Binding("escape", "group_back", "back to the groups", show=False, priority=True, id="group_back",
            tooltip="from a group's runs back to the groups, from the groups back to every run"),
]
#: how often the groups take in the runs the index published meanwhile, in seconds
REGROUP_SECONDS = 0.5


class GroupActions:
    """Mixed into the main screen (which defines ``source``, ``query_state``, ``scanning``, ``apply_query``)."""

    _grouper: FailureGrouper | None = None
    _grouped_list: Any = None  # the row list the grouper was fed (a new one means: group again)
    _group_timer: Timer | None = None
    _grouping = False  # a worker is grouping
    _shown_once = False  # the groups have been drawn at least once
    _noted_scanning = False  # whether the note drawn says the index is still reading
    showing_groups = False  # the groups are drawn in place of the run list

    # -- keys ---------------------------------------------------------------------------
    async def action_toggle_groups(self) -> None:
        if self.query_state.group is not None:  # a group's runs: back to the groups
            self._leave_group()
        elif self.showing_groups:
            self._hide_groups()
        else:
            await self._show_groups()

    def action_group_back(self) -> None:
        if self.query_state.group is not None:
            self._leave_group()
        elif self.showing_groups:
            self._hide_groups()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """esc is the groups' only while they (or a group's runs) are shown, and not in the filter box:
        there it clears the search and leaves the box, as everywhere (the next esc goes back)."""
        if action == "group_back" and (not (self.showing_groups or self.query_state.group is not None)
                                       or self.focused is self.query_one("#filter")):
            return False
        return super().check_action(action, parameters)  # type: ignore[misc]

    def focus_list(self) -> None:
        """Keys to the list on screen (leaving the filter box): the groups while they are shown in place of
        the run list, else the run list (a hidden list would take the arrows unseen)."""
        from tracetui.ui.widgets.run_list import RunList

        shown = self.query("#groups") if self.showing_groups else None
        self.set_focus(shown.first() if shown else self.query_one(RunList))

    # -- the views ----------------------------------------------------------------------
    async def _show_groups(self) -> None:
        from tracetui.ui.widgets.group_list import GroupList
        from tracetui.ui.widgets.run_list import RunList

        if not self.query("#groups"):
            await self.query_one("#runs-pane").mount(GroupList(id="groups"), after=self.query_one(RunList))
        self.showing_groups = True
        self.query_one(RunList).display = False
        groups = self.query_one("#groups", GroupList)
        groups.display = True
        groups.focus()
        self._regroup()
        if self._group_timer is None:
            self._group_timer = self.set_interval(REGROUP_SECONDS, self._regroup)

    def _hide_groups(self) -> None:
        from tracetui.ui.widgets.run_list import RunList

        self.showing_groups = False
        if self.query("#groups"):
            self.query_one("#groups").display = False
        runs = self.query_one(RunList)
        runs.display = True
        runs.focus()
        if self._group_timer is not None and self.query_state.group is None:
            self._group_timer.stop()
            self._group_timer = None

    def _leave_group(self) -> None:
        self.query_state = replace(self.query_state, group=None)
        self.apply_query()
        self._show_groups_again()

    def _show_groups_again(self) -> None:
        from tracetui.ui.widgets.group_list import GroupList
        from tracetui.ui.widgets.run_list import RunList

        self.showing_groups = True
        self.query_one(RunList).display = False
        groups = self.query_one("#groups", GroupList)
        groups.display = True
        groups.focus()

    def on_group_list_chosen(self, message: Any) -> None:
        """Enter on a group: its runs in the run list, the query label naming it."""
        from tracetui.ui.widgets.run_list import RunList

        self.showing_groups = False
        self.query_one("#groups").display = False
        self.query_state = replace(self.query_state, group=message.group)
        runs = self.query_one(RunList)
        runs.display = True
        self.apply_query()
        runs.focus()

    def on_option_list_option_highlighted(self, message: Any) -> None:
        """The group under the cursor: its first run shown beside it (its whole reason, its lanes)."""
        from tracetui.ui.widgets.group_list import GroupList

        if isinstance(message.option_list, GroupList):
            group = message.option_list.current
            entries = self._grouped_list
            if group is not None and entries is not None and group.rows and group.rows[0] < len(entries):
                entry = entries[group.rows[0]]
                if entry is not self.shown:
                    self.show_run(entry)

    # -- grouping -----------------------------------------------------------------------
    def _regroup(self) -> None:
        """Group the rows published since the last time (in a worker); a recount starts over."""
        if self._grouping:
            return
        entries = self.source.runs()
        if self._grouper is None or entries is not self._grouped_list or len(entries) < self._grouper.seen:
            self._grouper, self._grouped_list = FailureGrouper(), entries
        elif self._grouper.seen == len(entries) and self._shown_once:
            if self._noted_scanning != self.scanning:  # the scan ended: the note says so
                self._grouped(self._grouper, self._grouper.groups())
            return  # nothing new
        self._grouping = True
        self._group_rows(self._grouper, entries, len(entries))

    @work(thread=True, exclusive=True, group="failure-groups", exit_on_error=False)
    def _group_rows(self, grouper: FailureGrouper, entries: Any, end: int) -> None:
        groups: list[FailureGroup] = []
        try:
            grouper.add_entries(entries, end)
            groups = grouper.groups()
        finally:  # (a failure still frees the next pass)
            self.app.call_from_thread(self._grouped, grouper, groups)

    def _grouped(self, grouper: FailureGrouper, groups: list[FailureGroup]) -> None:
        from tracetui.ui.widgets.group_list import GroupList

        self._grouping = False
        if grouper is not self._grouper:
            return
        self._shown_once, self._noted_scanning = True, self.scanning
        if self.query("#groups"):
            self.query_one("#groups", GroupList).show(groups, self._groups_note(grouper, groups))
        expanded = self.query_state.group
        if expanded is not None:
            if expanded not in groups:  # grouped again from the start (the rows were recounted)
                same = next((g for g in groups if g.signature == expanded.signature), None)
                self.query_state = replace(self.query_state, group=same)
            self.apply_query()
        if not self.scanning and grouper.seen == len(self.source.runs()) and self._group_timer is not None \
                and expanded is None and not self.showing_groups:
            self._group_timer.stop()
            self._group_timer = None

    def _groups_note(self, grouper: FailureGrouper, groups: list[FailureGroup]) -> str:
        runs = grouper.seen
        if self.scanning:
            return (f"indexing… {len(groups)} group(s) in {runs:,} run(s) so far: counts grow"
                    if runs else "indexing… waiting for the first runs")
        if not groups:
            return f"no run failed: {runs:,} run(s), no failure group" if runs else "no runs"
        failed = sum(g.count for g in groups)
        return f"{failed:,} of {runs:,} run(s) failed, in {len(groups)} group(s) · enter: a group's runs"
