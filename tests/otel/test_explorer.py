"""The explorer on an OTLP/JSON file: runs listed with their verdicts, and `e` says why a foreign run cannot re-run."""
from __future__ import annotations

from pathlib import Path

from textual.widgets import Static

from tracetui.otel.detect import read_any
from tracetui.ui.app import TraceApp, open_paths
from tracetui.ui.screens.main import MainScreen
from tracetui.ui.widgets.run_list import RunList

SAMPLE = Path(__file__).resolve().parents[2] / "sample_traces" / "otel-scenarios.jsonl"


async def test_an_otlp_file_opens_and_a_foreign_run_cannot_be_re_run():
    app = TraceApp(open_paths([str(SAMPLE)]))
    async with app.run_test(size=(160, 45)) as pilot:
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, MainScreen)
        runs = screen.query_one(RunList)
        assert len(screen.entries) == 30 and sum(1 for e in screen.entries if e.first_failure) == 20
        cross = next(i for i, e in enumerate(screen.entries) if e.run_id == "cross_tenant")
        runs.action_cursor(runs.view.index(cross) - runs.cursor)
        await pilot.pause()
        assert screen.entries[runs.view[runs.cursor]].failing_lane == "authorization"
        await pilot.press("f")  # the first failure, its span's attributes in the detail pane
        await pilot.pause()
        detail = str(screen.query_one("#detail-body", Static).render())
        assert "execute_tool read_order" in detail and "gen_ai.tool.call.id" in detail
        await pilot.press("e")
        await pilot.pause()
        assert isinstance(app.screen, MainScreen)
        assert any("imported from OpenTelemetry: its inputs are not recorded, so it cannot be re-run"
                   in str(n.message) for n in app._notifications)


async def test_otlp_piped_into_open_is_listed_as_from_a_file():
    """``cat spans.jsonl | tracetui open -``: told apart by content, as a named file is."""
    import os

    read_fd, write_fd = os.pipe()
    data = SAMPLE.read_bytes()
    writer = __import__("threading").Thread(target=lambda: (os.write(write_fd, data), os.close(write_fd)))
    writer.start()
    app = TraceApp(open_paths(["-"], stdin=read_fd))
    writer.join()
    async with app.run_test(size=(160, 45)) as pilot:
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, MainScreen)
        expected = list(read_any(SAMPLE).runs)
        for _ in range(1000):  # (read as it arrives: listed in full once the scan has read it all)
            if app.source.done and len(screen.entries) == len(expected):
                break
            await pilot.pause(0.02)
        assert [e.run_id for e in screen.entries] == expected
        assert sum(1 for e in screen.entries if e.first_failure) == 20
