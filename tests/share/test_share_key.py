"""``S`` in the explorer writes the selected run's page beside the trace, never over anything."""
from __future__ import annotations

import asyncio

from tracetui.ui.app import TraceApp, open_paths
from tracetui.ui.widgets.run_list import RunList

from hostile_share import clean_trace


async def until(pilot, condition, seconds: float = 60.0) -> None:
    """Wait for ``condition`` (a safety net, not a timing: it is met in well under a second)."""
    loop = asyncio.get_running_loop()
    end = loop.time() + seconds
    while not condition():
        assert loop.time() < end, "still waiting after the safety net"
        await pilot.pause(0.05)


async def test_S_writes_the_selected_run_as_a_page_beside_the_trace(tmp_path):
    trace = clean_trace(tmp_path)
    (tmp_path / "cross.cross_tenant.html").write_text("someone else's page")  # taken: the next name is used
    app = TraceApp(open_paths([str(trace)]))
    async with app.run_test(size=(160, 45), notifications=True) as pilot:
        await pilot.pause()
        await app.workers.wait_for_complete()
        runs = app.screen.query_one(RunList)
        assert runs.current is not None and runs.current.run_id == "cross_tenant"
        await pilot.press("S")
        written = tmp_path / "cross.cross_tenant-2.html"
        await until(pilot, lambda: any(n.message.startswith("wrote a page") for n in app._notifications))
        note = next(n for n in app._notifications if n.message.startswith("wrote a page"))
        assert note.message == f"wrote a page of run cross_tenant to {written}"
    assert (tmp_path / "cross.cross_tenant.html").read_text() == "someone else's page"
    page = written.read_text()
    assert 'data-first-failure="true"' in page and "S in tracetui open" in page


async def test_S_says_on_the_page_the_lines_of_the_file_the_reader_skipped(tmp_path):
    trace = clean_trace(tmp_path)
    trace.write_bytes(trace.read_bytes() + b'{"rec": "event", "run_id": "cross_tenant", broken\n')
    app = TraceApp(open_paths([str(trace)]))
    async with app.run_test(size=(160, 45), notifications=True) as pilot:
        await pilot.pause()
        await app.workers.wait_for_complete()
        await pilot.press("S")
        await until(pilot, lambda: any(n.message.startswith("wrote a page") for n in app._notifications))
    page = (tmp_path / "cross.cross_tenant.html").read_text()
    assert "1 line of" in page and "was skipped" in page
