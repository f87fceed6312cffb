"""Benchmark traces: realistic by default, the replicated file only as a labelled best case.

Both start from a few hundred real runs (every scenario × ablation × seed, every fault, transient
failures), encoded by the trace writer. The *realistic* file makes every run its own, as traces of
real traffic are: a distinct run id, request and response ids, timings, order ids and amounts drawn
at random, three runs in four ready, every failure's reason distinct (it names a request id and an amount), and the size of
each model response drawn from a log-normal distribution (median ~600 bytes of text, a long tail
up to 48 KiB) written as the body's ``instructions`` echo, as the Responses API returns it. The
*replicated* file repeats the same runs under new run ids only: nearly every summary is one a memo
has seen before, which is the best case for any reader that caches (label it so).

Both interleave every 8th pair of runs line by line and leave every 997th run without a summary.
Files are cached under ``benchmarks/out/`` by size and kind.

    python benchmarks/realistic.py --size-mb 64 [--replicated]   # writes the file, prints its path
"""
from __future__ import annotations

import argparse
import json
import os
import random
import re
import time
from pathlib import Path

OUT = Path(__file__).resolve().parent / "out"
MiB = 1024 * 1024
PREFIXES = (b'{"rec":"run","run_id":', b'{"rec":"event","run_id":', b'{"rec":"summary","run_id":')
WORDS = ("order refund tenant shipment invoice customer status delivered processing payment receipt "
         "warehouse carrier address policy window request account balance the a of to and for with "
         "is was will please confirm thanks note item total tax discount return label tracking").split()


def base_runs() -> list[list[tuple[bytes, bytes]]]:
    """A few hundred real runs, each as (prefix, rest-after-run-id) line pairs, ready to re-id."""
    import orjson

    from tracetui.loop.ablations import ABLATIONS
    from tracetui.loop.runner import run_scenario
    from tracetui.loop.scenarios import FAULT_CHOICES, SCENARIOS
    from tracetui.trace.writer import encode_record

    results = [run_scenario(s, a, seed=seed) for seed in (0, 1) for s in SCENARIOS for a in ABLATIONS]
    results += [run_scenario(s, faults=(f,)) for s in ("single", "parallel") for f in FAULT_CHOICES]
    results += [run_scenario("single", transient_failures=n) for n in (1, 2, 3)]
    runs = []
    for result in results:
        lines = []
        for record in result.records:
            line = encode_record(record)
            prefix = next(p for p in PREFIXES if line.startswith(p))
            old_id = orjson.dumps(record["run_id"])
            assert line[len(prefix):].startswith(old_id)
            lines.append((prefix, line[len(prefix) + len(old_id):]))
        runs.append(lines)
    return runs


#: the share of realistic runs drawn from the ready ones (the base set is mostly failures: one per kind)
READY_SHARE = 0.75
_REQ = re.compile(rb"\b(req|resp|msg|fc_call|call)(_|-)(\d+)(?:_(\d+))?")
_T_MS = re.compile(rb'"(t_ms|latency_ms|executed_at|validated_at)":(\d+)')
_ORDER = re.compile(rb"\bo-(\d+)\b")
_AMOUNT = re.compile(rb'"(paid|amount|refunded)":(\d+\.\d+)')


