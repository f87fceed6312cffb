"""When to retry a model request, and how long to wait: each provider's own SDK rule, in logical time.

The loop asks the run's provider policy after every failed attempt. Each policy
mirrors the retry code of that provider's official Python SDK:

- ``openai`` (openai-responses, openai-chat) and ``anthropic`` (both Stainless
  SDKs, ``_base_client.py``): retry timeouts, connection errors, 408, 409, 429 and
  every 5xx, unless ``x-should-retry`` says otherwise; wait ``retry-after-ms``,
  else ``retry-after`` (seconds, or an HTTP date) when it is above 0, else back off
  ``min(0.5 s × 2ⁿ, 8 s)`` less up to 25 % jitter. The two differ on long waits:
  openai waits at most 120 s and does not retry at all when asked to wait longer;
  anthropic waits as long as it is told. Two retries by default.
- ``gemini`` (google-genai, ``_api_client.py``): no retries by default. With retry
  options (here: ``--max-retries``), 408, 429, 500, 502, 503, 504, timeouts and
  failed connects are retried after ``min(1 s × 2ⁿ + U(0, 1 s), 60 s)``;
  ``Retry-After`` and ``x-should-retry`` are not read.

Two deliberate differences, both for replay: nothing sleeps here (the loop adds
the wait to its logical clock; a live run's transport really waits), the jitter
comes from the run's seeded RNG (a live run draws its seed at random and records
it), and a ``Retry-After`` date is measured against the response's own ``Date``
header instead of this machine's clock, so a replay waits exactly as long.
"""
from __future__ import annotations

import calendar
import email.utils
import math
import random
from dataclasses import dataclass
from typing import Any

from tracetui.providers.base import CASSETTE_EXHAUSTED, INTERRUPTED, MALFORMED_EXCHANGE, RESPONSE_TOO_LARGE
from tracetui.trace.safe_text import redacted_prefix

CODE_BY_STATUS = {400: "request_rejected", 401: "auth_error", 403: "auth_error", 404: "not_found",
                  408: "timeout", 409: "conflict", 413: "request_too_large", 422: "request_rejected",
                  429: "rate_limited", 529: "overloaded"}
#: exchange errors that are the end of the attempt's story: never retried, whatever the policy
FINAL_ERRORS = frozenset({MALFORMED_EXCHANGE, CASSETTE_EXHAUSTED, INTERRUPTED, RESPONSE_TOO_LARGE})


def failure_code(status: int | None, error: str | None) -> str:
    if error:
        return {"connection": "connection_error", "connect": "connection_error"}.get(error, error)
    if status is None:
        return "connection_error"
    if status in CODE_BY_STATUS:
        return CODE_BY_STATUS[status]
    return "server_error" if status >= 500 else "http_error"


@dataclass(frozen=True, slots=True)
class Decision:
    """After a failed attempt: retry or not; if so, how long to wait first and where that number came from."""

    retry: bool
    wait_ms: int = 0
    source: str = ""
    why: str = "not retryable"  # when not retried, in words


class StainlessPolicy:
    """The retry rule the openai and anthropic SDKs share; they differ only in how long a wait they accept."""

    default_max_retries = 2
    initial_backoff_ms = 500
    max_backoff_ms = 8000

    def __init__(self, sdk: str, max_retry_after_s: float | None, longest_wait_s: float):
        self.sdk = sdk
        #: above this Retry-After the SDK gives up instead of waiting (None: it always waits)
        self.max_retry_after_s = max_retry_after_s
        #: the longest wait the SDK can sleep
        self.longest_wait_s = longest_wait_s

    def decide(self, attempt: int, status: Any, error: str | None, headers: Any, rng: random.Random) -> Decision:
        if error in FINAL_ERRORS or (status is not None and error):  # a stream that broke after its 200
            return NOT_RETRIED
        if not _is_status(status):
            if error in ("timeout", "connection", "connect"):
                return self._wait(attempt, None, rng)
            return NOT_RETRIED
        after, _ = self.retry_after_s(headers)
        if self.max_retry_after_s is not None and after is not None and math.isfinite(after) \
                and after > self.max_retry_after_s:
            return Decision(False, why=f"not retried: Retry-After asks for {after:g} s, and the {self.sdk} SDK "
                                       f"gives up beyond {self.max_retry_after_s:g} s")
        should = _header(headers, "x-should-retry")
        if should == "false":
            return Decision(False, why="not retried: the server said x-should-retry: false")
        if should == "true" or status in (408, 409, 429) or status >= 500:
            return self._wait(attempt, headers, rng)
        return _redirect(status, headers) or NOT_RETRIED

    def _wait(self, attempt: int, headers: Any, rng: random.Random) -> Decision:
        after, source = self.retry_after_s(headers)
        if after is not None and after > 0 and (self.max_retry_after_s is None or (
                math.isfinite(after) and after <= self.max_retry_after_s)):
            return Decision(True, int(min(after, self.longest_wait_s) * 1000), source)
        base = min(self.initial_backoff_ms * 2 ** min(attempt - 1, 1000), self.max_backoff_ms)
        return Decision(True, int(base * (1 - 0.25 * rng.random())), "exponential backoff")

    def retry_after_s(self, headers: Any) -> tuple[float | None, str]:
        """Seconds the server asks to wait, read as the SDKs read it, and the header that said so.

        ``retry-after-ms`` first, then ``retry-after`` as a number of seconds (any
        float ``float()`` accepts), then ``retry-after`` as an HTTP date. The first
        header that parses decides, whatever its value; (None, "") when none does.
        """
        for name, divisor in (("retry-after-ms", 1000), ("retry-after", 1)):
            text = _header(headers, name)
            if text is None:
                continue
            try:
                value = float(text)
            except ValueError:
                continue
            return self.overflow(text, value) / divisor, name
        retry_at, now = _http_date(_header(headers, "retry-after")), _http_date(_header(headers, "date"))
        if retry_at is None or now is None:
            return None, ""
        return float(retry_at - now), "retry-after date"

    def overflow(self, text: str, value: float) -> float:
        """A number too large for a float: openai treats it as too long a wait, anthropic as infinite."""
        return value


