"""The rules of the tool lanes and of spans that contain others: a tool span's receipt (or its permission
denial, its rejected arguments, the Agent Action Gate's word), a guardrail's trip, and a step, agent or
workflow that ended in error. A mixin of :class:`tracetui.otel.lanes._Run`, which holds the run's state
(its spans, the calls requested, the events so far)."""
from __future__ import annotations

import re
from collections import deque
from typing import Any

from tracetui.otel import dialects as d, semconv as sc
from tracetui.otel.errors import (BUDGET, GUARDRAIL, PARSING, PERMISSION, UNKNOWN_TOOL, VALIDATION, chat_error,
                                  error_text)
from tracetui.otel.spans import STATUS_ERROR, Span
from tracetui.trace.format import FAILED, OK
from tracetui.trace.safe_text import redacted_prefix


_OFFERED = re.compile(r"\[[^\]]*\]")


def _short(text: str, width: int = 160) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else redacted_prefix(text, width - 1) + "…"


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


class ToolRules:
    """Rules that read tool, guardrail and container spans (the state is :class:`~tracetui.otel.lanes._Run`'s)."""

    by_id: dict[str, Span]
    events: list[tuple[int, int, dict[str, Any]]]
    checked: dict[str, dict[str, Any]]
    requested: list[tuple[Span, d.ToolCall]]
    executed: set[int]
    requested_by_id: dict[str, deque[int]]
    requested_by_name: dict[str, deque[int]]
    failed_below: set[str]
    chats: list[Span]
    ran_ids: set[str]
    ran_unnamed: set[str]
    _answers: tuple[set[str], dict[str, str]] | None

    @property
    def answered(self) -> set[str]:
        """Ids of the calls whose results a model call was sent."""
        return self._read_answers()[0]

    @property
    def error_answers(self) -> dict[str, str]:
        """Call id → an error string sent back as its result."""
        return self._read_answers()[1]

    def _read_answers(self) -> tuple[set[str], dict[str, str]]:
        """(Read once, and only when a call no tool span ran asks: the inputs are a run's longest texts.)"""
        if self._answers is None:
            answered: set[str] = set()
            errors: dict[str, str] = {}
            for chat in self.chats:
                answered |= d.answered_calls(chat)
                errors.update(d.tool_errors(chat))
            self._answers = answered, errors
        return self._answers

    def tool(self, span: Span) -> None:
        call = d.tool_call(span)
        index = self._match(call)
        if index is not None:
            self.executed.add(index)
            requested = self.requested[index][1]
            call = d.ToolCall(call.id or requested.id, call.name,
                              call.arguments if call.arguments is not None else requested.arguments)
        if call.name in d.FINAL_ANSWER_TOOLS:
            return  # the answer, given through a tool (smolagents): the answer lane reads it, no receipt
        checked = self.checked.get(call.id) if call.id else None
        if checked is None:
            before = len(self.checked)
            self.arguments(span.start_ns, span, call)
            if len(self.checked) > before:
                checked = next(reversed(self.checked.values()))
        if checked is not None and checked["outcome"] == FAILED:
            return  # the call was not valid: its execution failing is the consequence, not a second failure
        base = {"tool": call.name, "result": d.tool_result(span)}
        if self._gate(span, call, base):
            return
        text = error_text(span)
        receipt = span.attributes.get(sc.RECEIPT_HASH)
        if isinstance(receipt, str) and receipt:
            base["receipt_hash"] = receipt
        if span.status_code == STATUS_ERROR or span.error():
            if PERMISSION.search(text):
                self.add(span.end_ns, span, "authorization", "authorization.check", FAILED,
                         f"permission denied: {call.name}: {text}", "permission_denied", call.id, **base)
            elif VALIDATION.search(text) or span.attributes.get("pydantic_ai.tool.failure_stage") == "validation":
                self.add(span.end_ns, span, "arguments", "arguments.validate", FAILED,
                         f"schema_error: {call.name} arguments were rejected: {text}", "schema_error", call.id, **base)
            else:
                self.add(span.end_ns, span, "receipt", "receipt.execute", FAILED,
                         f"{call.name} failed: {text or 'error'}; no result", "tool_failed", call.id, **base)
        else:
            said = f" (ledger receipt {_short(receipt, 24)})" if "receipt_hash" in base else ""
            self.add(span.end_ns, span, "receipt", "receipt.execute", OK, f"{call.name} returned a result{said}",
                     None, call.id, **base)

    def unknown_by_answer(self, call: d.ToolCall) -> str | None:
        """The error string a framework sent back for a call to a tool it does not have (LangGraph's ToolNode:
        ``Error: cancel_order is not a valid tool, try one of [...]``), else None. Only when no tool span ran
        the call and the text names the tool asked for: a tool that ran may answer any text, "Error: …" too."""
        if not call.id or call.id in self.ran_ids or call.name in self.ran_unnamed:
            return None  # (asked first: the answers are read from the model calls' inputs only when needed)
        answered = self.error_answers.get(call.id)
        said = _OFFERED.sub("", answered[:2000]) if answered is not None else ""  # an error string is short
        if not call.name or call.name not in said or not UNKNOWN_TOOL.search(said):
            return None  # the tool asked for, named outside the list of those offered ("try one of [...]")
        return answered

    def _gate(self, span: Span, call: d.ToolCall, base: dict[str, Any]) -> bool:
        """The Agent Action Gate's word on the call (``gen_ai.agent.tool.disposition``), on the authorization
        lane; True when the gate denied it (nothing ran, so there is no receipt to read)."""
        disposition = span.attributes.get(sc.TOOL_DISPOSITION)
        if disposition not in sc.DISPOSITIONS:
            return False
        if disposition == "deny":
            text = error_text(span) or _text(d.tool_result(span))
            self.add(span.start_ns, span, "authorization", "authorization.check", FAILED,
                     f"permission denied: the action gate denied {call.name}" + (f": {text}" if text else ""),
                     "permission_denied", call.id, disposition=disposition, **base)
            return True
        said = "allowed" if disposition == "allow" else "simulated (rehearsed by the action gate, not executed)"
        self.add(span.start_ns, span, "authorization", "authorization.check", OK, f"{call.name} {said}", None,
                 call.id, disposition=disposition, **base)
        return False

    def _match(self, call: d.ToolCall) -> int | None:
        """The requested call a tool span ran: by call id, else the first not yet run with that name."""
        if call.id:
            return self._first_pending(self.requested_by_id.get(call.id))
        if call.id is None:
            return self._first_pending(self.requested_by_name.get(call.name))
        return None

    def _first_pending(self, queue: deque[int] | None) -> int | None:
        """The first index in ``queue`` not run yet (those run are dropped from its front: each once)."""
        while queue and queue[0] in self.executed:
            queue.popleft()
        return queue[0] if queue else None

    def guardrail(self, span: Span) -> None:
        attrs = span.attributes
        triggered = attrs.get("guardrail.triggered", attrs.get("triggered"))
        if span.status_code == STATUS_ERROR or triggered is True:
            self.add(span.end_ns, span, "authorization", "authorization.guardrail", FAILED,
                     f"guardrail {span.name} tripped" + (f": {error_text(span)}" if span.error() else ""),
                     "guardrail_triggered")
        elif triggered is False:
            self.add(span.end_ns, span, "authorization", "authorization.guardrail", OK, f"guardrail {span.name} passed")

    def container_error(self, span: Span, is_root: bool) -> None:
        """An agent, workflow, step or other span that ended in error."""
        text = error_text(span)
        if not is_root and self._explained_inside(span):
            return  # a tool or model call under it failed, and said so: the step's error is its consequence
        if GUARDRAIL.search(text):
            if not self.has("authorization", "guardrail_triggered"):
                self.add(span.end_ns, span, "authorization", "authorization.guardrail", FAILED,
                         f"guardrail tripped: {text}", "guardrail_triggered")
        elif UNKNOWN_TOOL.search(text):
            if not self.has("arguments", "unknown_tool"):
                self.add(span.end_ns, span, "arguments", "arguments.validate", FAILED,
                         f"the model asked for a tool it was not offered: {text}", "unknown_tool")
        elif BUDGET.search(text):
            self.add(span.end_ns, span, "generation", "generation.budget", FAILED, f"budget exhausted: {text}",
                     "budget_exhausted")
        elif is_root and not self.last_failed(span.end_ns):
            self.add(span.end_ns, span, "answer", "answer.verify", FAILED,
                     f"the run ended with an error and no answer: {text or 'error'}", "no_answer")
        elif not is_root and PARSING.search(text):  # smolagents' AgentParsingError: no tool call could be read
            self.add(span.end_ns, span, "arguments", "arguments.validate", FAILED,
                     f"invalid_json: the model's output could not be read as a tool call: {text}", "invalid_json")
        elif not is_root:
            lane, code = chat_error(text)
            self.add(span.end_ns, span, lane, "http.attempt" if lane == "http" else "generation.classify", FAILED,
                     f"step {span.name} failed: {text or 'error'}", code)

    def _explained_inside(self, span: Span) -> bool:
        """Whether a failure was already read from a span below this one (children end first, so theirs
        are known: :meth:`~tracetui.otel.lanes._Run.passed_up` carries them up a span at a time)."""
        return span.span_id in self.failed_below
