"""Final-answer verification: only facts backed by this run's tool receipts, about what was asked, pass.

An answer that happens to match the data but was not read in this run is
``unverified_answer``: being right by luck is not evidence. An answer backed by a
receipt about an order the request does not name is ``answer_off_topic``: true,
but not the answer to the question (asked about o-2, told about o-1).
"""
from __future__ import annotations

import re
from typing import Any

import orjson

from tracetui.trace.responsibility import NOT_ASKED

ORDER_ID = re.compile(r"\bo-\d+\b")
#: "refund 20", "Refund $20.00", "refund €1,000.50", "refund 20 dollars": a currency sign is optional and any
#: currency is taken at its number; thousands are grouped by commas (a comma before 1-2 digits is not read)
REFUND = re.compile(r"\brefund\s+(?:[$€£]\s?)?(\d{1,3}(?:,\d{3})+|\d+)(\.\d+)?(?![\d,.]*\d)", re.IGNORECASE)
#: how much of a request is searched for what it names (a request may be any size)
_READ = 10_000


def orders_named(request: str) -> list[str]:
    """The order ids a user's request names, first mention first."""
    return list(dict.fromkeys(ORDER_ID.findall(request[:_READ])))


def refund_named(request: str) -> float | None:
    """The amount a user's request asks to refund, if it names one."""
    match = REFUND.search(request[:_READ])
    return float(match.group(1).replace(",", "") + (match.group(2) or "")) if match else None


def not_asked_note(request: str, args: dict[str, Any]) -> str:
    """For a call a guard refused: what it asked for that the user's request did not name (the model made it
    up), said in the failure's words, so the verdict's reason alone tells a guard's denial from a model's error
    (:mod:`tracetui.trace.responsibility`); empty when it asked for what the request names.

    A refund the guard refused is what the user asked for only when the request names an amount
    (:func:`refund_named`) and the call asks for exactly it; "refund o-1 in full" names none, so the
    amount was the model's choice and the refusal is not a guard holding against the user."""
    named, order = orders_named(request), args.get("order_id")
    if order not in named:
        return f"; {order} is {NOT_ASKED} ({'it names ' + ', '.join(named) if named else 'it names no order'})"
    asked, amount = refund_named(request), args.get("amount")
    if "amount" not in args:
        return ""
    shown = f"{float(amount):.2f}" if isinstance(amount, (int, float)) else repr(amount)
    if asked is None:
        return f"; {shown} is {NOT_ASKED} (it names no amount)"
    if not isinstance(amount, (int, float)) or isinstance(amount, bool) or float(amount) != asked:
        return f"; {shown} is {NOT_ASKED} (it asks for {asked:.2f})"
    return ""


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


def verify_answer(task: dict[str, Any], text: str, receipts: list[dict[str, Any]],
                  asked: list[str] | tuple[str, ...] = (), failed: set[str] | frozenset[str] = frozenset(),
                  ) -> tuple[bool, str | None, str, dict[str, Any]]:
    """Return ``(ok, code, summary, data)``.

    ``asked`` are the orders the request names (none: an answer about any order will do);
    ``failed`` those a tool call failed for in this run, which the answer may leave out.
    """
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
    about = list(dict.fromkeys(c.get("order_id") for c in claims if isinstance(c.get("order_id"), str)))
    other = [o for o in about if o not in asked]
    left_out = [o for o in asked if o not in about and o not in failed]
    if asked and (other or left_out):
        data["asked"] = list(asked)
        told = f"is about {', '.join(other)}" if other else f"says nothing of {', '.join(left_out)}"
        return False, "answer_off_topic", (f"answer {told}, but the request asks about {', '.join(asked)}; "
                                           f"a receipt backs it, but it does not answer the question"), data
    return True, None, f"answer matches {len(claims)} tool receipt(s) from this run", data
