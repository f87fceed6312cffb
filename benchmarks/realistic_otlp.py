"""A realistic OTLP/JSON benchmark file: foreign GenAI agent traces as a collector's file exporter writes them.

Each trace is one agent run (OpenTelemetry GenAI conventions, content captured): an ``invoke_agent`` root,
1-6 ``chat`` spans whose input and output messages are JSON of log-normal size (median ~600 bytes, a long
tail up to 48 KiB), the tools they asked for (every 7th failing), an HTTP attempt under each model call
(every 11th a 429 then retried), one run in 5 ending with an error. Spans are written as they end (a child
before its parent, the root last), eight runs in flight at once, in lines of up to 512 spans (the batch
processor's default), so a trace's spans are spread over neighbouring lines. Cached under
``benchmarks/out/`` by size.

    python benchmarks/realistic_otlp.py --size-mb 64      # writes the file, prints its path
"""
from __future__ import annotations

import argparse
import json
import random
from pathlib import Path

import orjson

OUT = Path(__file__).resolve().parent / "out"
MiB = 1024 * 1024
WORDS = ("order refund tenant shipment invoice customer status delivered processing payment receipt "
         "warehouse carrier address policy window request account balance the a of to and for with").split()
IN_FLIGHT, BATCH = 8, 512


def _kv(attrs: dict) -> list[dict]:
    out = []
    for key, value in attrs.items():
        if isinstance(value, bool):
            out.append({"key": key, "value": {"boolValue": value}})
        elif isinstance(value, int):
            out.append({"key": key, "value": {"intValue": str(value)}})
        elif isinstance(value, list):
            out.append({"key": key, "value": {"arrayValue": {"values": [{"stringValue": v} for v in value]}}})
        else:
            out.append({"key": key, "value": {"stringValue": value}})
    return out


def _text(rng: random.Random) -> str:
    size = min(48 * 1024, int(rng.lognormvariate(6.4, 1.0)))
    words, total = [], 0
    while total < size:
        word = rng.choice(WORDS)
        words.append(word)
        total += len(word) + 1
    return " ".join(words)


def _run(rng: random.Random, n: int, t0: int) -> list[dict]:
    """One trace's spans in the order they end."""
    trace = f"{rng.getrandbits(128):032x}"
    ids = iter(f"{rng.getrandbits(64) | 1:016x}" for _ in range(1000))
    root_id, t = next(ids), t0
    failed = n % 5 == 0
    spans: list[dict] = []

    def span(name, parent, start, end, attrs, kind=1, status=0, message=""):
        spans.append({"traceId": trace, "spanId": next(ids), "parentSpanId": parent, "name": name, "kind": kind,
                      "startTimeUnixNano": str(start), "endTimeUnixNano": str(end), "attributes": _kv(attrs),
                      "status": {"code": status, **({"message": message} if message else {})}})
        return spans[-1]["spanId"]

    messages = [{"role": "user", "parts": [{"type": "text", "content": _text(rng)}]}]
    for turn in range(rng.randint(1, 6)):
        last = turn == 5 or rng.random() < 0.35
        call = f"call_{rng.getrandbits(48):012x}"
        parts = ([{"type": "text", "content": _text(rng)}] if last else
                 [{"type": "tool_call", "id": call, "name": "read_order",
                   "arguments": json.dumps({"order_id": f"A-{rng.randint(1000, 99999)}"})}])
        start, end = t, t + rng.randint(200, 4000) * 1_000_000
        chat = next(ids)
        if turn % 11 == 10:
            span("POST", chat, start, start + 1_000_000, {"http.request.method": "POST",
                                                          "http.response.status_code": 429}, kind=3, status=2)
        span("POST", chat, start + 2_000_000, end - 1_000_000, {"http.request.method": "POST",
                                                                "http.response.status_code": 200}, kind=3)
        attrs = {"gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4.1-mini",
                 "gen_ai.usage.input_tokens": rng.randint(100, 9000), "gen_ai.usage.output_tokens": rng.randint(5, 900),
                 "gen_ai.response.id": f"chatcmpl-{rng.getrandbits(64):016x}",
                 "gen_ai.response.finish_reasons": ["stop" if last else "tool_calls"],
                 "gen_ai.input.messages": json.dumps(messages),
                 "gen_ai.output.messages": json.dumps([{"role": "assistant", "parts": parts}])}
        spans.append({"traceId": trace, "spanId": chat, "parentSpanId": root_id, "name": "chat gpt-4.1-mini",
                      "kind": 3, "startTimeUnixNano": str(start), "endTimeUnixNano": str(end),
                      "attributes": _kv(attrs), "status": {"code": 0}})
        t = end + 1_000_000
        if last:
            break
        bad = rng.random() < 1 / 7
        result = "order not found" if bad else json.dumps({"status": "shipped", "eta": "2 days"})
        span("execute_tool read_order", root_id, t, t + 5_000_000,
             {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "read_order", "gen_ai.tool.call.id": call,
              "gen_ai.tool.call.result": result}, status=2 if bad else 0, message="not found" if bad else "")
        messages = messages + [{"role": "assistant", "parts": parts},
                               {"role": "tool", "parts": [{"type": "tool_call_response", "id": call,
                                                           "response": result}]}]
        t += 6_000_000
    spans.append({"traceId": trace, "spanId": root_id, "name": "invoke_agent orders", "kind": 1,
                  "startTimeUnixNano": str(t0 - 1_000_000), "endTimeUnixNano": str(t + 1_000_000),
                  "attributes": _kv({"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "orders"}),
                  "status": {"code": 2 if failed else 0, **({"message": "agent crashed"} if failed else {})}})
    for s in spans:
        if not s.get("parentSpanId"):
            s.pop("parentSpanId", None)
    return spans


def _line(spans: list[dict]) -> bytes:
    return orjson.dumps({"resourceSpans": [{
        "resource": {"attributes": _kv({"service.name": "shop-agent", "telemetry.sdk.language": "python"})},
        "scopeSpans": [{"scope": {"name": "opentelemetry.instrumentation.openai_v2", "version": "0.52b0"},
                        "spans": spans}]}]}) + b"\n"


def write(path: Path, size_mb: float, seed: int = 0) -> Path:
    """Runs in flight interleaved span by span (each run's in the order they end), cut into batches."""
    rng = random.Random(seed)
    limit, n, written = int(size_mb * MiB), 0, 0
    tmp = path.with_suffix(".part")
    with open(tmp, "wb") as out:
        flight: list[list[dict]] = []
        batch: list[dict] = []
        while written < limit or flight:
            while written < limit and len(flight) < IN_FLIGHT:
                n += 1
                flight.append(_run(rng, n, 1_700_000_000_000_000_000 + n * 10_000_000_000))
            pick = rng.randrange(len(flight))
            batch.append(flight[pick].pop(0))
            if not flight[pick]:
                flight.pop(pick)
            if len(batch) == BATCH or (not flight and batch):
                line = _line(batch)
                out.write(line)
                written += len(line)
                batch = []
    tmp.replace(path)
    return path


def realistic_otlp(size_mb: float) -> Path:
    """The cached file of about ``size_mb`` MiB."""
    OUT.mkdir(exist_ok=True)
    path = OUT / f"realistic-otlp-{size_mb:g}mb.jsonl"
    return path if path.exists() else write(path, size_mb)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--size-mb", type=float, default=64)
    print(realistic_otlp(parser.parse_args().size_mb))
