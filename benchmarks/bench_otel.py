"""Export to OTLP/JSON and import it back, beside reading the same runs as a tracetui trace.

Prints figures; asserts nothing. The reference is ``read_trace`` of the native
file, measured in the same run; each figure is also given as a ratio to it. The
agents-under-a-chain trace is given beside the same spans in the shallowest tree.

    python benchmarks/bench_otel.py [--repeat N]
"""
from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import orjson

from tracetui.cli import main
from tracetui.otel.detect import read_any
from tracetui.otel.export import select, spans_of_runs, write_file
from tracetui.trace.reader import read_trace


def best(f, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        f()
        times.append(time.perf_counter() - start)
    return min(times) * 1000


def run(repeat: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        native, otlp = Path(tmp) / "runs.jsonl", Path(tmp) / "spans.jsonl"
        main.main(args=["generate", "--all", "--all-ablations", "-o", str(native)], standalone_mode=False)
        runs = select(str(native)).runs
        reference = best(lambda: read_trace(native), repeat)
        export = best(lambda: write_file(str(otlp), spans_of_runs(runs, False, 0)), repeat)
        content = best(lambda: write_file(str(otlp), spans_of_runs(runs, True, 0)), repeat)
        imported = best(lambda: read_any(otlp), repeat)
        long = Path(tmp) / "long.jsonl"
        long.write_bytes(orjson.dumps(_long_foreign_trace(4000)) + b"\n")
        foreign = best(lambda: read_any(long), repeat)
        print(f"{len(runs)} runs; reference read_trace: {reference:.1f} ms")
        for name, ms in (("export", export), ("export --content", content), ("import (--content file)", imported)):
            print(f"  {name:<24} {ms:7.1f} ms  {ms / reference:5.1f}× reference  {ms / len(runs) * 1000:6.0f} µs/run")
        print(f"  {'import 4,000 nested spans':<24} {foreign:7.1f} ms  {foreign / reference:5.1f}× reference  "
              f"(one foreign trace, each model call inside the one before)")
        flat, chained = Path(tmp) / "flat.jsonl", Path(tmp) / "chained.jsonl"
        flat.write_bytes(orjson.dumps(_agents_trace(AGENT_SPANS, chained=False)) + b"\n")
        chained.write_bytes(orjson.dumps(_agents_trace(AGENT_SPANS, chained=True)) + b"\n")
        shallow = best(lambda: read_any(flat), max(1, repeat // 2))
        deep = best(lambda: read_any(chained), max(1, repeat // 2))
        print(f"{AGENT_SPANS:,} spans, half of them agents (each a run): under the root {shallow:.0f} ms; "
              f"under a chain of the other half {deep:.0f} ms, {deep / shallow:.2f}× the shallow shape "
              f"(was quadratic: each agent walked the whole chain up)")


def _long_foreign_trace(n: int) -> dict:
    """One foreign run of ``n`` spans, each model call the child of the one before (the deepest tree)."""
    trace, spans = "0af7651916cd43dd8448eb211c80319c", []
    for i in range(n):
        op = "invoke_agent" if i == 0 else "chat"
        span = {"traceId": trace, "spanId": f"{i + 1:016x}", "name": op, "startTimeUnixNano": str(10 + i),
                "endTimeUnixNano": str(10 ** 12 - i), "attributes": [
                    {"key": "gen_ai.operation.name", "value": {"stringValue": op}},
                    {"key": "gen_ai.response.finish_reasons", "value": {"arrayValue": {"values": [
                        {"stringValue": "length"}]}}}]}
        if i:
            span["parentSpanId"] = f"{i:016x}"
        spans.append(span)
    return {"resourceSpans": [{"scopeSpans": [{"scope": {"name": "bench"}, "spans": spans}]}]}


#: spans of the agents-under-a-chain trace (the size that took 65 s when every agent walked the chain)
AGENT_SPANS = 20_000


def _agents_trace(n: int, chained: bool) -> dict:
    """One foreign trace of ``n`` spans: a root, ``n/2 - 1`` plain spans, then ``n/2`` agent spans. ``chained``:
    the plain spans are a chain (each inside the one before) and the agents sit under its deepest span;
    otherwise everything is a child of the root (the same spans, the shallowest tree)."""
    trace, spans, half = "0af7651916cd43dd8448eb211c80319c", [], n // 2
    for i in range(n):
        agent = i >= half
        attrs = [{"key": "gen_ai.operation.name", "value": {"stringValue": "invoke_agent"}},
                 {"key": "gen_ai.agent.name", "value": {"stringValue": f"agent-{i}"}}] if agent else []
        span = {"traceId": trace, "spanId": f"{i + 1:016x}", "name": "invoke_agent" if agent else "step",
                "startTimeUnixNano": str(10 + i), "endTimeUnixNano": str(10 ** 12 - i), "attributes": attrs}
        if i:
            span["parentSpanId"] = f"{(half if agent else i) if chained else 1:016x}"
        spans.append(span)
    return {"resourceSpans": [{"scopeSpans": [{"scope": {"name": "bench"}, "spans": spans}]}]}


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=5)
    run(parser.parse_args().repeat)
