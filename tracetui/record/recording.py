"""A recorded agent run as trace records: its run line, its events read from the wire, its summary.

The run line holds nothing to edit and nothing to run: the agent's inputs are its own code and
tools, and the command it was started with is only a hint (a trace is untrusted; the command to
re-run always comes from the user's command line). Writing goes through the writer's redaction;
a run appended to an existing file is one ``write`` on an ``O_APPEND`` descriptor, so runs of two
recorders appending at once never interleave within a line.
"""
from __future__ import annotations

import os
import stat
from typing import Any, Sequence

from tracetui import __version__
from tracetui.providers.registry import ADAPTERS
from tracetui.record.exchange import AgentExit, WireExchange
from tracetui.record.wire_answer import trace_text
from tracetui.record.wire_lanes import events_of
from tracetui.trace.format import ANSWER_READY, CODE_RECORDING_ENDED, RECOVERED, TRACE_VERSION
from tracetui.trace.verdict import first_failure, status_of
from tracetui.trace.writer import encode_records, write_trace

PRODUCER = f"tracetui {__version__}"
SOURCE = "record"
DEFAULT_RUN_ID = "record-agent"  # for an empty run id: the trace format needs one


def run_records(run_id: str, exchanges: Sequence[WireExchange], agent_exit: AgentExit,
                command_hint: Sequence[str] | None, upstream: dict[str, str] | None,
                recorded: Sequence[WireExchange] | None = None) -> list[dict[str, Any]]:
    """The records of one recorded (or replayed, with ``recorded``) agent run: run line, events, summary."""
    exchanges = list(exchanges)
    run_id = trace_text(run_id) or DEFAULT_RUN_ID
    provider = next((ex.provider for ex in exchanges if isinstance(ex.provider, str) and ex.provider in ADAPTERS),
                    None)
    run = {"rec": "run", "run_id": run_id, "trace_version": TRACE_VERSION, "producer": PRODUCER,
           "inputs": {"source": SOURCE, "provider": provider,
                      "upstream": {trace_text(k): trace_text(v) for k, v in (upstream or {}).items()},
                      "command_hint": [trace_text(a) for a in command_hint or ()]}}
    events = events_of(exchanges, agent_exit, recorded, run_id)
    failure = first_failure(events)
    status = status_of(failure)
    attempts = [e for e in events if e["kind"] == "http.attempt"]
    summary: dict[str, Any] = {
        "rec": "summary", "run_id": run_id, "status": status, "ready": status == ANSWER_READY,
        "metrics": {"iterations": sum(1 for e in attempts if e["data"]["attempt"] == 1
                                      and trace_text(e["data"]["request"].get("provider")) in ADAPTERS),
                    "model_calls": sum(1 for e in events if e["kind"] == "generation.classify"),
                    "http_attempts": len(attempts),
                    "tool_calls": sum(1 for e in events if e["kind"] == "authorization.check"),
                    "input_units": 0, "events": len(events),
                    "recovered": sum(1 for e in events if e["outcome"] == RECOVERED)},
        "first_failure": failure}
    if any(e.get("code") == CODE_RECORDING_ENDED for e in attempts):
        summary["ended_by"] = "recording"
    elif agent_exit.interrupted:
        summary["ended_by"] = "interrupt"
    return [run, *events, summary]


def records_to_bytes(records: Sequence[dict[str, Any]]) -> bytes:
    """The run's JSONL lines, redacted (secrets never reach a trace)."""
    return encode_records(list(records))


def write_run(path: str | os.PathLike[str], records: Sequence[dict[str, Any]]) -> str:
    """Add a run to the trace at ``path``: appended to a file that exists, else a new file written atomically.
    Returns ``"appended"`` or ``"written"``."""
    data = records_to_bytes(records)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CLOEXEC)
    except FileNotFoundError:
        try:
            write_trace(path, records, exclusive=True)
            return "written"
        except FileExistsError:  # another recorder made it meanwhile: append to it
            fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CLOEXEC)
    try:
        # a pipe or a terminal (``-o /dev/stdout``) has no last line to look at: the run is just written
        if stat.S_ISREG(os.fstat(fd).st_mode) and not _ends_a_line(path):
            data = b"\n" + data  # a file whose last line has no end: our run must start a line of its own
        view = memoryview(data)
        while view:  # one write() almost always; a signal or a pipe may make it write less
            view = view[os.write(fd, view):]
    finally:
        os.close(fd)
    return "appended"


def _ends_a_line(path: str | os.PathLike[str]) -> bool:
    with open(path, "rb") as f:
        f.seek(0, os.SEEK_END)
        if f.tell() == 0:
            return True
        f.seek(-1, os.SEEK_END)
        return f.read(1) == b"\n"
