"""The user's agent as a child process: started with the terminal's stdin, stdout and stderr, waited for,
and stopped cleanly when tracetui is.

How it ended is the business's verdict (:class:`~tracetui.record.exchange.AgentExit`): its exit status,
the signal that killed it, whether the user stopped it (Ctrl-C), or why it never started.

Ctrl-C typed at a terminal reaches the whole foreground process group, the agent included, so it is
not sent again while tracetui and the agent share the terminal's foreground; a SIGINT sent to
tracetui alone (``kill -INT``) is passed on. Either way, an agent still running after ``grace``
seconds gets SIGTERM, and after another ``grace`` SIGKILL. SIGTERM and SIGHUP to tracetui stop the
agent the same way (SIGTERM first), and count as an interruption. Asked a second time (Ctrl-C again),
tracetui kills the agent at once.
"""
from __future__ import annotations

import atexit
import os
import shutil
import signal
import subprocess
import threading
import time
from typing import Any, Mapping, Sequence

from tracetui.record.exchange import AgentExit

GRACE = 5.0  # seconds an agent is given after each stop signal before a harder one
_STOPS = ("SIGINT", "SIGTERM", "SIGHUP")


def signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def _not_started(argv: Sequence[str], exc: OSError, env: Mapping[str, str]) -> AgentExit:
    name = argv[0] if argv else ""
    if isinstance(exc, FileNotFoundError):
        if os.sep in name:
            reason = f"{name}: no such file"
        else:
            reason = f"{name}: command not found (not on PATH)" if shutil.which(name, path=env.get("PATH")) is None \
                else f"{name}: {exc.strerror}"
    elif isinstance(exc, PermissionError):
        reason = f"{name}: permission denied (is it executable?)"
    else:
        reason = f"{name}: {exc.strerror or exc}"
    return AgentExit(status=None, signal=None, interrupted=False, started=False, reason=reason)


def _terminal_delivers_sigint() -> bool:
    """Whether a Ctrl-C typed now reaches the agent by itself: tracetui's terminal (on any of stdin,
    stdout, stderr: a redirected stdin does not change who a Ctrl-C reaches) has tracetui's process
    group, and so the agent's, in its foreground."""
    for fd in (0, 1, 2):
        try:
            if os.isatty(fd):
                return os.tcgetpgrp(fd) == os.getpgrp()
        except OSError:
            continue
    return False


class _Stopper:
    """Stops the agent once tracetui is asked to stop: the signal, then SIGTERM, then SIGKILL."""

    def __init__(self, process: subprocess.Popen, grace: float):
        self.process = process
        self.grace = grace
        self.asked = threading.Event()
        self.thread: threading.Thread | None = None

    def __call__(self, signum: int, frame: object) -> None:
        if self.asked.is_set():  # asked again (a second Ctrl-C): no more waiting
            self._send(signal.SIGKILL)
            return
        self.asked.set()
        if signum != signal.SIGINT:
            self._send(signal.SIGTERM)
        elif not _terminal_delivers_sigint():
            self._send(signal.SIGINT)
        self.thread = threading.Thread(target=self._escalate, args=(signum,), daemon=True)
        self.thread.start()

    def _escalate(self, signum: int) -> None:
        for harder in ((signal.SIGTERM,) if signum == signal.SIGINT else ()) + (signal.SIGKILL,):
            try:
                self.process.wait(self.grace)
                return
            except subprocess.TimeoutExpired:
                self._send(harder)

    def _send(self, signum: int) -> None:
        try:
            self.process.send_signal(signum)
        except (ProcessLookupError, OSError):
            pass


#: agents running now, so that tracetui leaving (the explorer's q while explain re-runs) never leaves one behind
_LIVE: set[subprocess.Popen] = set()
_LIVE_LOCK = threading.Lock()


def stop_live_agents(grace: float = 0.5) -> None:
    """SIGTERM every agent still running, then SIGKILL those that are still there after ``grace``: called
    when tracetui exits without waiting for a re-run (and at the interpreter's exit)."""
    with _LIVE_LOCK:
        live = list(_LIVE)
    for process in live:
        _signal(process, signal.SIGTERM)
    for process in live:
        try:
            process.wait(grace)
        except subprocess.TimeoutExpired:
            _signal(process, signal.SIGKILL)


