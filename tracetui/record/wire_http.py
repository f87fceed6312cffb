"""The HTTP lane of a recorded agent: each exchange an attempt, the SDK's own retries as repeated requests.

An SDK that retries sends the same body again (the openai and anthropic SDKs also say so in
``x-stainless-retry-count``). So an exchange is attempt k+1 of a request when the agent's previous
request with the same body (sha256) and provider failed retryably (408, 409, 429, 5xx, a timeout or
a dropped connection) and was not already retried, or when its retry count says it is a retry.
A failure a later attempt overcame is ``recovered``; the codes and words are the loop's.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tracetui.loop.retry import failure_code, policy_for
from tracetui.providers.base import CASSETTE_EXHAUSTED, INTERRUPTED, RESPONSE_TOO_LARGE
from tracetui.record.exchange import WireExchange
from tracetui.record.wire_tools import brief

RETRYABLE_ERRORS = frozenset({"timeout", "connection", "connect"})


@dataclass
class Attempt:
    """Where one exchange stands among the attempts of its request."""

    number: int  # 1 for a new request, k+1 for the k-th retry
    retry_of: int | None = None  # the exchange it repeats
    retried_by: int | None = None  # the exchange that repeats it


def answered(response: dict[str, Any]) -> bool:
    """Whether the exchange got a whole 2xx response (its body still has to be the API's)."""
    status = response.get("status")
    return isinstance(status, int) and not isinstance(status, bool) and 200 <= status < 300 \
        and not response.get("error")


def retryable(response: dict[str, Any]) -> bool:
    """A failure the SDKs retry: 408, 409, 429, any 5xx, a timeout or a connection that failed."""
    status, error = response.get("status"), response.get("error")
    if error:
        return status is None and error in RETRYABLE_ERRORS
    return isinstance(status, int) and not isinstance(status, bool) and (status in (408, 409, 429) or status >= 500)


def attempts(exchanges: list[WireExchange]) -> list[Attempt]:
    """Each exchange's attempt number and the exchanges it repeats and is repeated by, in arrival order."""
    out: list[Attempt] = []
    waiting: dict[tuple[Any, Any], int] = {}  # (provider, body sha256) -> a failed exchange not yet retried
    for i, ex in enumerate(exchanges):
        key = (ex.provider, ex.request.get("body_sha256"))
        retry_count = ex.request.get("retry_count")
        counted = isinstance(retry_count, int) and not isinstance(retry_count, bool)
        before = waiting.pop(key, None)
        if before is None and counted and retry_count > 0:  # a retry whose body changed (a new idempotency key…)
            before = next((j for k, j in reversed(list(waiting.items())) if k[0] == ex.provider), None)
            if before is not None:
                waiting = {k: j for k, j in waiting.items() if j != before}
        if counted and retry_count == 0:
            before = None  # the SDK says this is a first attempt: the agent sent the same request again
        if before is not None:
            out.append(Attempt(out[before].number + 1, retry_of=before))
            out[before].retried_by = i
        else:
            out.append(Attempt(1))
        if retryable(ex.response) and ex.request.get("body_sha256") is not None:
            waiting[key] = i
    return out


def http_words(ex: WireExchange, attempt: Attempt, played: int) -> tuple[str | None, str]:
    """The failure code of a failed attempt (None when it was answered) and its summary, as the loop words it."""
    response = ex.response
    label = attempt_label(ex, attempt)
    status, error = response.get("status"), response.get("error")
    if answered(response):
        return None, f"{label}: {status} in {_latency(response)} ms"
    code = failure_code(status, error)
    what = f"HTTP {status}" if status is not None else (error or "no response")
    if attempt.retried_by is not None:
        why = f"retried by the agent's SDK (exchange {attempt.retried_by})"
    elif status is not None and not error and 300 <= status < 400:
        why = policy_for(ex.provider).decide(1, status, None, response.get("headers"), _NO_JITTER).why
    elif retryable(response):
        why = (f"retries exhausted after {attempt.number} attempts" if attempt.number > 1
               else "not retried by the agent's SDK")
    else:
        why = "not retryable"
    if status is not None and error == "stream_interrupted":
        why = "the stream broke before it completed"
    elif error == INTERRUPTED:
        what, why = "interrupted (Ctrl-C)", "the run was stopped here; what was recorded is kept"
    elif error == RESPONSE_TOO_LARGE:
        why = "reading stopped at the cap on what a run records"
    elif error == CASSETTE_EXHAUSTED:
        what, why = f"no response left in the recording ({played} played)", "the agent got an error response"
    message = api_error_message(response.get("body"))
    if message:
        what += f" ({message})"
    return code, f"{label}: {what}; {why}"


def attempt_label(ex: WireExchange, attempt: Attempt) -> str:
    """``POST /v1/messages attempt 2``: the request line and the attempt, as the loop labels its attempts."""
    return f"{ex.request.get('method') or 'POST'} {ex.request.get('url') or '?'} attempt {attempt.number}"


def api_error_message(body: Any) -> str | None:
    """The error message the API put in its body (``error.message``, every vendor here), brief."""
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        message = body["error"].get("message")
        if isinstance(message, str) and message.strip():
            return brief(message, 160)  # redacted before it is cut: an upstream may echo a key back
    return None


def latency_of(response: dict[str, Any]) -> int:
    return _latency(response)


def _latency(response: dict[str, Any]) -> int:
    value = response.get("latency_ms")
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


class _NoJitter:
    """A redirect's decision never draws a wait: this stands in for the loop's seeded RNG."""

    def random(self) -> float:
        return 0.0


_NO_JITTER: Any = _NoJitter()
