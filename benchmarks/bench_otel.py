"""Export to OTLP/JSON and import it back, beside reading the same runs as a tracetui trace.

Prints figures; asserts nothing. The reference is ``read_trace`` of the native
file, measured in the same run; each figure is also given as a ratio to it.

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


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=5)
    run(parser.parse_args().repeat)
