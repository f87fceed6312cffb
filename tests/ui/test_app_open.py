"""Opening the explorer: what cannot be opened exits 2 with a message (never a traceback, never a wait on the
terminal), and what can is the demo without a path or an index the app scans."""
from __future__ import annotations

import pytest

from tracetui.ui.app import TraceApp, open_paths as open_source, run_app

from ui_helpers import encode, write_lines

SIZE = (160, 45)


@pytest.mark.parametrize("content, message", [
    (None, "no such file"),
    (b"", "no runs found (it is empty)"),
    ("dir", "is a directory"),
])
def test_unopenable_paths_exit_2_with_a_message(tmp_path, capsys, content, message):
    path = tmp_path / "trace.jsonl"
    if content == "dir":
        path.mkdir()
    elif content is not None:
        path.write_bytes(content)
    with pytest.raises(SystemExit) as exc:
        run_app([str(path)])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and message in err and "Traceback" not in err


def test_open_dash_at_a_terminal_exits_2_with_a_message(monkeypatch, capsys):
    """Standard input is the terminal the explorer reads its keys from: reading a trace there waited for ever,
    stole keys, and ended in 'Fatal Python error' (the spool thread held stdin's lock at exit)."""
    import tracetui.ui.app as app_module

    monkeypatch.setattr(app_module.os, "isatty", lambda fd: fd == 0)
    monkeypatch.setattr(app_module.TraceApp, "run", lambda self: pytest.fail("the explorer started"))
    with pytest.raises(SystemExit) as exc:
        run_app(["-"])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("error: -: standard input is this terminal") and "cat FILE | tracetui open -" in err


async def test_file_without_runs_exits_2_listing_bad_lines(tmp_path, capsys):
    path = write_lines(tmp_path / "garbage.jsonl", [b"garbage", b'{"x": 1}'])
    app = TraceApp(open_source([path]))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await app.workers.wait_for_complete()
        await pilot.pause()
    assert app.return_code == 2
    report = " ".join(capsys.readouterr().err.split())  # printed when the app exits, wrapped
    assert report.startswith("error: ") and "no runs found" in report and "line 1: malformed JSON" in report


def test_open_paths_gives_the_demo_without_a_path_and_an_unscanned_index_for_files(tmp_path):
    from tracetui.trace.index import IndexedSource
    from tracetui.trace.reader import TraceReadError
    from tracetui.trace.source import MemorySource

    demo = open_source([])
    assert isinstance(demo, MemorySource) and demo.runs()
    path = write_lines(tmp_path / "t.jsonl", [encode(r) for r in _one_run_records()])
    src = open_source([path])
    assert isinstance(src, IndexedSource) and src.label == path
    assert src.runs() == []  # the caller scans
    with pytest.raises(TraceReadError):
        open_source([str(tmp_path / "missing.jsonl")])


def _one_run_records():
    from tracetui.loop.runner import run_scenario

    return run_scenario("single").records
