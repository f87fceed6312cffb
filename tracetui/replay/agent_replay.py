"""Re-running a recorded agent (a ``source: record`` run): the user's own command against its recording.

A recorded agent's inputs are its own code and tools, which no trace holds; what the trace holds is what
went over the wire. So a re-run serves the run's recorded responses, in order, with the edits applied as
``/responses/N/…`` edits apply to a built-in run (one past the last exchange supplies a new one), to the
user's command, and judges what that command does with them the same way the recording was judged.

The command only ever comes from the caller (the user's command line): a trace is untrusted, and running
a command found in one would be running code from a file someone sent you. The recorded argv is a hint
for the error message, never run.
"""
from __future__ import annotations

import copy
import subprocess
from typing import Any, Sequence

from tracetui.providers.base import exchange_problem
from tracetui.replay.edit import exchanges_of
from tracetui.replay.pointer import EditError, assign, format_pointer, list_index, parse_pointer
from tracetui.trace.reader import RunData

SOURCE = "record"
INPUTS_REFUSED = ("a recorded agent's inputs are its own code and its tools: edit what the model answered, "
                  "/responses/N/…")


def is_recorded(run: RunData) -> bool:
    """Whether ``run`` is a recording of the user's own agent (``tracetui record``)."""
    inputs = run.inputs if isinstance(run.inputs, dict) else {}
    return inputs.get("source") == SOURCE or (run.run or {}).get("source") == SOURCE


def needs_command(run: RunData, verb: str = "replay", trace_file: str = "FILE") -> str:
    """Why a recorded run cannot be re-run without a command, with the command line that would (``verb``:
    the subcommand the user typed), and the recorded argv as a hint to read."""
    how = "replay re-runs" if verb == "replay" else f"{verb} proves fixes by re-running"
    return (f"run {run.run_id} is a recording of your own agent, and {how} your own command: give it after --, "
            f"e.g. tracetui {verb} {trace_file} --run {run.run_id} -- python agent.py" + recorded_as(run))


class RerunInterrupted(KeyboardInterrupt):
    """A re-run the user stopped (Ctrl-C, SIGTERM): its run is no result to compare or to judge an edit by,
    so it ends whoever asked for it as Ctrl-C does."""


def command_problem(command: Sequence[str], path: str | None = None) -> str | None:
    """Why ``command`` cannot start (not on PATH, no such file, not executable), in the words a re-run that
    failed to start would say; None when it looks startable. Checked before proving fixes, so a mistyped
    command is said as such rather than as "no edit fixes this run"."""
    import os
    import shutil

    name = command[0] if command else ""
    if not name:
        return "no command given: put it after --"
    if os.sep in name:
        if not os.path.exists(name):
            return f"{name}: no such file"
        if os.path.isdir(name) or not os.access(name, os.X_OK):
            return f"{name}: permission denied (is it executable?)"
        return None
    if shutil.which(name, path=os.environ.get("PATH", os.defpath) if path is None else path) is None:
        return f"{name}: command not found (not on PATH)"
    return None


def edit_problem(path: str, count: int) -> str | None:
    """Why ``path`` cannot be edited on a recorded run of ``count`` exchanges (only what the model answered
    can, one past the last exchange supplying a whole new one), or None."""
    parts = parse_pointer(path)
    if parts and parts[0] == "inputs":
        return INPUTS_REFUSED
    if not parts or parts[0] != "responses":
        return f"{path} is no field of a recorded run: " + INPUTS_REFUSED
    k = list_index(parts[1]) if len(parts) >= 2 else None
    if k is None or k > count or (k == count and len(parts) > 2):
        return (f"/responses/…: the run has {count} exchange(s), numbered from 0 "
                f"(/responses/{count} supplies a whole next exchange)")
    return None


def recorded_as(run: RunData) -> str:
    """The argv the run says it was recorded with, as words to read (`` (recorded as: …)``), or nothing.

    Shown, never run: it comes from the trace. Printing redacts and escapes it like any trace text."""
    import shlex

    hint = _hint(run)
    return f" (recorded as: {shlex.join(hint)})" if hint else ""


def _data(event: dict[str, Any]) -> dict[str, Any]:
    data = event.get("data")
    return data if isinstance(data, dict) else {}


