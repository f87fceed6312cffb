"""What a recording holds of one agent run: its HTTP exchanges, in arrival order, and how the agent ended.

The proxy and the replay server produce these; the lanes (``wire_lanes``) and the run records
(``recording``) read them. Plain data, so a recorded run can be rebuilt from a trace file.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class WireExchange:
    """One request the agent sent and the response it got (or the error), as the trace keeps them.

    ``request`` is the contract's REQUEST (method, url, provider, model, stream, body,
    body_sha256, retry_count; never headers); ``response`` is ``Exchange.to_record()``'s shape.
    ``request_match`` is set by a replay: how the request compares with the recorded one at its index
    (:func:`tracetui.record.request_match.match`).
    """

    index: int
    provider: str | None
    request: dict[str, Any]
    response: dict[str, Any]
    stream: bool
    request_match: dict[str, Any] | None = field(default=None, compare=False)


@dataclass
class AgentExit:
    """How the agent process ended: its exit status is the business's acceptance of the run."""

    status: int | None  # exit status; None when killed by a signal / not started
    signal: str | None  # "SIGKILL"
    interrupted: bool  # Ctrl-C
    started: bool  # False: command not found / not executable (reason in `reason`)
    reason: str | None
