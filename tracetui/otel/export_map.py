"""A tracetui run as GenAI spans: one trace per run, the verdict on its root.

::

    invoke_agent tracetui              root: status ERROR + error.type = first failure's code, tracetui.failure.*
    ├─ chat {model}                    one per model call (turn): finish reasons, response id, usage, status code
    │  └─ POST                         one per HTTP attempt: http.response.status_code, resend count
    ├─ execute_tool {name}             one per tool call: gen_ai.tool.call.id
    └─ …

Every tracetui event becomes a span event named after its ``kind`` on the span it
belongs to (generation checks on ``chat``, argument / authorization / receipt checks
on ``execute_tool``, the answer check on the root), carrying its lane, outcome,
code, summary, seq and logical time under ``tracetui.*``; an HTTP attempt is its own
span with those attributes. So a generic viewer shows all six lanes, and
:mod:`tracetui.otel.importer` rebuilds the events exactly.

Message content (prompts, answers, tool arguments and results) is only written
with ``content=True``, following OpenTelemetry's default. The run is redacted
before anything is read from it.
"""
from __future__ import annotations

import hashlib
from typing import Any
from urllib.parse import urlsplit

import orjson

from tracetui.otel import ids, semconv as sc
from tracetui.otel.spans import KIND_CLIENT, KIND_INTERNAL, STATUS_ERROR, Span, SpanEvent
from tracetui.trace.format import FAILED, OK, RECOVERED
from tracetui.trace.reader import RunData
from tracetui.trace.redact import redact_text
from tracetui.trace.writer import encode_record

#: who is responsible for the run's failure, on the root span beside the other ``tracetui.failure.*``
FAILURE_RESPONSIBILITY = "tracetui.failure.responsibility"

AGENT = "tracetui"
#: tracetui's provider names → gen_ai.provider.name
PROVIDERS = {"openai-responses": "openai", "openai-chat": "openai", "anthropic": "anthropic", "gemini": "gcp.gemini"}
#: 2025-01-01T00:00:00Z: traces hold no wall clock, so spans start here (plus each step's logical time)
#: unless the caller gives another start; the same run always gives the same bytes.
DEFAULT_START_NS = 1_735_689_600_000_000_000
_MS = 1_000_000
_STEP_NS = 1_000
#: a trace's logical clock and step numbers are capped so a span's time stays within 64 bits (a file may hold
#: any integer there): 30 years of milliseconds, a billion steps
MAX_T_MS, MAX_SEQ = 10 ** 12, 10 ** 9
TOOL_LANES = ("arguments", "authorization", "receipt")


def redacted(run: RunData) -> RunData:
    """A copy of the run whose records went through the writer's redaction (imported files may not have)."""
    copy = RunData(run.run_id, first_line=run.first_line)
    for record in (run.run, *run.events, run.summary):
        if record is not None:
            copy.add(orjson.loads(encode_record(record)))
    return copy


def _json(value: Any) -> str:
    return redact_text(orjson.dumps(value, default=str).decode())


def _int(value: Any) -> int:
    return value if type(value) is int and value >= 0 else 0


