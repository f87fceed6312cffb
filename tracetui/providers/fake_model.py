"""A scripted model that reads the transcript it is sent and answers like a model would.

It is not a fixed cassette: it reacts to what the request holds (which orders the
user asked about, which tool results came back, whether a result was an error),
so an edited run or a damaged context gets a different, realistic answer. Each
scenario adds one quirk on top of a well-behaved order assistant.

It speaks no API: it reads the provider-neutral transcript the fake server
recovered from the request (``message``, ``tool_call``, ``tool_result`` and
``reasoning`` items) and answers with a neutral reply, ``{"status", "output",
…}``, whose items are ``text``, ``refusal``, ``call`` and ``reasoning``. Each
API's fake server (:mod:`tracetui.providers.fake_wire`) renders that reply in its
own wire shape.
"""
from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

import orjson

ORDER_RE = re.compile(r"\bo-\d+\b")
REFUND_RE = re.compile(r"[Rr]efund (\d+(?:\.\d+)?)")
TRUNCATE_BELOW = 64  # max_output_tokens under which the model's answer is cut off


@lru_cache(maxsize=256)
def _orders_in(text: str) -> tuple[str, ...]:
    """The order ids a text names, first mention first (pure, so memoised by the text)."""
    return tuple(dict.fromkeys(ORDER_RE.findall(text)))


@lru_cache(maxsize=256)
def _refund_in(text: str) -> float | None:
    """The amount a text asks to refund, if any (pure, so memoised by the text)."""
    m = REFUND_RE.search(text)
    return float(m.group(1)) if m else None


class View:
    """What the model can see in one request."""

    __slots__ = ("user_text", "calls", "results", "last_batch", "max_output_tokens", "id_base", "orders",
                 "refund_amount")

    def __init__(self, user_text: str | None, calls: list[dict[str, Any]], results: list[dict[str, Any]],
                 last_batch: list[dict[str, Any]], max_output_tokens: int = 500, id_base: int = 0):
        self.user_text = user_text
        self.calls = calls
        self.results = results  # {"call_id", "output", "error"}
        self.last_batch = last_batch  # the results after the newest calls
        self.max_output_tokens = max_output_tokens
        self.id_base = id_base  # call ids the provider has issued so far: unique per run, like a real API's
        self.orders = _orders_in(user_text or "")
        self.refund_amount = _refund_in(user_text or "")

    @classmethod
    def from_request(cls, items: list[dict[str, Any]], max_output_tokens: int = 500, id_base: int = 0) -> "View":
        """What the model sees in a neutral transcript (the fake server's reading of one request)."""
        user_text = None
        calls: list[dict[str, Any]] = []
        results: list[dict[str, Any]] = []
        batch: list[dict[str, Any]] = []
        previous = None
        for item in items:
            kind = item.get("type")
            if kind == "message" and item.get("role") == "user":
                user_text = item.get("content")
            elif kind == "tool_call":
                if previous != "tool_call":
                    batch = []
                calls.append(item)
            elif kind == "tool_result":
                try:
                    output = orjson.loads(item.get("output") or "null")
                except (orjson.JSONDecodeError, TypeError):
                    output = item.get("output")
                result = {"call_id": item.get("call_id"), "output": output,
                          "error": isinstance(output, dict) and output.get("ok") is False}
                results.append(result)
                batch.append(result)
            previous = kind
        if not isinstance(user_text, str):
            user_text = None if user_text is None else str(user_text)
        return cls(user_text, calls, results, batch, max_output_tokens, id_base)

    def next_call_id(self, offset: int = 0) -> str:
        return f"call-{self.id_base + offset + 1}"


# -- reply builders ------------------------------------------------------------------------------
def fn_call(name: str, args: Any, call_id: str) -> dict[str, Any]:
    raw = args if isinstance(args, str) else orjson.dumps(args).decode()
    return {"type": "call", "call_id": call_id, "name": name, "arguments": raw, "status": "completed"}


def message(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text, "status": "completed"}


def response(output: list[dict[str, Any]], status: str = "completed", **extra: Any) -> dict[str, Any]:
    return {"status": status, "output": output, **extra}


def answer(results: list[dict[str, Any]]) -> dict[str, Any]:
    facts = [r["output"] for r in results if not r["error"]]
    if not facts:
        errors = ", ".join(str(r["output"].get("error_type")) for r in results if isinstance(r["output"], dict))
        return response([message(f"I could not get that information: {errors}. Please try again later.")])
    text = orjson.dumps(facts[0] if len(facts) == 1 else facts).decode()
    return response([message(text)])


