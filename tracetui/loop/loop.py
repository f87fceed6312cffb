"""The agent loop: request, classify, validate, authorize, execute, verify.

Every step records one event on the boundary it belongs to, so a trace answers
"where did this run go wrong?" without reading code. Time is logical: waits are
added to a clock, never slept, which keeps runs fast and byte-for-byte repeatable.
"""
from __future__ import annotations

import random
from typing import Any
from urllib.parse import urlsplit

import orjson

from tracetui import __version__
from tracetui.loop.ablations import ABLATIONS
from tracetui.loop.answer import not_asked_note, orders_named, verify_answer
from tracetui.loop.recorder import Recorder
from tracetui.loop.retry import failure_code, policy_for
from tracetui.loop.tools import ToolFailure, ToolState
from tracetui.loop.validation import REPAIRABLE, SCHEMA_UNCHECKED, UNKNOWN_TOOL, validate_arguments
from tracetui.providers import base
from tracetui.providers.base import INTERRUPTED, RESPONSE_TOO_LARGE, Adapter, Exchange, HttpRequest, ModelTurn, Transport
from tracetui.trace.format import ANSWER_READY, FAILED, OK, RECOVERED, TRACE_VERSION
from tracetui.trace.responsibility import ABLATED
from tracetui.trace.safe_text import redacted_prefix
from tracetui.trace.verdict import RECORDING_ENDED, first_failure, status_of

GENERATION_FAILURES = {
    base.REFUSED: "refused",
    base.INCOMPLETE: "incomplete",
    base.FAILED: "response_failed",
    base.CANCELLED: "response_cancelled",
    base.UNSUPPORTED: "unsupported_response",
    base.EMPTY: "empty_response",
    base.INVALID_TOOL_CALL: "invalid_tool_call",
    base.PROTOCOL_ERROR: "protocol_error",
}
PRODUCER = f"tracetui {__version__}"


class _Finished(Exception):
    """Raised to end the run from deep inside a turn."""


class RunResult:
    __slots__ = ("run", "events", "summary")

    def __init__(self, run: dict[str, Any], events: list[dict[str, Any]], summary: dict[str, Any]):
        self.run, self.events, self.summary = run, events, summary

    @property
    def status(self) -> str:
        return self.summary["status"]

    @property
    def records(self) -> list[dict[str, Any]]:
        return [self.run, *self.events, self.summary]


