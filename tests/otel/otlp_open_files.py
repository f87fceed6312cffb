"""An OTLP/JSON file for the tests of ``open`` and of standard input: foreign runs whose provisional names
change once the file is read (trace ids sharing 8 digits), a trace spread over lines, a failing tool, a
line that is not JSON (a problem with its line number), beside the built-in scenarios exported."""
from __future__ import annotations

from pathlib import Path

import orjson
from otel_builders import span, traces_data

SAMPLE = Path(__file__).resolve().parents[2] / "sample_traces" / "otel-scenarios.jsonl"
#: the first two share 8 digits, then 12: their names grow once both are known
TRACE_IDS = ("4bf92f3577b34da6a3ce929d0e0e4736", "4bf92f3577b34da6b000000000000001", "0af7651916cd43dd8448eb211c80319c")


def _run(trace: str, n: int, failing: bool) -> list[dict]:
    root = f"{n:04x}000000000001"
    return [span("chat gpt-x", f"{n:04x}000000000002", root, 1, 5, trace=trace, kind=3, gen_ai__operation__name="chat",
                 gen_ai__output__messages=orjson.dumps([{"role": "assistant", "parts": [
                     {"type": "text", "content": f"answer {n} " + "words " * 50}]}]).decode()),
            span("execute_tool read_order", f"{n:04x}000000000003", root, 6, 8, trace=trace,
                 status=2 if failing else 0, message="not found" if failing else "",
                 gen_ai__operation__name="execute_tool", gen_ai__tool__name="read_order"),
            span("invoke_agent orders", root, "", 0, 10, trace=trace, gen_ai__operation__name="invoke_agent",
                 gen_ai__agent__name="orders")]


def otlp_file(path: Path) -> Path:
    sample = SAMPLE.read_bytes().splitlines()
    first, second, third = (_run(t, n + 1, n == 1) for n, t in enumerate(TRACE_IDS))
    lines = [*sample[:10],
             orjson.dumps(traces_data(*first[:2])),  # a trace over two lines, its root last
             orjson.dumps(traces_data(*first[2:], *third)),
             b'{"resourceSpans": [ not json',
             *sample[10:20],
             orjson.dumps(traces_data(*second)),
             *sample[20:]]
    path.write_bytes(b"\n".join(lines) + b"\n")
    return path
