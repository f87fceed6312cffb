"""A strict scan's steps prepared on two cores: ``check`` faster than a plain line filter.

Preparing a step (reading, classifying, validating every line: :mod:`.steps`) needs only
the file; linking it to runs needs the scan's state, so it stays in this process. The
file is cut into fixed byte ranges, each prepared whole by one side and linked in order
here. A worker process is kept :data:`WORKER_AHEAD` ranges ahead; whenever the range to
link next is the worker's and not ready yet, this process prepares the next range nobody
has taken instead of waiting. So the share of each side follows their speeds: linking
costs about half of preparing, and on an idle machine this process ends up preparing
about one range in four. Used only where it pays: a large file, a spare CPU, a platform
that forks, no other thread running. A worker that fails or dies leaves its ranges to
this process: the output never depends on the worker.
"""
from __future__ import annotations

import os
from typing import Any, Iterator

from tracetui.trace.index.lines import FileLines
from tracetui.trace.index.scanner import Scanner
from tracetui.trace.index.steps import Prepared, prepare

#: files smaller than this many chunks are scanned in one process (a worker would cost more than it saves)
PARALLEL_MIN_CHUNKS = 8
#: ranges asked of the worker and not yet received: its next range waits in the pipe while this
#: process links (each held range costs its classification, not its bytes)
WORKER_AHEAD = 3
#: ranges this process prepared ahead of the one it links (each holds its chunk's bytes)
LOCAL_AHEAD = 2


def in_parallel(scanner: Scanner, chunk_bytes: int) -> Iterator[int] | None:
    """The scan's steps, prepared by this process and a worker process while this one links them:
    two cores for a check. None where that is not worth it or not possible (a small file, one CPU,
    a busy machine, no fork, threads running)."""
    import multiprocessing
    import threading

    lines = scanner.lines
    size = lines.size
    cpus = os.cpu_count() or 1
    if (lines.pos or size < PARALLEL_MIN_CHUNKS * chunk_bytes or cpus < 2 or not _spare_cpu(cpus)
            or threading.active_count() > 1 or "fork" not in multiprocessing.get_all_start_methods()):
        return None
    return _parallel_steps(scanner, chunk_bytes, multiprocessing.get_context("fork"))


#: how long the processors are watched before a worker is started, in seconds
IDLE_SAMPLE_SECONDS = 0.03


def _spare_cpu(cpus: int) -> bool:
    """Whether a second process would get a core of its own: on a busy machine the two would only
    take turns, and the pipe between them would make the check slower (a fifth to a quarter, measured
    beside one busy loop on two cores). Judged by the idle time of the processors over a moment
    (Linux), not by the load average, which still counts what this command's own start-up or the
    previous command did a minute ago."""
    import time

    try:
        before = _cpu_times()
        time.sleep(IDLE_SAMPLE_SECONDS)
        after = _cpu_times()
    except (OSError, ValueError, IndexError):
        try:
            return os.getloadavg()[0] <= cpus - 1.5
        except OSError:  # pragma: no cover - no load average here
            return True
    total = after[0] - before[0]
    idle_cores = cpus * (after[1] - before[1]) / total if total > 0 else cpus
    return idle_cores >= 1.5  # this process's core (it slept meanwhile) and most of another


def _cpu_times() -> tuple[int, int]:
    """(all, idle) time of the processors since boot, in clock ticks (``/proc/stat``)."""
    with open("/proc/stat", "rb") as fh:
        fields = [int(x) for x in fh.readline().split()[1:9]]  # user nice system idle iowait irq softirq steal
    return sum(fields), fields[3] + fields[4]


class _Worker:
    """The worker process and the pipe to it: ranges asked, their steps received in the same order."""

    def __init__(self, context: Any, lines: FileLines, chunk_bytes: int):
        asks, self._asking = context.Pipe(duplex=False)
        self.conn, answers = context.Pipe(duplex=False)
        _widen(answers)
        self.process = context.Process(target=_serve, args=(asks, answers, lines.fd, lines.path, lines.size,
                                                            chunk_bytes), daemon=True, name="tracetui-prepare")
        self.process.start()
        asks.close()
        answers.close()
        self.asked: list[int] = []  # ranges asked and not yet received, in order
        self.alive = True

    def ask(self, k: int) -> None:
        self._asking.send(k)
        self.asked.append(k)

    def ready(self) -> bool:
        return self.conn.poll()

    def receive(self) -> tuple[int, list[Prepared]]:
        """The oldest asked range's steps (OSError/EOFError: the worker is gone)."""
        steps = self.conn.recv()
        if not isinstance(steps, list):  # the worker failed: it said why, and stopped
            raise OSError(str(steps))
        return self.asked.pop(0), steps

    def stop(self) -> None:
        self.alive = False
        try:
            self._asking.send(None)
        except OSError:
            pass
        self._asking.close()
        self.conn.close()
        self.process.join(timeout=1)
        if self.process.is_alive():  # pragma: no cover - stuck in a read
            self.process.kill()
            self.process.join()


