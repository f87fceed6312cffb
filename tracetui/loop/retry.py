"""When to retry a model request, and how long to wait, in logical time.

Mirrors what the official SDKs do: retry 408, 409, 429 and 5xx (and timeouts and
dropped connections), honour Retry-After / retry-after-ms within a cap, otherwise
back off exponentially with jitter. The jitter comes from the run's seeded RNG,
and nothing sleeps: the loop adds the wait to its logical clock.
"""
from __future__ import annotations

import random

RETRYABLE_STATUS = frozenset({408, 409, 429, 500, 502, 503, 504, 529})
INITIAL_BACKOFF_MS = 500
MAX_BACKOFF_MS = 8000
MAX_RETRY_AFTER_MS = 60000

CODE_BY_STATUS = {400: "request_rejected", 401: "auth_error", 403: "auth_error", 404: "not_found",
                  408: "timeout", 409: "conflict", 413: "request_too_large", 422: "request_rejected",
                  429: "rate_limited", 529: "overloaded"}


def failure_code(status: int | None, error: str | None) -> str:
    if error:
        return {"connection": "connection_error"}.get(error, error)
    if status is None:
        return "connection_error"
    if status in CODE_BY_STATUS:
        return CODE_BY_STATUS[status]
    return "server_error" if status >= 500 else "http_error"


def is_retryable(status: int | None, error: str | None, headers: dict[str, str]) -> bool:
    should = headers.get("x-should-retry")
    if should == "true":
        return True
    if should == "false":
        return False
    if status is None:
        return error in ("timeout", "connection")
    return status in RETRYABLE_STATUS or status >= 500


def backoff_ms(attempt: int, headers: dict[str, str], rng: random.Random) -> tuple[int, str]:
    """Milliseconds to wait before attempt ``attempt + 1`` and where that number came from."""
    ms_header = headers.get("retry-after-ms")
    if ms_header is not None:
        try:
            ms = float(ms_header)
            if 0 <= ms <= MAX_RETRY_AFTER_MS:
                return int(ms), "retry-after-ms"
        except ValueError:
            pass
    after = headers.get("retry-after")
    if after is not None:
        try:
            ms = float(after) * 1000
            if 0 <= ms <= MAX_RETRY_AFTER_MS:
                return int(ms), "retry-after"
        except ValueError:
            pass
    base = min(INITIAL_BACKOFF_MS * 2 ** (attempt - 1), MAX_BACKOFF_MS)
    return int(base * (1 - 0.25 * rng.random())), "exponential backoff"
