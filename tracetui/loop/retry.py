"""When to retry a model request, and how long to wait, in logical time.

Mirrors what the official SDKs do: retry 408, 409, 429 and 5xx (and timeouts and
dropped connections), honour Retry-After (seconds or an HTTP date) / retry-after-ms
within a cap, otherwise back off exponentially with jitter. The jitter comes from the run's seeded RNG,
and nothing sleeps: the loop adds the wait to its logical clock.
"""
from __future__ import annotations

import calendar
import email.utils
import math
import random
from typing import Any

from tracetui.providers.base import MALFORMED_EXCHANGE

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
    if error == MALFORMED_EXCHANGE:  # a record that is not an exchange is reported, never retried
        return False
    should = _header(headers, "x-should-retry")
    if should == "true":
        return True
    if should == "false":
        return False
    if status is None or isinstance(status, bool) or not isinstance(status, int):
        return error in ("timeout", "connection")
    return status in RETRYABLE_STATUS or status >= 500


def backoff_ms(attempt: int, headers: dict[str, str], rng: random.Random) -> tuple[int, str]:
    """Milliseconds to wait before attempt ``attempt + 1`` and where that number came from.

    ``retry-after-ms``, then ``Retry-After`` in seconds or as an HTTP date (measured
    against the response's own ``Date`` header, so a replay waits exactly as long;
    without one there is nothing deterministic to measure against), each used only
    within 0..MAX_RETRY_AFTER_MS; otherwise exponential backoff with seeded jitter.
    """
    ms = _number(_header(headers, "retry-after-ms"))
    if ms is not None and 0 <= ms <= MAX_RETRY_AFTER_MS:
        return int(ms), "retry-after-ms"
    after = _header(headers, "retry-after")
    seconds = _number(after)
    if seconds is not None:
        if 0 <= seconds * 1000 <= MAX_RETRY_AFTER_MS:
            return int(seconds * 1000), "retry-after"
    elif after is not None:
        retry_at, now = _http_date(after), _http_date(_header(headers, "date"))
        if retry_at is not None and now is not None and 0 <= (retry_at - now) * 1000 <= MAX_RETRY_AFTER_MS:
            return (retry_at - now) * 1000, "retry-after date"
    base = min(INITIAL_BACKOFF_MS * 2 ** (attempt - 1), MAX_BACKOFF_MS)
    return int(base * (1 - 0.25 * rng.random())), "exponential backoff"


def _header(headers: Any, name: str) -> str | None:
    """A header's value as text, whatever a recorded exchange put there; None when absent or not a scalar."""
    if not isinstance(headers, dict):
        return None
    value = headers.get(name)
    if value is None:
        value = next((v for k, v in headers.items() if isinstance(k, str) and k.lower() == name), None)
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return str(value)
    return None


def _number(text: str | None) -> float | None:
    """A finite decimal number, or None (no header, or not a number: maybe a date)."""
    if text is None or len(text) > 64:
        return None
    try:
        value = float(text)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def _http_date(text: str | None) -> int | None:
    """Seconds since the epoch of an HTTP date (RFC 7231: IMF-fixdate, RFC 850 or asctime), read as UTC."""
    if text is None or len(text) > 64:
        return None
    try:
        parsed = email.utils.parsedate_tz(text)
        if parsed is None:
            return None
        return calendar.timegm((*parsed[:6], 0, 0, 0)) - (parsed[9] or 0)
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
