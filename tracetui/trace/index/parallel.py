"""A scan's steps prepared on two cores: ``check`` faster than a plain line filter, the explorer's
index off the interface's interpreter lock.

Preparing a step (reading, classifying and, for ``check``, validating every line: :mod:`.steps`)
needs only the file; linking it to runs needs the scan's state, so it stays in this process. The
file is cut into fixed byte ranges, each prepared whole by one side and linked in order here.

A worker process (a fresh interpreter, isolated from the current directory and the ``PYTHON*``
variables, so it is safe from a thread of the explorer too) is kept :data:`WORKER_AHEAD` ranges
ahead once it has started. Whenever the range to link next is the worker's and not ready, this
process prepares the next range nobody has taken instead of waiting; when it has taken its share
ahead, it waits for the worker no longer than it takes to prepare a range itself, then prepares the
range here and drops the worker's late copy. So a slow, stalled or dead worker costs little, and one
late :data:`MAX_LATE` times in a row is stopped.

A step linked in bulk needs only what the worker read from its bytes (:mod:`.items`), so they are
not read here again when the file is as the worker saw it: the same size, times and inode right
after its read as before it, and now, and the same checksums of a few windows of them. Otherwise
they are read, and the step's line ends must be where the worker found them; if not, the range is
prepared again here. A step whose linking needs the per-line path is prepared again here when the
worker sent it without its lines' classification (it keeps it for a chunk whose ids hold ``#``; a
run id repeated after its run ended, which only this process can tell, costs that step's work).
The output never depends on the worker.

Used only where it pays: a file of :data:`PARALLEL_MIN_BYTES` or more read to its end (not followed,
not standard input), two processors this process may use, ``TRACETUI_WORKER`` not ``off``; and the
worker is started only once the first ranges show a processor idle beside this one
(:class:`IdleSample`).
"""
from __future__ import annotations

import os
import pickle
import struct
import sys
import time
from dataclasses import dataclass
from typing import Any, Callable, Iterator

import numpy as np

from tracetui.trace.index.lines import FileLines
from tracetui.trace.index.scanner import Scanner
from tracetui.trace.index.steps import PAD, NotSentWhole, Prepared, prepare

#: files smaller than this many chunks, or than this many bytes, are scanned in one process: a worker
#: takes ~0.15 s to start, and a file of 32 MiB is scanned in about that
PARALLEL_MIN_CHUNKS = 8
PARALLEL_MIN_BYTES = 32 * 1024 * 1024
#: ranges asked of the worker and not yet received: its next range waits in the pipe while this
#: process links (each held range costs its classification, not its bytes)
WORKER_AHEAD = 3
#: ranges this process prepared ahead of the one it links (each holds its chunk's bytes)
LOCAL_AHEAD = 2
#: ranges in a row the worker was too late for before it is stopped
MAX_LATE = 3
#: how long the processors are watched before a worker is started, in seconds
IDLE_SAMPLE_SECONDS = 0.05
#: the environment variable that turns the worker off (``TRACETUI_WORKER=off``)
SWITCH = "TRACETUI_WORKER"


def in_parallel(scanner: Scanner, chunk_bytes: int, head: "HeadStart | None" = None) -> Iterator[int] | None:
    """The scan's steps, prepared by this process and a worker process while this one links them (the
    worker kept only beside an idle processor; ``head``: one started before the scan). None where that
    is not worth it or not possible (a small file, a file still growing or spooled from standard input,
    one usable CPU, switched off)."""
    try:
        cpus = _worth_a_worker(scanner, chunk_bytes)
    except BaseException:
        if head is not None:
            head.stop()
        raise
    if head is not None and (cpus is None or not head.fits(scanner, chunk_bytes)):
        head.stop()
        head = None
    if cpus is None:
        return None
    # (the idle time is sampled now, at the scan's start, either way: the worker's start-up, or the first
    # frame, is no sign of an idle processor)
    return _parallel_steps(scanner, chunk_bytes, idle=IdleSample(cpus), worker=head.worker if head else None)


def _worth_a_worker(scanner: Scanner, chunk_bytes: int) -> set[int] | None:
    """The processors a worker may share with this process, or None where it does not pay (see
    :func:`in_parallel`)."""
    lines = scanner.lines
    if (os.name != "posix" or lines.pos  # (descriptors are handed to the worker as POSIX does)
            or lines.size < max(PARALLEL_MIN_CHUNKS * chunk_bytes, PARALLEL_MIN_BYTES)
            or lines.growing is not None or lines.long_lines or lines.fd is None or not sys.executable
            or os.environ.get(SWITCH, "").lower() in ("off", "0", "no", "false")):
        return None
    cpus = usable_cpus()
    return cpus if len(cpus) >= 2 else None