class Varied:
    """Turns one base run into a run of its own: its ids, times, amounts, reason and response sizes."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)

    def filler(self) -> bytes:
        size = min(48 * 1024, int(self.rng.lognormvariate(6.4, 1.1)))
        words, n = [], 0
        while n < size:
            w = self.rng.choice(WORDS)
            words.append(w)
            n += len(w) + 1
        return " ".join(words).encode()

    def run(self, k: int, lines: list[tuple[bytes, bytes]]) -> list[bytes]:
        rng = self.rng
        rid = b'"run-%012x"' % rng.getrandbits(48)
        tag = b"%06x" % rng.getrandbits(24)
        offset = rng.randint(0, 5000)
        orders = {}

        def order(m: re.Match) -> bytes:
            return b"o-%d" % orders.setdefault(m.group(1), rng.randint(1000, 9_999_999))

        def amount(m: re.Match) -> bytes:
            return b'"%s":%.2f' % (m.group(1), float(m.group(2)) * rng.uniform(0.2, 20) if float(m.group(2)) else 0.0)

        out = []
        for prefix, rest in lines:
            rest = _REQ.sub(lambda m: m.group(1) + m.group(2) + tag + m.group(3) + (
                b"_" + m.group(4) if m.group(4) else b""), rest)
            rest = _T_MS.sub(lambda m: b'"%s":%d' % (m.group(1), int(m.group(2)) * 3 // 2 + offset), rest)
            rest = _ORDER.sub(order, rest)
            rest = _AMOUNT.sub(amount, rest)
            if prefix == PREFIXES[1] and b'"kind":"http.attempt"' in rest and b'"parallel_tool_calls":' in rest:
                rest = rest.replace(b'"parallel_tool_calls":', b'"instructions":"' + self.filler() +
                                    b'","parallel_tool_calls":', 1)
            if prefix == PREFIXES[2]:
                rest = rest.replace(b'"reason":"', b'"reason":"request req_%s (%.2f USD): ' % (
                    tag, rng.uniform(1, 5000)), 1)
            out.append(prefix + rid + rest)
        return out


def generate(path: Path, size_mb: int, replicated: bool, seed: int = 1) -> dict:
    base = base_runs()
    target = size_mb * MiB
    varied = Varied(seed)
    ready = [r for r in base if b'"ready":true' in r[-1][1]]
    failing = [r for r in base if r not in ready]
    pick = random.Random(seed + 1)
    written = runs = interleaved = no_summary = failed = 0
    tmp = path.with_suffix(".tmp")
    with open(tmp, "wb") as out:
        buf: list[bytes] = []
        k = 0
        while written < target:
            pair = []
            for _ in range(2):
                if replicated:
                    lines = base[k % len(base)]
                    rid = b'"r%07d-%d"' % (k, k % len(base))
                    run = [p + rid + rest for p, rest in lines]
                else:  # three runs in four ready, as in traffic that mostly works
                    run = varied.run(k, pick.choice(ready if pick.random() < READY_SHARE else failing))
                failed += b'"ready":false' in run[-1]
                if k % 997 == 0:
                    run = run[:-1]
                    no_summary += 1
                pair.append(run)
                k += 1
            if (k // 2) % 8 == 0:
                a, b = pair
                merged = []
                for i in range(max(len(a), len(b))):
                    merged += a[i:i + 1] + b[i:i + 1]
                pair = [merged]
                interleaved += 2
            for run in pair:
                chunk = b"".join(run)
                buf.append(chunk)
                written += len(chunk)
            runs += 2
            if len(buf) > 2000:
                out.write(b"".join(buf))
                buf.clear()
        out.write(b"".join(buf))
    os.replace(tmp, path)
    meta = {"bytes": written, "runs": runs, "interleaved": interleaved, "no_summary": no_summary,
            "failed": failed, "kind": "replicated" if replicated else "realistic"}
    path.with_suffix(".json").write_text(json.dumps(meta))
    return meta


def trace_file(size_mb: int, replicated: bool = False) -> tuple[Path, dict]:
    """The cached file of ``size_mb`` MiB (written first when missing) and its description."""
    OUT.mkdir(parents=True, exist_ok=True)
    path = OUT / f"{'replicated' if replicated else 'realistic'}-{size_mb}mb.jsonl"
    meta_path = path.with_suffix(".json")
    if path.exists() and meta_path.exists():
        return path, json.loads(meta_path.read_text())
    t0 = time.perf_counter()
    meta = generate(path, size_mb, replicated)
    print(f"   (generated {path.name} in {time.perf_counter() - t0:.1f} s)", flush=True)
    return path, meta


def describe(meta: dict) -> str:
    label = ("realistic: distinct ids, reasons, amounts; response sizes log-normal" if meta["kind"] == "realistic"
             else "REPLICATED runs under new ids: the best case, not typical")
    return (f"{meta['bytes'] / MiB:,.0f} MiB, {meta['runs']:,} runs ({meta['failed']:,} failed, "
            f"{meta['interleaved']:,} interleaved, {meta['no_summary']:,} without summary) — {label}")


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--size-mb", type=int, default=64)
    ap.add_argument("--replicated", action="store_true")
    a = ap.parse_args()
    p, m = trace_file(a.size_mb, a.replicated)
    print(p, "\n", describe(m))


def long_run_file(calls: int = 900) -> Path:
    """A trace of one failing run of ``calls`` model calls (a recording: ``calls - 1`` reads of distinct orders,
    then an answer no receipt backs), cached under benchmarks/out/."""
    import copy

    import orjson

    from tracetui.loop.inputs import responses_inputs
    from tracetui.loop.runner import run_inputs
    from tracetui.trace.writer import write_trace_runs

    path = OUT / f"long-run-{calls}-calls.jsonl"
    if path.exists():
        return path
    OUT.mkdir(parents=True, exist_ok=True)
    root = Path(__file__).resolve().parent.parent
    first, last = orjson.loads((root / "sample_traces" / "responses" / "normal.json").read_bytes())
    responses = [orjson.loads(orjson.dumps(first).replace(b"call-1", b"call-%d" % i).replace(
        b'\\"o-1\\"', b'\\"o-%d\\"' % i)) for i in range(1, calls)]
    responses.append(orjson.loads(orjson.dumps(last).replace(b"delivered", b"refunded")))  # an unbacked claim
    inputs = responses_inputs(responses)
    inputs["budgets"] = {**inputs["budgets"], "max_turns": calls + 10, "max_calls": calls + 10}
    orders = inputs["tool_data"]["orders"]
    for i in range(1, calls):
        orders[f"o-{i}"] = copy.deepcopy(orders["o-1"])
    write_trace_runs(str(path), [run_inputs(f"long-{calls}", inputs).records])
    return path
