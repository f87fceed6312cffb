"""One recorded (or replayed) run of the user's command: start the endpoint, run the command against it,
and build the run's records from what went over the wire and how the command ended.

The command always comes from the user's command line; ``command_hint`` (the argv as typed) is
written into the run as a hint only, and a replay keeps the original's hint: a trace never names a
command that is run.
"""
from __future__ import annotations

import os
import re
import stat
from typing import Any, Mapping, Sequence

import orjson

from tracetui.record.child import GRACE, run_agent
from tracetui.record.exchange import AgentExit, WireExchange
from tracetui.record.proxy import RecordingProxy
from tracetui.record.replay_server import ReplayServer
from tracetui.record.routes import DEFAULT_UPSTREAMS, public_root
from tracetui.trace.format import BOM
from tracetui.trace.output_path import output_target


#: launchers whose first plain argument, not their own name, says which agent runs
_LAUNCHERS = re.compile(r"(python|pypy|node|deno|bun|ruby|perl|php|uv|uvx|npx|pnpm|poetry|pipenv|bash|sh|zsh)"
                        r"[0-9.]*(\.exe)?")


def default_run_id(argv: Sequence[str]) -> str:
    """``record-<agent>``: the script a launcher runs (``python agent.py`` → ``record-agent``,
    ``python -m shop.bot`` → ``record-bot``), else the program's own name. Stable, so recording
    the same command twice names its runs alike (the reader tells repeats apart with ``#2``)."""
    args = [a for a in argv if isinstance(a, str)]
    name = os.path.basename(args[0]) if args else ""
    if _LAUNCHERS.fullmatch(name):
        rest = args[1:]
        if "-m" in rest and rest.index("-m") + 1 < len(rest):
            name = rest[rest.index("-m") + 1].rsplit(".", 1)[-1]
        else:
            script = next((a for a in rest if a and not a.startswith("-") and a not in ("run", "exec")), None)
            if script is not None:
                name = os.path.splitext(os.path.basename(script.rstrip("/")))[0] or name
    return f"record-{name or 'agent'}"


def _records(run_id: str, exchanges: list[WireExchange], agent: AgentExit, command_hint: Sequence[str],
             upstream: Mapping[str, str]) -> list[dict[str, Any]]:
    from tracetui.record.recording import run_records  # H1's: the lanes read from the wire

    return run_records(run_id, exchanges, agent, list(command_hint), dict(upstream))


def record_run(argv: Sequence[str], upstreams: Mapping[str, str] | None, run_id: str | None,
               command_hint: Sequence[str] | None = None, *, port: int = 0, read_timeout: float | None = None,
               grace: float = GRACE) -> tuple[list[dict[str, Any]], AgentExit]:
    """Run ``argv`` through a recording proxy to ``upstreams`` (vendor → API root; defaults for the rest):
    the run's records (run line, events, summary) and how the command ended. Raises
    :class:`~tracetui.record.endpoint.EndpointError` when the endpoint cannot listen (a port already taken)."""
    roots = {**DEFAULT_UPSTREAMS, **(upstreams or {})}
    extra = {} if read_timeout is None else {"read_timeout": read_timeout}
    with RecordingProxy(roots, port=port, **extra) as proxy:
        agent = run_agent(argv, agent_env(os.environ, proxy.env()), grace=grace)
        exchanges = proxy.exchanges()
    records = _records(run_id or default_run_id(argv), exchanges, agent,
                       list(argv) if command_hint is None else command_hint,
                       {vendor: public_root(root) for vendor, root in roots.items()})
    return records, agent


def record_command(argv: Sequence[str], upstreams: Mapping[str, str] | None, run_id: str | None,
                   command_hint: Sequence[str] | None = None, **options: Any) -> list[dict[str, Any]]:
    """:func:`record_run`'s records alone."""
    return record_run(argv, upstreams, run_id, command_hint, **options)[0]


def agent_env(base: Mapping[str, str], endpoint: Mapping[str, str]) -> dict[str, str]:
    """The agent's environment: tracetui's own, the endpoint's base URLs over it, and 127.0.0.1 kept off
    any HTTP proxy the environment names (a proxy would never reach this machine's endpoint)."""
    env = {**base, **endpoint}
    for name in ("NO_PROXY", "no_proxy"):
        if name in env or name == "NO_PROXY":
            hosts = [h for h in env.get(name, "").split(",") if h.strip()]
            env[name] = ",".join([*hosts, *(h for h in ("127.0.0.1", "localhost") if h not in hosts)])
    return env


#: seconds a re-run of your agent may take before tracetui stops it (its model answers come from the recording)
REPLAY_TIMEOUT = 300.0


def replay_timeout() -> float:
    """:data:`REPLAY_TIMEOUT`, or ``TRACETUI_REPLAY_TIMEOUT`` (seconds) when it is a positive number."""
    try:
        value = float(os.environ.get("TRACETUI_REPLAY_TIMEOUT", ""))
    except ValueError:
        return REPLAY_TIMEOUT
    return value if 0 < value < 10 ** 7 else REPLAY_TIMEOUT