class _Builder:
    def __init__(self, run: RunData, content: bool, start_ns: int):
        self.run, self.content, self.start_ns = run, content, start_ns
        self.name = run.run_id
        self.trace_id = ids.trace_id(self.name)
        self.inputs = run.inputs if isinstance(run.inputs, dict) else {}
        self.model = self.inputs.get("model") if isinstance(self.inputs.get("model"), str) else None
        provider = self.inputs.get("provider") if isinstance(self.inputs.get("provider"), str) else None
        self.provider = PROVIDERS.get(provider, provider) if provider else None
        tools = self.inputs.get("tools") if isinstance(self.inputs.get("tools"), list) else []
        self.tools = {t["name"]: t for t in tools if isinstance(t, dict) and isinstance(t.get("name"), str)}
        self.spans: list[Span] = []
        self.chats: dict[int, Span] = {}
        self.tool_spans: dict[tuple[int, str], Span] = {}
        self.last_ms = 0
        self.root = self._span("root", f"{sc.INVOKE_AGENT} {AGENT}", KIND_INTERNAL, "")

    # -- spans ---------------------------------------------------------------------------------
    def _span(self, key: str, name: str, kind: int, parent: str) -> Span:
        span = Span(self.trace_id, ids.span_id(self.name, key), name, parent, kind)
        span.start_ns = span.end_ns = -1
        self.spans.append(span)
        return span

    def _at(self, t_ms: Any) -> int:
        return self.start_ns + min(_int(t_ms), MAX_T_MS) * _MS

    def _cover(self, span: Span, start: int, end: int) -> None:
        span.start_ns = start if span.start_ns < 0 else min(span.start_ns, start)
        span.end_ns = max(span.end_ns, end)

    def _chat(self, turn: int) -> Span:
        span = self.chats.get(turn)
        if span is None:
            name = f"{sc.CHAT} {self.model}" if self.model else sc.CHAT
            span = self.chats[turn] = self._span(f"chat/{turn}", name, KIND_CLIENT, self.root.span_id)
            attrs = span.attributes
            attrs[sc.OPERATION] = sc.CHAT
            if self.provider:
                attrs[sc.PROVIDER] = self.provider
            if self.model:
                attrs[sc.REQUEST_MODEL] = self.model
            budgets = self.inputs.get("budgets")
            if isinstance(budgets, dict) and _int(budgets.get("max_output_tokens")):
                attrs[sc.REQUEST_MAX_TOKENS] = budgets["max_output_tokens"]
            attrs[sc.TURN] = turn
            if self.content:
                attrs[sc.INPUT_MESSAGES] = _json(self._input_messages(turn))
        return span

    def _tool(self, turn: int, call_id: str, tool: Any) -> Span:
        key = (turn, call_id)
        span = self.tool_spans.get(key)
        if span is None:
            name = str(tool) if isinstance(tool, str) and tool else "tool"
            span = self.tool_spans[key] = self._span(f"tool/{turn}/{call_id}", f"{sc.EXECUTE_TOOL} {name}",
                                                     KIND_INTERNAL, self.root.span_id)
            attrs = span.attributes
            attrs.update({sc.OPERATION: sc.EXECUTE_TOOL, sc.TOOL_NAME: name, sc.TOOL_CALL_ID: call_id,
                          sc.TOOL_TYPE: "function", sc.TURN: turn})
            description = (self.tools.get(name) or {}).get("description")
            if isinstance(description, str):
                attrs[sc.TOOL_DESCRIPTION] = description
        return span

    # -- events --------------------------------------------------------------------------------
    def _event_attributes(self, event: dict[str, Any]) -> dict[str, Any]:
        attrs = {sc.EV_SEQ: event.get("seq"), sc.EV_LANE: event.get("lane"), sc.EV_KIND: event.get("kind"),
                 sc.EV_OUTCOME: event.get("outcome"), sc.EV_TURN: _int(event.get("turn")),
                 sc.EV_T_MS: _int(event.get("t_ms"))}
        for key, name in ((sc.EV_CODE, "code"), (sc.EV_CALL_ID, "call_id"), (sc.EV_SUMMARY, "summary")):
            if isinstance(event.get(name), str):
                attrs[key] = event[name]
        return attrs

    def add(self, event: dict[str, Any]) -> None:
        lane, kind, turn = event.get("lane"), str(event.get("kind") or event.get("lane")), _int(event.get("turn"))
        # one microsecond per step on top of the logical clock: steps that share a millisecond (a
        # recorded run's clock never moves) keep their order in any viewer, and in the importer
        at = self._at(event.get("t_ms")) + min(_int(event.get("seq")), MAX_SEQ) * _STEP_NS
        self.last_ms = max(self.last_ms, _int(event.get("t_ms")))
        data = event.get("data") if isinstance(event.get("data"), dict) else {}
        call_id = event.get("call_id")
        if lane == "http":
            self._http(event, turn, at, data)
            return
        if lane in TOOL_LANES and isinstance(call_id, str) and kind != "arguments.batch":
            owner = self._tool(turn, call_id, data.get("tool"))
            self._tool_details(owner, lane, data)
            if lane == "authorization" and event.get("outcome") in (OK, FAILED):  # the Agent Action Gate's words
                own = data.get("disposition")  # an imported gate's own word (simulate is no allow), if it agrees
                agrees = own in sc.DISPOSITIONS and (own == "deny") == (event["outcome"] == FAILED)
                owner.attributes[sc.TOOL_DISPOSITION] = own if agrees else (
                    "allow" if event["outcome"] == OK else "deny")
        elif lane == "answer" or not turn:
            owner = self.root
            if lane == "answer" and self.content and isinstance(data.get("text"), str):
                self.root.attributes[sc.OUTPUT_MESSAGES] = _json(
                    [{"role": "assistant", "parts": [{"type": "text", "content": data["text"]}], "finish_reason": "stop"}])
        else:
            owner = self._chat(turn)
            if kind == "generation.classify":
                self._classified(owner, data)
        self._cover(owner, at, at)
        owner.events.append(SpanEvent(kind, at, self._event_attributes(event)))
        if event.get("outcome") in (FAILED, RECOVERED) and owner is not self.root:
            owner.status_code = STATUS_ERROR
            owner.attributes[sc.ERROR_TYPE] = event.get("code") or "failed"
            owner.status_message = str(event.get("summary") or "")

    def _http(self, event: dict[str, Any], turn: int, at: int, data: dict[str, Any]) -> None:
        chat = self._chat(turn)
        request = data.get("request") if isinstance(data.get("request"), dict) else {}
        response = data.get("response") if isinstance(data.get("response"), dict) else {}
        method = request.get("method") if isinstance(request.get("method"), str) else "POST"
        span = self._span(f"http/{event.get('seq')}", method, KIND_CLIENT, chat.span_id)
        start = max(self.start_ns, at - _int(response.get("latency_ms")) * _MS)
        self._cover(span, start, at)
        self._cover(chat, start, at)
        attrs = span.attributes
        attrs[sc.HTTP_METHOD] = method
        url = request.get("url")
        if isinstance(url, str):
            attrs[sc.URL_FULL] = url
            host = urlsplit(url).hostname
            if host:
                attrs[sc.SERVER_ADDRESS] = host
        status = response.get("status")
        if type(status) is int:
            attrs[sc.HTTP_STATUS] = status
            chat.attributes[sc.HTTP_STATUS] = status
        if _int(data.get("attempt")) > 1:
            attrs[sc.HTTP_RESEND_COUNT] = data["attempt"] - 1
        if _int(data.get("backoff_ms")):
            attrs[sc.EV_BACKOFF_MS] = data["backoff_ms"]
        attrs.update(self._event_attributes(event))
        if event.get("outcome") in (FAILED, RECOVERED):
            span.status_code = STATUS_ERROR
            span.status_message = str(event.get("summary") or "")
            attrs[sc.ERROR_TYPE] = str(status) if type(status) is int and status >= 400 else (
                event.get("code") or "failed")
        body = response.get("body")
        if isinstance(body, dict):
            self._response_body(chat, body)

    def _response_body(self, chat: Span, body: dict[str, Any]) -> None:
        attrs = chat.attributes
        if isinstance(body.get("id"), str):
            attrs[sc.RESPONSE_ID] = body["id"]
        if isinstance(body.get("model"), str):
            attrs[sc.RESPONSE_MODEL] = body["model"]
        usage = body.get("usage") if isinstance(body.get("usage"), dict) else body.get("usageMetadata")
        if isinstance(usage, dict):
            for key, names in ((sc.USAGE_INPUT, ("input_tokens", "prompt_tokens", "promptTokenCount")),
                               (sc.USAGE_OUTPUT, ("output_tokens", "completion_tokens", "candidatesTokenCount"))):
                for name in names:
                    if _int(usage.get(name)) or usage.get(name) == 0:
                        attrs[key] = _int(usage.get(name))
                        break

    def _classified(self, chat: Span, data: dict[str, Any]) -> None:
        reason = data.get("finish_reason")
        if isinstance(reason, str):
            chat.attributes[sc.FINISH_REASONS] = [reason]
        if self.content:
            parts: list[dict[str, Any]] = []
            if isinstance(data.get("text"), str) and data["text"]:
                parts.append({"type": "text", "content": data["text"]})
            for call in data["calls"] if isinstance(data.get("calls"), list) else []:  # a trace may hold any JSON
                if isinstance(call, dict):
                    parts.append({"type": "tool_call", "id": call.get("call_id"), "name": call.get("name"),
                                  "arguments": call.get("arguments")})
            message: dict[str, Any] = {"role": "assistant", "parts": parts}
            message["finish_reason"] = {"tool_calls": "tool_call"}.get(reason, reason) if isinstance(reason, str) else "error"
            chat.attributes[sc.OUTPUT_MESSAGES] = _json([message])

    def _tool_details(self, span: Span, lane: str, data: dict[str, Any]) -> None:
        if not self.content:
            return
        if lane == "arguments" and "arguments" in data:
            span.attributes[sc.TOOL_CALL_ARGUMENTS] = _json(data["arguments"]) if not isinstance(
                data["arguments"], str) else redact_text(data["arguments"])
        elif lane == "receipt" and "result" in data:
            span.attributes[sc.TOOL_CALL_RESULT] = _json(data["result"])
            # the action ledger's receipt: a hash of the result (content only: a short result is guessable from it)
            span.attributes[sc.RECEIPT_HASH] = "sha256:" + hashlib.sha256(
                orjson.dumps(data["result"], default=str, option=orjson.OPT_SORT_KEYS)).hexdigest()

    def _input_messages(self, turn: int) -> list[dict[str, Any]]:
        """What the model was sent at this turn, rebuilt from the run: the question, earlier calls and their results."""
        messages: list[dict[str, Any]] = []
        if isinstance(self.inputs.get("user_input"), str):
            messages.append({"role": "user", "parts": [{"type": "text", "content": self.inputs["user_input"]}]})
        for event in self.run.events:
            if _int(event.get("turn")) >= turn:
                break
            data = event.get("data") if isinstance(event.get("data"), dict) else {}
            if event.get("kind") == "generation.classify" and isinstance(data.get("calls"), list) and data["calls"]:
                messages.append({"role": "assistant", "parts": [
                    {"type": "tool_call", "id": c.get("call_id"), "name": c.get("name"), "arguments": c.get("arguments")}
                    for c in data["calls"] if isinstance(c, dict)]})
            elif event.get("lane") == "receipt" and isinstance(event.get("call_id"), str):
                result = data.get("result") if "result" in data else {"error": data.get("error_type")}
                messages.append({"role": "tool", "parts": [
                    {"type": "tool_call_response", "id": event["call_id"], "response": result}]})
        return messages

    # -- the root ------------------------------------------------------------------------------
    def finish(self) -> list[Span]:
        root, run = self.root, self.run
        attrs = root.attributes
        attrs.update({sc.OPERATION: sc.INVOKE_AGENT, sc.AGENT_NAME: AGENT})
        if self.provider:
            attrs[sc.PROVIDER] = self.provider
        if self.model:
            attrs[sc.REQUEST_MODEL] = self.model
        attrs[sc.CONVERSATION_ID] = self.name
        attrs[sc.RUN_ID] = self.name
        for key, name in ((sc.SCENARIO, "scenario"), (sc.ABLATION, "ablation")):
            if isinstance(self.inputs.get(name), str):
                attrs[key] = self.inputs[name]
        if run.run and isinstance(run.run.get("producer"), str):
            attrs[sc.PRODUCER] = run.run["producer"]
        verdict = run.verdict()
        attrs.update({sc.STATUS: str(verdict["status"]), sc.READY: bool(verdict["ready"]),
                      sc.COMPLETE: bool(verdict["complete"])})
        metrics = (run.summary or {}).get("metrics")
        if isinstance(metrics, dict):
            for key, value in metrics.items():
                if type(value) is int:
                    attrs[sc.METRICS_PREFIX + key] = value
        failure = verdict["first_failure"]
        if failure is not None:
            root.status_code = STATUS_ERROR
            root.status_message = str(failure.get("reason") or "")
            attrs[sc.ERROR_TYPE] = str(failure.get("code"))
            attrs.update({sc.FAILURE_LANE: failure.get("lane"), sc.FAILURE_SEQ: failure.get("seq"),
                          sc.FAILURE_CODE: failure.get("code"), sc.FAILURE_REASON: failure.get("reason"),
                          sc.FAILURE_DECIDED_AT: failure.get("decided_at")})
            if verdict.get("responsibility"):  # model, harness, environment or guard (tracetui.trace.responsibility)
                attrs[FAILURE_RESPONSIBILITY] = verdict["responsibility"]
        if self.content:
            if isinstance(self.inputs.get("instructions"), str):
                attrs[sc.SYSTEM_INSTRUCTIONS] = _json([{"type": "text", "content": self.inputs["instructions"]}])
            if isinstance(self.inputs.get("user_input"), str):
                attrs[sc.INPUT_MESSAGES] = _json(
                    [{"role": "user", "parts": [{"type": "text", "content": self.inputs["user_input"]}]}])
            if self.tools:
                attrs[sc.TOOL_DEFINITIONS] = _json([
                    {"type": "function", "name": t.get("name"), "description": t.get("description"),
                     "parameters": t.get("parameters")} for t in self.tools.values()])
        root.start_ns = self.start_ns
        root.end_ns = max([self._at(self.last_ms)] + [span.end_ns for span in self.spans])
        for span in self.spans:
            if span.start_ns < 0:
                span.start_ns = span.end_ns = root.start_ns
            span.end_ns = max(span.end_ns, span.start_ns)
        return self.spans


def run_spans(run: RunData, content: bool = False, start_ns: int = DEFAULT_START_NS) -> list[Span]:
    """The spans of one run (root first), built from a redacted copy of it."""
    run = redacted(run)
    builder = _Builder(run, content, start_ns)
    for event in sorted(run.events, key=lambda e: e.get("seq") if type(e.get("seq")) is int else 0):
        builder.add(event)
    return builder.finish()