def _parallel_steps(scanner: Scanner, chunk_bytes: int, context: Any,
                    split: dict[str, int] | None = None) -> Iterator[int]:
    """The steps of every range in order, each range prepared here or by the worker (``split``, when
    given, counts the ranges each side prepared)."""
    lines = scanner.lines
    size = lines.size
    ranges = (size + chunk_bytes - 1) // chunk_bytes
    split = {} if split is None else split
    split.update(here=0, worker=0)
    done: dict[int, list[Prepared]] = {}  # prepared ahead of their turn
    mine: set[int] = set()  # ranges this process took
    untaken = 0  # ranges before it are asked of the worker or taken here
    worker = _Worker(context, lines, chunk_bytes)
    try:
        for k in range(ranges):
            while k not in done:
                if worker.alive:
                    while len(worker.asked) < WORKER_AHEAD and untaken < ranges:
                        worker.ask(untaken)
                        untaken += 1
                if k in mine or not worker.alive or k not in worker.asked:
                    done[k] = _prepare_range(lines, k, chunk_bytes, size)
                    split["here"] += 1
                    continue
                if not worker.ready() and untaken < ranges and len(mine) < LOCAL_AHEAD:
                    mine.add(untaken)  # the worker is busy: prepare the next untaken range meanwhile
                    done[untaken] = _prepare_range(lines, untaken, chunk_bytes, size)
                    split["here"] += 1
                    untaken += 1
                    continue
                try:
                    j, steps = worker.receive()
                except (OSError, EOFError):  # the worker is gone: its ranges are prepared here
                    worker.stop()
                    continue
                done[j] = steps
                split["worker"] += 1
            mine.discard(k)
            yield from scanner.prepared_steps(iter(done.pop(k)))
    finally:
        worker.stop()


def _widen(conn: Any) -> None:
    """Make the pipe that carries a range's steps hold a whole range where the platform allows (Linux:
    up to 1 MiB unprivileged): the worker then goes on with its next range instead of waiting for
    this process to finish preparing one of its own before it reads."""
    import fcntl

    size = getattr(fcntl, "F_SETPIPE_SZ", None)
    if size is None:  # pragma: no cover - not Linux
        return
    for capacity in (4 << 20, 1 << 20):
        try:
            fcntl.fcntl(conn.fileno(), size, capacity)
            return
        except OSError:
            continue


def _serve(asks: Any, conn: Any, fd: int, path: str, size: int, chunk_bytes: int) -> None:
    """In the worker: prepare each range asked for until told to stop (None) or the pipe closes.
    The descriptor is the one inherited from the checking process (the same file, even if its name
    now points elsewhere)."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the checking process's to handle
    lines = FileLines(0, path, size, fd=fd, by_name=False)
    while True:
        try:
            k = asks.recv()
        except (EOFError, OSError):
            return
        if k is None:
            return
        try:
            steps: Any = _prepare_range(lines, k, chunk_bytes, size)
        except Exception as exc:  # noqa: BLE001 - said to the checking process, which prepares it itself
            steps = f"range {k}: {exc}"
        try:
            conn.send(steps)
        except (OSError, ValueError):
            return


def _prepare_range(lines: FileLines, k: int, chunk_bytes: int, size: int) -> list[Prepared]:
    """The steps of the lines that start in bytes [k * chunk, (k + 1) * chunk), prepared."""
    start = _line_start(lines, k * chunk_bytes, size)
    end = _line_start(lines, min((k + 1) * chunk_bytes, size), size)
    steps = []
    while start < end:
        prepared = prepare(lines, True, start, end, chunk_bytes, final=end == size)
        if prepared.end <= start:
            break
        steps.append(prepared)
        start = prepared.end
    return steps


def _line_start(lines: FileLines, at: int, size: int) -> int:
    """Where the first line that starts at or after byte ``at`` starts (``size`` when none does)."""
    if at <= 0:
        return 0
    pos = at - 1
    while pos < size:
        block = lines.read(pos, min(1 << 16, size - pos))
        nl = block.find(b"\n")
        if nl >= 0:
            return pos + nl + 1
        pos += len(block)
    return size