def replay_command(recorded_exchanges: list[WireExchange], responses: list[dict[str, Any]], argv: Sequence[str],
                   run_id: str, env_extra: Mapping[str, str] | None = None, *, command_hint: Sequence[str] | None = None,
                   upstream: Mapping[str, str] | None = None, grace: float = GRACE, stdin: Any = None,
                   stdout: Any = None, stderr: Any = None, timeout: float | None = None) -> list[dict[str, Any]]:
    """Run ``argv`` against a server that plays ``responses`` back in order (never the network); the new
    run's records, ``source: record`` as the original's. ``command_hint`` and ``upstream`` are the
    original run's (by default: ``argv`` and the default roots). ``stdin``, ``stdout``, ``stderr``: the
    agent's, as :func:`~tracetui.record.child.run_agent` takes them (default: tracetui's own).
    ``timeout``: seconds the re-run may take (default :data:`REPLAY_TIMEOUT`, or ``TRACETUI_REPLAY_TIMEOUT``);
    served from a recording, a run needs no model time, so only the agent's own tools take long."""
    if timeout is None:
        timeout = replay_timeout()
    with ReplayServer(recorded_exchanges, responses) as server:
        agent = run_agent(argv, agent_env({**os.environ, **(env_extra or {})}, server.env()), grace=grace,
                          stdin=stdin, stdout=stdout, stderr=stderr, timeout=timeout)
        exchanges = server.exchanges()
    return _records(run_id, exchanges, agent, list(argv) if command_hint is None else command_hint,
                    DEFAULT_UPSTREAMS if upstream is None else upstream)


class OutputError(ValueError):
    """An ``-o`` a run cannot be written to; the message says why, in words."""


#: bytes of an existing file read to tell whether it is a trace (its first line)
FIRST_LINE = 64 * 1024


def check_output(path: str) -> None:
    """Refuse, before the agent runs (so no run is made only to be lost), an ``-o`` a run cannot go to:
    a missing folder, a pipe or device (a FIFO would block the write for good), a file that is not a
    trace (the agent's own script: a run is appended, never written over). :class:`OutputError` says why."""
    try:
        target = output_target(path)
    except OSError as exc:
        raise OutputError(f"{path}: {exc.strerror}") from None
    try:
        seen = os.stat(target)
    except FileNotFoundError:
        if not os.access(target.parent, os.W_OK | os.X_OK):
            raise OutputError(f"{path}: its folder {target.parent} is not writable") from None
        return
    except OSError as exc:
        raise OutputError(f"{path}: {exc.strerror}") from None
    if stat.S_ISDIR(seen.st_mode):
        raise OutputError(f"{path} is a folder; give a file name such as {os.path.join(path, 'record.jsonl')}")
    if not stat.S_ISREG(seen.st_mode):
        raise OutputError(f"{path} is not a regular file (a pipe or a device): a run is appended to a trace file")
    if not os.access(target, os.W_OK):
        raise OutputError(f"{path} is not writable")
    if seen.st_size and not _is_trace(target):
        raise OutputError(f"{path} exists and is not a trace (its first line is no trace record): a run is appended "
                          f"to a trace file, so give a new file name or a trace")


def _is_trace(path: os.PathLike[str]) -> bool:
    try:
        with open(path, "rb") as f:
            head = f.read(FIRST_LINE)
    except OSError:
        return True  # unreadable here: the write says why, if it fails
    head = head[len(BOM):] if head.startswith(BOM) else head
    line, ended, _ = head.lstrip().partition(b"\n")
    if not ended:  # a first line longer than what was read: a trace's starts so
        return line.startswith(b"{") and b'"rec"' in line
    try:
        first = orjson.loads(line)
    except orjson.JSONDecodeError:
        return False
    return isinstance(first, dict) and "rec" in first


def save_run(path: str, records: list[dict[str, Any]]) -> str:
    """Write the run to ``path`` (:func:`tracetui.record.recording.write_run`: a new file atomically, an
    existing one gets the run appended, its runs untouched); ``"written"`` or ``"appended"``."""
    from tracetui.record.recording import write_run

    target = output_target(path)  # a symlink's file (one not there yet is created where the link points)
    how = "appended to" if os.path.exists(target) else "written to"
    write_run(target, records)
    return how


def verdict_of(records: list[dict[str, Any]]) -> str:
    """The run's verdict line, as ``tracetui check`` prints it (raw: escape it before printing)."""
    from tracetui.trace.verdict import decide, verdict_line

    run = next((r for r in records if r.get("rec") == "run"), {})
    summary = next((r for r in records if r.get("rec") == "summary"), None)
    events = [r for r in records if r.get("rec") == "event"]
    run_id = str(run.get("run_id", ""))
    metrics = (summary or {}).get("metrics") or {}
    recovered = metrics.get("recovered") if isinstance(metrics.get("recovered"), int) else 0
    return verdict_line(run_id, decide(summary, events).as_dict(run_id), recovered)