class OpenAIPolicy(StainlessPolicy):
    def __init__(self) -> None:
        super().__init__("openai", max_retry_after_s=120.0, longest_wait_s=120.0)

    def overflow(self, text: str, value: float) -> float:
        if value == math.inf and text.strip().lower() not in ("inf", "+inf", "infinity", "+infinity"):
            return (self.max_retry_after_s or 0) + 1  # as the SDK: an excessive delay, not an infinity literal
        return value


class GeminiPolicy:
    """google-genai: nothing retried unless retry options are given; then tenacity's exponential jitter."""

    default_max_retries = 0
    retryable_status = frozenset({408, 429, 500, 502, 503, 504})
    initial_ms = 1000
    max_ms = 60000
    jitter_ms = 1000

    def decide(self, attempt: int, status: Any, error: str | None, headers: Any, rng: random.Random) -> Decision:
        if error in FINAL_ERRORS or (status is not None and error):
            return NOT_RETRIED
        if not _is_status(status):
            if error in ("timeout", "connect"):
                return self._wait(attempt, rng)
            if error == "connection":
                return Decision(False, why="not retried: google-genai retries failed connects, not a connection "
                                           "dropped once made")
            return NOT_RETRIED
        if status in self.retryable_status:
            return self._wait(attempt, rng)
        return _redirect(status, headers) or Decision(
            False, why=f"not retried: google-genai retries only {', '.join(map(str, sorted(self.retryable_status)))}")

    def _wait(self, attempt: int, rng: random.Random) -> Decision:
        try:
            wait = self.initial_ms * 2.0 ** (attempt - 1) + self.jitter_ms * rng.random()
        except OverflowError:
            wait = self.max_ms
        return Decision(True, int(max(0, min(wait, self.max_ms))), "exponential backoff")


NOT_RETRIED = Decision(False)
OPENAI = OpenAIPolicy()
#: anthropic sleeps whatever Retry-After says, up to the longest sleep every platform accepts (2³² ms)
ANTHROPIC = StainlessPolicy("anthropic", max_retry_after_s=None, longest_wait_s=4_294_967.0)
GEMINI = GeminiPolicy()
POLICIES = {"openai-responses": OPENAI, "openai-chat": OPENAI, "anthropic": ANTHROPIC, "gemini": GEMINI}


def policy_for(provider: str | None) -> StainlessPolicy | GeminiPolicy:
    """The retry policy of a provider's SDK (the Responses one for a provider this build does not know)."""
    return POLICIES.get(provider or "openai-responses", OPENAI)


def _redirect(status: int, headers: Any) -> Decision | None:
    """A 3xx is never followed (the API key would go with the request) nor retried: say so, and where it points
    (an ``http://`` base URL answered with a redirect to ``https://``, say)."""
    if not 300 <= status < 400:
        return None
    where = _header(headers, "location")
    shown = "" if not where else f": the server points to {redacted_prefix(where, 200)}{'…' if len(where) > 200 else ''}"
    return Decision(False, why=f"not followed: a redirect is never followed, the key would go with it{shown}")


def _is_status(status: Any) -> bool:
    return isinstance(status, int) and not isinstance(status, bool)


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
