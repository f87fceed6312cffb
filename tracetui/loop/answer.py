"""Final-answer verification: only facts backed by this run's tool receipts pass.

An answer that happens to match the data but was not read in this run is
``unverified_answer``: being right by luck is not evidence.
"""
from __future__ import annotations

from typing import Any

import orjson


def extract_claims(text: str) -> list[dict[str, Any]]:
    try:
        value = orjson.loads(text)
    except orjson.JSONDecodeError:
        return []
    if isinstance(value, dict) and isinstance(value.get("orders"), list):
        value = value["orders"]
    if isinstance(value, dict):
        return [value]
    if isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
        return value
    return []


def verify_answer(task: dict[str, Any], text: str, receipts: list[dict[str, Any]]) -> tuple[bool, str | None, str, dict[str, Any]]:
    """Return ``(ok, code, summary, data)``."""
    data: dict[str, Any] = {"text": text, "receipts": len(receipts)}
    if task.get("kind") == "chat":
        if text.strip():
            return True, None, "plain answer; the task asks for no facts to verify", data
        return False, "empty_answer", "the model returned no text", data
    claims = extract_claims(text)
    data["claims"] = claims
    if not claims:
        return False, "unverified_answer", "answer states no fact that a tool receipt in this run backs", data
    unbacked = [c for c in claims if c not in receipts]
    data["unbacked"] = unbacked
    if unbacked:
        c = unbacked[0]
        what = " ".join(str(c.get(k)) for k in ("order_id", "status") if k in c) or orjson.dumps(c).decode()
        return False, "unverified_answer", f"answer claims {what} but no tool receipt in this run says so", data
    return True, None, f"answer matches {len(claims)} tool receipt(s) from this run", data
