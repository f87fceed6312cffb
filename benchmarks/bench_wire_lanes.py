"""Reading a recorded run's lanes when one response calls many tools in parallel.

A hostile upstream can put tens of thousands of calls in one 4 MiB response, and the agent sends
each result back. Matching calls to results must stay linear: this prints the time ``events_of``
takes for N and 8N parallel calls (min of ``--repeat``) and the ratio of their times per call,
measured in the same run (machines are shared and noisy: compare the ratio, not the figures).
Linear is a ratio near 1; the matching this replaced searched every result for every call: 2.5
from 500 to 4,000 calls (1.3 s for 4,000), growing with N (about 15 minutes for 60,000).

    python benchmarks/bench_wire_lanes.py [--calls N] [--repeat N]
"""
from __future__ import annotations

import argparse
import hashlib
import time
from typing import Any

import orjson

from tracetui.record.exchange import AgentExit, WireExchange
from tracetui.record.wire_lanes import events_of

EXIT_0 = AgentExit(0, None, False, True, None)
TOOLS = [{"type": "function", "function": {"name": "read_order", "parameters": {"type": "object"}}}]


def _exchange(i: int, body: dict[str, Any], answer: dict[str, Any]) -> WireExchange:
    request = {"method": "POST", "url": "/v1/chat/completions", "provider": "openai-chat", "model": "m",
               "stream": False, "body": body, "body_sha256": hashlib.sha256(orjson.dumps(body)).hexdigest(),
               "retry_count": 0}
    return WireExchange(i, "openai-chat", request, {"status": 200, "headers": {}, "body": answer, "latency_ms": 1},
                        False)


def run_of(n: int) -> list[WireExchange]:
    calls = [{"id": f"call_{k}", "type": "function", "function": {"name": "read_order", "arguments": "{}"}}
             for k in range(n)]
    user = [{"role": "user", "content": "status of my orders?"}]
    answered = user + [{"role": "assistant", "tool_calls": calls}] + [
        {"role": "tool", "tool_call_id": f"call_{k}", "content": "delivered"} for k in reversed(range(n))]

    def completion(message: dict[str, Any], finish: str) -> dict[str, Any]:
        return {"id": "c", "object": "chat.completion", "model": "m",
                "choices": [{"index": 0, "finish_reason": finish, "message": {"role": "assistant", **message}}]}

    return [_exchange(0, {"messages": user, "tools": TOOLS}, completion({"tool_calls": calls}, "tool_calls")),
            _exchange(1, {"messages": answered, "tools": TOOLS}, completion({"content": "all delivered"}, "stop"))]


def best(n: int, repeat: int) -> float:
    exchanges = run_of(n)
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        events_of(exchanges, EXIT_0)
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    small, large = args.calls, 8 * args.calls
    t_small, t_large = best(small, args.repeat), best(large, args.repeat)
    print(f"{small:>7} parallel calls: {t_small * 1000:8.1f} ms ({t_small / small * 1e6:.1f} µs per call)")
    print(f"{large:>7} parallel calls: {t_large * 1000:8.1f} ms ({t_large / large * 1e6:.1f} µs per call)")
    print(f"per-call ratio {large} / {small}: {(t_large / large) / (t_small / small):.2f} (linear: about 1)")


if __name__ == "__main__":
    main()
