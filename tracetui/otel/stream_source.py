"""``tracetui open`` of one OTLP/JSON file: its runs listed as the stream releases them, in the background.

Like the index of a trace file (:class:`tracetui.trace.index.IndexedSource`), the source has a ``scan()``
that the explorer runs on a worker thread after its first frame: each trace is read into runs when the
stream releases it (:mod:`tracetui.otel.stream`) and its rows appear at once. A run is listed under a
provisional name (8 digits of its trace id, ``#2`` where two share it); when the file is read, every run
takes the name reading the file whole gives it (:mod:`tracetui.otel.naming`: a later trace may share
digits) and the rows take the file's order. Closing the source stops the scan at its next trace.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Iterator, Sequence

from tracetui.otel.checked import named_runs
from tracetui.otel.naming import run_names
from tracetui.otel.no_runs import no_runs_error
from tracetui.otel.stream import traces_of
from tracetui.trace.reader import Problem, RunData, run_name
from tracetui.trace.source import RunEntry, entry_from_run


@dataclass
class Progress:
    """How far the scan is, as the explorer reads it."""

    fraction: float
    caught_up: bool = False


class StreamedOtlpSource:
    """The runs of one OTLP/JSON file, growing as it is read (see the module docstring)."""

    def __init__(self, path: str | os.PathLike[str]):
        self.label = str(path)
        self.path = path
        self._entries: list[RunEntry] = []
        self._data: dict[str, RunData] = {}
        self._problems: list[Problem] = []
        self._placed: list[tuple[int, int, tuple, str]] = []  # (trace's place, place in it, naming key, name)
        self._seen = [0]
        self._size = os.stat(path).st_size
        self._closed = False
        self.done = False

    def runs(self) -> Sequence[RunEntry]:
        return self._entries

    def problems(self) -> Sequence[Problem]:
        return self._problems

    def load(self, entry: RunEntry) -> RunData:
        return self._data[entry.run_id]

    def close(self) -> None:
        self._closed = True

    def scan(self) -> Iterator[Progress]:
        """Read the file, a trace at a time; raises TraceReadError when it holds no run."""
        for place, n, key, run in named_runs(traces_of(self.path, self._problems, self._seen), verdict_only=False):
            if self._closed:
                return
            label, suffix, trace_id = key
            name = run_name(f"{label}-{trace_id[:8]}{suffix or ''}" if suffix is not None else label, 1,
                            self._data.__contains__)
            _named(run, name)
            self._data[name] = run
            self._entries.append(entry_from_run(run))
            self._placed.append((place, n, key, name))
            yield Progress(min(1.0, self._seen[0] / self._size) if self._size else 1.0)
        if not self._entries:
            raise no_runs_error(self._problems, self.label)
        self._rename()
        self.done = True
        yield Progress(1.0)

    def _rename(self) -> None:
        """Every run under the name, and in the place, that reading the file whole gives it."""
        placed = sorted(self._placed, key=lambda p: (p[0], p[1]))
        finals = run_names([p[2] for p in placed])
        data = {}
        for (_, _, _, provisional), final in zip(placed, finals):
            run = self._data[provisional]
            _named(run, final)
            data[final] = run
        entries = {e.run_id: e for e in self._entries}
        ordered = [RunEntry(final, entries[p[3]].shape) for p, final in zip(placed, finals)]
        self._data = {**self._data, **data}  # (a row still shown under its provisional name loads too)
        self._entries[:] = ordered


def _named(run: RunData, name: str) -> None:
    """A run and its records under ``name``."""
    run.run_id = name
    for record in (run.run, run.summary, *run.events):
        if isinstance(record, dict):
            record["run_id"] = name
