"""Benchmark: huge traces end to end, each figure beside a reference measured in the same run, on the same file.

Generates (once, cached under ``benchmarks/out/``) a trace of about ``--size-mb`` megabytes made
of real runs of every scenario, replicated under new run ids, some interleaved pairwise and a few
without a summary line. Then, each in a fresh subprocess (so one's memory does not count for
another), it measures and prints as a table:

- references: reading the file and counting newlines; orjson of every line; a plain orjson
  line-by-line filter (the failed runs' summaries), with its peak RSS;
- ``tracetui check`` (time, peak RSS) beside the plain filter, and the same scan and verdicts without
  printing them (the rest of check's time is printing each verdict, redacted);
- ``tracetui replay --run`` of a run near the start beside the same run alone in a small file;
- the full index, headless, beside the newline count; the same index inside the explorer
  beside headless; the first frame; peak RSS.

Prints figures only; it asserts nothing about time.

    python benchmarks/bench_open.py --size-mb 1024
    python benchmarks/bench_open.py --size-mb 1600 --only check
    python benchmarks/bench_open.py --distinct-reasons   # no two failures alike: the memory worst case
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # as tracetui's command sets it (children inherit it)
OUT = Path(__file__).resolve().parent / "out"
MiB = 1024 * 1024
PREFIXES = (b'{"rec":"run","run_id":', b'{"rec":"event","run_id":', b'{"rec":"summary","run_id":')


def _base_runs() -> list[list[tuple[bytes, bytes]]]:
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


def generate(path: Path, size_mb: int, distinct: bool = False) -> dict:
    """Write ~size_mb MiB: replicated runs; every 8th pair interleaved; every 997th has no summary.

    With ``distinct``, every failed run's reason is made unique, as in traces of real
    runs whose reasons name ids and API messages: no two first failures are alike.
    """
    import orjson

    base = _base_runs()
    target = size_mb * MiB
    written = runs = interleaved = no_summary = 0
    tmp = path.with_suffix(".tmp")
    with open(tmp, "wb") as out:
        buf: list[bytes] = []
        k = 0
        while written < target:
            pair = []
            for _ in range(2):
                lines = base[k % len(base)]
                rid = orjson.dumps(f"r{k:07d}-{k % len(base)}")
                run = [p + rid + (rest.replace(b'"reason":"', b'"reason":"#%d ' % k, 1)
                                  if distinct and p == PREFIXES[2] else rest) for p, rest in lines]
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
    meta = {"bytes": written, "runs": runs, "interleaved": interleaved, "no_summary": no_summary}
    path.with_suffix(".json").write_text(json.dumps(meta))
    return meta


def trace_file(size_mb: int, distinct: bool = False) -> tuple[Path, dict]:
    OUT.mkdir(parents=True, exist_ok=True)
    path = OUT / f"trace-{size_mb}mb{'-distinct' if distinct else ''}.jsonl"
    meta_path = path.with_suffix(".json")
    if path.exists() and meta_path.exists():
        return path, json.loads(meta_path.read_text())
    t0 = time.perf_counter()
    meta = generate(path, size_mb, distinct)
    print(f"generated {path} in {time.perf_counter() - t0:.1f}s", flush=True)
    return path, meta


def peak_rss_mb() -> float:
    """VmHWM from /proc (Linux), else ru_maxrss."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    import resource

    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return rss / MiB if sys.platform == "darwin" else rss / 1024


class ChildWatch:
    """Peak RSS (VmHWM) of this process's children (the worker process that prepares ranges), read from
    /proc while they run: the kernel's figure for waited-for children (RUSAGE_CHILDREN) counts the
    parent's memory at the fork, before the worker's own interpreter replaced it."""

    def __init__(self) -> None:
        import threading

        self.peak_kb = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)
        self._thread.start()

    def _watch(self) -> None:
        """Every 0.1 s (its high-water mark only grows): cheap enough not to slow what is measured."""
        while not self._stop.wait(0.1):
            for children in Path("/proc/self/task").glob("*/children"):
                try:
                    pids = children.read_text().split()
                except OSError:
                    continue
                for pid in pids:
                    try:
                        status = Path(f"/proc/{pid}/status").read_text()
                    except OSError:
                        continue
                    for line in status.splitlines():
                        if line.startswith("VmHWM:"):
                            self.peak_kb = max(self.peak_kb, int(line.split()[1]))

    def mb(self) -> float:
        """The peak so far, once the scan's worker has been reaped (a thread waits for it beside the scan)."""
        import threading

        for thread in threading.enumerate():
            if thread.name == "tracetui-worker-reaper":
                thread.join(timeout=5)
        self._stop.set()
        self._thread.join()
        return self.peak_kb / 1024


