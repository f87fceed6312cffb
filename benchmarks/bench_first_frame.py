"""The first frame as users see it: from process start to the run list painted in a real terminal (tmux).

Each sample starts the command in a new window of a private tmux server (160×45) and polls the
pane's painted text (``tmux capture-pane``, every ~10 ms) until it shows what the user came for:
for ``tracetui open FILE`` a run id of the file in the run list; for Toolong (``tl FILE``, the
terminal log viewer built on the same framework) the last record's run id, which it shows first
(it opens at the end). The same harness times ``python -c print(...)`` as the floor (spawn, tmux,
polling). Min and median of ``--repeat`` (≥ 3); ratio tracetui / Toolong.

Toolong pins an older Textual, so it lives in a virtualenv of its own: found as ``--toolong PATH``,
``tl`` on PATH, or ``benchmarks/out/venv-toolong/bin/tl``
(``python3 -m venv benchmarks/out/venv-toolong && benchmarks/out/venv-toolong/bin/pip install toolong``).

    python benchmarks/bench_first_frame.py [--size-mb 64] [--repeat 3] [--toolong PATH]
"""
from __future__ import annotations

import argparse
import os
import re
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import measure  # noqa: E402
from measure import ROOT, row  # noqa: E402
from realistic import describe, trace_file  # noqa: E402

SOCKET = f"bench-first-frame-{os.getpid()}"
TIMEOUT_S = 60


def tmux(*args: str) -> str:
    return subprocess.run(["tmux", "-L", SOCKET, *args], capture_output=True, text=True).stdout


def painted(command: str, needle: str) -> float:
    """Seconds from starting ``command`` in a fresh tmux window to ``needle`` (a regular expression) on its
    screen."""
    name = f"w{time.monotonic_ns()}"
    start = time.perf_counter()
    tmux("new-window", "-d", "-n", name, "-t", "keep", command)
    try:
        while time.perf_counter() - start < TIMEOUT_S:
            if re.search(needle, tmux("capture-pane", "-p", "-t", f"keep:{name}")):
                return time.perf_counter() - start
            time.sleep(0.01)
        raise SystemExit(f"{command!r} did not show {needle!r} within {TIMEOUT_S} s; the screen:\n"
                         + tmux("capture-pane", "-p", "-t", f"keep:{name}"))
    finally:
        tmux("kill-window", "-t", f"keep:{name}")


def first_and_last_run_id(path: Path) -> tuple[str, str]:
    import orjson

    with open(path, "rb") as f:
        first = orjson.loads(f.readline())["run_id"]
        f.seek(max(0, path.stat().st_size - 65536))
        last = orjson.loads(f.read().splitlines()[-1])["run_id"]
    return first, last


def toolong(given: str | None) -> str | None:
    for candidate in (given, shutil.which("tl"), str(measure.OUT / "venv-toolong" / "bin" / "tl")):
        if candidate and Path(candidate).exists():
            return candidate
    return None


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--size-mb", type=int, default=64, help="the big file's size in MiB (default 64)")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--toolong", help="the tl command (default: on PATH or benchmarks/out/venv-toolong)")
    args = ap.parse_args()
    if not shutil.which("tmux"):
        print("bench_first_frame: tmux is not installed: no figure")
        return
    big, meta = trace_file(args.size_mb)
    tl = toolong(args.toolong)
    measure.header("bench_first_frame: process start → run list painted in tmux (160×45)")
    print(f"   big file: {big.name}: {describe(meta)}")
    if tl is None:
        print("   Toolong is not installed (see this script's docstring): no reference")
    measure.columns("Toolong (tl)")
    tmux("new-session", "-d", "-s", "keep", "-x", "160", "-y", "45", "sleep 100000")
    try:
        floor = [painted(f"{shlex.quote(sys.executable)} -c \"print('ready' + 'mark')\"; sleep 60", "readymark")
                 for _ in range(max(3, args.repeat))]
        row("floor: python -c print(...)", floor, note="(spawn + tmux + polling: in every figure below)")
        for label, path in (("sample_traces/scenarios.jsonl", ROOT / "sample_traces" / "scenarios.jsonl"),
                            (f"{big.name}", big)):
            last = re.escape(first_and_last_run_id(path)[1])
            # a row of the run list: a realistic run id, or a sample's (its first, "text", is a common word)
            first = r"parallel_partial_failure" if path.name == "scenarios.jsonl" else r"│.?[✓✗!…?] run-[0-9a-f]{12} "
            ours = [painted(f"cd {shlex.quote(str(ROOT))} && {shlex.quote(sys.executable)} -m tracetui open "
                            f"{shlex.quote(str(path))}", first) for _ in range(max(3, args.repeat))]
            theirs = [painted(f"{shlex.quote(tl)} {shlex.quote(str(path))}", last)
                      for _ in range(max(3, args.repeat))] if tl else None
            row(f"first frame: {label}", ours, theirs, "Toolong", note="(target ≤ 0.5 s)")
    finally:
        tmux("kill-server")


if __name__ == "__main__":
    main()