class HeadStart:
    """A worker started before its scan: the explorer starts it while it draws its first frame, so its
    start-up (a second interpreter importing numpy, about a tenth of a second) is not the scan's. The
    scan keeps it when the file is as it was then and a processor is idle beside this process over the
    scan's first moment (:class:`IdleSample`); else it is stopped."""

    def __init__(self, scanner: Scanner, chunk_bytes: int):
        self.chunk_bytes, self.strict = chunk_bytes, scanner.strict
        self.size, self.fd = scanner.lines.size, scanner.lines.fd  # (the worker prepares up to this size)
        self.worker = _Worker(scanner.lines, chunk_bytes, scanner.strict)

    def fits(self, scanner: Scanner, chunk_bytes: int) -> bool:
        """Whether its worker prepares what this scan needs: the same file, size, steps and mode."""
        lines = scanner.lines
        return (self.worker.alive and chunk_bytes == self.chunk_bytes and scanner.strict == self.strict
                and lines.size == self.size and lines.fd == self.fd)

    def stop(self) -> None:
        self.worker.stop()


def head_start(scanner: Scanner, chunk_bytes: int) -> HeadStart | None:
    """A worker started now for the scan to come, where one would help it (:func:`in_parallel`)."""
    return HeadStart(scanner, chunk_bytes) if _worth_a_worker(scanner, chunk_bytes) is not None else None


