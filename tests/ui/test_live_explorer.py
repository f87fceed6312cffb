"""Pilot tests: the explorer over files that change, grow, or arrive on standard input; huge events."""
from __future__ import annotations

import os
import re
from pathlib import Path

import orjson

from tracetui.trace.safe_text import printable
from tracetui.ui.app import TraceApp, open_paths
from tracetui.ui.screens.value import ValueScreen
from tracetui.ui.widgets.detail import MAX_JSON_CHARS, DetailPane
from tracetui.ui.widgets.header import HeaderBar
from tracetui.ui.widgets.run_list import RunList
from tracetui.ui.widgets.verdict import VerdictBanner

from ui_helpers import screen_text, wait_until

SIZE = (160, 45)
ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "sample_traces" / "scenarios.jsonl"


def renamed(data: bytes, old: str, new: str) -> bytes:
    return data.replace(b'"run_id":' + orjson.dumps(old), b'"run_id":' + orjson.dumps(new))


def run_of(run_id: str, new_id: str) -> bytes:
    lines = [line for line in SAMPLE.read_bytes().splitlines(keepends=True) if orjson.loads(line)["run_id"] == run_id]
    return renamed(b"".join(lines), run_id, new_id)


async def settle(pilot, app) -> None:
    await pilot.pause()
    await app.workers.wait_for_complete()
    await pilot.pause()
    await pilot.pause()


def run_ids(app) -> list[str]:
    runs = app.screen.query_one(RunList)
    return [runs.entries[i].run_id for i in runs.view]


async def test_a_reload_before_the_first_scan_closes_the_first_source(tmp_path):
    """The first scan waits for the first frame: a reload in between scans its own source, and the first
    one is closed, not scanned beside it."""
    path = tmp_path / "t.jsonl"
    path.write_bytes(SAMPLE.read_bytes())
    app = TraceApp(open_paths([str(path)]))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        closed: list[str] = []

        class First:
            def close(self) -> None:
                closed.append("first")
        app.screen._first_scan(app.screen._generation - 1, First())  # overtaken by a reload
        assert closed == ["first"]
        await pilot.press("r")
        await settle(pilot, app)
        assert len(run_ids(app)) == 30


async def test_a_file_truncated_under_the_explorer_is_said_and_reloads(tmp_path):
    path = tmp_path / "t.jsonl"
    path.write_bytes(SAMPLE.read_bytes())
    app = TraceApp(open_paths([str(path)]))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        assert len(run_ids(app)) == 30
        path.write_bytes(run_of("single", "only"))  # cut short and rewritten in place, as a log rotation does
        app.screen.watch_files()
        await pilot.pause()
        header = app.screen.query_one(HeaderBar)
        assert header.progress.startswith("⚠") and "truncated" in header.progress and "r reloads" in header.progress
        await pilot.press("down")  # another run: its lines are gone
        await pilot.pause()
        banner = app.screen.query_one(VerdictBanner).plain
        assert "could not load this run" in banner and "truncated" in banner
        await pilot.press("w")  # never a 0-byte file reported as written
        await pilot.pause()
        assert sorted(p.name for p in tmp_path.iterdir()) == ["t.jsonl"]
        await pilot.press("r")
        await wait_until(pilot, lambda: run_ids(app) == ["only"])
        await settle(pilot, app)
        assert run_ids(app) == ["only"]
        assert not app.screen.query_one(HeaderBar).progress.startswith("⚠")
        assert "could not load" not in app.screen.query_one(VerdictBanner).plain


async def test_a_file_replaced_under_the_explorer_is_said_and_reloads(tmp_path):
    path = tmp_path / "t.jsonl"
    path.write_bytes(SAMPLE.read_bytes())
    app = TraceApp(open_paths([str(path)]))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        other = tmp_path / "new.jsonl"
        other.write_bytes(run_of("cross_tenant", "fresh") + run_of("single", "fresh-2"))
        os.replace(other, path)
        app.screen.watch_files()
        await pilot.pause()
        assert "replaced" in app.screen.query_one(HeaderBar).progress
        assert "replaced" in screen_text(app)
        await pilot.press("r")
        await wait_until(pilot, lambda: run_ids(app) == ["fresh", "fresh-2"])
        await settle(pilot, app)
        assert run_ids(app) == ["fresh", "fresh-2"]


