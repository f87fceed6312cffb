"""Other agents' spans on the six lanes: the rules, one per boundary.

=============  ===========================================================================
lane           failure read from
=============  ===========================================================================
http           an HTTP client span's status code or transport error; a model call's error
               that names a status, a rate limit, a timeout or a connection
generation     finish reasons (length → ``incomplete``, content filter, refusal, error) and
               model-call errors that are not HTTP ones; run-level turn or usage limits
arguments      tool-call arguments that are not JSON or break the declared schema; tool
               names the model was not offered
authorization  guardrail trips and permission denials
receipt        tool execution errors; calls that got no result
answer         no final answer (the run ended without one, and no earlier failure explains
               it); an answer although every tool call failed
=============  ===========================================================================

A rule that cannot be decided from what the spans hold makes no event: with
content capture off there are no arguments to check and no answer text; a
guardrail span that does not say whether it tripped is left alone; whether an
answer needed a tool result is only decided when tools were called and all
failed. A failure the run overcame is ``recovered``: an HTTP attempt retried with
success in the same model call, arguments the model fixed for the same tool, a tool
that failed and then succeeded.

Each event keeps the span it came from in ``data`` (name, ids, kind, status and its
raw attributes), so the detail pane shows what the decision was read from.
"""
from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections import deque
from typing import Any

import orjson

from tracetui.otel import dialects as d
from tracetui.otel.errors import DUPLICATE_ID, chat_error, error_text, http_code, schema_problem
from tracetui.otel.lanes_tools import ToolRules, _short
from tracetui.otel.spans import STATUS_ERROR, Span
from tracetui.trace.format import FAILED, OK, RECOVERED

LENGTH = frozenset({"length", "max_tokens", "max_output_tokens", "max_tokens_exceeded", "incomplete",
                    "model_length", "token_limit"})
FILTERED = frozenset({"content_filter", "safety", "blocklist", "prohibited_content", "spii", "recitation"})
REFUSAL = frozenset({"refusal", "refused"})
ERRORED = frozenset({"error", "failed", "cancelled", "malformed_function_call"})

REPAIRABLE = frozenset({"invalid_json", "schema_error"})
STOPPED = frozenset({"stop", "end_turn", "completed", "stop_sequence"})


def _span_data(span: Span) -> dict[str, Any]:
    status = {0: "unset", 1: "ok", 2: "error"}.get(span.status_code, str(span.status_code))
    data: dict[str, Any] = {"span": {"name": span.name, "trace_id": span.trace_id, "span_id": span.span_id,
                                     "parent_span_id": span.parent_span_id or None, "kind": span.kind,
                                     "status": status, "status_message": span.status_message or None},
                            "attributes": span.attributes}
    if span.events:
        data["span_events"] = [{"name": e.name, "attributes": e.attributes} for e in span.events]
    return data


