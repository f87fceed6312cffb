"""The command palette jumps to a run by id: part of an id, Enter, and the run list is on that run."""
from __future__ import annotations

from dataclasses import dataclass

from tracetui.ui.app import TraceApp
from tracetui.ui.app import open_paths as open_source
from tracetui.ui.widgets.run_list import RunList

from test_replay_ui import open_run
from ui_helpers import screen_text, wait_until


async def palette_jump(pilot, typed: str) -> None:
    await pilot.press("ctrl+p")
    await pilot.pause()
    await pilot.press(*typed)
    await wait_until(pilot, lambda: "jump to run" in screen_text(pilot.app), tries=100)
    await pilot.press("enter")
    await pilot.pause()


async def test_part_of_an_id_then_enter_selects_that_run(scenarios_file):
    app = TraceApp(open_source([scenarios_file]))
    async with app.run_test(size=(80, 24)) as pilot:
        await open_run(pilot, "text")
        await palette_jump(pilot, "cross_t")
        runs = app.screen.query_one(RunList)
        assert runs.current.run_id == "cross_tenant"
        assert app.screen.shown is runs.current  # the run pane shows it too
        assert app.focused is runs


async def test_a_run_hidden_by_a_filter_is_shown_by_clearing_the_filters(scenarios_file):
    app = TraceApp(open_source([scenarios_file]))
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        await open_run(pilot, "text")
        screen = app.screen
        screen.action_set_query("status", "ready")  # only answer-ready runs: cross_tenant is not listed
        await pilot.pause()
        runs = screen.query_one(RunList)
        assert all(runs.entries[i].ready for i in runs.view)
        await palette_jump(pilot, "run cross_tenant")
        assert runs.current.run_id == "cross_tenant"
        assert screen.query_state.status != "ready"
        assert any("filters cleared to show run cross_tenant" in n.message for n in app._notifications)


@dataclass
class Row:
    run_id: str


def test_at_most_the_best_hits_are_kept_the_id_itself_first():
    """However many ids match, MAX_RUN_HITS are kept; the id itself, listed last, leads, then ids that start with
    the text, then ids that hold it, each in list order; runs added later are found too."""
    from tracetui.ui.commands import EXACT, INSIDE, MAX_RUN_HITS, PREFIX, RunIds

    rows = [Row(f"order-{n}") for n in range(200_000)] + [Row("ORDER-7"), Row("my-order"), Row("order")]
    ids = RunIds()
    assert sum(1 for _ in ids.extend(rows, chunk=20_000)) > 1  # taken in by chunks, the app's loop between them
    hits = ids.find("order")
    assert len(hits) == MAX_RUN_HITS
    assert hits[0] == (EXACT, len(rows) - 1)
    assert hits[1:4] == [(PREFIX, 0), (PREFIX, 1), (PREFIX, 2)]
    assert ids.find("der-7")[:3] == [(INSIDE, 7), (INSIDE, 70), (INSIDE, 71)]
    assert ids.find("order-7")[:2] == [(EXACT, 7), (EXACT, 200_000)]  # ORDER-7 too: case does not matter
    assert ids.find("-order") == [(INSIDE, len(rows) - 2)]
    assert ids.find("order-199999") == [(EXACT, 199_999)]
    assert ids.find("order-7\n") == [] and ids.find("nothing") == []
    rows.append(Row("late-run"))  # the index added a run
    assert list(ids.extend(rows)) and ids.find("late") == [(PREFIX, len(rows) - 1)]
