"""``tracetui open`` of one OTLP/JSON file (or of standard input holding one): its runs listed as the stream
releases them, in the background, in memory bounded whatever the file's size.

Like the index of a trace file (:class:`tracetui.trace.index.IndexedSource`), the source has a ``scan()``
that the explorer runs on a worker thread after its first frame: each trace is read into runs when the
stream releases it (:mod:`tracetui.otel.stream`) and its rows appear at once. What it keeps of a run is its
row and where its records are: each run is written, as it is made, to a private temporary file of native
trace lines (:mod:`tracetui.otel.run_spool`), and :meth:`StreamedOtlpSource.load` reads it back when it is
shown (the last few are kept, :data:`CACHED_RUNS`). A run is listed under a provisional name (8 digits of
its trace id, ``#2`` where two share it); when the file is read, every run takes the name reading the file
whole gives it (:mod:`tracetui.otel.naming`: a later trace may share digits) and the rows take the file's
order. Closing the source stops the scan at its next trace and frees the temporary file.
"""
from __future__ import annotations

import os
import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any, Iterator, Sequence

from tracetui.otel.arriving import WAITING, pulled
from tracetui.otel.checked import named_runs
from tracetui.otel.naming import run_names
from tracetui.otel.no_runs import no_runs_error
from tracetui.otel.run_spool import RunSpool, Slot
from tracetui.otel.stream import traces_of
from tracetui.trace.reader import Problem, RunData, run_name
from tracetui.trace.source import RunEntry, RunShape, entry_from_run, shared_shape

#: runs loaded back that stay in memory (the one shown, the ones beside it): the rest are on disk
CACHED_RUNS = 4


@dataclass
class Progress:
    """How far the scan is, as the explorer reads it."""

    fraction: float
    caught_up: bool = False


class StreamedOtlpSource:
    """The runs of one OTLP/JSON file, growing as it is read (see the module docstring). ``path``: the file's
    name, or standard input as it arrives (:class:`tracetui.otel.arriving.Arriving`)."""

    def __init__(self, path: Any, spool_dir: str | None = None):
        self.label = str(path)
        self.path = path
        self._entries: list[RunEntry] = []
        self._runs = RunSpool(spool_dir, self.label)
        self._slots: dict[str, tuple[Slot, int]] = {}  # listed name → (where its records are, its first line)
        self._cache: OrderedDict[str, RunData] = OrderedDict()
        self._lock = threading.Lock()  # the cache, and the names swapped once the file is read
        self._problems: list[Problem] = []
        self._placed: list[tuple[int, int, tuple, str]] = []  # (trace's place, place in it, naming key, name)
        self._shapes: dict[tuple, RunShape] = {}  # rows that say the same share one shape
        self._seen = [0]
        self._size = os.stat(path).st_size if isinstance(path, (str, os.PathLike)) else None
        self._closed = False
        self.done = False

    def runs(self) -> Sequence[RunEntry]:
        return self._entries

    def problems(self) -> Sequence[Problem]:
        return self._problems

    def load(self, entry: RunEntry) -> RunData:
        """A run's records, read back from the temporary file (the last few shown kept)."""
        name = entry.run_id
        with self._lock:
            cached = self._cache.get(name)
            if cached is not None:
                self._cache.move_to_end(name)
                return cached
            slots = self._slots
            slot, first_line = slots[name]
        run = self._runs.load(slot, name, first_line)
        with self._lock:
            if self._slots is not slots:  # renamed while it was read: the name may be another run's now
                return run
            self._cache[name] = run
            while len(self._cache) > CACHED_RUNS:
                self._cache.popitem(last=False)
        return run

    def close(self) -> None:
        self._closed = True
        self._runs.close()
        close_input = getattr(self.path, "close", None)  # standard input's copy
        if close_input is not None:
            close_input()

    def scan(self) -> Iterator[Progress]:
        """Read the file, a trace at a time; raises TraceReadError when it holds no run."""
        def made() -> Iterator[tuple[int, int, tuple, RunData]]:
            return named_runs(traces_of(self.path, self._problems, self._seen), verdict_only=False)

        runs: Iterator[Any] = made()
        if not isinstance(self.path, (str, os.PathLike)):  # standard input: its reading may wait for a writer
            runs = pulled(made, self.path)
        for item in runs:
            if self._closed:
                return
            if item is WAITING:
                yield Progress(self._fraction(), caught_up=self.path.waiting)  # (caught up: waiting for more)
                continue
            place, n, key, run = item
            del item
            label, suffix, trace_id = key
            name = run_name(f"{label}-{trace_id[:8]}{suffix or ''}" if suffix is not None else label, 1,
                            self._slots.__contains__)
            run.run_id = name
            entry = entry_from_run(run)
            self._slots[name] = (self._runs.add(run), run.first_line)
            del run  # (on disk now: nothing of its records stays)
            self._entries.append(RunEntry(name, shared_shape(self._shapes, _fields(entry.shape))))
            self._placed.append((place, n, key, name))
            yield Progress(self._fraction())
        if self._closed:
            return
        if not self._entries:
            raise no_runs_error(self._problems, self.label)
        self._rename()
        self.done = True
        yield Progress(1.0)

    def _fraction(self) -> float:
        size = self._size if self._size is not None else self.path.arrived()
        return min(1.0, self._seen[0] / size) if size else 1.0

    def _rename(self) -> None:
        """Every run under the name, and in the place, that reading the file whole gives it."""
        placed = sorted(self._placed, key=lambda p: (p[0], p[1]))
        finals = run_names([p[2] for p in placed])
        entries = {e.run_id: e for e in self._entries}
        slots = dict(self._slots)  # (a row still shown under its provisional name loads too)
        slots.update((final, self._slots[p[3]]) for p, final in zip(placed, finals))
        with self._lock:
            self._slots = slots
            self._cache.clear()  # (loaded under provisional names)
        self._entries[:] = [RunEntry(final, entries[p[3]].shape) for p, final in zip(placed, finals)]
        self._placed.clear()


def _fields(shape: RunShape) -> tuple:
    return tuple(getattr(shape, f) for f in shape.__struct_fields__)