class _Run(ToolRules):
    def __init__(self, spans: list[Span], start_ns: int, with_data: bool = True):
        self.with_data = with_data  # each event's data: its span's attributes (not needed for a verdict)
        self.spans = sorted(spans, key=lambda s: (s.start_ns, s.end_ns, s.span_id))
        self.start_ns = start_ns
        self.by_id = {s.span_id: s for s in spans}
        self.events: list[tuple[int, int, dict[str, Any]]] = []  # (time, order, event)
        self.read_from: list[tuple[Span, Any]] = []  # by order: (the span an event was read from, its tool)
        self.chats = [s for s in self.spans if d.role(s) == d.CHAT]
        self.chat_starts = [c.start_ns for c in self.chats]  # in order (spans are sorted by start)
        self.declared, self.schemas = self._definitions()
        self.checked: dict[str, dict[str, Any]] = {}  # call id → its arguments event
        self.requested: list[tuple[Span, d.ToolCall]] = []  # calls the model asked for, in order
        self.executed: set[int] = set()  # indexes into requested that a tool span ran
        # indexes into requested by call id and by name, so matching a tool span to its call is not a rescan
        self.requested_by_id: dict[str, deque[int]] = {}
        self.requested_by_name: dict[str, deque[int]] = {}
        self.http_by_parent: dict[str, list[dict[str, Any]]] = {}  # HTTP events by the span their span is under
        self.codes: set[tuple[str, Any]] = set()  # (lane, code) of every event so far
        self.failed_on: set[str] = set()  # spans a failed event was read from
        self.failed_below: set[str] = set()  # spans with such a span under them (among those read so far)
        self._answers: tuple[set[str], dict[str, str]] | None = None  # read from the model calls' inputs when asked
        ran = [d.tool_call(s) for s in self.spans if d.role(s) == d.TOOL]
        self.ran_ids = {c.id for c in ran if c.id}  # calls a tool span ran: by id, else (no id) by name
        self.ran_unnamed = {c.name for c in ran if not c.id}

    def _definitions(self) -> tuple[set[str] | None, dict[str, Any]]:
        """The tool names declared to the model (None when no span declares them) and each tool's schema."""
        declared: set[str] | None = None
        schemas: dict[str, Any] = {}
        for span in self.spans:
            found = d.tool_definitions(span)
            if found is not None:
                declared = (declared or set()) | set(found)
                schemas.update({k: v for k, v in found.items() if isinstance(v, (dict, bool))})  # false: no args
        for span in self.spans:
            if d.role(span) == d.TOOL:
                schema = d.tool_schema(span)
                if schema is not None:
                    schemas.setdefault(d.tool_call(span).name, schema)
        return declared, schemas

    def turn_at(self, time_ns: int) -> int:
        return bisect_right(self.chat_starts, time_ns)

    def add(self, time_ns: int, span: Span, lane: str, kind: str, outcome: str, summary: str,
            code: str | None = None, call_id: str | None = None, **extra: Any) -> dict[str, Any]:
        event = {"lane": lane, "kind": kind, "outcome": outcome, "turn": self.turn_at(time_ns),
                 "t_ms": max(0, (time_ns - self.start_ns) // 1_000_000), "call_id": call_id,
                 "code": code if outcome != OK else None, "summary": _short(summary)}
        if self.with_data:
            event["data"] = data = _span_data(span)
            data.update(extra)
        self.events.append((time_ns, len(self.events), event))
        self.read_from.append((span, extra.get("tool")))
        self.codes.add((lane, event["code"]))
        if outcome == FAILED:
            self.failed_on.add(span.span_id)
        if lane == "http":
            self.http_by_parent.setdefault(span.parent_span_id, []).append(event)
        return event

    def passed_up(self, span: Span) -> None:
        """After a span's rules ran: its parent has a failure under it if it, or one below it, failed."""
        if span.parent_span_id and (span.span_id in self.failed_on or span.span_id in self.failed_below):
            self.failed_below.add(span.parent_span_id)

    def last_failed(self, before_ns: int) -> bool:
        earlier = [e for t, _, e in sorted(self.events, key=lambda x: (x[0], x[1])) if t <= before_ns]
        return bool(earlier) and earlier[-1]["outcome"] == FAILED

    def has(self, lane: str, code: str) -> bool:
        return (lane, code) in self.codes

    # -- rules ---------------------------------------------------------------------------------
    def http(self, span: Span) -> None:
        attrs = span.attributes
        status = attrs.get("http.response.status_code", attrs.get("http.status_code"))
        status = status if type(status) is int else None
        method = attrs.get("http.request.method") or attrs.get("http.method") or "HTTP"
        where = attrs.get("url.full") or attrs.get("http.url") or attrs.get("url.path") or ""
        error = error_text(span)
        if status is not None and status >= 400 or span.status_code == STATUS_ERROR:
            code = http_code(status, error)
            said = f"{status}" if status is not None else error or "transport error"
            if status is not None and status < 400:  # an answer came, but could not be used
                said += f" but {error or 'the body could not be used'}"
            self.add(span.end_ns, span, "http", "http.attempt", FAILED, f"{method} {where}: {said}", code)
        else:
            self.add(span.end_ns, span, "http", "http.attempt", OK, f"{method} {where}: {status or 'ok'}")

    def chat(self, span: Span) -> None:
        model = d.model_name(span)
        said = f"{model}: " if model else ""
        http_children = self.http_by_parent.get(span.span_id, [])
        calls = d.requested_calls(span)
        if self._duplicate_ids(span, calls or []):
            return
        if span.status_code == STATUS_ERROR or span.error():
            text = error_text(span) or "the model call failed"
            if http_children and all(e["outcome"] == FAILED for e in http_children):
                return  # its HTTP attempts already say why
            if DUPLICATE_ID.search(text):
                self.add(span.end_ns, span, "arguments", "arguments.batch", FAILED, text, "duplicate_call_id")
                return
            lane, code = chat_error(text)
            kind = "http.attempt" if lane == "http" else "generation.classify"
            self.add(span.end_ns, span, lane, kind, FAILED, f"{said}{text}", code)
            return
        reasons = d.finish_reasons(span)
        refusal = d.refused(span)
        outcome, code = OK, None
        lowered = [r.lower() for r in reasons or []]
        if refusal or REFUSAL & set(lowered):
            outcome, code, summary = FAILED, "refused", f"refused: {refusal or 'finish reason ' + ', '.join(reasons or [])}"
        elif LENGTH & set(lowered):
            outcome, code = FAILED, "incomplete"
            summary = f"response incomplete: finish reason {', '.join(reasons or [])} (output cut at the token limit)"
        elif FILTERED & set(lowered):
            outcome, code, summary = FAILED, "content_filter", f"response stopped by a content filter ({', '.join(reasons or [])})"
        elif ERRORED & set(lowered):
            outcome, code, summary = FAILED, "response_failed", f"response failed: finish reason {', '.join(reasons or [])}"
        elif calls:
            summary = f"{len(calls)} tool call(s): {', '.join(c.name for c in calls)}"
        elif calls is not None:
            summary = "final text answer" + (f" (finish reason {', '.join(reasons)})" if reasons else "")
        else:
            summary = f"model call finished ({'finish reason ' + ', '.join(reasons) if reasons else 'finish reason not recorded'}; output not recorded)"
        self.add(span.end_ns, span, "generation", "generation.classify", outcome, summary, code,
                 finish_reasons=reasons)
        for call in calls or []:
            self._request(span, call)
            if code != "incomplete":  # arguments cut at the token limit: the truncation's doing, not a failure more
                self.arguments(span.end_ns, span, call)

    def _request(self, span: Span, call: d.ToolCall) -> None:
        index = len(self.requested)
        self.requested.append((span, call))
        if call.id:
            self.requested_by_id.setdefault(call.id, deque()).append(index)
        self.requested_by_name.setdefault(call.name, deque()).append(index)

    def _duplicate_ids(self, span: Span, calls: list[d.ToolCall]) -> bool:
        """Tool calls whose ids repeat, in this output or from an earlier one: their results could not be told apart."""
        earlier = self.requested_by_id
        ids = [c.id for c in calls if c.id]
        repeated = sorted({i for i in ids if ids.count(i) > 1 or i in earlier})
        if not repeated:
            return False
        self.add(span.end_ns, span, "generation", "generation.classify", OK,
                 f"{len(calls)} tool call(s): {', '.join(c.name for c in calls)}", finish_reasons=d.finish_reasons(span))
        self.add(span.end_ns, span, "arguments", "arguments.batch", FAILED,
                 f"call id {repeated[0]} is used twice; results could not be told apart, so no tool ran",
                 "duplicate_call_id", repeated[0], call_ids=ids)
        return True

    def arguments(self, time_ns: int, span: Span, call: d.ToolCall) -> None:
        key = call.id or f"{span.span_id}/{len(self.checked)}"
        if call.id and call.id in self.checked:
            return
        base = {"tool": call.name, "arguments": call.arguments}
        if self.declared is not None and call.name not in self.declared:
            self.checked[key] = self.add(time_ns, span, "arguments", "arguments.validate", FAILED,
                                         f"no tool named {call.name!r} is declared to the model", "unknown_tool",
                                         call.id, **base)
            return
        if call.invalid is not None:
            self.checked[key] = self.add(time_ns, span, "arguments", "arguments.validate", FAILED,
                                         f"invalid_json: {call.name} arguments could not be parsed: {call.invalid}",
                                         "invalid_json", call.id, **base)
            return
        answered = self.unknown_by_answer(call)
        if answered is not None:
            self.checked[key] = self.add(time_ns, span, "arguments", "arguments.validate", FAILED,
                                         f"the model asked for a tool it was not offered: {answered}",
                                         "unknown_tool", call.id, **base)
            return
        if call.arguments is None:
            return  # not recorded: undecided
        value = call.arguments
        if isinstance(value, str):
            try:
                value = orjson.loads(value) if value.strip() else {}
            except orjson.JSONDecodeError as exc:
                self.checked[key] = self.add(time_ns, span, "arguments", "arguments.validate", FAILED,
                                             f"invalid_json: {call.name} arguments are not valid JSON: {exc}",
                                             "invalid_json", call.id, **base)
                return
        schema = self.schemas.get(call.name)
        if isinstance(schema, (dict, bool)):  # (a boolean is a schema too: false fits nothing)
            problem, undecided = schema_problem(value, schema)
            if problem:
                self.checked[key] = self.add(time_ns, span, "arguments", "arguments.validate", FAILED,
                                             f"schema_error: {call.name}: {problem}", "schema_error", call.id, **base)
                return
            said = f"{call.name} arguments valid" if undecided is None else \
                f"{call.name} arguments unchecked: {undecided}"  # no verdict from this schema, said in words
            if undecided is not None:
                base["checked"] = False  # not "valid": the explorer's cell says "unchecked" (ui.model)
        else:
            said = f"{call.name} arguments are JSON (no declared schema to check them against)"
        self.checked[key] = self.add(time_ns, span, "arguments", "arguments.validate", OK, said, None, call.id,
                                     **base)

    def missing_results(self) -> None:
        for i, (span, call) in enumerate(self.requested):
            if i in self.executed or (call.id and call.id in self.answered):
                continue
            checked = self.checked.get(call.id) if call.id else None
            if checked is not None and checked["outcome"] == FAILED:
                continue
            at = bisect_left(self.chat_starts, span.end_ns)  # the first model call that starts after this one ended
            if at < len(self.chats) and self.chats[at] is span:
                at += 1
            later = self.chats[at] if at < len(self.chats) else None
            if later is not None:  # the run went on to another model call without this call's result
                self.add(later.start_ns, span, "receipt", "receipt.execute", FAILED,
                         f"{call.name} ({call.id or 'no id'}) got no result before the next model call",
                         "no_result", call.id, tool=call.name)

    def answer(self, root: Span | None) -> None:
        end = max((s.end_ns for s in self.spans), default=self.start_ns)
        if root is not None and (root.status_code == STATUS_ERROR or root.error()):
            return  # container_error decided it
        if not self.chats:
            return
        last = self.chats[-1]
        gen = [e for _, n, e in self.events if e["lane"] == "generation" and e["kind"] == "generation.classify"
               and self.read_from[n][0].span_id == last.span_id]
        if not gen or gen[-1]["outcome"] != OK:
            return  # the last model call failed: that failure is the story
        calls = d.requested_calls(last)
        answer_calls = [c for c in calls or [] if c.name in d.FINAL_ANSWER_TOOLS]
        if answer_calls and len(answer_calls) == len(calls or []):
            calls = []  # the answer, given through a final-answer tool
        reasons = [r.lower() for r in d.finish_reasons(last) or []]
        if calls or (calls is None and ("tool_calls" in reasons or "tool_call" in reasons)):
            if not self.last_failed(end):
                self.add(end, last, "answer", "answer.verify", FAILED,
                         "the run ended after the model asked for tools, without a final answer", "no_answer")
            return
        if calls is None:  # the output is not recorded: only a finish reason can say an answer came last
            tools_after = any(d.role(s) == d.TOOL and s.start_ns >= last.end_ns for s in self.spans)
            if tools_after or not STOPPED & set(reasons):
                return
        receipts = [e for _, _, e in self.events if e["lane"] == "receipt"]
        text = d.final_answer_text(answer_calls[-1]) if answer_calls else d.output_text(last)
        extra = {"text": text} if text is not None else {}
        if receipts and not any(e["outcome"] != FAILED for e in receipts):
            self.add(end, last, "answer", "answer.verify", FAILED,
                     f"no tool result backs the final answer: all {len(receipts)} tool call(s) failed",
                     "unverified_answer", **extra)
            return
        said = "final answer given" if text is None or text.strip() else "final answer is empty"
        outcome, code = (OK, None) if text is None or text.strip() else (FAILED, "empty_answer")
        backing = (f"; {sum(1 for e in receipts if e['outcome'] != FAILED)} tool result(s) in the run"
                   if receipts else "")
        self.add(end, last, "answer", "answer.verify", outcome,
                 f"{said}{backing}; whether the task needed a tool result is not recorded, so its backing is not checked",
                 code, **extra)

    def recover(self) -> None:
        """Failures a later success overcame, found in one pass from the end (what succeeded later, by place)."""
        ok_later: set[tuple[str, Any]] = set()  # (lane, the HTTP attempt's parent span or the tool) of later successes
        for _, n, event in reversed(sorted(self.events, key=lambda x: (x[0], x[1]))):
            lane = event["lane"]
            span, tool = self.read_from[n]
            where = (span.parent_span_id or None) if lane == "http" else _key(tool)
            if event["outcome"] == OK:
                ok_later.add((lane, where))
                if lane == "arguments" and where is not None:
                    ok_later.add((lane, _ANY_TOOL))  # a valid call of some tool: a step that read none recovered
            elif event["outcome"] != FAILED:
                continue
            elif lane == "http" and event["kind"] == "http.attempt":
                if where and (lane, where) in ok_later:
                    event["outcome"] = RECOVERED
            elif lane == "arguments" and event["code"] in REPAIRABLE or lane == "receipt" and event["code"] == "tool_failed":
                if (lane, where if where is not None or lane != "arguments" else _ANY_TOOL) in ok_later:
                    event["outcome"] = RECOVERED


_ANY_TOOL = object()  # where an output no tool call could be read from is repaired: by a valid call of any tool


def _key(value: Any) -> Any:
    """A value usable as a set member (a tool name is text; a hostile file may put anything there)."""
    try:
        hash(value)
    except TypeError:
        return repr(value)
    return value


def foreign_events(spans: list[Span], root: Span | None, start_ns: int,
                   with_data: bool = True) -> list[dict[str, Any]]:
    """The events of one foreign run, in time order (without ``seq``: the importer numbers them); without their
    ``data`` unless ``with_data``."""
    run = _Run(spans, start_ns, with_data)
    roles = {s.span_id: d.role(s) for s in run.spans}
    depths = _depths(run.spans, run.by_id)
    # children end before their parents: a span's own verdict comes after what happened inside it
    for span in sorted(run.spans, key=lambda s: (s.end_ns, -depths[s.span_id], s.start_ns)):
        kind = roles[span.span_id]
        if kind == d.HTTP:
            run.http(span)
        elif kind == d.CHAT:
            run.chat(span)
        elif kind == d.TOOL:
            run.tool(span)
        elif kind == d.GUARDRAIL:
            run.guardrail(span)
        elif span.status_code == STATUS_ERROR:
            run.container_error(span, span is root)
        run.passed_up(span)
    run.missing_results()
    run.answer(root)
    run.recover()
    return [e for _, _, e in sorted(run.events, key=lambda x: (x[0], x[1]))]


def _depths(spans: list[Span], by_id: dict[str, Span]) -> dict[str, int]:
    """How many ancestors each span has, each span walked once (a parent cycle in a hostile file ends a walk)."""
    depths: dict[str, int] = {}
    for span in spans:
        chain: list[Span] = []
        on_chain: set[str] = set()
        node: Span | None = span
        while node is not None and node.span_id not in depths and node.span_id not in on_chain:
            chain.append(node)
            on_chain.add(node.span_id)
            node = by_id.get(node.parent_span_id) if node.parent_span_id else None
        depth = depths[node.span_id] + 1 if node is not None and node.span_id in depths else 0
        for member in reversed(chain):
            depths[member.span_id] = depth
            depth += 1
    return depths
