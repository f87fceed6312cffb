"""How a replayed request compares with the one recorded at its place: replay never approximates silently.

``exact``: the same bytes (sha256). ``changed``: the same endpoint and the same turn (as many
messages, input items or contents) with different content. ``different_turn``: another endpoint or
provider, or a conversation of another length. ``past_end``: the recording holds no request there.
The words name the first JSON Pointer at which the bodies differ.
"""
from __future__ import annotations

from typing import Any

from tracetui.record.wire_requests import conversation_length

EXACT, CHANGED, DIFFERENT_TURN, PAST_END = "exact", "changed", "different_turn", "past_end"
MAX_WALK = 10_000  # values compared before the pointer search gives up (two huge bodies: named at their root)


def match(recorded: dict[str, Any] | None, new: dict[str, Any], held: int | None = None) -> dict[str, Any]:
    """``{"match", "words"}`` (and ``"pointer"`` when the content differs) for a request the replay received.

    ``recorded`` is the recorded REQUEST at the same index, None past the end; ``held`` is how many
    requests the recording holds, for the words.
    """
    if recorded is None:
        holds = f" (it holds {held})" if held is not None else ""
        return {"match": PAST_END, "words": f"past the end of the recording{holds}"}
    old_sha, new_sha = recorded.get("body_sha256"), new.get("body_sha256")
    if old_sha is not None and old_sha == new_sha and _endpoint(recorded) == _endpoint(new):
        return {"match": EXACT, "words": "the same request"}
    if _endpoint(recorded) != _endpoint(new):
        return {"match": DIFFERENT_TURN,
                "words": f"another endpoint: {_shown_endpoint(new)} instead of {_shown_endpoint(recorded)}"}
    provider = new.get("provider")
    old_body, new_body = recorded.get("body"), new.get("body")
    old_len, new_len = conversation_length(provider, old_body), conversation_length(provider, new_body)
    if old_len != new_len and old_len is not None and new_len is not None:
        return {"match": DIFFERENT_TURN, "words": f"another turn: {new_len} messages instead of {old_len}"}
    if _omitted(old_body) or _omitted(new_body):
        return {"match": CHANGED, "words": "same turn, changed content (a body too large to keep: only its "
                                           "sha256 compares)", "pointer": ""}
    pointer = first_difference(old_body, new_body)
    if pointer is None:  # the same JSON, other bytes (key order, spacing)
        return {"match": CHANGED, "words": "same turn, the same JSON written differently", "pointer": ""}
    return {"match": CHANGED, "words": f"same turn, changed content at {pointer or '/'}", "pointer": pointer}


def first_difference(a: Any, b: Any) -> str | None:
    """The JSON Pointer (RFC 6901) of the first place two JSON values differ, in document order; None if equal."""
    budget = [MAX_WALK]
    return _walk(a, b, "", budget)


def _walk(a: Any, b: Any, at: str, budget: list[int]) -> str | None:
    budget[0] -= 1
    if budget[0] < 0:
        return at if a != b else None
    if isinstance(a, dict) and isinstance(b, dict):
        for key in list(a) + [k for k in b if k not in a]:
            if key not in a or key not in b:
                return f"{at}/{_escape(key)}"
            found = _walk(a[key], b[key], f"{at}/{_escape(key)}", budget)
            if found is not None:
                return found
        return None
    if isinstance(a, list) and isinstance(b, list):
        for n, (x, y) in enumerate(zip(a, b)):
            found = _walk(x, y, f"{at}/{n}", budget)
            if found is not None:
                return found
        return f"{at}/{min(len(a), len(b))}" if len(a) != len(b) else None
    if type(a) is not type(b) or a != b:  # 1 and 1.0, true and 1: another JSON text
        return at
    return None


def _escape(key: Any) -> str:
    return str(key).replace("~", "~0").replace("/", "~1")


def _endpoint(request: dict[str, Any]) -> tuple[Any, Any, Any]:
    url = request.get("url")
    path = url.split("?", 1)[0] if isinstance(url, str) else url
    return request.get("method"), path, request.get("provider")


def _shown_endpoint(request: dict[str, Any]) -> str:
    method, path, _ = _endpoint(request)
    return f"{method or 'POST'} {path}"


def _omitted(body: Any) -> bool:
    return isinstance(body, dict) and set(body) == {"omitted"}
