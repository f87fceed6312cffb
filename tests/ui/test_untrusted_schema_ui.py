"""The explorer's fixes panel (``E``) on a run whose tool schema has a catastrophic pattern, and quitting
while its search runs (issue 18): the app exits, the search stops."""
from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from tracetui.replay.pointer import EditError
from tracetui.replay.replay import replay
from tracetui.trace.reader import read_trace
from tracetui.trace.writer import encode_record
from tracetui.ui.app import TraceApp
from tracetui.ui.app import open_paths as open_source
from tracetui.ui.screens.fixes import FixesScreen

from test_replay_ui import open_run
from ui_helpers import wait_until

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
SAFE_RUN = 60  # seconds: only a safety net, so a regression fails instead of hanging the suite


def write_redos_trace(path: Path) -> str:
    """The sample run ``single`` whose tool's ``order_id`` pattern is ``^(a+)+$`` and whose model sends 46
    ``a`` and a ``!`` (as tests/loop/test_untrusted_schemas.py makes it: a harmless pattern, renamed in the text)."""
    run = read_trace(ROOT / "sample_traces" / "scenarios.jsonl").runs["single"]
    outcome = replay(run, [("/inputs/tools/0/parameters/properties/order_id/pattern", "^(b+)-$"),
                           ("/responses/0/body/output/0/arguments", json.dumps({"order_id": "b" * 46 + "!"}))])
    text = b"".join(encode_record(r) for r in outcome.records)
    path.write_bytes(text.replace(b"^(b+)-$", b"^(a+)+$").replace(b"b" * 46 + b"!", b"a" * 46 + b"!"))
    return str(path)


async def press_E_then_q(path: str) -> str:
    """Run by the test in a child process: the fixes panel on the run, then q. Says how it ended."""
    app = TraceApp(open_source([path]))

    async def explore() -> None:
        async with app.run_test(size=(160, 45)) as pilot:
            await open_run(pilot, "single")
            await pilot.press("E")
            await wait_until(pilot, lambda: isinstance(app.screen, FixesScreen))
            assert isinstance(app.screen, FixesScreen)
            await pilot.press("q")
            await pilot.pause()

    await asyncio.wait_for(explore(), SAFE_RUN)
    return f"exited {app.return_code}"


def test_E_on_a_catastrophic_pattern_then_q_exits_the_explorer(tmp_path):
    # in a child: a pattern stuck in re holds the GIL, so no timeout in this process could end it
    path = write_redos_trace(tmp_path / "redos.jsonl")
    code = ("import asyncio, sys; sys.path[:0] = [sys.argv[1]]; from test_untrusted_schema_ui import press_E_then_q; "
            "print(asyncio.run(press_E_then_q(sys.argv[2])))")
    out = subprocess.run([sys.executable, "-c", code, str(HERE), path], capture_output=True, text=True,
                         timeout=SAFE_RUN, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().splitlines()[-1] == "exited 0"


async def test_quitting_while_fixes_are_proven_stops_the_search_within_one_replay(monkeypatch, scenarios_file):
    """The first replay of the search waits until its worker is cancelled (by q), then is refused; no other
    replay runs after it."""
    from textual.worker import get_current_worker

    import tracetui.explain.search as search

    real, started, calls = search.replay, threading.Event(), []  # (real: every replay after the first)

    def first_replay_waits_for_the_cancel(*args, **kwargs):
        calls.append(args)
        if len(calls) == 1:
            started.set()
            worker, deadline = get_current_worker(), time.monotonic() + SAFE_RUN
            while not worker.is_cancelled and time.monotonic() < deadline:
                time.sleep(0.01)
            raise EditError("refused, so no proof is yielded: only the search itself can stop before the next")
        return real(*args, **kwargs)

    real_proofs, search_ended = search.Search.proofs, threading.Event()

    def proofs(self):
        try:
            yield from real_proofs(self)
        finally:  # run out, or closed by its worker
            search_ended.set()

    monkeypatch.setattr(search, "replay", first_replay_waits_for_the_cancel)
    monkeypatch.setattr(search.Search, "proofs", proofs)
    app = TraceApp(open_source([scenarios_file]))

    async def explore() -> None:
        async with app.run_test(size=(160, 45)) as pilot:
            await open_run(pilot, "cross_tenant")
            await pilot.press("E")
            await wait_until(pilot, started.is_set, tries=1000)
            assert started.is_set()
            await pilot.press("q")
            await pilot.pause()

    await asyncio.wait_for(explore(), SAFE_RUN)
    assert app.return_code == 0
    assert search_ended.wait(SAFE_RUN)
    assert len(calls) == 1  # cross_tenant has three candidates more: none was re-run after q


def in_a_terminal(argv: list[str]):
    """``argv`` started on a pty of 140x40 as a new session: the process, the pty's master end, the slave's
    cooked-mode bits (to prove they come back), and ``screen_shows(text, seconds)``, which reads what the
    process draws until ``text`` appears."""
    import fcntl
    import os
    import pty
    import select
    import struct
    import termios

    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 140, 0, 0))
    cooked = termios.tcgetattr(slave)[3] & (termios.ICANON | termios.ECHO)
    env = {**os.environ, "TERM": "xterm-256color"}
    proc = subprocess.Popen(argv, stdin=slave, stdout=slave, stderr=slave, start_new_session=True, cwd=ROOT, env=env)

    def screen_shows(text: bytes, seconds: float = SAFE_RUN) -> bool:
        seen, deadline = b"", time.monotonic() + seconds
        while time.monotonic() < deadline and text not in seen:
            if select.select([master], [], [], 0.1)[0]:
                seen += os.read(master, 65536)
        return text in seen

    return proc, master, slave, cooked, screen_shows


