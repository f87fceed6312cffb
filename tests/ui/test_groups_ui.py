"""Pilot: g groups the run list by failure signature, enter shows a group's runs, esc or g goes back (issue 24)."""
from __future__ import annotations

import json
from pathlib import Path

from textual.widgets import Label

from tracetui.trace.reader import read_trace
from tracetui.trace.source import MemorySource
from tracetui.ui.app import TraceApp, open_paths
from tracetui.ui.widgets.group_list import GroupList
from tracetui.ui.widgets.run_list import RunList

from ui_helpers import screen_text, wait_until

SAMPLES = Path(__file__).resolve().parents[2] / "sample_traces"
SIZE = (120, 36)


def tenants_trace(tmp_path: Path, n: int) -> str:
    """``n`` cross-tenant denials, each its own order, tenant and user, and the sample scenarios after them."""
    lines = (SAMPLES / "scenarios.jsonl").read_bytes().splitlines(keepends=True)
    denied = b"".join(line for line in lines if b'"run_id":"cross_tenant"' in line)
    out = [denied.replace(b'"cross_tenant"', b'"denied-%d"' % k).replace(b"shop-b", b"acme-%d" % k)
           .replace(b"o-2", b"o-%d" % (k + 100)) for k in range(n)]
    path = tmp_path / "tenants.jsonl"
    path.write_bytes(b"".join(out) + b"".join(lines))
    return str(path)


async def settle(pilot, app) -> None:
    await pilot.pause()
    await app.workers.wait_for_complete()
    await pilot.pause()
    await pilot.pause()


def query_label(app) -> str:
    return str(app.screen.query_one("#query", Label).render())


async def test_g_shows_a_row_per_signature_enter_its_runs_and_esc_or_g_goes_back(tmp_path):
    app = TraceApp(open_paths([tenants_trace(tmp_path, 12)]))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        runs = app.screen.query_one(RunList)
        every = len(runs.view)
        await pilot.press("g")
        await settle(pilot, app)
        groups = app.screen.query_one(GroupList)
        assert groups.display and not runs.display and app.focused is groups
        assert groups.groups[0].count == 13 and groups.groups[0].code == "permission_denied"
        text = screen_text(app)
        assert "13× authoriz. permission_denied" in text  # (the reason, too long for the row, under it)
        assert "    permission denied: o-# belongs to" in text

        await pilot.press("enter")
        await settle(pilot, app)
        assert runs.display and not groups.display and app.focused is runs
        shown = {runs.entries[i].run_id for i in runs.view}
        assert shown == {f"denied-{k}" for k in range(12)} | {"cross_tenant"}
        assert "group 13× authorization permission_denied" in query_label(app)

        await pilot.press("escape")  # back to the groups
        await settle(pilot, app)
        assert groups.display and not runs.display and app.focused is groups
        await pilot.press("down", "enter")  # the next group: one run
        await settle(pilot, app)
        assert len(runs.view) == groups.groups[1].count
        await pilot.press("g")  # g goes back too
        await settle(pilot, app)
        assert groups.display and groups.current is groups.groups[1]
        await pilot.press("g")  # and from the groups, to every run
        await settle(pilot, app)
        assert runs.display and not groups.display and len(runs.view) == every
        assert "group" not in query_label(app)


class GrowingSource(MemorySource):
    """Runs published a few at a time, as the index publishes them while it scans."""

    def __init__(self, runs) -> None:
        super().__init__(runs, "growing")
        self._all, self._entries = self._entries, []

    def publish(self, n: int) -> None:
        self._entries.extend(self._all[len(self._entries):len(self._entries) + n])


async def test_groups_count_the_runs_published_while_indexing():
    source = GrowingSource(list(read_trace(SAMPLES / "scenarios.jsonl").runs.values()))
    app = TraceApp(source)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        app.screen.scanning = True  # (as while a file is indexed)
        await pilot.press("g")
        await settle(pilot, app)
        groups = app.screen.query_one(GroupList)
        assert groups.groups == [] and "waiting for the first runs" in screen_text(app)
        source.publish(10)
        await wait_until(pilot, lambda: "counts grow" in screen_text(app), tries=200)
        assert "in 10 run(s) so far" in screen_text(app)
        assert sum(g.count for g in groups.groups) == sum(1 for e in source.runs() if not e.ready) > 0
        before = sum(g.count for g in groups.groups)
        source.publish(len(source._all))
        app.screen.scanning = False
        await wait_until(pilot, lambda: sum(g.count for g in groups.groups) > before, tries=200)
        assert sum(g.count for g in groups.groups) == sum(1 for e in source.runs() if not e.ready)
        assert groups.note.endswith("enter: a group's runs") and "20 of 30 run(s) failed" in screen_text(app)