def child_index(path: str) -> None:
    """In a fresh process: index the file, report figures as JSON on stdout."""
    base_rss = peak_rss_mb()
    from tracetui.trace.index import IndexedSource

    watch = ChildWatch()
    t0 = time.perf_counter()
    src = IndexedSource([path])
    first_partial = None
    steps = 0
    for progress in src.scan():
        steps += 1
        if first_partial is None and progress.runs:
            first_partial = time.perf_counter() - t0
    total = time.perf_counter() - t0
    entries = src.runs()
    t1 = time.perf_counter()
    data = src.load(entries[len(entries) // 2])
    load_s = time.perf_counter() - t1
    print(json.dumps({
        "import_rss_mb": base_rss, "index_s": total, "first_partial_s": first_partial, "steps": steps,
        "runs": len(entries), "problems": len(src.problems()), "peak_rss_mb": peak_rss_mb(),
        "incomplete": sum(1 for e in entries if not e.complete), "load_s": load_s,
        "load_events": len(data.events), "worker_rss_mb": watch.mb(),
    }))


def child_first_frame(path: str) -> None:
    """In a fresh process: time from App start to a frame with the run list showing runs."""
    import asyncio

    try:
        from tracetui.ui import app as ui_app
        TraceApp = ui_app.TraceApp
    except (ImportError, AttributeError) as exc:
        print(json.dumps({"error": f"UI not available ({exc})"}))
        return

    from tracetui.trace.index import IndexedSource

    started: list[float] = []
    ended: list[float] = []
    scan = IndexedSource.scan

    def timed_scan(self, *args, **kwargs):  # the explorer's index, timed from its start to its end
        started.append(time.perf_counter())
        yield from scan(self, *args, **kwargs)
        ended.append(time.perf_counter())
    IndexedSource.scan = timed_scan

    watch = ChildWatch()

    async def main() -> dict:
        t0 = time.perf_counter()
        app = _make_app(TraceApp, path)
        async with app.run_test(size=(160, 50)) as pilot:
            first = done = None
            deadline = t0 + 120
            while time.perf_counter() < deadline:
                await pilot.pause(0.01)
                if _run_list_visible(app):
                    first = time.perf_counter() - t0
                    break
            first_rss = peak_rss_mb()
            source = getattr(app, "source", None)
            while first is not None and time.perf_counter() < deadline:  # the scan goes on behind the UI
                if getattr(source, "done", True):
                    done = time.perf_counter() - t0
                    break
                await pilot.pause(0.2)  # the harness's own polling: each wakes the UI, which takes the lock
            scan_s = ended[0] - started[0] if ended and started else None
            return {"first_frame_s": first, "peak_rss_mb": first_rss, "done_s": done, "scan_s": scan_s,
                    "done_rss_mb": peak_rss_mb(), "worker_rss_mb": watch.mb()}

    print(json.dumps(asyncio.run(main())))


def _make_app(TraceApp, path: str):
    from tracetui.ui.app import open_paths

    return TraceApp(source=open_paths([path]))


def _run_list_visible(app) -> bool:
    """The run list shows at least one row."""
    from tracetui.ui.widgets.run_list import RunList

    try:
        return bool(app.screen.query_one(RunList).view)  # cheap: polled while the index runs
    except Exception:  # noqa: BLE001 - not mounted yet
        return False


def child_reference(kind: str, path: str) -> None:
    """In a fresh process: a reference reading of the file."""
    import orjson

    t0 = time.perf_counter()
    if kind == "newlines":  # read + count newlines
        count = 0
        with open(path, "rb", buffering=0) as f:
            while block := f.read(16 * MiB):
                count += block.count(b"\n")
    elif kind == "orjson":  # orjson of every line, nothing kept
        loads = orjson.loads
        with open(path, "rb") as f:
            for line in f:
                loads(line)
    elif kind == "filter":  # the plain line-by-line filter someone would write: failed runs' summaries
        failed = 0
        with open(path, "rb") as f:
            for line in f:
                record = orjson.loads(line)
                if record.get("rec") == "summary" and record.get("status") != "answer_ready":
                    failed += 1
    print(json.dumps({"s": time.perf_counter() - t0, "peak_rss_mb": peak_rss_mb()}))


def child_verdicts(path: str) -> None:
    """In a fresh process: what ``check`` does but print, i.e. the strict scan and every run's verdict."""
    from tracetui.trace.checking import Checker

    t0 = time.perf_counter()
    runs = []
    Checker(path, runs.append, lambda problem: None, lambda verdict: verdict["outcome"]).run()
    print(json.dumps({"s": time.perf_counter() - t0, "peak_rss_mb": peak_rss_mb(), "runs": len(runs)}))


def child_cli(path: str, *argv: str) -> None:
    """In a fresh process: one tracetui command, its output thrown away; time and peak RSS."""
    import contextlib

    watch = ChildWatch()
    t0 = time.perf_counter()
    from tracetui.cli import main as cli

    with open(os.devnull, "w") as null, contextlib.redirect_stdout(null), contextlib.redirect_stderr(null):
        try:
            cli.main(args=list(argv), prog_name="tracetui", standalone_mode=False)
        except SystemExit as exc:
            code = exc.code
        else:
            code = 0
    print(json.dumps({"s": time.perf_counter() - t0, "peak_rss_mb": peak_rss_mb(), "code": code,
                      "worker_rss_mb": watch.mb()}))


def run_child(kind: str, path: Path, *extra: str) -> dict:
    arg = json.dumps([str(path), *extra]) if kind == "cli" else str(path)
    out = subprocess.run([sys.executable, __file__, f"--child-{kind}", arg], capture_output=True, text=True)
    if out.returncode != 0:
        return {"error": out.stderr.strip().splitlines()[-1] if out.stderr.strip() else f"exit {out.returncode}"}
    return json.loads(out.stdout.strip().splitlines()[-1])


def near_start_run(path: Path) -> tuple[str, bytes]:
    """The second run of the file (the first has no summary) and its lines."""
    import orjson

    lines, run_id = [], None
    with open(path, "rb") as f:
        for line in f:
            record = orjson.loads(line)
            if run_id is None and record["rec"] == "run" and lines == [] and record["run_id"].startswith("r0000001"):
                run_id = record["run_id"]
            if record["run_id"] == run_id:
                lines.append(line)
                if record["rec"] == "summary":
                    return run_id, b"".join(lines)
    raise SystemExit("no run near the start")


def row(label: str, figure: str, reference: str, ratio: float | None, note: str = "") -> None:
    shown = f"{ratio:.2f}×" if ratio is not None else ""
    print(f"{label:<34} {figure:>22}   {reference:<44} {shown:>7}  {note}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--size-mb", type=int, default=1024, help="trace size in MiB (default 1024)")
    ap.add_argument("--repeat", type=int, default=1,
                    help="index runs to time, headless and inside the explorer (the best of each is reported)")
    ap.add_argument("--only", choices=["check", "replay", "index", "ui"], action="append",
                    help="measure only these (repeatable; default: everything)")
    ap.add_argument("--distinct-reasons", action="store_true",
                    help="make every failed run's reason unique (the memory worst case)")
    ap.add_argument("--child-index", help=argparse.SUPPRESS)
    ap.add_argument("--child-frame", help=argparse.SUPPRESS)
    ap.add_argument("--child-newlines", help=argparse.SUPPRESS)
    ap.add_argument("--child-orjson", help=argparse.SUPPRESS)
    ap.add_argument("--child-filter", help=argparse.SUPPRESS)
    ap.add_argument("--child-cli", help=argparse.SUPPRESS)
    ap.add_argument("--child-verdicts", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child_index:
        return child_index(args.child_index)
    if args.child_frame:
        return child_first_frame(args.child_frame)
    for kind in ("newlines", "orjson", "filter"):
        if getattr(args, f"child_{kind}"):
            return child_reference(kind, getattr(args, f"child_{kind}"))
    if args.child_cli:
        return child_cli(*json.loads(args.child_cli))
    if args.child_verdicts:
        return child_verdicts(args.child_verdicts)
    only = set(args.only or ["check", "replay", "index", "ui"])

    path, meta = trace_file(args.size_mb, args.distinct_reasons)
    mb = meta["bytes"] / MiB
    gb = meta["bytes"] / 1e9
    print(f"trace: {path.name}: {mb:.0f} MiB, {meta['runs']:,} runs "
          f"({meta['interleaved']:,} interleaved, {meta['no_summary']:,} without summary); "
          f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}")
    print(f"{'figure':<34} {'tracetui':>22}   {'reference, same run, same file':<44} {'ratio':>7}")
    run_child("newlines", path)  # the file in the page cache, as for every figure below
    newlines = min((run_child("newlines", path) for _ in range(2)), key=lambda r: r["s"])
    row("read + count newlines", f"{gb / newlines['s']:.2f} GB/s", "", None)
    if "check" in only:
        orj = run_child("orjson", path)
        filt = run_child("filter", path)
        check = run_child("cli", path, "check", str(path))
        row("orjson of every line", f"{orj['s']:.2f} s", "", None)
        row("check: time", f"{check['s']:.2f} s", f"plain orjson filter {filt['s']:.2f} s",
            check["s"] / filt["s"], "(≤ 1.00 is the target)")
        verdicts = run_child("verdicts", path)
        row("  of which scan + verdicts", f"{verdicts['s']:.2f} s", f"plain orjson filter {filt['s']:.2f} s",
            verdicts["s"] / filt["s"], "(the rest: printing each verdict, redacted)")
        row("check: peak RSS", f"{check['peak_rss_mb']:.0f} MiB",
            f"plain orjson filter {filt['peak_rss_mb']:.0f} MiB", None, "(≤ 300 MiB is the target)")
        if check.get("worker_rss_mb"):
            row("  its worker process: peak RSS", f"{check['worker_rss_mb']:.0f} MiB",
                f"check + worker {check['peak_rss_mb'] + check['worker_rss_mb']:.0f} MiB", None,
                "(a second interpreter: ≤ 300 MiB together)")
    if "replay" in only:
        run_id, lines = near_start_run(path)
        small = OUT / "near-start-run.jsonl"
        small.write_bytes(lines)
        near = run_child("cli", path, "replay", str(path), "--run", run_id)
        alone = run_child("cli", small, "replay", str(small), "--run", run_id)
        row(f"replay --run {run_id}", f"{near['s']:.2f} s", f"same run alone in a small file {alone['s']:.2f} s",
            near["s"] / alone["s"], "(≤ 0.5 s is the target)")
    if "index" in only or "ui" in only:
        results = [run_child("index", path) for _ in range(max(1, args.repeat))]
        errors = [r for r in results if "error" in r]
        if errors:
            print(f"index: FAILED: {errors[0]['error']}")
            return
        best = min(results, key=lambda r: r["index_s"])
        headless = gb / best["index_s"]
        row("full index, headless", f"{headless:.2f} GB/s", f"read + count newlines {gb / newlines['s']:.2f} GB/s",
            newlines["s"] / best["index_s"], f"({best['runs']:,} runs, {best['problems']} problems)")
        row("index: peak RSS", f"{max(r['peak_rss_mb'] for r in results):.0f} MiB",
            f"interpreter + imports {best['import_rss_mb']:.0f} MiB", None, "(≤ 200 MiB is the target)")
        worker = max(r.get("worker_rss_mb") or 0 for r in results)
        if worker:
            row("  its worker process: peak RSS", f"{worker:.0f} MiB",
                f"index + worker {max(r['peak_rss_mb'] for r in results) + worker:.0f} MiB", None)
        row("index: first partial run list", f"{best['first_partial_s'] * 1000:.0f} ms", "", None)
        row("load one run", f"{best['load_s'] * 1000:.2f} ms", f"({best['load_events']} events)", None)
    if "ui" in only:
        frames = [run_child("frame", path) for _ in range(max(1, args.repeat))]  # best of as many as headless
        timed = [f for f in frames if f.get("scan_s") is not None]
        frame = min(timed, key=lambda f: f["scan_s"]) if timed else frames[0]
        if "error" in frame or frame.get("first_frame_s") is None:
            print(f"explorer: {frame.get('error', 'the run list never showed rows within 120 s')}")
        else:
            row("explorer: first frame", f"{frame['first_frame_s']:.2f} s", "", None, "(≤ 0.5 s is the target)")
            if frame.get("scan_s") is not None:
                inside = gb / frame["scan_s"]
                row("full index inside the explorer", f"{inside:.2f} GB/s", f"headless {headless:.2f} GB/s",
                    frame["scan_s"] / best["index_s"], "(≤ 1.10 is the target)")
                row("explorer: peak RSS", f"{frame['done_rss_mb']:.0f} MiB", "", None)
                if frame.get("worker_rss_mb"):
                    row("  its worker process: peak RSS", f"{frame['worker_rss_mb']:.0f} MiB",
                        f"explorer + worker {frame['done_rss_mb'] + frame['worker_rss_mb']:.0f} MiB", None)


if __name__ == "__main__":
    main()