async def test_following_shows_runs_a_writer_appends(tmp_path):
    path = tmp_path / "t.jsonl"
    path.write_bytes(run_of("single", "first"))
    app = TraceApp(open_paths([str(path)], follow=True))
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: run_ids(app) == ["first"])
        assert app.screen.query_one(HeaderBar).progress == "following"
        more = run_of("cross_tenant", "second")
        with open(path, "ab") as f:
            f.write(more[:len(more) // 2])  # the writer is in the middle of a line
        await wait_until(pilot, lambda: "second" in run_ids(app), tries=200)
        assert app.source.problems() == []
        with open(path, "ab") as f:
            f.write(more[len(more) // 2:])
        await wait_until(pilot, lambda: app.screen.entries[-1].complete and app.screen.entries[-1].failed, tries=200)
        assert run_ids(app) == ["first", "second"] and app.screen.failed == 1
        await pilot.press("F")  # stop following: the scan ends
        await settle(pilot, app)
        assert app.source.done


async def test_f_follows_a_file_that_grew_after_it_was_indexed(tmp_path):
    path = tmp_path / "t.jsonl"
    path.write_bytes(run_of("single", "first"))
    app = TraceApp(open_paths([str(path)]))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        with open(path, "ab") as f:
            f.write(run_of("text", "later"))
        app.screen.watch_files()
        await pilot.pause()
        assert "grown" in app.screen.query_one(HeaderBar).progress
        await pilot.press("F")
        await wait_until(pilot, lambda: run_ids(app) == ["first", "later"], tries=200)
        assert app.screen.query_one(HeaderBar).progress == "following"


async def test_standard_input_opens_as_it_arrives(tmp_path):
    read_fd, write_fd = os.pipe()
    app = TraceApp(open_paths(["-"], stdin=read_fd))
    async with app.run_test(size=SIZE) as pilot:
        os.write(write_fd, run_of("single", "piped-1"))
        await wait_until(pilot, lambda: run_ids(app) == ["piped-1"], tries=200)
        os.write(write_fd, run_of("cross_tenant", "piped-2"))
        os.close(write_fd)
        await wait_until(pilot, lambda: app.source.done, tries=200)
        await settle(pilot, app)
        assert run_ids(app) == ["piped-1", "piped-2"]
        assert app.screen.query_one(HeaderBar).label == "-"


def test_the_preview_of_a_huge_event_redacts_only_what_it_can_show(monkeypatch):
    """Redaction reads every character it is given (seconds for a 15 MB body, on the UI thread): the preview
    gives it the event with each string cut to what could be shown, and still redacts what it shows."""
    from tracetui.ui.widgets import detail

    redacted: list[int] = []
    real = detail.redact_value

    def counting(value):
        redacted.append(len(orjson.dumps(value)))
        return real(value)

    monkeypatch.setattr(detail, "redact_value", counting)
    secret = "ghp_Q7xT2mV9pL4kR8wZ1nB6cY3hJ5fD0gSaT3bk"
    blob = "x" * (MAX_JSON_CHARS // 2) + f" {secret} " + "A" * 4_000_000
    event = {"seq": 1, "lane": "http", "outcome": "ok", "summary": "s", "data": {"body": blob, "password": "hunter2x"}}
    shown = detail.event_text(event, [event]).plain
    assert redacted and max(redacted) < 10 * MAX_JSON_CHARS  # never the 4 MB
    assert secret not in shown and "hunter2x" not in shown and "<redacted>" in shown
    more = [int(n.replace(",", "")) for n in re.findall(r"… ([\d,]+) more characters", shown)]
    assert more and min(more) > len(blob) - MAX_JSON_CHARS  # what is left is counted on the whole event


async def test_a_huge_event_shows_a_bounded_preview_and_v_shows_it_whole(tmp_path):
    records = [orjson.loads(line) for line in run_of("single", "big").splitlines()]
    blob = "é" * 3_000_000
    records[1]["data"] = {"blob": blob}
    records[1]["summary"] = "s" * 1_000_000
    path = tmp_path / "big.jsonl"
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in records))
    app = TraceApp(open_paths([str(path)]))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        app.screen.action_jump_to_step(records[1]["seq"])
        await pilot.pause()
        detail = app.screen.query_one(DetailPane)
        assert detail.event is not None and detail.event["seq"] == records[1]["seq"]
        shown = detail.text.plain
        assert len(shown) < 2 * MAX_JSON_CHARS + 10_000  # a preview, never the 4 MB
        assert "more characters: v shows the whole event" in shown
        await pilot.press("v")
        await pilot.pause()
        assert isinstance(app.screen, ValueScreen)
        from textual.widgets import Log

        log = app.screen.query_one(Log)
        assert sum(len(line) for line in log.lines) >= len(blob)
        assert max(len(line) for line in log.lines) <= 2_000
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, ValueScreen)
        assert printable("big") in screen_text(app)


async def test_standard_input_that_fails_midway_keeps_the_runs_read_and_says_why():
    """The pipe breaks (a connection reset) after a run arrived: the run stays listed, the explorer stays
    open, and a problem of the input says it was not read to its end."""
    import socket
    import struct

    with socket.create_server(("127.0.0.1", 0)) as server:
        sender = socket.create_connection(server.getsockname())
        receiver, _ = server.accept()
        app = TraceApp(open_paths(["-"], stdin=receiver.fileno()))
        async with app.run_test(size=SIZE, notifications=True) as pilot:
            sender.sendall(run_of("single", "piped-1"))
            await wait_until(pilot, lambda: run_ids(app) == ["piped-1"], tries=200)
            sender.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            sender.close()  # a reset, not an end: reading it fails
            await wait_until(pilot, lambda: app.source.done or not app.screen.scanning, tries=200)
            await settle(pilot, app)
            said = [p.message for p in app.source.problems()]
            assert any("reading standard input failed" in m for m in said), said
            assert run_ids(app) == ["piped-1"] and app.is_running
            assert "1 problem" in screen_text(app), screen_text(app)  # (said where it stays, not in a toast)
        receiver.close()
