"""Every benchmark, one after another, each table as it is printed: ``python benchmarks/run_all.py``.

Sizes are modest by default so the whole run takes a few minutes on a shared 2-core machine;
the README's big-file figures come from the same scripts with bigger sizes
(``--big``: bench_open, bench_triage and bench_first_frame on 1 GiB; slow). Each script runs in a process of its
own, with the arguments below (a bench_*.py not listed runs with none); a script that fails is
reported and the rest still run.

    python benchmarks/run_all.py [--big] [--only NAME ...]
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
#: (script, modest arguments, --big arguments)
SCRIPTS = [
    ("bench_open.py", ["--size-mb", "64"], ["--size-mb", "1024"]),
    ("bench_triage.py", ["--size-mb", "64"], ["--size-mb", "1024"]),
    ("bench_first_frame.py", ["--size-mb", "64"], ["--size-mb", "1024"]),
    ("bench_replay.py", ["--repeat", "50"], ["--repeat", "200"]),
    ("bench_explain.py", ["--quick", "--no-list"], []),
    ("bench_otel.py", ["--size-mb", "32"], ["--repeat", "5", "--size-mb", "1024"]),
    ("bench_loop.py", [], ["--runs", "50000"]),
    ("bench_record.py", [], []),
    ("bench_sse.py", [], []),
    ("bench_secrets.py", [], []),
    ("bench_redact.py", [], []),
    ("bench_schema_budget.py", [], []),
    ("bench_search.py", ["--size-mb", "64"], ["--size-mb", "1024"]),
    ("bench_otel_open.py", ["--size-mb", "32", "--stdin-mb", "32"], ["--size-mb", "64", "--size-mb", "256"]),
    ("bench_huge_run.py", ["--calls", "2000"], ["--calls", "10000"]),
]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--big", action="store_true", help="the README's big-file sizes (1 GiB files; slow)")
    ap.add_argument("--only", action="append", help="run only these scripts (e.g. bench_open; repeatable)")
    args = ap.parse_args()
    started = time.perf_counter()
    print(f"run_all: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}, python {sys.version.split()[0]}; "
          "every ratio is tracetui / reference (below 1.00: tracetui faster or smaller)", flush=True)
    failed = []
    listed = {script for script, _, _ in SCRIPTS}
    others = [(p.name, [], []) for p in sorted(HERE.glob("bench_*.py")) if p.name not in listed]  # (added later)
    for script, modest, big in SCRIPTS + others:
        name = script.removesuffix(".py")
        if args.only and name not in args.only and script not in args.only:
            continue
        if not (HERE / script).exists():
            print(f"\n== {name}: not present", flush=True)
            continue
        t0 = time.perf_counter()
        print(f"\n#### {script} {' '.join(big if args.big else modest)}", flush=True)
        code = subprocess.run([sys.executable, str(HERE / script), *(big if args.big else modest)]).returncode
        print(f"#### {script}: {time.perf_counter() - t0:.0f} s" + (f", FAILED (exit {code})" if code else ""),
              flush=True)
        if code:
            failed.append(script)
    print(f"\nrun_all: {time.perf_counter() - started:.0f} s" + (f"; failed: {', '.join(failed)}" if failed else ""))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
