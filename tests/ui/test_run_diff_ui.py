"""m marks a run, d on another opens the two-run compare: ←→ walk the aligned steps, f the first divergence, esc back."""
from __future__ import annotations

import shutil
from pathlib import Path

from tracetui.ui.app import TraceApp
from tracetui.ui.app import open_paths
from tracetui.ui.screens.main import MainScreen
from tracetui.ui.screens.run_diff import RunDiffScreen
from tracetui.ui.widgets.run_list import RunList
from tracetui.ui.widgets.swimlanes import SwimLanes

from ui_helpers import screen_text, wait_until

SAMPLES = Path(__file__).resolve().parents[2] / "sample_traces"


async def select(pilot, run_id: str, nth: int = 0) -> None:
    screen = pilot.app.screen
    while getattr(screen, "scanning", False):
        await pilot.pause(0.05)
    runs = screen.query_one(RunList)
    assert runs.select_index([i for i, e in enumerate(runs.entries) if e.run_id == run_id][nth])
    await pilot.pause()


def lanes_seq(screen, side: str):
    return screen.query_one(f"#lanes-{side}", SwimLanes).current["seq"]


async def test_mark_then_diff_across_two_files_walks_the_aligned_steps_and_esc_goes_back(tmp_path):
    for name in ("scenarios.jsonl", "fault-429.jsonl"):
        shutil.copy(SAMPLES / name, tmp_path / name)
    app = TraceApp(open_paths([str(tmp_path / "scenarios.jsonl"), str(tmp_path / "fault-429.jsonl")]))
    async with app.run_test(size=(120, 40)) as pilot:
        await select(pilot, "single")
        await pilot.press("m")
        await pilot.pause()
        main = app.screen
        runs = main.query_one(RunList)
        assert runs.marked == ("single", 0)
        await select(pilot, "single-fault-429")
        assert "│m✓ single " in screen_text(app)  # the marked run's row says so
        await pilot.press("d")
        await wait_until(pilot, lambda: isinstance(app.screen, RunDiffScreen))  # aligned on a worker
        screen = app.screen
        assert isinstance(screen, RunDiffScreen)
        shown = screen_text(app)
        assert ("first divergence: run B retried at turn 1: its HTTP call got HTTP 429 (rate_limited); A needed no "
                "such retry") in shown
        assert "scenarios.jsonl:single" in shown and "fault-429.jsonl:single-fault-429" in shown
        assert "same verdict" in shown
        # the cursor starts on the first divergence: the retry only B made
        assert screen.row == 0 and screen.current()["a"] is None and lanes_seq(screen, "b") == 1
        await pilot.press("right")
        await pilot.pause()
        assert (lanes_seq(screen, "a"), lanes_seq(screen, "b")) == (1, 2)  # counterparts, not step n and step n
        await pilot.press("right", "right")
        await pilot.pause()
        assert (lanes_seq(screen, "a"), lanes_seq(screen, "b")) == (3, 4)
        await pilot.press("left")
        await pilot.pause()
        assert (lanes_seq(screen, "a"), lanes_seq(screen, "b")) == (2, 3)
        await pilot.press("f")
        await pilot.pause()
        assert screen.row == 0
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, MainScreen)


async def test_d_without_a_mark_or_on_the_marked_run_says_what_to_do(tmp_path):
    shutil.copy(SAMPLES / "scenarios.jsonl", tmp_path / "scenarios.jsonl")
    app = TraceApp(open_paths([str(tmp_path / "scenarios.jsonl")]))
    async with app.run_test(size=(120, 40)) as pilot:
        await select(pilot, "single")
        await pilot.press("d")
        await pilot.pause()
        assert isinstance(app.screen, MainScreen)
        assert any("no run is marked" in n.message for n in app._notifications)
        await pilot.press("m")
        await pilot.press("d")
        await pilot.pause()
        assert any("this is the marked run" in n.message for n in app._notifications)
        await pilot.press("m")  # m again unmarks
        await pilot.pause()
        assert app.screen.query_one(RunList).marked is None


async def test_runs_with_one_id_from_two_files_are_told_apart(tmp_path):
    shutil.copy(SAMPLES / "scenarios.jsonl", tmp_path / "a.jsonl")
    shutil.copy(SAMPLES / "scenarios.jsonl", tmp_path / "b.jsonl")
    app = TraceApp(open_paths([str(tmp_path / "a.jsonl"), str(tmp_path / "b.jsonl")]))
    async with app.run_test(size=(120, 40)) as pilot:
        await select(pilot, "cross_tenant", 0)
        await pilot.press("m")
        await select(pilot, "cross_tenant", 1)
        await pilot.press("d")
        await wait_until(pilot, lambda: isinstance(app.screen, RunDiffScreen))  # aligned on a worker
        screen = app.screen
        assert isinstance(screen, RunDiffScreen)
        assert screen.names == (f"{tmp_path / 'a.jsonl'}:cross_tenant", f"{tmp_path / 'b.jsonl'}:cross_tenant")
        assert "no step differs" in screen_text(app)


async def test_help_lists_m_and_d(tmp_path):
    shutil.copy(SAMPLES / "scenarios.jsonl", tmp_path / "scenarios.jsonl")
    app = TraceApp(open_paths([str(tmp_path / "scenarios.jsonl")]))
    async with app.run_test(size=(160, 90)) as pilot:
        await select(pilot, "single")
        await pilot.press("question_mark")
        await pilot.pause()
        text = screen_text(app)
        assert "mark this run to compare another with it (d); m again unmarks" in text
        assert "compare the marked run (m) with this one" in text


async def test_both_runs_are_read_off_the_ui_thread(tmp_path):
    """A run of thousands of steps takes seconds to read: d must not freeze the explorer meanwhile."""
    import threading

    shutil.copy(SAMPLES / "scenarios.jsonl", tmp_path / "scenarios.jsonl")
    app = TraceApp(open_paths([str(tmp_path / "scenarios.jsonl")]))
    async with app.run_test(size=(120, 40)) as pilot:
        await select(pilot, "single")
        await pilot.press("m")
        await select(pilot, "cross_tenant")
        main = app.screen
        source, on_ui_thread = main.source, []

        class Watched:
            def __getattr__(self, name):
                return getattr(source, name)

            def load(self, entry):
                on_ui_thread.append(threading.current_thread() is threading.main_thread())
                return source.load(entry)

        main.source = Watched()
        try:
            await pilot.press("d")
            await wait_until(pilot, lambda: isinstance(app.screen, RunDiffScreen))
        finally:
            main.source = source
        assert on_ui_thread == [False, False]


async def test_a_run_that_cannot_be_read_is_said_in_a_toast(tmp_path):
    shutil.copy(SAMPLES / "scenarios.jsonl", tmp_path / "scenarios.jsonl")
    app = TraceApp(open_paths([str(tmp_path / "scenarios.jsonl")]))
    async with app.run_test(size=(120, 40)) as pilot:
        await select(pilot, "single")
        await pilot.press("m")
        await select(pilot, "cross_tenant")
        main = app.screen
        source = main.source

        class Broken:
            def __getattr__(self, name):
                return getattr(source, name)

            def load(self, entry):
                raise OSError("the disk went away [bold]")

        main.source = Broken()
        try:
            await pilot.press("d")
            await wait_until(pilot, lambda: any("could not load run" in str(n.message) for n in app._notifications))
        finally:
            main.source = source
        assert isinstance(app.screen, MainScreen)
        assert any(str(n.message) == "could not load run single: the disk went away [bold]" for n in app._notifications)