atexit.register(stop_live_agents)


def _signal(process: subprocess.Popen, signum: int) -> None:
    try:
        process.send_signal(signum)
    except (ProcessLookupError, OSError):
        pass


def run_agent(argv: Sequence[str], env: Mapping[str, str], *, grace: float = GRACE, stdin: Any = None,
              stdout: Any = None, stderr: Any = None, timeout: float | None = None) -> AgentExit:
    """Run ``argv`` with ``env`` until it ends; see the module's words on stopping it. Its stdin, stdout and
    stderr are tracetui's (the terminal's) unless given (as ``subprocess.Popen`` takes them: a re-run
    by explain sends the agent's output elsewhere). With ``timeout`` (seconds), an agent still running
    then is stopped (SIGTERM, SIGKILL after ``grace``) and its exit says it timed out: a re-run must end,
    an agent that hangs would otherwise hang ``explain`` for good."""
    if not argv:
        return AgentExit(None, None, False, False, "no command given: put it after --")
    try:  # inheritable descriptors pass, as a shell passes them
        process = subprocess.Popen(list(argv), env=dict(env), close_fds=False, stdin=stdin, stdout=stdout,
                                   stderr=stderr)
    except OSError as exc:
        return _not_started(argv, exc, env)
    with _LIVE_LOCK:
        _LIVE.add(process)
    stopper = _Stopper(process, grace)
    previous = {}
    if threading.current_thread() is threading.main_thread():
        for name in _STOPS:
            number = getattr(signal, name, None)
            if number is not None:
                previous[number] = signal.signal(number, stopper)
    deadline = None if timeout is None else time.monotonic() + timeout
    timed_out = False
    try:
        while True:
            try:
                code = process.wait(None if deadline is None else max(0.0, deadline - time.monotonic()))
                break
            except subprocess.TimeoutExpired:
                timed_out, deadline = True, None
                _signal(process, signal.SIGTERM)
                try:
                    code = process.wait(grace)
                except subprocess.TimeoutExpired:
                    _signal(process, signal.SIGKILL)
                    code = process.wait()
                break
            except KeyboardInterrupt:  # a SIGINT handler other than ours was in place: stop it as ours would
                stopper(signal.SIGINT, None)
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)
        with _LIVE_LOCK:
            _LIVE.discard(process)
    interrupted = stopper.asked.is_set()
    if timed_out:
        return AgentExit(None, signal_name(-code) if code < 0 else "SIGTERM", interrupted, True,
                         f"stopped by tracetui: still running after its time limit of {timeout:g} s")
    if code < 0:
        return AgentExit(None, signal_name(-code), interrupted, True, None)
    return AgentExit(code, None, interrupted, True, None)


class HeldStops:
    """SIGTERM and SIGHUP noted, not obeyed, around a recording: once the agent has ended (and
    :func:`run_agent` has put this handler back) the run is still being gathered and written, and the
    default action would end tracetui with the run lost. ``pending`` is the signal that came, if one did."""

    def __init__(self) -> None:
        self.pending: int | None = None
        self._previous: dict[int, Any] = {}

    def __enter__(self) -> "HeldStops":
        if threading.current_thread() is threading.main_thread():  # only the main thread may set a handler
            for name in _STOPS[1:]:
                number = getattr(signal, name, None)
                if number is not None:
                    self._previous[number] = signal.signal(number, self._note)
        return self

    def __exit__(self, *exc: object) -> None:
        for number, handler in self._previous.items():
            signal.signal(number, handler)
        self._previous.clear()

    def _note(self, signum: int, frame: object) -> None:
        self.pending = signum


def exit_status(agent: AgentExit) -> int:
    """The status tracetui exits with: the agent's own; 127 not started, 130 interrupted, 128+N for signal N."""
    if not agent.started:
        return 127
    if agent.interrupted:
        return 130
    if agent.signal is not None:
        number = getattr(signal, agent.signal, None)
        return 128 + int(number) if number is not None else 1
    return agent.status if agent.status is not None else 1


__all__ = ["run_agent", "exit_status", "signal_name", "GRACE", "HeldStops"]
