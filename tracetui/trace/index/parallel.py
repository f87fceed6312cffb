"""A scan's steps prepared on two cores: ``check`` faster than a plain line filter, the explorer's
index off the interface's interpreter lock.

Preparing a step (reading, classifying and, for ``check``, validating every line: :mod:`.steps`)
needs only the file; linking it to runs needs the scan's state, so it stays in this process. The
file is cut into fixed byte ranges, each prepared whole by one side and linked in order here. A
worker process (a fresh interpreter, started beside the scan, so it is safe from a thread of the
explorer too) is kept :data:`WORKER_AHEAD` ranges ahead once it has started; whenever the range
to link next is the worker's and not ready yet, this process prepares the next range nobody has
taken instead of waiting. So the share of each side follows their speeds: until the worker has
started, and on a machine where it gets little time, this process does the rest. A worker that
fails or dies leaves its ranges to this process: the output never depends on the worker. Used only
where it pays: a large file read to its end (not followed), a processor idle beside this process.
"""
from __future__ import annotations

import os
import sys
from typing import Any, Iterator

from tracetui.trace.index.lines import FileLines
from tracetui.trace.index.scanner import Scanner
from tracetui.trace.index.steps import Prepared, prepare

#: files smaller than this many chunks, or than this many bytes, are scanned in one process: a worker
#: takes ~0.15 s to start, and a file of 32 MiB is scanned in about that
PARALLEL_MIN_CHUNKS = 8
PARALLEL_MIN_BYTES = 32 * 1024 * 1024
#: ranges asked of the worker and not yet received: its next range waits in the pipe while this
#: process links (each held range costs its classification, not its bytes)
WORKER_AHEAD = 3
#: ranges this process prepared ahead of the one it links (each holds its chunk's bytes)
LOCAL_AHEAD = 2
#: how long the processors are watched before a worker is started, in seconds
IDLE_SAMPLE_SECONDS = 0.03


def in_parallel(scanner: Scanner, chunk_bytes: int) -> Iterator[int] | None:
    """The scan's steps, prepared by this process and a worker process while this one links them.
    None where that is not worth it or not possible (a small file, a file still growing or spooled
    from standard input, one CPU, a busy machine, no interpreter to start)."""
    lines = scanner.lines
    cpus = os.cpu_count() or 1
    if (os.name != "posix" or lines.pos  # (descriptors are handed to the worker as POSIX does)
            or lines.size < max(PARALLEL_MIN_CHUNKS * chunk_bytes, PARALLEL_MIN_BYTES)
            or lines.growing is not None
            or lines.long_lines or lines.fd is None or cpus < 2 or not sys.executable
            or not _spare_cpu(cpus)):
        return None
    return _parallel_steps(scanner, chunk_bytes)


def _spare_cpu(cpus: int) -> bool:
    """Whether a second process would get a core of its own: on a busy machine the two would only
    take turns, and the pipe between them would make the scan slower (a fifth to a quarter, measured
    beside one busy loop on two cores). Judged by the time the processors spent idle or in this
    process over a moment (Linux), not by the load average, which still counts what this command's
    own start-up or the previous command did a minute ago."""
    import time

    try:
        before, mine = _cpu_times(), _own_ticks()
        time.sleep(IDLE_SAMPLE_SECONDS)
        after, mine = _cpu_times(), _own_ticks() - mine
    except (OSError, ValueError, IndexError):
        try:
            return os.getloadavg()[0] <= cpus - 1.5
        except OSError:  # pragma: no cover - no load average here
            return True
    total = after[0] - before[0]
    free_cores = cpus * (after[1] - before[1] + mine) / total if total > 0 else cpus
    return free_cores >= 1.5  # this process's core and most of another


def _cpu_times() -> tuple[int, int]:
    """(all, idle) time of the processors since boot, in clock ticks (``/proc/stat``)."""
    with open("/proc/stat", "rb") as fh:
        fields = [int(x) for x in fh.readline().split()[1:9]]  # user nice system idle iowait irq softirq steal
    return sum(fields), fields[3] + fields[4]


def _own_ticks() -> float:
    """The processor time of this process (all its threads: the explorer's interface is one), in ticks."""
    times = os.times()
    return (times.user + times.system) * os.sysconf("SC_CLK_TCK")


def _worker_command(asks: int, answers: int, lines: FileLines, chunk_bytes: int, strict: bool) -> list[str]:
    """How the worker is started: this interpreter, given the pipes' and the file's descriptors."""
    return [sys.executable, "-c", "from tracetui.trace.index.parallel import serve; serve()",
            str(asks), str(answers), str(lines.fd), lines.path, str(lines.size), str(chunk_bytes),
            "strict" if strict else "loose"]


