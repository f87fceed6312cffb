"""Naming one run of any trace on a command line: ``FILE:ID`` or ``FILE --run ID``, and loading it.

A path may itself hold ``:`` (``C:\\traces\\runs.jsonl``, ``runs:v2.jsonl``, a backend's
``phoenix+http://host:6006/project``), so ``FILE:ID`` is split where the part before the colon names
a file that exists (the longest such part); a backend source is split after its address. A file
that holds one run needs no id. Loading reads a tracetui trace only as far as the run's end, and an
OTLP/JSON file or a backend source whole (imported runs are small). Two runs of one file are found in
one reading of it (:func:`load_runs`): a strict scan of a big trace costs several times its index, and
``diff A B`` of one 1 GiB file used to make two.
"""
from __future__ import annotations

import difflib
import os
from typing import Any, Mapping, Sequence

from tracetui.trace.reader import RunData, TraceReadError

#: run ids a "no such run" error lists at the most
LISTED = 8


class RunSpecError(ValueError):
    """A run named in a way that cannot be read (said in words a user would write in a bug report)."""


def _backend_split(text: str) -> tuple[str, str | None]:
    """``phoenix+http://host:6006/project:ID``: the id follows the last colon after the address's path."""
    scheme_end = text.find("://") + 3
    slash = text.find("/", scheme_end)
    colon = text.rfind(":")
    if slash != -1 and colon > slash:
        return text[:colon], text[colon + 1:] or None
    return text, None


def parse_run_spec(text: str, run: str | None = None) -> tuple[str, str | None]:
    """``(path, run id)`` of ``FILE:ID``, or of ``FILE`` with ``run`` given (``--run ID``). The id is None for a
    bare ``FILE``: :func:`load_run` then takes its only run. Raises :class:`RunSpecError`."""
    from tracetui.otel.backend import is_backend_source

    if not text:
        raise RunSpecError("an empty name was given where a trace file (FILE:ID or FILE --run ID) was expected")
    if run is not None:
        if not run:
            raise RunSpecError(f"--run after {text} names no run: give its id")
        return text, run
    if is_backend_source(text):
        return _backend_split(text)
    if os.path.exists(text):
        return text, None
    colons = [i for i, ch in enumerate(text) if ch == ":"]
    for i in reversed(colons):  # the longest part before a colon that is a file
        if i and os.path.isfile(text[:i]):
            run_id = text[i + 1:]
            if not run_id:
                raise RunSpecError(f"{text} names no run after its colon: give FILE:ID or FILE --run ID")
            return text[:i], run_id
    if colons and not any(sep in text[colons[-1] + 1:] for sep in "/\\"):
        return text[:colons[-1]], text[colons[-1] + 1:] or None  # FILE:ID whose FILE is missing: load says so
    return text, None


def nearby(run_id: str, names: Sequence[str], listed: int = LISTED) -> list[str]:
    """Ids like ``run_id`` (a typo's neighbours) first, then the first others, ``listed`` at the most."""
    close = difflib.get_close_matches(run_id, list(names), n=listed, cutoff=0.5) if len(run_id) <= 200 else []
    rest = [n for n in names if n not in close]
    return (close + rest)[:listed]


def _not_found(path: str, run_id: str, names: Sequence[str], count: int) -> TraceReadError:
    shown = nearby(run_id, names)
    more = f" (of {count:,})" if count > len(shown) else ""
    return TraceReadError(f"{path}: no run {run_id!r}; runs{more}: {', '.join(shown)}"
                          + (" …" if count > len(shown) else ""))


def _pick(path: str, runs: Mapping[str, RunData], run_id: str | None) -> RunData:
    """``run_id`` of a trace read whole (the only run when None), or a sentence saying why not."""
    if run_id is None:
        if len(runs) == 1:
            return next(iter(runs.values()))
        raise TraceReadError(f"{path} holds {len(runs):,} runs: choose one with {path}:ID or --run ID "
                             f"({', '.join(list(runs)[:LISTED])}{' …' if len(runs) > LISTED else ''})")
    if run_id in runs:
        return runs[run_id]
    raise _not_found(path, run_id, list(runs), len(runs))


def _missing(path: str, run_id: str, names: list[str], count: int) -> TraceReadError:
    if count > len(names) and os.path.getsize(path) <= 16 * _small_file_bytes():
        from tracetui.otel.detect import read_any

        names = list(read_any(path).runs)  # every id, to find the ones near the one asked for
    return _not_found(path, run_id, names, count)


def load_run(path: str, run_id: str | None) -> RunData:
    """The run ``run_id`` of the trace at ``path`` (a tracetui trace, OTLP/JSON, or a backend source); with
    ``run_id`` None, the file's only run. Raises :class:`~tracetui.trace.reader.TraceReadError` in words
    (no such file, no such run: the ids nearest the one asked for)."""
    from tracetui.otel.backend import is_backend_source
    from tracetui.otel.detect import is_otlp, read_any

    try:
        if is_backend_source(path) or is_otlp(path) or run_id is None:
            return _pick(path, read_any(path).runs, run_id)
        from tracetui.trace.checking import find_run

        found, names, count = find_run(path, run_id)  # reads only as far as the run's end
        if found is not None:
            return found
        raise _missing(path, run_id, names, count)
    except OSError as exc:
        raise TraceReadError(f"{path}: {exc.strerror or exc}") from None


