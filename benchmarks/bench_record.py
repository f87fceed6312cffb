"""The recording proxy's cost: an agent talking to a model server through ``tracetui record``'s proxy,
beside the same agent talking to the same server directly (the reference), measured in the same run.

Three processes, as in use: the scripted model server, the proxy (a process of its own, as
``tracetui record`` is), and the agent (here, httpx clients in this process). Figures:

- latency per exchange of a 200 ms model answer (median and p99), and of an answer with no delay
  (what the proxy itself adds, with nothing to hide it);
- throughput with 8 concurrent agents, 200 ms answers: exchanges per second;
- the first streamed event: time from the server writing it to the agent reading it (the server
  puts its clock in the event; the clock is the machine's monotonic one, shared by the processes).

Targets (issue 21): ≤ 1.10× on a 200 ms exchange; the first streamed byte passed within 5 ms.

    python benchmarks/bench_record.py [--repeat N] [--exchanges N]
"""
from __future__ import annotations

import argparse
import json
import socket
import statistics
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
from measure import columns, header, row  # noqa: E402

CHAT = {"id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "gpt-x",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "o-1 shipped"}, "finish_reason": "stop"}]}


# -- the processes


def serve_model() -> None:
    """The scripted model server: waits ``sleep_ms`` (from the request) and answers, or streams events
    each carrying the clock at which it was written."""

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):
            pass

        def setup(self):  # as a real server does: no Nagle delay on small writes (it would swamp every figure)
            super().setup()
            self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

        def do_POST(self):
            body = json.loads(self.rfile.read(int(self.headers.get("content-length") or 0)))
            time.sleep(body.get("sleep_ms", 0) / 1000)
            if body.get("stream"):
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("transfer-encoding", "chunked")
                self.end_headers()
                for n in range(3):
                    time.sleep(0.02)  # the model thinks; then the event goes out, stamped
                    frame = f"data: {json.dumps({'n': n, 't': time.perf_counter()})}\n\n".encode()
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(frame), frame))
                self.wfile.write(b"0\r\n\r\n")
                return
            payload = json.dumps(CHAT).encode()
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    print(server.server_address[1], flush=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    sys.stdin.read()  # until the benchmark ends


def serve_proxy(upstream: str) -> None:
    from tracetui.record.proxy import RecordingProxy

    with RecordingProxy({"openai": upstream}) as proxy:
        print(proxy.port, flush=True)
        sys.stdin.read()


def _spawn(*args: str) -> tuple[subprocess.Popen, str]:
    proc = subprocess.Popen([sys.executable, __file__, *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            text=True)
    return proc, f"http://127.0.0.1:{proc.stdout.readline().strip()}"


# -- the agent


def exchange(client: httpx.Client, url: str, sleep_ms: int) -> float:
    start = time.perf_counter()
    response = client.post(f"{url}/v1/chat/completions", json={"model": "gpt-x", "sleep_ms": sleep_ms,
                                                               "messages": [{"role": "user", "content": "o-1?"}]})
    response.read()
    assert response.status_code == 200, response.text
    return time.perf_counter() - start


def latencies(url: str, sleep_ms: int, count: int) -> list[float]:
    with httpx.Client(timeout=30) as client:
        exchange(client, url, 0)  # a warm connection, as an SDK's pool keeps one
        return [exchange(client, url, sleep_ms) for _ in range(count)]


def throughput(url: str, agents: int, each: int, sleep_ms: int) -> float:
    def agent(_: int) -> None:
        with httpx.Client(timeout=30) as client:
            for _ in range(each):
                exchange(client, url, sleep_ms)

    start = time.perf_counter()
    with ThreadPoolExecutor(agents) as pool:
        list(pool.map(agent, range(agents)))
    return agents * each / (time.perf_counter() - start)


def first_event_delays(url: str, count: int) -> list[float]:
    """Per stream: how long the first event took from the server's write to this agent's read."""
    delays = []
    with httpx.Client(timeout=30) as client:
        for _ in range(count):
            with client.stream("POST", f"{url}/v1/chat/completions",
                               json={"model": "gpt-x", "stream": True, "messages": []}) as response:
                lines = response.iter_lines()
                for line in lines:
                    if line.startswith("data: "):
                        delays.append(time.perf_counter() - json.loads(line[6:])["t"])
                        break
                for _ in lines:
                    pass
    return delays


def p99(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(0.99 * (len(ordered) - 1))))]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--exchanges", type=int, default=20, help="sequential exchanges per series")
    args = parser.parse_args()
    repeat = max(3, args.repeat)
    model, model_url = _spawn("--serve-model")
    proxy, proxy_url = _spawn("--serve-proxy", model_url)
    try:
        header("tracetui record: the proxy beside talking to the model server directly")
        columns("direct")
        for sleep_ms in (200, 0):
            ours, ref, ours_p99, ref_p99 = [], [], [], []
            for _ in range(repeat):
                a, b = latencies(model_url, sleep_ms, args.exchanges), latencies(proxy_url, sleep_ms, args.exchanges)
                ref.append(statistics.median(a))
                ours.append(statistics.median(b))
                ref_p99.append(p99(a))
                ours_p99.append(p99(b))
            row(f"latency / exchange, {sleep_ms} ms answer, median", ours, ref, "direct", unit="ms",
                note=f"(added {1000 * (statistics.median(ours) - statistics.median(ref)):.2f} ms)")
            row(f"latency / exchange, {sleep_ms} ms answer, p99", ours_p99, ref_p99, "direct", unit="ms")
        ours_tp, ref_tp = [], []
        for _ in range(repeat):
            ref_tp.append(throughput(model_url, 8, 10, 200))
            ours_tp.append(throughput(proxy_url, 8, 10, 200))
        ratio = statistics.median(ref_tp) / statistics.median(ours_tp)
        row("throughput, 8 agents, 200 ms answers", ours_tp, ref_tp, "direct", unit="exch/s",
            note=f"(time per exchange: {ratio:.3f}× direct; target ≤ 1.10×)")
        ours_first, ref_first = [], []
        for _ in range(repeat):
            ref_first.append(statistics.median(first_event_delays(model_url, 10)))
            ours_first.append(statistics.median(first_event_delays(proxy_url, 10)))
        row("first streamed event, write → read", ours_first, ref_first, "direct", unit="ms",
            note="(target: within 5 ms)")
    finally:
        for proc in (proxy, model):
            proc.stdin.close()
            proc.wait(10)


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--serve-model":
        serve_model()
    elif len(sys.argv) > 2 and sys.argv[1] == "--serve-proxy":
        serve_proxy(sys.argv[2])
    else:
        main()