class AgentLoop:
    """One run. Construct, call :meth:`run` once."""

    def __init__(self, run_id: str, inputs: dict[str, Any], transport: Transport, adapter: Adapter,
                 base_url: str = "fake://provider"):
        self.run_id = run_id
        self.inputs = inputs
        self.transport = transport
        self.adapter = adapter
        self.base_url = base_url
        self.rec = Recorder(run_id)
        self.budgets = inputs["budgets"]
        self.stream = bool(inputs.get("stream"))
        self.tools = {t["name"]: t for t in inputs["tools"]}
        self.state = ToolState.from_inputs(inputs.get("tool_data") or {})
        self._rng: random.Random | None = None
        self.retry = policy_for(inputs.get("provider"))
        self.ablate = ABLATIONS[inputs.get("ablation") or "complete"][0]
        self.transcript: list[dict[str, Any]] = [
            {"type": "message", "role": "developer", "content": inputs["instructions"]},
            {"type": "message", "role": "user", "content": inputs["user_input"]},
        ]
        self.clock = 0
        self.exchange_index = 0
        self.model_calls = 0
        self.http_attempts = 0
        self.tool_calls = 0
        self.input_units = 0
        self.iterations = 0
        self.repairs = 0
        self.seen_call_ids: set[str] = set()
        self.executed: set[tuple[str, str]] = set()
        self.receipts: list[dict[str, Any]] = []
        self.failed_orders: set[str] = set()  # orders a tool call failed for: an answer may leave them out
        self.repair_pending: dict[str, list[dict[str, Any]]] = {}
        self.request_id: str | None = None
        self.ablated_turns: set[int] = set()  # turns whose request the context ablation changed

    @property
    def rng(self) -> random.Random:
        """Seeded jitter source, made only when a retry needs it."""
        if self._rng is None:
            self._rng = random.Random(self.inputs.get("seed", 0))
        return self._rng

    # -- the loop ---------------------------------------------------------------------------
    def run(self) -> RunResult:
        try:
            for turn in range(1, self.budgets["max_turns"] + 1):
                self.iterations = turn
                self._turn(turn)
            self.rec.add("generation", "generation.budget", FAILED, self.iterations, self.clock,
                         f"turn budget exhausted: {self.budgets['max_turns']} model calls without a final answer",
                         code="budget_exhausted", data={"budget": "max_turns", "limit": self.budgets["max_turns"]})
        except _Finished:
            pass
        return self._result()

    def _turn(self, turn: int) -> None:
        sent = self.ablate(self.transcript)
        if sent != self.transcript:
            self.ablated_turns.add(turn)
        body = self.adapter.build_request(self.inputs["model"], sent, self.inputs["tools"],
                                          self.budgets["max_output_tokens"], self.stream)
        conversation = _conversation(body)
        units = (len(orjson.dumps(conversation)) + 3) // 4
        self.input_units += units
        model_turn = self._http(turn, body, len(conversation), units)
        self.model_calls += 1
        self._generation(turn, model_turn)
        if model_turn.kind == base.TEXT:
            self._answer(turn, model_turn.text)
        self._tool_calls(turn, model_turn)

    # -- HTTP ---------------------------------------------------------------------------------
    def _http(self, turn: int, body: dict[str, Any], items: int, units: int) -> ModelTurn:
        failed_attempts: list[dict[str, Any]] = []
        max_attempts = self.budgets["max_retries"] + 1
        url = self.base_url.rstrip("/") + self.adapter.path  # appended as the SDKs do: the base URL as given
        parts = urlsplit(url)
        target = parts.path + ("?" + parts.query if parts.query else "")  # what the request line names
        for attempt in range(1, max_attempts + 1):
            request = HttpRequest("POST", url, {"content-type": "application/json"}, body,
                                  self.budgets["timeout_ms"], turn - 1, attempt, self.stream)
            exchange = self.transport.send(request)
            index = self.exchange_index
            self.exchange_index += 1
            self.http_attempts += 1
            self.clock += exchange.latency_ms
            headers = exchange.headers
            if not all(map(str.islower, headers)):  # names as recorded: lower-cased, the last spelling wins
                headers = {k.lower(): v for k, v in headers.items()}
            self.request_id = headers.get("x-request-id") or headers.get("request-id") or self.request_id
            data = {"exchange": index, "attempt": attempt,
                    "request": {"method": "POST", "url": url, "model": self.inputs["model"],
                                "input_items": items, "input_units": units},
                    "response": exchange.to_record()}
            label = f"POST {target} attempt {attempt}"
            if exchange.status == 200 and exchange.error is None:
                model_turn = self._parse(exchange)
                if model_turn.kind == base.FOREIGN_BODY:
                    self.rec.add("http", "http.attempt", FAILED, turn, self.clock,
                                 f"{label}: 200 but {model_turn.detail}; not retried, not repaired",
                                 code="unexpected_body", data=data)
                    raise _Finished
                self.rec.add("http", "http.attempt", OK, turn, self.clock,
                             f"{label}: 200 in {exchange.latency_ms} ms", data=data)
                if failed_attempts:
                    self.rec.recover(failed_attempts)
                return model_turn
            code = failure_code(exchange.status, exchange.error)
            what = f"HTTP {exchange.status}" if exchange.status is not None else (exchange.error or "no response")
            decision = self.retry.decide(attempt, exchange.status, exchange.error, headers, self.rng)
            if decision.retry and attempt < max_attempts:
                wait, source = decision.wait_ms, decision.source
                data["backoff_ms"], data["backoff_source"] = wait, source
                event = self.rec.add("http", "http.attempt", FAILED, turn, self.clock,
                                     f"{label}: {what}; retrying in {wait} ms ({source})", code=code, data=data)
                failed_attempts.append(event)
                self.clock += wait
                pause = getattr(self.transport, "wait", None)
                if pause is not None:  # real HTTP really waits; in-process transports have no wait()
                    pause(wait)
                continue
            if decision.retry and max_attempts == 1:
                why = "not retried: the retry budget is 0 (max_retries)"
            elif decision.retry or attempt > 1:
                why = "retries exhausted after " + str(attempt) + " attempts"
            else:
                why = decision.why
            if exchange.status == 200 and exchange.error == "stream_interrupted":
                why = "the stream broke before it completed; no tool ran"
            elif exchange.error == INTERRUPTED:
                what, why = "interrupted (Ctrl-C)", "the run was stopped here; what was recorded is kept"
            elif exchange.error == RESPONSE_TOO_LARGE:
                why = "not retried: the same request would bring as much again"
            if exchange.error == RECORDING_ENDED:
                what, why = f"no response left in the recording ({index} played)", "the run ends here"
            message = _api_error_message(exchange.body)
            if message:
                what += f" ({message})"
            self.rec.add("http", "http.attempt", FAILED, turn, self.clock, f"{label}: {what}; {why}",
                         code=code, data=data)
            raise _Finished
        raise AssertionError("unreachable")

    def _parse(self, exchange: Exchange) -> ModelTurn:
        if exchange.events is not None:
            body, error = self.adapter.assemble_stream(exchange.events)
            if error:
                return ModelTurn(base.PROTOCOL_ERROR, detail=f"stream protocol error: {error}")
            return self.adapter.parse_response(body)
        return self.adapter.parse_response(exchange.body)

    # -- generation ---------------------------------------------------------------------------
    def _generation(self, turn: int, mt: ModelTurn) -> None:
        data = {"kind": mt.kind, "status": mt.status, "finish_reason": mt.finish_reason, "item_types": mt.item_types,
                "calls": [{"call_id": c.call_id, "name": c.name, "arguments": c.arguments} for c in mt.calls],
                "text": mt.text, "request_id": self.request_id}
        if mt.usage:
            data["usage"] = mt.usage
        code = GENERATION_FAILURES.get(mt.kind)
        if code is not None and mt.code:
            code = mt.code
        if mt.detail and code is None:  # a note on a good turn (e.g. a synthesized call id); failures say it in summary
            data["detail"] = mt.detail
        if code is not None:
            why = mt.detail or code
            if mt.kind == base.INCOMPLETE and mt.calls:
                why += f"; {len(mt.calls)} partial tool call(s) not executed"
            self.rec.add("generation", "generation.classify", FAILED, turn, self.clock, why, code=code, data=data)
            raise _Finished
        if mt.kind == base.TOOL_CALLS:
            names = ", ".join([f"{c.name}" for c in mt.calls])
            summary = f"{len(mt.calls)} tool call(s): {names}"
            if "reasoning" in mt.item_types:
                summary += " (reasoning item kept for the next request)"
        else:
            summary = "final text answer"
        self.rec.add("generation", "generation.classify", OK, turn, self.clock, summary, data=data)

    # -- answer -------------------------------------------------------------------------------
    def _answer(self, turn: int, text: str) -> None:
        ok, code, summary, data = verify_answer(self.inputs.get("task") or {}, text, self.receipts,
                                                orders_named(self.inputs["user_input"]), self.failed_orders)
        self.rec.add("answer", "answer.verify", OK if ok else FAILED, turn, self.clock, summary, code=code, data=data)
        raise _Finished

    # -- tool calls ---------------------------------------------------------------------------
    def _tool_calls(self, turn: int, mt: ModelTurn) -> None:
        self.transcript.extend(mt.items)
        ids = [c.call_id for c in mt.calls]
        if len(set(ids)) < len(ids):  # the scan for which id repeats runs only when one does
            dup = next(i for n, i in enumerate(ids) if i in ids[:n])
            self.rec.add("arguments", "arguments.batch", FAILED, turn, self.clock,
                         f"call id {dup} appears twice in one response; rejected before any tool ran",
                         call_id=dup, code="duplicate_call_id", data={"call_ids": ids})
            raise _Finished
        if not self.seen_call_ids.isdisjoint(ids):
            reused = next(i for i in ids if i in self.seen_call_ids)
            self.rec.add("arguments", "arguments.batch", FAILED, turn, self.clock,
                         f"call id {reused} was already used in an earlier turn; results could not be told apart",
                         call_id=reused, code="duplicate_call_id", data={"call_ids": ids})
            raise _Finished
        if self.tool_calls + len(ids) > self.budgets["max_calls"]:
            self.rec.add("generation", "generation.budget", FAILED, turn, self.clock,
                         f"call budget exhausted: {len(ids)} more call(s) would exceed {self.budgets['max_calls']}",
                         code="budget_exhausted",
                         data={"budget": "max_calls", "limit": self.budgets["max_calls"], "used": self.tool_calls})
            raise _Finished
        for call in mt.calls:
            signature = (call.name, call.arguments)
            if signature in self.executed:
                self.rec.add("generation", "generation.loop_guard", FAILED, turn, self.clock,
                             f"loop guard: {call.name} {call.arguments} already ran in this run and is asked for again",
                             call_id=call.call_id, code="loop_detected", data={"tool": call.name, "arguments": call.arguments})
                raise _Finished
        for call in mt.calls:
            self.seen_call_ids.add(call.call_id)
            self._one_call(turn, call)

    def _one_call(self, turn: int, call: base.ToolCall) -> None:
        tool = self.tools.get(call.name)
        args, error_type, message = validate_arguments(tool, call.name, call.arguments)
        log = {"request_id": self.request_id, "tool_call_id": call.call_id, "tool": call.name,
               "arguments": call.arguments, "error_type": error_type, "attempt": self.repairs + 1,
               "validated_at": self.clock}
        if error_type in (UNKNOWN_TOOL, SCHEMA_UNCHECKED):  # no repair can help: the run stops here
            self.rec.add("arguments", "arguments.validate", FAILED, turn, self.clock, message,
                         call_id=call.call_id, code=error_type, data=log)
            raise _Finished
        if error_type in REPAIRABLE:
            self.repairs += 1
            if self.repairs > self.budgets["repair_budget"]:
                first = self.repair_pending.get(call.name, [{}])[0].get("data", {}).get("arguments", call.arguments)
                log["handoff"] = {"original_arguments": first, "last_error": message}
                self.rec.add("arguments", "arguments.validate", FAILED, turn, self.clock,
                             f"repair budget ({self.budgets['repair_budget']}) spent; handed to a human: {message}",
                             call_id=call.call_id, code="handoff_required", data=log)
                raise _Finished
            event = self.rec.add("arguments", "arguments.validate", FAILED, turn, self.clock,
                                 f"{error_type}: {message}; sent back by call id for repair "
                                 f"({self.repairs} of {self.budgets['repair_budget']})",
                                 call_id=call.call_id, code=error_type, data=log)
            self.repair_pending.setdefault(call.name, []).append(event)
            self._result_to_model(call, {"ok": False, "error_type": error_type, "message": message,
                                         "retryable": True, "attempt": self.repairs}, True)
            return
        self.rec.add("arguments", "arguments.validate", OK, turn, self.clock,
                     f"{call.name} arguments valid", call_id=call.call_id, data=log)
        self.rec.recover(self.repair_pending.pop(call.name, ()))

        allowed, why, facts = self.state.authorize(args, self.inputs["principal"])
        facts["tool"] = call.name
        if not allowed:
            facts["returned_fields"] = []
            note = not_asked_note(self.inputs["user_input"], args)  # whether the model made the resource up
            self.rec.add("authorization", "authorization.check", FAILED, turn, self.clock,
                         f"permission denied: {why}; no protected field returned{note}", call_id=call.call_id,
                         code="permission_denied", data=facts)
            raise _Finished
        self.rec.add("authorization", "authorization.check", OK, turn, self.clock, f"allowed: {why}",
                     call_id=call.call_id, data=facts)
        key = self.state.idempotency_key(call.name, args)
        data = {"tool_call_id": call.call_id, "tool": call.name, "idempotency_key": key,
                "request_id": self.request_id, "attempt": 1}
        if key and self.inputs.get("idempotency_guard", True):
            prior = self.state.lookup(key)
            if prior is not None:  # committed already: later turns may only read its receipt
                self.tool_calls += 1
                data.update(result=prior.result, executed_at=prior.executed_at, replayed=True)
                self.rec.add("receipt", "receipt.execute", OK, turn, self.clock,
                             f"{key} already executed: returned its receipt instead of writing again",
                             call_id=call.call_id, data=data)
                self._receipt(call, prior.result)
                return
        violation = self.state.business_rule(call.name, args)
        if violation:
            note = not_asked_note(self.inputs["user_input"], args)  # whether the model made the amount up
            self.rec.add("arguments", "arguments.business_rule", FAILED, turn, self.clock,
                         f"business rule: {violation}; not retried automatically{note}", call_id=call.call_id,
                         code="business_rule_violation", data={**log, "error_type": "business_rule"})
            raise _Finished
        self._execute(turn, call, args, data)

    def _execute(self, turn: int, call: base.ToolCall, args: dict[str, Any], data: dict[str, Any]) -> None:
        self.tool_calls += 1
        self.clock += 5
        try:
            result = self.state.execute(call.name, args, self.clock)
        except ToolFailure as failure:
            data.update(error_type=failure.code, executed_at=self.clock)
            if failure.code == "timeout" and data["idempotency_key"]:
                self._write_timeout(turn, call, args, data)
                return
            if isinstance(args.get("order_id"), str):
                self.failed_orders.add(args["order_id"])
            self.rec.add("receipt", "receipt.execute", FAILED, turn, self.clock,
                         f"{call.name} failed ({failure.code}); the error goes back to the model, no result invented",
                         call_id=call.call_id, code="tool_failed", data=data)
            self._result_to_model(call, {"ok": False, "error_type": failure.code, "message": failure.message,
                                         "retryable": False}, True)
            return
        self._committed(turn, call, result, data)

    def _committed(self, turn: int, call: base.ToolCall, result: dict[str, Any], data: dict[str, Any]) -> None:
        """Record a successful execution. One write key executed twice is a duplicate side effect."""
        data = {**data, "result": result, "executed_at": self.clock}
        key = data.get("idempotency_key")
        executions = self.state.ledger.get(key, []) if key else []
        if len(executions) > 1:
            data["executions"] = [{"executed_at": e.executed_at, "refund_id": e.result.get("refund_id")}
                                  for e in executions]
            self.rec.add("receipt", "receipt.execute", FAILED, turn, self.clock,
                         f"{key} executed {len(executions)} times: a duplicate side effect",
                         call_id=call.call_id, code="duplicate_execution", data=data)
            raise _Finished
        self.executed.add((call.name, call.arguments))
        self.rec.add("receipt", "receipt.execute", OK, turn, self.clock, _receipt_words(result),
                     call_id=call.call_id, data=data)
        self._receipt(call, result)

    def _write_timeout(self, turn: int, call: base.ToolCall, args: dict[str, Any], data: dict[str, Any]) -> None:
        """A write timed out: it may have committed. Check the receipt; never write blind."""
        key = data["idempotency_key"]
        timed_out = self.rec.add("receipt", "receipt.execute", FAILED, turn, self.clock,
                                 f"{call.name} timed out after the request was sent; outcome unknown",
                                 call_id=call.call_id, code="write_outcome_unknown", data=dict(data))
        self.clock += 5
        if self.inputs.get("idempotency_guard", True):
            prior = self.state.lookup(key)
            if prior is not None:
                self.rec.recover([timed_out])
                self.rec.add("receipt", "receipt.lookup", OK, turn, self.clock,
                             f"receipt found for {key}: the write had committed; not written again",
                             call_id=call.call_id, data={**data, "result": prior.result,
                                                         "executed_at": prior.executed_at, "lookup": True})
                self.executed.add((call.name, call.arguments))
                self._receipt(call, prior.result)
                return
        # no receipt (or no guard to look one up with): the write is tried once more
        try:
            result = self.state.execute(call.name, args, self.clock)
        except ToolFailure as again:
            self.rec.add("receipt", "receipt.execute", FAILED, turn, self.clock,
                         f"{call.name} failed again ({again.code}) when retried; its outcome is unknown, "
                         f"handed to a human", call_id=call.call_id, code="write_outcome_unknown",
                         data={**data, "attempt": 2, "error_type": again.code})
            raise _Finished
        self._committed(turn, call, result, {**data, "attempt": 2})

    def _receipt(self, call: base.ToolCall, result: dict[str, Any]) -> None:
        self.receipts.append(result)
        self._result_to_model(call, result, False)

    def _result_to_model(self, call: base.ToolCall, payload: dict[str, Any], is_error: bool) -> None:
        self.transcript.append({"type": "tool_result", "call_id": call.call_id,
                                "output": orjson.dumps(payload, option=orjson.OPT_SORT_KEYS).decode(),
                                "is_error": is_error})

    # -- verdict ------------------------------------------------------------------------------
    def _result(self) -> RunResult:
        events = self.rec.events
        if events and events[-1]["lane"] == "answer" and events[-1]["outcome"] == OK:
            self.rec.recover(events)  # the answer was verified: every earlier failure was overcome
        ablation = self.inputs.get("ablation") or "complete"
        if ablation != "complete":
            for event in events:  # the reason of whichever decides says so (tracetui.trace.responsibility),
                if event["outcome"] == FAILED and event["turn"] in self.ablated_turns:  # if the ablation could matter
                    event["summary"] += f"; {ABLATED} ({ablation})"
        failure = first_failure(events)
        status = status_of(failure)
        recovered = len([e for e in events if e["outcome"] == RECOVERED])
        run = {"rec": "run", "run_id": self.run_id, "trace_version": TRACE_VERSION, "producer": PRODUCER,
               "inputs": self.inputs}
        summary = {"rec": "summary", "run_id": self.run_id, "status": status, "ready": status == ANSWER_READY,
                   "metrics": {"iterations": self.iterations, "model_calls": self.model_calls,
                               "http_attempts": self.http_attempts, "tool_calls": self.tool_calls,
                               "input_units": self.input_units, "events": len(events), "recovered": recovered},
                   "first_failure": failure}
        if events and events[-1].get("code") == RECORDING_ENDED:
            summary["ended_by"] = "recording"  # the verdict may name an earlier failure; the run still ran out here
        elif events and events[-1].get("code") == INTERRUPTED:
            summary["ended_by"] = "interrupt"  # a live run the user stopped: what it recorded, up to there
        return RunResult(run, events, summary)


def _conversation(body: dict[str, Any]) -> list[Any]:
    """The conversation part of a request, whatever the API calls it (tools are not counted)."""
    for key in ("input", "messages", "contents"):
        value = body.get(key)
        if isinstance(value, list):
            return value
    return []


def _api_error_message(body: Any) -> str | None:
    """The error message the API put in its body: every vendor here uses ``error.message``."""
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        message = body["error"].get("message")
        if isinstance(message, str) and message:
            return message if len(message) <= 160 else redacted_prefix(message, 159) + "…"
    return None


def _receipt_words(result: dict[str, Any]) -> str:
    if result.get("source") == "refund_order":
        return f"refund {result.get('refund_id')} of {result.get('amount')} on {result.get('order_id')} committed"
    return f"{result.get('order_id')} {result.get('status')} (receipt from {result.get('source')})"