def test_sigterm_while_the_fixes_panel_is_open_exits_and_restores_the_terminal(tmp_path):
    """A real terminal (a pty): ``tracetui open``, ``E``, then SIGTERM; the app ends with 128+15 and the
    terminal is back in the mode it was in (not left raw)."""
    import os
    import signal
    import termios

    path = write_redos_trace(tmp_path / "redos.jsonl")
    proc, master, slave, cooked, screen_shows = in_a_terminal([sys.executable, "-m", "tracetui", "open", path])

    try:
        assert screen_shows(b"single")  # the run list is drawn: keys are read from here on
        os.write(master, b"E")
        assert screen_shows(b"fixes for single")
        assert not termios.tcgetattr(slave)[3] & termios.ICANON  # the explorer holds the terminal raw
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(SAFE_RUN) == 128 + signal.SIGTERM
        assert termios.tcgetattr(slave)[3] & (termios.ICANON | termios.ECHO) == cooked
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        os.close(master)
        os.close(slave)


ENDLESS_REPLAY = """
import sys, time
import tracetui.explain.search as search

def endless(*args, **kwargs):  # a replay that never ends and never asks whether it was cancelled
    open(sys.argv[2], "w").close()
    while True:
        time.sleep(0.05)

search.replay = endless
from tracetui.ui.app import run_app
run_app([sys.argv[1]])
"""


@pytest.mark.parametrize("how, code", [("q", 0), ("SIGTERM", 128 + 15)])
def test_the_explorer_exits_while_a_replay_never_ends(tmp_path, how, code):
    """A real terminal (a pty): E starts a search whose replay never returns; q (or SIGTERM) closes the app and
    the process ends, with the app's status, instead of waiting for the replay at the interpreter's exit."""
    import os
    import signal

    run = read_trace(ROOT / "sample_traces" / "scenarios.jsonl").runs["cross_tenant"]
    path = tmp_path / "cross_tenant.jsonl"
    path.write_bytes(b"".join(encode_record(r) for r in (run.run, *run.events, run.summary)))
    started = tmp_path / "replay-started"
    proc, master, slave, _, screen_shows = in_a_terminal([sys.executable, "-c", ENDLESS_REPLAY, str(path), str(started)])

    try:
        assert screen_shows(b"reached")  # the run's lanes are drawn ("not reached"): keys are read from here on
        os.write(master, b"E")
        deadline = time.monotonic() + SAFE_RUN
        while not started.exists() and time.monotonic() < deadline:
            screen_shows(b"\0", 0.1)  # drains the terminal meanwhile
        assert started.exists()  # the search is inside its endless replay
        if how == "q":
            os.write(master, b"q")
        else:
            proc.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + SAFE_RUN
        while proc.poll() is None and time.monotonic() < deadline:
            screen_shows(b"\0", 0.1)  # read what it draws as it closes: a full terminal would block it
        assert proc.poll() == code
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        os.close(master)
        os.close(slave)