def recorded_requests(run: RunData) -> list[dict[str, Any]]:
    """The request of each exchange, numbered as :func:`~tracetui.replay.edit.exchanges_of` numbers them."""
    return [_data(e).get("request") if isinstance(_data(e).get("request"), dict) else {}
            for e in run.events if e.get("lane") == "http" and "response" in _data(e)]


def served_responses(run: RunData, edits: Sequence[tuple[str, Any]]) -> list[dict[str, Any]]:
    """The responses a re-run serves: the recorded ones with ``edits`` applied in order (each edit sees the
    ones before it, so two edits of one exchange add up). Raises :class:`EditError` in words."""
    responses = copy.deepcopy(exchanges_of(run))
    touched: set[int] = set()
    for path, value in edits:
        count = len(responses)
        problem = edit_problem(path, count)
        if problem:
            raise EditError(problem)
        parts = parse_pointer(path)
        k = list_index(parts[1])
        if len(parts) == 2:
            if not isinstance(value, dict):
                raise EditError("an exchange is an object with status, headers and body")
            exchange = copy.deepcopy(value)
        else:
            exchange = responses[k]
            assign({"x": exchange}, format_pointer(["x", *parts[2:]]), value)
        if k == count:
            responses.append(exchange)
        else:
            responses[k] = exchange
        touched.add(k)
    for k in sorted(touched):
        problem = exchange_problem(responses[k])
        if problem:
            raise EditError(f"cannot re-run: /responses/{k}: {problem}")
    return responses


def _wire_exchanges(run: RunData) -> list[Any]:
    from tracetui.record.exchange import WireExchange

    out = []
    for i, (request, response) in enumerate(zip(recorded_requests(run), exchanges_of(run))):
        request = dict(request)  # from the trace (untrusted): fields the comparison keys on are text or nothing
        for key in ("provider", "body_sha256", "method", "url", "model"):
            if key in request and not isinstance(request[key], str):
                request[key] = None
        out.append(WireExchange(i, request.get("provider"), request, response if isinstance(response, dict) else {},
                                request.get("stream") is True))
    return out


def _hint(run: RunData) -> list[str]:
    hint = (run.inputs or {}).get("command_hint")
    return [a for a in hint if isinstance(a, str)] if isinstance(hint, list) else []


def _upstream(run: RunData) -> dict[str, str]:
    roots = (run.inputs or {}).get("upstream")
    return {k: v for k, v in roots.items() if isinstance(k, str) and isinstance(v, str)} \
        if isinstance(roots, dict) else {}


def rerun_records(run: RunData, edits: Sequence[tuple[str, Any]], command: Sequence[str], *,
                  output: Any = subprocess.DEVNULL) -> list[dict[str, Any]]:
    """The records of ``command`` re-run against ``run``'s recording with ``edits``.

    ``output`` is where the agent's own stdout and stderr go (a file descriptor or file; by default
    nowhere, so that it never mixes with what tracetui prints); its stdin is closed.
    """
    from tracetui.record.session import replay_command

    if not command:
        raise EditError(needs_command(run))
    responses = served_responses(run, edits)
    from tracetui.record.endpoint import EndpointError

    run_id = (run.run or {}).get("run_id", run.run_id)  # as written (a listed name may carry "#2")
    try:
        return replay_command(_wire_exchanges(run), responses, list(command), str(run_id), command_hint=_hint(run),
                              upstream=_upstream(run) or None, stdin=subprocess.DEVNULL, stdout=output, stderr=output)
    except EndpointError as exc:
        raise EditError(f"cannot re-run: the replay server cannot start: {exc.strerror or exc}") from exc
    except Exception as exc:  # noqa: BLE001 - a recording from an untrusted file must not crash the caller
        raise EditError(f"cannot re-run: the recording cannot be played back or judged "
                        f"({type(exc).__name__}); is the trace damaged?") from exc


def interrupted(records: list[dict[str, Any]]) -> bool:
    """Whether the re-run was stopped by the user (its answer event says ``interrupted``)."""
    return any(r.get("rec") == "event" and r.get("kind") == "answer.verify" and r.get("code") == "interrupted"
               for r in records)


def not_started(records: list[dict[str, Any]]) -> str | None:
    """Why the command did not run at all (it could not be started), from the re-run's answer event."""
    for record in reversed(records):
        if record.get("rec") == "event" and record.get("kind") == "answer.verify":
            if record.get("code") == "agent_not_started":
                return str(record.get("summary") or "the command did not start")
            return None
    return None