def _same_file(a: str, b: str) -> bool:
    try:
        return a == b or os.path.samefile(a, b)
    except OSError:
        return False


def _scan_for(named: Sequence[tuple[str, str]], chunk_bytes: int) -> list[RunData]:
    """The runs of ``named`` (names of one big trace, and run ids) in one strict scan, stopped once every one
    has ended; errors as :func:`load_run` gives them, for the first id that is missing (under its own name)."""
    from tracetui.trace.checking import StrictScan

    class _PairFinder(StrictScan):
        """Notes where each run asked for ends (the first run listed under each name)."""

        def __init__(self, path: str, names: Sequence[str]):
            super().__init__(path)
            self.wanted = set(names)
            self.ended: dict[str, int] = {}

        def run_ended(self, scan: Any, r: int, summary: dict[str, Any]) -> None:
            name = self.runs.names[r]
            if name in self.wanted and name not in self.ended:
                self.ended[name] = r

    path, ids = named[0][0], [run_id for _, run_id in named]
    finder = _PairFinder(path, ids)
    try:
        for _ in finder.scan(chunk_bytes):
            if len(finder.ended) == len(finder.wanted):
                break
        runs = finder.runs
        if not len(runs):
            detail = "it is empty" if finder.lines.size == 0 else "no line is a trace record"
            raise TraceReadError(f"{finder.label}: no runs found ({detail})")
        loaded = []
        for named_as, run_id in named:
            r = finder.ended.get(run_id)
            if r is None:
                try:
                    r = runs.number(run_id)  # a run without a summary
                except KeyError:
                    raise _missing(named_as, run_id, runs.names[:12], len(runs)) from None
            loaded.append(finder.load(r))
        return loaded
    finally:
        finder.close()


def load_runs(named: Sequence[tuple[str, str | None]], chunk_bytes: int = 1024 * 1024) -> list[RunData]:
    """Each ``(path, run id)``'s run, as :func:`load_run` gives it (the same first error, in the same words),
    but two runs of one file from one reading of it: a big trace in one strict scan that stops as soon as
    both runs have ended, a small one or an OTLP file read whole once."""
    from tracetui.otel.backend import is_backend_source
    from tracetui.otel.detect import is_otlp, read_any

    if len(named) != 2 or not _same_file(named[0][0], named[1][0]) or any(r is None for _, r in named):
        return [load_run(path, run_id) for path, run_id in named]
    path = named[0][0]  # (a second name of the same file, ./runs.jsonl or a link, still names its own errors)
    try:
        if is_backend_source(path) or is_otlp(path) or _size(path) <= _small_file_bytes():
            runs = read_any(path).runs  # (what a small file's "no such run" lists: every id, nearest first)
            return [_pick(named_as, runs, run_id) for named_as, run_id in named]
        return _scan_for(named, chunk_bytes)  # type: ignore[arg-type]  # (no id is None here)
    except OSError as exc:
        raise TraceReadError(f"{path}: {exc.strerror or exc}") from None


def _small_file_bytes() -> int:
    from tracetui.trace.checking import SMALL_FILE_BYTES

    return SMALL_FILE_BYTES


def _size(path: str) -> int:
    """The size of the file at ``path``, or a sentence why it cannot be read (as :func:`find_run` says it)."""
    from tracetui.trace.reader import open_trace

    fd = open_trace(path)
    try:
        return os.fstat(fd).st_size
    finally:
        os.close(fd)


def split_specs(words: Sequence[str]) -> list[tuple[str, str | None]]:
    """``FILE:ID`` and ``FILE --run ID`` words, in order, as (FILE or FILE:ID, the ``--run`` given after it).
    Raises :class:`RunSpecError` for a ``--run`` with no file before it or no id after it."""
    specs: list[tuple[str, str | None]] = []
    i = 0
    while i < len(words):
        word = words[i]
        if word == "--run" or word.startswith("--run="):
            if word == "--run":
                if i + 1 >= len(words):
                    raise RunSpecError("--run needs a run id after it")
                run, i = words[i + 1], i + 2
            else:
                run, i = word[len("--run="):], i + 1
            if not specs:
                raise RunSpecError(f"--run {run} comes before any file: give FILE --run ID")
            if specs[-1][1] is not None:
                raise RunSpecError(f"{specs[-1][0]} is given two runs (--run {specs[-1][1]} and --run {run}): "
                                   f"name the second file before its run")
            specs[-1] = (specs[-1][0], run)
            continue
        specs.append((word, None))
        i += 1
    return specs
