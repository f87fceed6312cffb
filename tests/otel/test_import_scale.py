"""Importing a long foreign trace costs work in proportion to its spans, never to their square.

No clock: the work is counted as the lines of ``tracetui.otel`` that run (a
deterministic count), for a trace of N spans and one of 2N. Linear work doubles;
a rule that rescans every earlier span or event for each new one quadruples it
(8,000 spans took 37 s to open).
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from otel_builders import exception, span, traces_data, write

import tracetui.otel
from tracetui.otel.detect import read_any

OTEL = str(Path(tracetui.otel.__file__).parent)
TOOLS = json.dumps([{"type": "function", "name": "read_order", "parameters": {"type": "object"}}])


def _chat(i: int, parent: str, calls: list[str]) -> dict:
    parts = [{"type": "tool_call", "id": c, "name": "read_order", "arguments": "{}"} for c in calls]
    return span("chat m", f"c{i:015x}", parent, 10 * i, 10 * i + 5, kind=3, gen_ai__operation__name="chat",
                gen_ai__tool__definitions=TOOLS, gen_ai__response__finish_reasons=["tool_calls"],
                gen_ai__output__messages=json.dumps([{"role": "assistant", "parts": parts}]))


def _spans(shape: str, n: int) -> list[dict]:
    root = span("invoke_agent a", "a000000000000001", "", 0, 10 * n + 10, gen_ai__operation__name="invoke_agent")
    out = [root]
    for i in range(1, n):
        if shape == "nested":  # each model call inside the one before it
            out.append(_chat(i, out[-1]["spanId"], []))
        elif shape == "calls":  # a model call, the tool it asked for (failing every other time), its HTTP attempt
            out.append(_chat(i, root["spanId"], [f"call_{i}"]))
            out.append(span("execute_tool read_order", f"d{i:015x}", root["spanId"], 10 * i + 6, 10 * i + 8,
                            status=2 if i % 2 else 0, events=[exception("IOError", "down")] if i % 2 else None,
                            gen_ai__operation__name="execute_tool", gen_ai__tool__name="read_order",
                            gen_ai__tool__call__id=f"call_{i}"))
            out.append(span("POST", f"e{i:015x}", out[-2]["spanId"], 10 * i + 1, 10 * i + 2, kind=3,
                            http__request__method="POST", http__response__status_code=503 if i % 3 else 200))
        elif shape == "steps in error":  # each step inside the one before it, all failed (smolagents' steps)
            out.append(span(f"Step {i}", f"a{i:015x}", out[-1]["spanId"], i, 10 * n - i, status=2,
                            events=[exception("AgentError", "step failed")], openinference__span__kind="CHAIN"))
        elif shape == "agents under a chain":  # a chain half the trace deep, then agents under its deepest span
            parent = out[-1]["spanId"] if i <= n // 2 else out[n // 2]["spanId"]
            attributes = {"gen_ai__operation__name": "invoke_agent"} if i > n // 2 else {}
            out.append(span("step", f"f{i:015x}", parent, i, 10 * n - i, **attributes))
        else:  # model calls whose tool calls never get a result
            out.append(_chat(i, root["spanId"], [f"call_{i}"]))
    return out


def _work(path: Path) -> int:
    lines = 0

    def trace(frame, event, arg):
        nonlocal lines
        if not frame.f_code.co_filename.startswith(OTEL):
            return None
        if event == "line":
            lines += 1
        return trace

    sys.settrace(trace)
    try:
        read_any(path)
    finally:
        sys.settrace(None)
    return lines


@pytest.mark.parametrize("shape", ["nested", "calls", "unanswered", "agents under a chain", "steps in error"])
def test_twice_the_spans_is_about_twice_the_work(tmp_path, shape):
    small, large = (write(tmp_path / f"{n}.jsonl", traces_data(*_spans(shape, n))) for n in (300, 600))
    ratio = _work(large) / _work(small)
    assert ratio < 2.5, f"{shape}: twice the spans cost {ratio:.1f}× the work"


def test_agents_under_a_deep_chain_walk_each_span_once(monkeypatch):
    """The issue's shape, at its size: 10,000 spans in a chain and 10,000 agents under its deepest one
    (65 s to open when each agent walked the whole chain). The steps up the tree are counted."""
    from tracetui.otel import importer
    from tracetui.otel.spans import Span

    n = 20_000
    chain = [Span("0af7651916cd43dd8448eb211c80319c", f"{i + 1:016x}", "step",
                  parent_span_id=f"{i:016x}" if i else "") for i in range(n // 2)]
    agents = [Span(chain[0].trace_id, f"{n + i:016x}", "invoke_agent", parent_span_id=chain[-1].span_id,
                   attributes={"gen_ai.operation.name": "invoke_agent"}) for i in range(n // 2)]
    walks = []

    class Counted(importer._AgentAbove):
        def __init__(self, *args):
            super().__init__(*args)
            walks.append(self)

    monkeypatch.setattr(importer, "_AgentAbove", Counted)
    units = importer._units(chain + agents)
    assert len(units) == n // 2  # each agent is a run of its own
    assert walks and sum(w.walked for w in walks) <= 2 * n, f"{sum(w.walked for w in walks)} steps for {n} spans"
