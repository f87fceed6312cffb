"""``check`` reads a run for its verdict only (no data, only what decides it redacted): the same verdict and
origin as the whole run gives, whatever its spans say, secrets in its errors included."""
from __future__ import annotations

import orjson
from hypothesis import given, settings, strategies as st

from tracetui.otel.checked import _where
from tracetui.otel.importer import plan_trace, unit_run
from tracetui.otel.otlp_read import spans_of
from tracetui.otel.clean import Cleaner
from otel_builders import exception, span, traces_data

TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"
#: error texts: plain, a rate limit, a permission denial, one holding a credential (redacted in the reason)
_errors = st.sampled_from(["", "boom", "429 Too Many Requests", "permission denied for refund",
                           "auth failed with key sk-proj-ABCDEFGHIJKLMNOPQRSTUVWXyz0123456789abcd",
                           "AKIAIOSFODNN7EXAMPLE rejected", "max turns exceeded", "order not found"])


@st.composite
def _trace(draw) -> list[dict]:
    root_id = "a000000000000001"
    spans, t = [], 1
    for n in range(draw(st.integers(0, 4))):
        chat_id = f"{0xb000000000000000 + n:016x}"
        for attempt in range(draw(st.integers(0, 2))):
            code = draw(st.sampled_from([200, 200, 429, 500]))
            spans.append(span("POST", f"{0xc000000000000000 + n * 4 + attempt:016x}", chat_id, t, t + 1, kind=3,
                              status=2 if code >= 400 else 0, trace=TRACE, http__request__method="POST",
                              http__response__status_code=code))
            t += 2
        call = f"call_{n}"
        tool_call = draw(st.booleans())
        parts = ([{"type": "tool_call", "id": call, "name": draw(st.sampled_from(["read_order", "refund"])),
                   "arguments": draw(st.sampled_from(['{"order_id": "A-1"}', "{bad", ""]))}] if tool_call else
                 [{"type": "text", "content": draw(st.sampled_from(["done", "", " "]))}])
        error = draw(_errors)
        spans.append(span("chat", chat_id, root_id, t, t + 3, kind=3, status=2 if error and draw(st.booleans()) else 0,
                          message=error, trace=TRACE, gen_ai__operation__name="chat",
                          gen_ai__response__finish_reasons=[draw(st.sampled_from(["stop", "tool_calls", "length"]))],
                          gen_ai__output__messages=orjson.dumps([{"role": "assistant", "parts": parts}]).decode()))
        t += 4
        if tool_call and draw(st.booleans()):
            failed = draw(_errors)
            spans.append(span("execute_tool read_order", f"{0xd000000000000000 + n:016x}", root_id, t, t + 1,
                              status=2 if failed else 0, message=failed, trace=TRACE,
                              events=[exception("ToolError", failed)] if failed and draw(st.booleans()) else None,
                              gen_ai__operation__name="execute_tool", gen_ai__tool__name="read_order",
                              gen_ai__tool__call__id=call, gen_ai__tool__call__result=failed or "shipped"))
            t += 2
    if draw(st.booleans()):  # else the root is missing: an incomplete run
        crashed = draw(_errors)
        spans.append(span("invoke_agent orders", root_id, "", 0, t + 1, status=2 if crashed else 0, message=crashed,
                          trace=TRACE, gen_ai__operation__name="invoke_agent", gen_ai__agent__name="orders"))
    return spans


@settings(max_examples=300, deadline=None)
@given(raw_spans=_trace())
def test_a_run_read_for_its_verdict_has_the_whole_runs_verdict_and_origin(raw_spans):
    spans = spans_of(traces_data(*raw_spans), 1, "f", [])
    if not spans:
        return
    for root, members, complete, label, _ in plan_trace(spans):
        whole = unit_run(root, members, complete, label, Cleaner())
        checked = unit_run(root, members, complete, label, Cleaner(), verdict_only=True)
        assert checked.verdict() == whole.verdict()
        assert _where(checked) == _where(whole)
        assert all("data" not in e for e in checked.events)