class _Worker:
    """The worker process and the pipes to it: ranges asked, their steps received in the same order."""

    def __init__(self, lines: FileLines, chunk_bytes: int, strict: bool):
        import subprocess
        from multiprocessing.connection import Connection

        asks_r, asks_w = os.pipe()
        answers_r, answers_w = os.pipe()
        _widen(answers_w)
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))  # tracetui as imported here
        try:
            self.process: Any = subprocess.Popen(
                _worker_command(asks_r, answers_w, lines, chunk_bytes, strict),
                pass_fds=(asks_r, answers_w, lines.fd), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL, env=env)
        except OSError:
            self.process = None
        finally:
            os.close(asks_r)
            os.close(answers_w)
        self._asking = Connection(asks_w, readable=False)
        self.conn = Connection(answers_r, writable=False)
        self.asked: list[int] = []  # ranges asked and not yet received, in order
        self.started = False  # it said it is ready: until then this process prepares every range
        self.alive = self.process is not None

    def has_started(self, wait: bool = False) -> bool:
        """Whether the worker is ready for ranges (it says so once its imports are done); ``wait``: wait
        for it to say so (or fail) rather than go on without it meanwhile."""
        if not self.started and self.alive:
            try:
                if self.conn.poll(30 if wait else 0):
                    self.started = self.conn.recv() == "ready"
                    if not self.started:
                        self.stop()
            except (OSError, EOFError):
                self.stop()
        return self.started and self.alive

    def ask(self, k: int) -> None:
        try:
            self._asking.send(k)
        except OSError:  # it died: its ranges are prepared here
            self.stop()
            return
        self.asked.append(k)

    def ready(self) -> bool:
        return self.conn.poll()

    def receive(self) -> tuple[int, list[Prepared]]:
        """The oldest asked range's steps (OSError/EOFError: the worker is gone)."""
        steps = self.conn.recv()
        if not isinstance(steps, list):  # the worker failed: it said why
            raise OSError(str(steps))
        return self.asked.pop(0), steps

    def stop(self) -> None:
        self.alive = False
        if self._asking.closed:
            return
        try:
            self._asking.send(None)
        except OSError:
            pass
        self._asking.close()
        self.conn.close()
        if self.process is None:
            return
        try:  # it holds nothing and writes nothing: a worker still starting is not waited for
            self.process.wait(timeout=0.05)
        except Exception:  # noqa: BLE001
            self.process.kill()
            self.process.wait()
        self.process = None


def _parallel_steps(scanner: Scanner, chunk_bytes: int, split: dict[str, int] | None = None,
                    wait_for_start: bool = False) -> Iterator[int]:
    """The steps of every range in order, each range prepared here or by the worker (``split``, when
    given, counts the ranges each side prepared; ``wait_for_start``: the worker's start is waited for,
    not overtaken, so that a small file is shared too)."""
    lines = scanner.lines
    size, strict = lines.size, scanner.strict
    ranges = (size + chunk_bytes - 1) // chunk_bytes
    split = {} if split is None else split
    split.update(here=0, worker=0)
    done: dict[int, list[Prepared]] = {}  # prepared ahead of their turn
    mine: set[int] = set()  # ranges this process took ahead of their turn
    untaken = 0  # ranges before it are asked of the worker or taken here
    worker = _Worker(lines, chunk_bytes, strict)
    try:
        for k in range(ranges):
            while k not in done:
                if worker.has_started(wait_for_start):
                    while len(worker.asked) < WORKER_AHEAD and untaken < ranges:
                        worker.ask(max(untaken, k))
                        untaken = max(untaken, k) + 1
                if k not in worker.asked or not worker.alive:
                    done[k] = _prepare_range(lines, k, chunk_bytes, size, strict)
                    untaken = max(untaken, k + 1)
                    split["here"] += 1
                    continue
                if not worker.ready() and untaken < ranges and len(mine) < LOCAL_AHEAD:
                    mine.add(untaken)  # the worker is busy: prepare the next untaken range meanwhile
                    done[untaken] = _prepare_range(lines, untaken, chunk_bytes, size, strict)
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


def _widen(fd: int) -> None:
    """Make the pipe that carries a range's steps hold a whole range where the platform allows (Linux:
    up to 1 MiB unprivileged): the worker then goes on with its next range instead of waiting for
    this process to finish preparing one of its own before it reads."""
    import fcntl

    size = getattr(fcntl, "F_SETPIPE_SZ", None)
    if size is None:  # pragma: no cover - not Linux
        return
    for capacity in (4 << 20, 1 << 20):
        try:
            fcntl.fcntl(fd, size, capacity)
            return
        except OSError:
            continue


def serve() -> None:
    """The worker's main: prepare each range asked for until told to stop (None) or the pipe closes.
    The file is the descriptor the scanning process passed (the same file, even if its name now
    points elsewhere)."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the scanning process's to handle
    from multiprocessing.connection import Connection

    asks, answers, fd, path, size, chunk_bytes, strict = sys.argv[1:8]
    asks_conn, conn = Connection(int(asks), writable=False), Connection(int(answers), readable=False)
    lines = FileLines(0, path, int(size), fd=int(fd), by_name=False)
    from tracetui.trace.index import classify  # noqa: F401 - imported before saying ready
    if strict == "strict":
        from tracetui.trace.index.validation import _decoder
        _decoder()
    try:
        conn.send("ready")
        while True:
            k = asks_conn.recv()
            if k is None:
                return
            try:
                steps: Any = _prepare_range(lines, k, int(chunk_bytes), int(size), strict == "strict")
            except Exception as exc:  # noqa: BLE001 - said to the scanning process, which prepares it itself
                steps = f"range {k}: {exc}"
            conn.send(steps)
    except (EOFError, OSError, ValueError):  # the scanning process is gone or done
        return


def _prepare_range(lines: FileLines, k: int, chunk_bytes: int, size: int, strict: bool = True) -> list[Prepared]:
    """The steps of the lines that start in bytes [k * chunk, (k + 1) * chunk), prepared."""
    start = _line_start(lines, k * chunk_bytes, size)
    end = _line_start(lines, min((k + 1) * chunk_bytes, size), size)
    steps = []
    while start < end:
        prepared = prepare(lines, strict, start, end, chunk_bytes, final=end == size)
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