def reasons_trace(tmp_path: Path, reasons: list[str]) -> str:
    """A cross-tenant denial per reason (each its own run), then the sample scenarios."""
    lines = (SAMPLES / "scenarios.jsonl").read_bytes().splitlines(keepends=True)
    denied = b"".join(line for line in lines if b'"run_id":"cross_tenant"' in line)
    reason = b"permission denied: o-2 belongs to tenant shop-b, user u-2; caller is tenant shop-a, user u-1: " \
             b"tenant and user differ; no protected field returned"
    out = [denied.replace(b'"cross_tenant"', b'"odd-%d"' % k).replace(reason, json.dumps(text)[1:-1].encode())
           for k, text in enumerate(reasons)]
    path = tmp_path / "reasons.jsonl"
    path.write_bytes(b"".join(out) + b"".join(lines))
    return str(path)


async def test_at_80_columns_a_group_shows_its_reason_literally_on_a_line_of_its_own(tmp_path):
    """The pane is 22 columns at 80×24: a row cut to one line showed only ``1× authoriz. permiss…`` for every
    group of one code (and wrapped its cut half once a scrollbar showed). Markup in a reason stays text."""
    path = reasons_trace(tmp_path, ["[bold red]zq[/] blocked", "[link=https://e.example]yq[/link] held"] * 3)
    app = TraceApp(open_paths([path]))
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot, app)
        await pilot.press("g")
        await settle(pilot, app)
        text = screen_text(app)
        assert "   [bold red]zq[/] …" in text and "   [link=https://e.…" in text
        rows = text.splitlines()
        for line in rows:  # no row of the list is wrapped: each line of it begins a count or a reason
            cell = line[1:23]
            assert not cell.startswith(("ing", "led", "ed ")), line


async def test_after_a_search_typed_over_the_groups_the_keys_go_to_the_groups(tmp_path):
    app = TraceApp(open_paths([tenants_trace(tmp_path, 3)]))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        await pilot.press("g")
        await settle(pilot, app)
        groups = app.screen.query_one(GroupList)
        first = groups.current
        await pilot.press("slash", "d", "e", "enter")  # (enter: back to the list on screen, as for runs)
        await settle(pilot, app)
        assert app.focused is groups
        await pilot.press("down")
        assert groups.current is not first
        await pilot.press("slash", "escape")  # esc leaves the box too, for the groups
        await settle(pilot, app)
        assert app.focused is groups and groups.display


async def test_esc_in_the_filter_box_clears_the_search_and_only_the_next_leaves_the_group(tmp_path):
    app = TraceApp(open_paths([tenants_trace(tmp_path, 3)]))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        box = app.screen.query_one("#filter")
        await pilot.press("slash", "s", "i", "n", "g", "l", "e", "escape")  # no groups: esc clears the search
        await settle(pilot, app)
        assert box.value == "" and "“" not in query_label(app)
        await pilot.press("g")
        await settle(pilot, app)
        await pilot.press("enter")
        await settle(pilot, app)
        await pilot.press("slash", "d", "e", "escape")
        await settle(pilot, app)
        assert box.value == "" and "group 4×" in query_label(app)  # one esc: the search, not the group too
        runs = app.screen.query_one(RunList)
        assert app.focused is runs and runs.display
        await pilot.press("escape")
        await settle(pilot, app)
        assert app.screen.query_one(GroupList).display and "group" not in query_label(app)


async def test_help_names_the_groups_pane(tmp_path):
    app = TraceApp(open_paths([tenants_trace(tmp_path, 2)]))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        await pilot.press("g")
        await settle(pilot, app)
        await pilot.press("question_mark")
        await settle(pilot, app)
        text = screen_text(app)
        assert "failure groups" in text and "grouplist" not in text
