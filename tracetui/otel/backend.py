"""Runs read from a tracing backend instead of a file, and the filters that choose which.

A source is written as a URL whose scheme names the backend: ``phoenix+http://HOST:PORT/PROJECT``
(``phoenix+https://`` too). Teams keep millions of runs there, so tracetui reads what is asked
for — the newest first, since a time, only the failing ones, at most N — instead of copying
the store. Each backend's reader gives spans in OTLP's shape, read into runs as a file's are.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

#: the schemes of the backends tracetui reads (Phoenix: tracetui.otel.phoenix_source)
SCHEMES = ("phoenix+http://", "phoenix+https://")
_AGO = re.compile(r"(\d+)\s*([smhdw])")
_UNITS = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days", "w": "weeks"}


@dataclass(frozen=True)
class Query:
    """Which runs of a backend to read: started at or after ``since``, of ``status`` (``error``: failed or
    incomplete by tracetui's verdict; ``ok``: answer-ready), at most ``limit`` of them, newest first."""
    since: datetime | None = None
    status: str | None = None
    limit: int | None = None


def is_backend_source(name: object) -> bool:
    """Whether a FILE argument names a backend (``phoenix+http://…``) rather than a file."""
    return isinstance(name, str) and name[:len(SCHEMES[1])].lower().startswith(SCHEMES)


def parse_since(value: str, now: datetime | None = None) -> datetime:
    """``--since``: an ISO 8601 time (UTC when it names no zone) or a span of time back from now (``90m``,
    ``2h``, ``7d``). Raises ValueError in words."""
    text = value.strip()
    ago = _AGO.fullmatch(text.lower())
    if ago:
        return (now or datetime.now(timezone.utc)) - timedelta(**{_UNITS[ago.group(2)]: int(ago.group(1))})
    try:
        when = datetime.fromisoformat(text.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        raise ValueError(f"{value!r} is neither an ISO 8601 time (2026-03-01T12:00:00Z) nor a time back from "
                         f"now (90m, 2h, 7d)") from None
    return when if when.tzinfo is not None else when.replace(tzinfo=timezone.utc)
