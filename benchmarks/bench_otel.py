"""Export to OTLP/JSON and import it back; each import beside a plain orjson parse of the same OTLP file.

Prints figures; asserts nothing. Every figure is the min and median of ``--repeat`` (≥ 3) in this
process, as tracetui / reference: an import's reference is ``orjson.loads`` of every line of the
same file (what reading it costs before any meaning is given to it); an export's is ``read_trace``
of the native file it converts (reading the same runs). The agents-under-a-chain trace is given
beside the same spans in the shallowest tree.

The big-file table (issue 22) runs ``tracetui check`` of a realistic OTLP/JSON file (``--size-mb``, default
32; the docs' figures are of 1024: ``realistic_otlp.py``) in a process of its own, beside a process that
only parses the same lines with orjson (interleaved), as CPU (user + sys: the figure to read on a shared
machine), wall and peak RSS; and how soon ``open``'s source lists its first runs (the scan the explorer runs
after its first frame), beside the index of a trace file of the same size (``--no-open`` leaves it out).

    python benchmarks/bench_otel.py [--repeat N] [--size-mb MB] [--big-only] [--no-open]
"""
from __future__ import annotations

import argparse
import contextlib
import os
import sys
import tempfile
from pathlib import Path

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent))

import measure  # noqa: E402
from measure import row  # noqa: E402
from tracetui.cli import main  # noqa: E402
from tracetui.otel.detect import read_any  # noqa: E402
from tracetui.otel.export import select, spans_of_runs, write_file  # noqa: E402
from tracetui.trace.reader import read_trace  # noqa: E402


def walls(f, repeat: int) -> list[float]:
    return [measure.in_process(f).wall for _ in range(max(3, repeat))]


def parse(path: Path) -> None:
    loads = orjson.loads
    for line in path.read_bytes().splitlines():
        loads(line)


def run(repeat: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        native, otlp, plain = Path(tmp) / "runs.jsonl", Path(tmp) / "spans.jsonl", Path(tmp) / "plain.jsonl"
        with open(os.devnull, "w") as null, contextlib.redirect_stdout(null), contextlib.redirect_stderr(null):
            main.main(args=["generate", "--all", "--all-ablations", "-o", str(native)], standalone_mode=False)
        runs = select(str(native)).runs
        measure.header(f"bench_otel: {len(runs)} runs (generate --all --all-ablations), in one process")
        measure.columns()
        native_read = walls(lambda: read_trace(native), repeat)
        row("export", walls(lambda: write_file(str(plain), spans_of_runs(runs, False, 0)), repeat),
            native_read, "read_trace native", unit="ms")
        row("export --content", walls(lambda: write_file(str(otlp), spans_of_runs(runs, True, 0)), repeat),
            native_read, "read_trace native", unit="ms")
        row("import (the --content file)", walls(lambda: read_any(otlp), repeat),
            walls(lambda: parse(otlp), repeat), "orjson of same file", unit="ms",
            note=f"({otlp.stat().st_size / 1e6:.1f} MB)")
        long = Path(tmp) / "long.jsonl"
        long.write_bytes(orjson.dumps(_long_foreign_trace(4000)) + b"\n")
        row("import 4,000 nested spans", walls(lambda: read_any(long), repeat),
            walls(lambda: parse(long), repeat), "orjson of same file", unit="ms",
            note="(one foreign trace, each model call inside the one before)")
        flat, chained = Path(tmp) / "flat.jsonl", Path(tmp) / "chained.jsonl"
        flat.write_bytes(orjson.dumps(_agents_trace(AGENT_SPANS, chained=False)) + b"\n")
        chained.write_bytes(orjson.dumps(_agents_trace(AGENT_SPANS, chained=True)) + b"\n")
        shallow = walls(lambda: read_any(flat), repeat)
        row(f"import {AGENT_SPANS:,} spans, agents under root", shallow, walls(lambda: parse(flat), repeat),
            "orjson of same file", unit="ms")
        row("  the same agents under a chain", walls(lambda: read_any(chained), repeat), shallow,
            "under the root", unit="ms", note="(was quadratic: each agent walked the whole chain up)")


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


#: a process that parses the lines of a file with orjson and nothing more: the reference of ``check``
PARSE_ONLY = "import sys, orjson\nloads = orjson.loads\nfor line in open(sys.argv[1], 'rb'):\n    loads(line)\n"


def _head_lines(path: Path, size: int) -> Path:
    """The whole lines of the first ``size`` bytes of ``path``, as a file beside it."""
    with open(path, "rb") as f:
        head = f.read(size)
    out = path.with_name(path.stem + f"-head{size >> 20}mb.jsonl")
    out.write_bytes(head[:head.rfind(b"\n") + 1])
    return out


def first_runs(source) -> float:
    """Seconds until a source's scan has listed a run (what the explorer shows after its first frame)."""
    import time

    start = time.perf_counter()
    for _ in source.scan():
        if len(source.runs()):
            break
    took = time.perf_counter() - start
    source.close()
    return took


def big(size_mb: float, repeat: int, with_open: bool = True) -> None:
    from realistic import trace_file
    from realistic_otlp import realistic_otlp

    from tracetui.otel.stream_source import StreamedOtlpSource
    from tracetui.trace.index import IndexedSource

    path = realistic_otlp(size_mb)
    measure.header(f"bench_otel big: check and open of {path.name} ({path.stat().st_size / 2**20:,.0f} MiB, "
                   f"foreign GenAI traces as a file exporter writes them)")
    measure.columns()
    checks, parses = [], []
    for _ in range(max(3, repeat)):  # interleaved: a load that comes and goes weighs on both alike
        checks.append(measure.run([sys.executable, "-m", "tracetui", "check", str(path)]))
        parses.append(measure.run([sys.executable, "-c", PARSE_ONLY, str(path)]))
    measure.cpu_row("check FILE (CPU)", checks, parses, "orjson of its lines")
    print("   (target: at most 2.00× at 1 GB)")
    row("check FILE (wall)", [c.wall for c in checks], [p.wall for p in parses], "orjson of its lines")
    row("check FILE peak RSS", [c.rss_mb for c in checks], [p.rss_mb for p in parses], "orjson of its lines",
        unit="MB", note="(target: at most 300 MB at 1 GB)")
    sample = _head_lines(path, 16 * 2**20)  # every run read whole and redacted: what open loads of each run shown
    row("import every run whole (16 MiB of it)", walls(lambda: read_any(sample), repeat),
        walls(lambda: parse(sample), repeat), "orjson of same lines", unit="ms",
        note="(redacted, all events: open's load of a run, check --explain)")
    sample.unlink()
    if not with_open:
        return
    native, _ = trace_file(max(1, round(size_mb)))  # the realistic tracetui trace of the same size
    ours = [first_runs(StreamedOtlpSource(path)) for _ in range(max(3, repeat))]
    reference = [first_runs(IndexedSource([str(native)])) for _ in range(max(3, repeat))]
    row("open FILE: first runs listed", ours, reference, "a trace file's index", unit="ms")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--size-mb", type=float, default=32)
    parser.add_argument("--big-only", action="store_true")
    parser.add_argument("--no-open", action="store_true", help="check only (open's row indexes a trace file as big)")
    args = parser.parse_args()
    if not args.big_only:
        run(args.repeat)
    big(args.size_mb, args.repeat, with_open=not args.no_open)