def usable_cpus() -> set[int]:
    """The processors this process may run on (its affinity), fewer when a container's CPU quota
    (cgroup v2 ``cpu.max``) allows less than all of them."""
    try:
        cpus = set(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # pragma: no cover - not Linux
        cpus = set(range(os.cpu_count() or 1))
    try:
        with open("/proc/self/cgroup", "rb") as fh:  # cgroup v2: "0::/the/group"
            group = next((line[3:].strip() for line in fh if line.startswith(b"0::")), b"/").decode()
    except (OSError, UnicodeDecodeError):
        group = "/"
    parts = [p for p in group.split("/") if p]
    for depth in range(len(parts), -1, -1):  # the group's own quota and every parent's: the least wins
        try:
            with open(os.path.join("/sys/fs/cgroup", *parts[:depth], "cpu.max"), "rb") as fh:
                quota, period = fh.read().split()[:2]
        except (OSError, ValueError):
            continue
        if quota != b"max":
            allowed = max(1, int(int(quota) / int(period)))
            cpus = set(sorted(cpus)[:allowed])
    return cpus


class IdleSample:
    """Whether a second process would get a core of its own: on a busy machine the two would only
    take turns, and the pipe between them would make the scan slower (a fifth to a quarter, measured
    beside one busy loop on two cores). Judged by the time the processors this process may use spent
    idle or in this process over :data:`IDLE_SAMPLE_SECONDS` from the scan's start, while this process
    prepares the first ranges itself (Linux); not by the load average, which still counts what this
    command's own start-up or the previous command did a minute ago."""

    def __init__(self, cpus: set[int]):
        self.cpus = cpus
        self.began = time.monotonic()
        try:
            self.before: tuple[tuple[int, int], float] | None = (_cpu_times(cpus), _own_ticks())
        except (OSError, ValueError, IndexError):
            self.before = None

    def over(self) -> bool:
        """Whether the moment has passed."""
        return time.monotonic() - self.began >= IDLE_SAMPLE_SECONDS

    def spare(self) -> bool:
        """Whether a processor was free beside this process over the moment."""
        try:
            if self.before is None:
                raise OSError("no processor times")
            (total0, idle0), mine0 = self.before
            (total1, idle1), mine = _cpu_times(self.cpus), _own_ticks() - mine0
        except (OSError, ValueError, IndexError):
            try:
                return os.getloadavg()[0] <= len(self.cpus) - 1.5
            except OSError:  # pragma: no cover - no load average here
                return True
        total = total1 - total0
        free_cores = len(self.cpus) * (idle1 - idle0 + mine) / total if total > 0 else len(self.cpus)
        return free_cores >= 1.3  # this process's core and most of another


def _cpu_times(cpus: set[int]) -> tuple[int, int]:
    """(all, idle) time of the processors ``cpus`` since boot, in clock ticks (``/proc/stat``)."""
    total = idle = 0
    with open("/proc/stat", "rb") as fh:
        for line in fh:
            if not line.startswith(b"cpu"):
                break
            name, *values = line.split()
            if name == b"cpu" or int(name[3:]) not in cpus:
                continue
            fields = [int(x) for x in values[:8]]  # user nice system idle iowait irq softirq steal
            total += sum(fields)
            idle += fields[3] + fields[4]
    return total, idle


def _own_ticks() -> float:
    """The processor time of this process (all its threads: the explorer's interface is one), in ticks."""
    times = os.times()
    return (times.user + times.system) * os.sysconf("SC_CLK_TCK")


#: the worker's start: isolated (-I: neither the current directory nor PYTHON* variables), it reads
#: this process's module path from the pipe before it imports anything of tracetui
_WORKER_MAIN = (
    "import sys\n"
    "from multiprocessing.connection import Connection\n"
    "asks = Connection(int(sys.argv[1]), writable=False)\n"
    "config = asks.recv()\n"
    "sys.path[:] = config['path']\n"
    "from tracetui.trace.index.parallel import serve\n"
    "serve(asks, int(sys.argv[2]), config)\n"
)


def _module_path() -> list[str]:
    """The module path this process imports tracetui from, for the worker ('' is the current directory;
    dropped when it is gone)."""
    path = []
    for entry in sys.path:
        if not entry:
            try:
                entry = os.getcwd()
            except OSError:
                continue
        path.append(entry)
    return path


def _worker_command(asks: int, answers: int) -> list[str]:
    """How the worker is started: this interpreter, isolated, given the pipes' descriptors (the file
    and its name go through the pipe, not the command line that ``ps`` shows)."""
    return [sys.executable, "-I", "-c", _WORKER_MAIN, str(asks), str(answers)]


#: the length that precedes each answer of the worker (its pickle's size)
_LENGTH = struct.Struct("<Q")
#: an answer longer than this is a broken pipe, not a range's steps
_MAX_ANSWER = 1 << 30


def _send_answer(fd: int, message: Any) -> None:
    """In the worker: one answer, pickled, after its length."""
    data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    view = memoryview(_LENGTH.pack(len(data)) + data)
    while view:
        view = view[os.write(fd, view):]


def _readable_within(fd: int) -> Callable[[float], bool]:
    """A wait for ``fd`` to be readable, at most so many seconds: poll(2) where there is one, which
    takes any descriptor number (select(2) refuses those from 1024 on, which a process with many files
    open, the explorer's for one, may be given)."""
    import select

    if hasattr(select, "poll"):
        poller = select.poll()
        poller.register(fd, select.POLLIN)
        return lambda seconds: bool(poller.poll(seconds * 1000))
    return lambda seconds: bool(select.select([fd], [], [], seconds)[0])  # pragma: no cover - no poll(2)


class _Inbox:
    """The worker's answers, read without ever blocking on one that is only partly written: a worker
    stopped in the middle of sending a range must not hold this process (Connection.recv would wait
    for the rest for ever)."""

    def __init__(self, fd: int):
        self.fd = fd
        os.set_blocking(fd, False)
        self.pending = bytearray()
        self.answers: list[bytes] = []
        self._readable = _readable_within(fd)

    def poll(self, timeout: float = 0) -> bool:
        """Whether a whole answer is here, waiting at most ``timeout`` seconds for one (EOFError: the
        worker is gone; OSError: what it sent is not answers)."""
        deadline = time.monotonic() + timeout
        while not self.answers:
            left = deadline - time.monotonic()
            if not self._readable(max(0.0, left)):
                return False
            try:
                data = os.read(self.fd, 1 << 20)
            except BlockingIOError:
                continue
            if not data:
                raise EOFError("the worker is gone")
            self.pending += data
            while len(self.pending) >= _LENGTH.size:
                (size,) = _LENGTH.unpack_from(self.pending)
                if size > _MAX_ANSWER:
                    raise OSError("the worker's answer is not one")
                if len(self.pending) < _LENGTH.size + size:
                    break
                self.answers.append(bytes(self.pending[_LENGTH.size:_LENGTH.size + size]))
                del self.pending[:_LENGTH.size + size]
            if left <= 0:
                break
        return bool(self.answers)

    def take(self) -> Any:
        """The oldest whole answer (after :meth:`poll` said there is one), unpickled."""
        try:
            return pickle.loads(self.answers.pop(0))
        except Exception as exc:  # noqa: BLE001 - e.g. a worker of another tracetui version
            raise OSError(f"the worker's answer could not be read: {exc}") from None


class _NoWorker:
    """No worker (yet): every range is prepared here."""

    alive = False
    asked: list[int] = []

    def has_started(self, wait: bool = False) -> bool:
        return False

    def stop(self) -> None:
        pass


_NO_WORKER = _NoWorker()


class _Worker:
    """The worker process and the pipes to it: ranges asked, their steps received in the same order.
    Anything that goes wrong with it stops it: its ranges are then prepared here."""

    def __init__(self, lines: FileLines, chunk_bytes: int, strict: bool):
        import subprocess
        from multiprocessing.connection import Connection

        self.asked: list[int] = []  # ranges asked and not yet received, in order
        self.started = False  # it said it is ready: until then this process prepares every range
        self.late = 0  # ranges in a row this process prepared because the worker's copy was late
        self.delivered = 0  # ranges it prepared in time
        self.process: Any = None
        asks_r, asks_w = os.pipe()
        answers_r, answers_w = os.pipe()
        self._asking = Connection(asks_w, readable=False)
        self.inbox = _Inbox(answers_r)
        try:
            _widen(answers_w)
            config = {"path": _module_path(), "fd": lines.fd, "name": lines.path, "size": lines.size,
                      "chunk_bytes": chunk_bytes, "strict": strict}
            self.process = subprocess.Popen(
                _worker_command(asks_r, answers_w), pass_fds=(asks_r, answers_w, lines.fd),
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        except (OSError, ValueError, subprocess.SubprocessError):
            self.process = None
        finally:
            os.close(asks_r)
            os.close(answers_w)
        self.alive = self.process is not None
        if self.alive:
            self._send(config)

    def _send(self, message: Any) -> None:
        try:
            self._asking.send(message)
        except OSError:  # it died: its ranges are prepared here
            self.stop()

    def has_started(self, wait: bool = False) -> bool:
        """Whether the worker is ready for ranges (it says so once its imports are done); ``wait``: wait
        for it to say so (or fail) rather than go on without it meanwhile."""
        if not self.started and self.alive:
            try:
                if self.inbox.poll(30 if wait else 0):
                    self.started = self.inbox.take() == "ready"
                    if not self.started:
                        self.stop()
            except (OSError, EOFError):
                self.stop()
        return self.started and self.alive

    def ask(self, k: int) -> None:
        self._send(k)
        if self.alive:
            self.asked.append(k)

    def ready(self, wait: float = 0) -> bool:
        """Whether the oldest asked range's steps are here, whole (a worker gone: stopped, not ready)."""
        if not self.alive:  # (its pipe is closed, and the number may be another file's by now)
            return False
        try:
            return self.inbox.poll(wait)
        except (OSError, EOFError):
            self.stop()
            return False

    def receive(self) -> tuple[int, list[Prepared]]:
        """The oldest asked range's steps, once :meth:`ready` (OSError: the worker failed)."""
        steps = self.inbox.take()
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
        try:
            os.close(self.inbox.fd)
        except OSError:
            pass
        self.inbox.fd = -1  # never read again: the number may be given to another file
        process, self.process = self.process, None
        if process is not None and process.poll() is None:  # reaped beside the scan, which need not wait
            import threading

            threading.Thread(target=_reap, args=(process,), name="tracetui-worker-reaper", daemon=True).start()


def _reap(process: Any) -> None:
    """Wait for a stopped worker to exit: it holds nothing and writes nothing, so one that has not
    within a second is killed."""
    try:
        process.wait(timeout=1)
    except Exception:  # noqa: BLE001 - still running
        process.kill()
        process.wait()


def _parallel_steps(scanner: Scanner, chunk_bytes: int, split: dict[str, int] | None = None,
                    wait_for_start: bool = False, idle: IdleSample | None = None,
                    worker: "_Worker | None" = None) -> Iterator[int]:
    """The steps of every range in order, each range prepared here or by the worker (``split``, when
    given, counts the ranges each side prepared; ``wait_for_start``: the worker's start is waited for,
    not overtaken, so that a small file is shared too; ``idle``: the worker is started, or ``worker``,
    one started already, kept, once it says a processor is free; without it, at once)."""
    lines = scanner.lines
    size, strict = lines.size, scanner.strict
    ranges = (size + chunk_bytes - 1) // chunk_bytes
    split = {} if split is None else split
    split.update(here=0, worker=0, late=0, again=0)
    done: dict[int, list[Prepared]] = {}  # prepared ahead of their turn
    mine: set[int] = set()  # ranges this process took ahead of their turn
    untaken = 0  # ranges before it are asked of the worker or taken here
    local_seconds = 0.0  # how long this process took to prepare its last range

    def here(j: int) -> list[Prepared]:
        nonlocal local_seconds
        started = time.perf_counter()
        steps = _prepare_range(lines, j, chunk_bytes, size, strict)
        local_seconds = time.perf_counter() - started
        split["here"] += 1
        return steps

    if worker is None:
        worker = _Worker(lines, chunk_bytes, strict) if idle is None else _NO_WORKER
    try:
        for k in range(ranges):
            while k not in done:
                if idle is not None and idle.over():
                    if not idle.spare():
                        worker.stop()
                        worker = _NO_WORKER
                    elif worker is _NO_WORKER:
                        worker = _Worker(lines, chunk_bytes, strict)
                    idle = None
                if idle is None and worker.has_started(wait_for_start):
                    while len(worker.asked) < WORKER_AHEAD and untaken < ranges:
                        worker.ask(untaken)
                        untaken += 1
                if not worker.alive or k not in worker.asked:
                    done[k] = here(k)
                    untaken = max(untaken, k + 1)
                    continue
                if not worker.ready() and untaken < ranges and len(mine) < LOCAL_AHEAD:
                    mine.add(untaken)  # the worker is busy: prepare the next untaken range meanwhile
                    done[untaken] = here(untaken)
                    untaken += 1
                    continue
                if not worker.ready(max(local_seconds, 0.01)):  # no longer than preparing it here takes
                    if worker.alive:
                        split["late"] += 1
                        worker.late += 1
                        if worker.late >= MAX_LATE and worker.delivered:  # (its first range may be slow)
                            worker.stop()
                        done[k] = here(k)  # its late copy is dropped when it comes
                    continue
                try:
                    j, steps = worker.receive()
                except OSError:  # the worker failed: its ranges are prepared here
                    worker.stop()
                    continue
                if j >= k and j not in done:  # else a late copy of a range prepared here: dropped
                    done[j] = steps
                    split["worker"] += 1
                    worker.late = 0
                    worker.delivered += 1
            mine.discard(k)
            yield from _linked(scanner, done.pop(k), lambda: _prepare_range(
                lines, k, chunk_bytes, size, strict, start=lines.pos), split)
        if lines.pos < size:  # the last ranges answered short of the end (never so far): the rest, here
            split["again"] += 1
            yield from scanner.prepared_steps(iter(_prepare_range(
                lines, ranges - 1, chunk_bytes, size, strict, start=lines.pos)))
    finally:
        worker.stop()


def _linked(scanner: Scanner, steps: list[Prepared], again: Callable[[], list[Prepared]],
            split: dict[str, int]) -> Iterator[int]:
    """Link a range's steps; when they no longer fit the file (it changed after they were prepared:
    they start elsewhere than the scan has reached, or the bytes are not those the worker read), or
    one needs the lines' classification the worker did not send, the rest of the range is prepared
    again here, from where the scan is."""
    lines = scanner.lines
    for prepared in steps:
        if prepared.start != lines.pos or not _same_bytes(lines, prepared):
            split["again"] += 1
            yield from scanner.prepared_steps(iter(again()))
            return
        try:
            yield from scanner.prepared_steps(iter((prepared,)))
        except NotSentWhole:  # the per-line path (nothing of the step was linked yet)
            if prepared.chunk is None or not _still_there(lines, prepared):
                split["again"] += 1
                yield from scanner.prepared_steps(iter(again()))
                return
            yield from scanner.prepared_steps(iter((prepared,)))


@dataclass
class WorkerRead:
    """How the worker read a step's bytes, so that this process can tell whether the file still holds
    them without reading them all again."""

    seen: tuple[int, ...] | None  # the file's size, times and inode after the read, if the same as before it
    fingerprint: tuple[int, ...]  # checksums of a few windows of the bytes
    line_ends: Any  # where its lines end (the classification's, sent without it)


#: windows of a step's bytes the worker sends checksums of, and their size
_WINDOWS, _WINDOW_BYTES = 8, 64


def _file_state(fd: int) -> tuple[int, ...]:
    """What changes when a file is written, replaced or truncated (times in nanoseconds)."""
    st = os.fstat(fd)
    return st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_dev


def _worker_read(prepared: Prepared, seen: tuple[int, ...] | None) -> WorkerRead:
    """In the worker: how it read a step (``seen``: the file's state, when it did not change meanwhile)."""
    import zlib

    size = prepared.size
    fingerprint = tuple(zlib.crc32(prepared.buf[at:min(at + _WINDOW_BYTES, size)]) for at in _windows(size))
    return WorkerRead(seen, fingerprint, prepared.chunk.ends)


def _windows(size: int) -> list[int]:
    return sorted({max(0, min(size - _WINDOW_BYTES, size * j // (_WINDOWS - 1))) for j in range(_WINDOWS)})


def _same_bytes(lines: FileLines, prepared: Prepared) -> bool:
    """Whether a step the worker prepared still fits the file. Not read again when the file is as the
    worker saw it (its state, and its windows' checksums); else read, and its line ends checked."""
    sent = prepared.worker_read
    if prepared.buf or sent is None:  # read here, or no lines
        return True
    if sent.seen is not None and sent.seen == _file_state(lines.fd):  # type: ignore[arg-type]
        import zlib

        windows = _windows(prepared.size)
        if len(windows) == len(sent.fingerprint) and all(
                zlib.crc32(lines.read(prepared.base + at, min(_WINDOW_BYTES, prepared.size - at))) == crc
                for at, crc in zip(windows, sent.fingerprint)):
            return True
    return _still_there(lines, prepared)


def _still_there(lines: FileLines, prepared: Prepared) -> bool:
    """Read the bytes of a step prepared by the worker (it sends what it read from them, not them) and
    check that its lines still end where it found them."""
    if prepared.worker_read is None or prepared.buf:
        return True
    prepared.buf = lines.read(prepared.base, min(prepared.base + prepared.size + PAD, lines.size) - prepared.base)
    ends = prepared.worker_read.line_ends
    ends = ends[ends < prepared.size]
    return bool((np.frombuffer(prepared.buf, np.uint8)[ends] == 0x0A).all())


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


def serve(asks: Any, answers: int, config: dict[str, Any]) -> None:
    """The worker's main: prepare each range asked for until told to stop (None) or the pipe closes.
    The file is the descriptor the scanning process passed (the same file, even if its name now
    points elsewhere)."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the scanning process's to handle
    size, chunk_bytes, strict = config["size"], config["chunk_bytes"], config["strict"]
    lines = FileLines(0, config["name"], size, fd=config["fd"], by_name=False)
    from tracetui.trace.index import classify  # noqa: F401 - imported before saying ready
    if strict:
        from tracetui.trace.index.validation import _decoder
        _decoder()
    try:
        _send_answer(answers, "ready")
        while True:
            k = asks.recv()
            if k is None:
                return
            try:
                before = _file_state(lines.fd)  # type: ignore[arg-type]
                steps: Any = _prepare_range(lines, k, chunk_bytes, size, strict)
                after = _file_state(lines.fd)  # type: ignore[arg-type]
                for prepared in steps:
                    if prepared.chunk is None:
                        continue
                    prepared.worker_read = _worker_read(prepared, after if after == before else None)
                    items = prepared.items
                    if items is not None and items.rows is not None and "#" not in "".join(items.keys):
                        prepared.chunk = None  # linked in bulk from its items alone, most likely
            except Exception as exc:  # noqa: BLE001 - said to the scanning process, which prepares it itself
                steps = f"range {k}: {exc}"
            _send_answer(answers, steps)
    except (EOFError, OSError, ValueError):  # the scanning process is gone or done
        return


def _prepare_range(lines: FileLines, k: int, chunk_bytes: int, size: int, strict: bool = True,
                   start: int | None = None) -> list[Prepared]:
    """The steps of the lines that start in bytes [k * chunk, (k + 1) * chunk) (from ``start`` when
    given: a range prepared again from where the scan is), prepared."""
    start = _line_start(lines, k * chunk_bytes, size) if start is None else start
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
