"""The agent as a child process: how it ended, and how it is stopped when tracetui is (real processes)."""
from __future__ import annotations

import os
import signal
import sys
import threading

from tracetui.record.child import exit_status, run_agent
from tracetui.record.exchange import AgentExit

SAFETY = 20


def _ready_pipe():
    """A pipe the agent writes one byte to once it is running (a readiness signal, never a sleep)."""
    read, write = os.pipe()
    os.set_inheritable(write, True)
    return read, write


def _agent(code: str, ready_fd: int) -> list[str]:
    return [sys.executable, "-c", f"import os, signal, time\n{code}\nos.write({ready_fd}, b'r')\ntime.sleep(60)"]


def _signal_when_ready(read: int, write: int, signum: int) -> threading.Thread:
    def wait_then_signal():
        if os.read(read, 1) == b"r":
            os.kill(os.getpid(), signum)

    thread = threading.Thread(target=wait_then_signal, daemon=True)
    thread.start()
    return thread


def test_a_command_that_does_not_exist_is_not_started_and_says_why():
    agent = run_agent(["no-such-agent-command-x"], os.environ)
    assert agent == AgentExit(None, None, False, False, "no-such-agent-command-x: command not found (not on PATH)")
    assert exit_status(agent) == 127


def test_a_file_that_is_not_executable_is_not_started(tmp_path):
    script = tmp_path / "agent.py"
    script.write_text("print('hi')\n")
    agent = run_agent([str(script)], os.environ)
    assert not agent.started and "permission denied" in agent.reason


def test_the_exit_status_is_the_agents():
    agent = run_agent([sys.executable, "-c", "raise SystemExit(3)"], os.environ)
    assert agent == AgentExit(3, None, False, True, None) and exit_status(agent) == 3


def test_the_environment_given_is_the_agents(tmp_path):
    out = tmp_path / "seen"
    run_agent([sys.executable, "-c", f"import os; open({str(out)!r}, 'w').write(os.environ['OPENAI_BASE_URL'])"],
              {**os.environ, "OPENAI_BASE_URL": "http://127.0.0.1:1/v1"})
    assert out.read_text() == "http://127.0.0.1:1/v1"


def test_an_agent_killed_by_a_signal_is_named_by_it():
    agent = run_agent([sys.executable, "-c", "import os, signal; os.kill(os.getpid(), signal.SIGKILL)"], os.environ)
    assert agent == AgentExit(None, "SIGKILL", False, True, None)
    assert exit_status(agent) == 128 + signal.SIGKILL


def test_sigterm_to_tracetui_stops_the_agent_and_counts_as_interrupted():
    read, write = _ready_pipe()
    waiter = _signal_when_ready(read, write, signal.SIGTERM)
    try:
        agent = run_agent(_agent("", write), os.environ, grace=SAFETY)
    finally:
        os.close(write)
        waiter.join(SAFETY)
        os.close(read)
    assert agent.interrupted and agent.signal == "SIGTERM" and exit_status(agent) == 130


def test_an_agent_that_ignores_the_interrupt_gets_sigterm_after_the_grace():
    read, write = _ready_pipe()
    waiter = _signal_when_ready(read, write, signal.SIGINT)
    try:  # the agent ignores SIGINT (whether the terminal or tracetui sent it): SIGTERM follows
        agent = run_agent(_agent("signal.signal(signal.SIGINT, signal.SIG_IGN)", write), os.environ, grace=0.3)
    finally:
        os.close(write)
        waiter.join(SAFETY)
        os.close(read)
    assert agent.interrupted and agent.signal == "SIGTERM"


def test_an_agent_that_ignores_sigterm_too_is_killed():
    read, write = _ready_pipe()
    waiter = _signal_when_ready(read, write, signal.SIGTERM)
    try:
        agent = run_agent(_agent("signal.signal(signal.SIGTERM, signal.SIG_IGN)", write), os.environ, grace=0.3)
    finally:
        os.close(write)
        waiter.join(SAFETY)
        os.close(read)
    assert agent.interrupted and agent.signal == "SIGKILL"


def test_signal_handlers_are_given_back_after_the_agent_ends():
    before = signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)
    run_agent([sys.executable, "-c", "pass"], os.environ)
    assert (signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)) == before


def test_asked_twice_the_agent_is_killed_at_once():
    read, write = _ready_pipe()

    def twice():
        if os.read(read, 1) == b"r":
            os.kill(os.getpid(), signal.SIGTERM)
            if os.read(read, 1) == b"t":  # the agent got the first SIGTERM (and ignored it): ask again
                os.kill(os.getpid(), signal.SIGTERM)

    waiter = threading.Thread(target=twice, daemon=True)
    waiter.start()
    try:  # the grace is long: only the second request can end the agent in time
        agent = run_agent(_agent(f"signal.signal(signal.SIGTERM, lambda *a: os.write({write}, b't'))", write),
                          os.environ, grace=SAFETY * 10)
    finally:
        os.close(write)
        waiter.join(SAFETY)
        os.close(read)
    assert agent.interrupted and agent.signal == "SIGKILL"


def test_the_agents_output_can_be_sent_elsewhere(tmp_path):
    out = tmp_path / "agent.out"
    with open(out, "wb") as sink:
        agent = run_agent([sys.executable, "-c", "import sys; print('said'); print('warned', file=sys.stderr)"],
                          os.environ, stdout=sink, stderr=sink)
    assert agent.status == 0 and sorted(out.read_text().split()) == ["said", "warned"]


def test_an_agent_past_its_time_limit_is_stopped_and_its_exit_says_so():
    import os as _os
    import sys as _sys

    from tracetui.record.child import run_agent

    hang = [_sys.executable, "-c", "import time\nwhile True: time.sleep(1)"]
    agent = run_agent(hang, dict(_os.environ), grace=2.0, timeout=0.3)
    assert agent.started and agent.status is None and agent.signal == "SIGTERM"
    assert "time limit of 0.3 s" in agent.reason


def test_an_agent_that_ignores_sigterm_past_its_time_limit_is_killed():
    import os as _os
    import sys as _sys

    from tracetui.record.child import run_agent

    stubborn = [_sys.executable, "-c", "import signal, time\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
                "print('ready', flush=True)\nwhile True: time.sleep(1)"]
    agent = run_agent(stubborn, dict(_os.environ), grace=0.3, timeout=0.5)
    assert agent.signal == "SIGKILL" and "time limit" in agent.reason


def test_agents_still_running_when_tracetui_leaves_are_stopped():
    import os as _os
    import sys as _sys
    import threading as _threading

    from tracetui.record import child

    ended = []
    hang = [_sys.executable, "-c", "import time\nwhile True: time.sleep(1)"]
    worker = _threading.Thread(target=lambda: ended.append(child.run_agent(hang, dict(_os.environ))), daemon=True)
    worker.start()
    for _ in range(600):  # until the agent is running (a safety net, not a timing assumption)
        if child._LIVE:
            break
        _threading.Event().wait(0.05)
    assert child._LIVE
    child.stop_live_agents()
    worker.join(30)
    assert ended and ended[0].signal == "SIGTERM" and not child._LIVE
