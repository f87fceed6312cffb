"""A strict scan's steps prepared by a worker process: two cores for ``check``.

Preparing a step (reading, classifying, validating every line: :mod:`.steps`) needs only
the file; linking it to runs needs the scan's state. So a worker prepares the lines that
start in each fixed byte range while this process links the ones before: the ranges
are independent, and each is linked in order. Used only where it pays: a large file, a
spare CPU, a platform that forks, no other thread running.
"""
from __future__ import annotations

import os
from typing import Any, Iterator

from tracetui.trace.index.lines import FileLines
from tracetui.trace.index.scanner import Scanner
from tracetui.trace.index.steps import Prepared, prepare

#: files smaller than this many chunks are scanned in one process (a worker would cost more than it saves)
PARALLEL_MIN_CHUNKS = 8
#: steps prepared ahead of the scan: bounds what waits in memory when the workers are faster
PARALLEL_AHEAD = 3


def in_parallel(scanner: Scanner, chunk_bytes: int) -> Iterator[int] | None:
    """The scan's steps, their reading, classifying and validating done by a worker process while this
    one links them: two cores for a check. None where that is not worth it or not possible (a small
    file, one CPU, no fork, threads running)."""
    import multiprocessing
    import threading

    lines = scanner.lines
    size = lines.size
    cpus = os.cpu_count() or 1
    if (lines.pos or size < PARALLEL_MIN_CHUNKS * chunk_bytes or cpus < 2 or not _spare_cpu(cpus)
            or threading.active_count() > 1 or "fork" not in multiprocessing.get_all_start_methods()):
        return None
    return _parallel_steps(scanner, chunk_bytes, multiprocessing.get_context("fork"))


def _spare_cpu(cpus: int) -> bool:
    """Whether a second process would get a core of its own: on a busy machine the two would only
    take turns, and the pipe between them would make the check slower."""
    try:
        return os.getloadavg()[0] <= cpus - 1.5
    except OSError:  # pragma: no cover - no load average here
        return True


def _parallel_steps(scanner: Scanner, chunk_bytes: int, context: Any) -> Iterator[int]:
    from collections import deque

    lines = scanner.lines
    size = lines.size
    ranges = (size + chunk_bytes - 1) // chunk_bytes
    with context.Pool(1, initializer=_worker_start, initargs=(lines.fd, lines.path, size)) as pool:
        ahead: deque[Any] = deque()
        k = 0
        while k < ranges or ahead:
            while k < ranges and len(ahead) < PARALLEL_AHEAD:
                ahead.append(pool.apply_async(_prepare_range, (k, chunk_bytes, size)))
                k += 1
            yield from scanner.prepared_steps(iter(ahead.popleft().get()))


_worker: FileLines | None = None


def _worker_start(fd: int, path: str, size: int) -> None:
    """In the worker: the descriptor inherited from the checking process (the same file, even if its
    name now points elsewhere)."""
    global _worker
    _worker = FileLines(0, path, size, fd=fd, by_name=False)


def _prepare_range(k: int, chunk_bytes: int, size: int) -> list[Prepared]:
    """The steps of the lines that start in bytes [k * chunk, (k + 1) * chunk), prepared."""
    lines = _worker
    assert lines is not None
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