def cut(reply: dict[str, Any]) -> dict[str, Any]:
    """What the model produces when max_output_tokens runs out mid-answer."""
    output = []
    for item in reply["output"]:
        if item["type"] == "call":
            output.append({**item, "arguments": item["arguments"][: len(item["arguments"]) // 2],
                           "status": "incomplete"})
        elif item["type"] == "text":
            output.append({**message(item["text"][: max(1, len(item["text"]) // 3)]), "status": "incomplete"})
        else:
            output.append(item)
    return response(output, status="incomplete", incomplete_details={"reason": "max_output_tokens"})


# -- the well-behaved assistant -----------------------------------------------------------------
def first_calls(view: View) -> dict[str, Any]:
    amount = view.refund_amount
    if amount is not None and view.orders:
        args = {"order_id": view.orders[0], "amount": amount, "reason": "customer request"}
        return response([fn_call("refund_order", args, view.next_call_id())])
    return response([fn_call("read_order", {"order_id": o}, view.next_call_id(n)) for n, o in enumerate(view.orders)])


def repair(view: View, batch: list[dict[str, Any]]) -> dict[str, Any] | None:
    """Re-issue calls whose arguments were rejected as repairable, with the arguments fixed."""
    if not any(r["error"] and r["output"].get("retryable") for r in batch):
        return None
    return first_calls(view)


def assistant(view: View) -> dict[str, Any]:
    if view.user_text is None:
        return response([message("Done: everything looks fine.")])  # the goal was lost from the window
    if not view.results:
        if not view.orders:
            return response([message("I can look up the status of your orders or refund one. Which order?")])
        return first_calls(view)
    batch = view.last_batch
    return repair(view, batch) or answer(batch)


# -- scenario quirks ----------------------------------------------------------------------------
def _invalid_args(view: View) -> dict[str, Any]:
    if not view.results:
        return response([fn_call("read_order", {"orderId": view.orders[0]}, view.next_call_id())])
    return assistant(view)


def _invalid_json(view: View) -> dict[str, Any]:
    if not view.results:
        raw = orjson.dumps({"order_id": view.orders[0], "amount": view.refund_amount, "reason": "damaged"}).decode()[:-1]
        return response([fn_call("refund_order", raw, view.next_call_id())])
    return assistant(view)


def _repair_exhausted(view: View) -> dict[str, Any]:
    if view.results and not view.last_batch[-1]["error"]:
        return assistant(view)
    args = {"order_id": view.orders[0], "amount": f"{view.refund_amount:.2f}", "reason": "damaged"}
    return response([fn_call("refund_order", args, view.next_call_id())])


def _repeat(view: View) -> dict[str, Any]:
    if view.user_text is not None and view.orders:
        return response([fn_call("read_order", {"order_id": view.orders[0]}, view.next_call_id())])
    return assistant(view)


def _refusal(view: View) -> dict[str, Any]:
    return response([{"type": "refusal", "text": "I can't help with that request."}])


def _duplicate_ids(view: View) -> dict[str, Any]:
    if view.results:
        return assistant(view)
    return response([fn_call("read_order", {"order_id": o}, "call-1") for o in view.orders])


def _reused_call_id(view: View) -> dict[str, Any]:
    done = {r["output"].get("order_id") for r in view.results if isinstance(r["output"], dict)}
    todo = [o for o in view.orders if o not in done]
    if todo:
        return response([fn_call("read_order", {"order_id": todo[0]}, "call-1")])
    return answer(view.results)


def _sequential(view: View) -> dict[str, Any]:
    done = {r["output"].get("order_id") for r in view.results if isinstance(r["output"], dict)}
    todo = [o for o in view.orders if o not in done]
    if todo:
        return response([fn_call("read_order", {"order_id": todo[0]}, view.next_call_id())])
    return answer(view.results)


def _unknown_tool(view: View) -> dict[str, Any]:
    if not view.results:
        return response([fn_call("cancel_order", {"order_id": view.orders[0]}, view.next_call_id())])
    return assistant(view)


def _no_receipt(view: View) -> dict[str, Any]:
    return response([message('{"order_id": "o-1", "status": "delivered", "source": "read_order"}')])


def _failed(view: View) -> dict[str, Any]:
    return response([], status="failed", error={"code": "server_error", "message": "The model failed to generate a response."})


def _cancelled(view: View) -> dict[str, Any]:
    return response([], status="cancelled")


def _reasoning(view: View) -> dict[str, Any]:
    reply = assistant(view)
    reply["output"].insert(0, {"type": "reasoning", "id": f"rs_{len(view.calls) + 1}",
                               "summary": "The user wants an order status; read it first."})
    return reply


QUIRKS = {
    "invalid_args": _invalid_args,
    "invalid_json": _invalid_json,
    "repair_exhausted": _repair_exhausted,
    "repeat": _repeat,
    "refusal": _refusal,
    "duplicate_ids": _duplicate_ids,
    "reused_call_id": _reused_call_id,
    "turn_budget": _sequential,
    "unknown_tool": _unknown_tool,
    "no_receipt": _no_receipt,
    "response_failed": _failed,
    "response_cancelled": _cancelled,
    "reasoning_items": _reasoning,
}


REFUND_QUIRKS = {"invalid_json", "repair_exhausted"}


def model_respond(scenario: str, view: View, unexpressed: frozenset[str] | set[str] = frozenset()) -> dict[str, Any]:
    """The model's neutral reply to what ``view`` shows; a quirk the API cannot express is left out."""
    quirk = QUIRKS.get(scenario)
    if quirk is None or scenario in unexpressed or view.user_text is None or not view.orders:
        quirk = assistant  # a quirk needs the user's request; without it the model just answers
    elif scenario in REFUND_QUIRKS and view.refund_amount is None:
        quirk = assistant
    out = quirk(view)
    if view.max_output_tokens < TRUNCATE_BELOW and out.get("status") == "completed":
        out = cut(out)
    return out
