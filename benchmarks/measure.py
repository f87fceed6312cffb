"""What every benchmark here measures with, and how it prints: one direction, min and median, CPU beside wall.

Each figure is a list of samples (at least 3); a table row shows its min and median beside the
reference's, measured in the same run, and the ratio tracetui / reference of the medians (below
1.00: tracetui is faster or smaller). Commands are measured as a user runs them, in a process of
their own: wall time from the spawn to the exit, the CPU time of the process and of every process
it waited for (wait4 reports both), the peak RSS of the command and of any child process it ran
(``worker_*``: polled in /proc while the command runs; tracetui's commands start none of their own).
Commands run with their bytecode cached, as an installed command does (PYTHONDONTWRITEBYTECODE is dropped).

The machine these figures come from is usually shared: compare the ratios, not the absolute figures,
and read the load average printed at the top of each table.
"""
from __future__ import annotations

import os
import statistics
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Sequence

ROOT = Path(__file__).resolve().parent.parent
OUT = Path(__file__).resolve().parent / "out"
#: the same interpreter, running the installed command as a user's shell would
TRACETUI = [sys.executable, "-m", "tracetui"]


@dataclass
class Sample:
    wall: float
    cpu: float = 0.0
    rss_mb: float = 0.0
    worker_ran: bool = False
    worker_rss_mb: float = 0.0
    code: int = 0
    extra: dict = field(default_factory=dict)


def _hwm_kb(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return 0


def _children(pid: int) -> list[int]:
    out = []
    for children in Path(f"/proc/{pid}/task").glob("*/children"):
        try:
            out += [int(p) for p in children.read_text().split()]
        except (OSError, ValueError):
            pass
    return out


def run(argv: Sequence[str], env: dict | None = None, stdin: Path | None = None, cwd: Path = ROOT,
        capture: bool = False) -> Sample:
    """One command in a process of its own, its output thrown away (kept in ``extra["stdout"]`` with ``capture``)."""
    environ = {**os.environ, **(env or {})}
    # as a user's install runs: its bytecode cached (an environment that forbids writing it compiles every module
    # of the command at each start, ~0.2 s that no user pays twice)
    environ.pop("PYTHONDONTWRITEBYTECODE", None)
    stdin_file = open(stdin, "rb") if stdin else subprocess.DEVNULL
    try:
        start = time.perf_counter()
        proc = subprocess.Popen(list(argv), stdin=stdin_file, stdout=subprocess.PIPE if capture else subprocess.DEVNULL,
                                stderr=subprocess.PIPE, env=environ, cwd=cwd)
        peaks = {"main": 0, "worker": 0, "ran": False}
        done = threading.Event()

        def watch() -> None:  # every 20 ms: a high-water mark only grows, and the worker lives for the scan
            while not done.wait(0.02):
                peaks["main"] = max(peaks["main"], _hwm_kb(proc.pid))
                for child in _children(proc.pid):
                    peaks["ran"] = True
                    peaks["worker"] = max(peaks["worker"], _hwm_kb(child))
        watcher = threading.Thread(target=watch, daemon=True)
        watcher.start()
        err_chunks = []
        reader = threading.Thread(target=lambda: err_chunks.append(proc.stderr.read()), daemon=True)
        reader.start()
        out_chunks = []
        if capture:
            out_reader = threading.Thread(target=lambda: out_chunks.append(proc.stdout.read()), daemon=True)
            out_reader.start()
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        done.set()
        watcher.join()
        reader.join()
        if capture:
            out_reader.join()
        proc.returncode = os.waitstatus_to_exitcode(status)
    finally:
        if stdin:
            stdin_file.close()
    rss = max(peaks["main"], 0) / 1024 or usage.ru_maxrss / 1024
    return Sample(wall, usage.ru_utime + usage.ru_stime, rss, peaks["ran"], peaks["worker"] / 1024, proc.returncode,
                  {"stderr": b"".join(c for c in err_chunks if c).decode(errors="replace"),
                   "stdout": b"".join(c for c in out_chunks if c).decode(errors="replace")})


def in_process(fn: Callable[[], object]) -> Sample:
    """``fn`` timed in this process: wall and this process's CPU."""
    cpu0, start = time.process_time(), time.perf_counter()
    fn()
    return Sample(time.perf_counter() - start, time.process_time() - cpu0)


def series(measure: Callable[[], Sample], repeat: int) -> list[Sample]:
    return [measure() for _ in range(max(3, repeat))]


def lo_med(values: Sequence[float]) -> tuple[float, float]:
    return min(values), statistics.median(values)


def header(title: str) -> None:
    print(f"\n== {title}")
    print(f"   {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f} at the start "
          "(shared machine: compare ratios, not absolute figures)")


def columns(reference: str = "reference") -> None:
    print(f"   {'figure':<46} {'tracetui min / median':>22}   {reference + ' min / median':<42} {'ratio':>6}")


def _unit(values: Sequence[float], unit: str) -> str:
    lo, med = lo_med(values)
    if unit == "s":
        return f"{lo:.3f} / {med:.3f} s" if med < 10 else f"{lo:.1f} / {med:.1f} s"
    if unit == "ms":
        return f"{lo * 1000:.1f} / {med * 1000:.1f} ms"
    if med < 10:
        return f"{lo:.2f} / {med:.2f} {unit}"
    return f"{lo:,.0f} / {med:,.0f} {unit}"


def row(label: str, ours: Sequence[float], reference: Sequence[float] | None = None, ref_label: str = "",
        unit: str = "s", note: str = "") -> float | None:
    """One figure beside its reference, ratio tracetui / reference of the medians. Returns the ratio."""
    ratio = statistics.median(ours) / statistics.median(reference) if reference else None
    ref = f"{ref_label} {_unit(reference, unit)}" if reference else ref_label
    shown = f"{ratio:.2f}×" if ratio is not None else ""
    print(f"   {label:<46} {_unit(ours, unit):>22}   {ref:<42} {shown:>6}  {note}".rstrip())
    return ratio


def cpu_row(label: str, samples: Sequence[Sample], reference: Sequence[Sample], ref_label: str) -> None:
    """The total CPU of a command (its child processes' included) beside its reference's."""
    ran = sum(s.worker_ran for s in samples)
    row(label, [s.cpu for s in samples], [s.cpu for s in reference], ref_label,
        note=f"(a child process ran in {ran} of {len(samples)})" if ran else "")


def startup(repeat: int = 5, command: list[str] | None = None) -> list[float]:
    """Wall time of ``python -c "import tracetui.cli"`` (the start-up every command pays before its work), or of
    a whole ``command`` (what one command pays on a tiny input: its own imports too, since each subcommand's
    modules are imported only when it runs)."""
    argv = [*TRACETUI, *command] if command else [sys.executable, "-c", "import tracetui.cli"]
    samples = [run(argv) for _ in range(max(3, repeat))]
    failed = [s for s in samples if s.code not in (0, 1)]  # (a command that fails at once is no start-up)
    if failed:
        raise SystemExit(f"{' '.join(argv)} failed: {failed[0].extra.get('stderr', '')[-500:]}")
    return [s.wall for s in samples]


def bare_python(repeat: int = 5) -> list[float]:
    return [run([sys.executable, "-c", "pass"]).wall for _ in range(max(3, repeat))]
