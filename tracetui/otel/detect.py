"""Telling OTLP/JSON files from tracetui traces by their content, and opening either.

The command line and the explorer call these instead of the trace layer's readers,
so the trace layer stays ignorant of OpenTelemetry. An OTLP/JSON file (JSON lines
of ``TracesData``, or one ``{"resourceSpans": …}`` document, pretty-printed or not)
begins with an object whose first key is ``resourceSpans`` (its only field); a
tracetui trace line begins with ``{"rec":``. The file name plays no part.
"""
from __future__ import annotations

import os
import re
from typing import Any, Sequence

from tracetui.otel.no_runs import no_runs_error
from tracetui.trace.reader import Problem, RunData, TraceFile, TraceReadError, open_checked, read_trace, run_name
from tracetui.trace.source import MemorySource, TraceSource

HEAD_BYTES = 64 * 1024
_OTLP_START = re.compile(rb'(?m)^[\s\xef\xbb\xbf]*\{\s*"resource(?:Spans|_spans)"\s*:')
_TRACE_START = re.compile(rb'(?m)^\s*\{\s*"rec"\s*:')


def is_otlp(path: str | os.PathLike[str]) -> bool:
    """Whether a file holds OTLP/JSON rather than a tracetui trace, judged from its first 64 KiB.

    Raises :class:`TraceReadError` for a missing, directory or unreadable path.
    """
    p = open_checked(path)
    with open(p, "rb") as fh:
        return looks_otlp(fh.read(HEAD_BYTES))


def looks_otlp(head: bytes) -> bool:
    """Whether the first bytes of a file are OTLP/JSON's rather than a tracetui trace's."""
    otlp, trace = _OTLP_START.search(head), _TRACE_START.search(head)
    if otlp is None:
        return False
    return trace is None or otlp.start() < trace.start()


#: the first key of the first object (or a first character that opens no object): enough to tell
_FIRST_KEY = re.compile(rb'[\s\xef\xbb\xbf]*(?:\{\s*"(?:[^"\\]|\\.)*"|[^\s{\xef\xbb\xbf])')


def _told_apart(head: bytes) -> bool:
    """Whether the first bytes say enough: a trace's first line, in any key order, or OTLP's first key."""
    return (_FIRST_KEY.match(head) is not None or _OTLP_START.search(head) is not None
            or _TRACE_START.search(head) is not None)


def spooled_for_check(spool: Any) -> Any:
    """Standard input read as OTLP/JSON when its first bytes say it is one, as ``check`` needs it: as it arrives,
    in bounded memory, its runs kept as their verdicts (:mod:`tracetui.otel.checked`,
    :mod:`tracetui.otel.arriving`); None when it is a tracetui trace, left to the streaming reader."""
    if not looks_otlp(spool.head(HEAD_BYTES, _told_apart)):
        return None
    from tracetui.otel.arriving import Arriving
    from tracetui.otel.checked import read_checked

    return read_checked(Arriving(spool))


def spooled_source(spool: Any, timeout: float | None = None) -> Any:
    """``open -`` of OTLP/JSON: a source whose runs are listed as standard input brings them, in bounded memory
    (:class:`tracetui.otel.stream_source.StreamedOtlpSource`; it closes ``spool``); None when it is a tracetui
    trace, or when nothing told them apart within ``timeout`` seconds (a writer slow to start writes a trace)."""
    if not looks_otlp(spool.head(HEAD_BYTES, _told_apart, timeout)):
        return None
    from tracetui.otel.arriving import Arriving
    from tracetui.otel.stream_source import StreamedOtlpSource

    return StreamedOtlpSource(Arriving(spool))


def read_otlp(path: str | os.PathLike[str]) -> TraceFile:
    """An OTLP/JSON file as runs and problems (the shape :func:`~tracetui.trace.reader.read_trace` returns)."""
    from tracetui.otel.otlp_read import read_spans  # imported only for an OTLP file: check starts sooner

    spans, problems = read_spans(path)
    return _imported(spans, problems, str(path))


def otlp_hint(source: Any) -> str | None:
    """For ``open -`` that found no runs: a hint when standard input turns out to hold OTLP/JSON that
    arrived too late to be told apart (the explorer opened on a trace by then)."""
    inputs = getattr(source, "inputs", None)
    if not inputs or len(inputs) != 1 or getattr(inputs[0], "fd", None) is None:
        return None
    try:
        head = os.pread(inputs[0].fd, HEAD_BYTES, 0)
    except OSError:
        return None
    if not looks_otlp(head):
        return None
    return ("standard input holds OTLP/JSON, which came too late to be told from a trace: "
            "save it to a file and open that, or pipe it to tracetui check -")


def _imported(spans: Any, problems: list[Problem], label: str) -> TraceFile:
    from tracetui.otel.importer import runs_from_spans

    runs = runs_from_spans(spans)
    if not runs:
        raise no_runs_error(problems, label)
    return TraceFile(label, {r.run_id: r for r in runs}, problems)


def read_for_check(path: str | os.PathLike[str], query: Any = None) -> Any:
    """:func:`read_any` as ``check`` needs it: an OTLP/JSON file streamed in bounded memory, its runs kept
    as their verdicts (:mod:`tracetui.otel.checked`); anything else as :func:`read_any` reads it."""
    from tracetui.otel.backend import is_backend_source

    if not is_backend_source(path) and is_otlp(path):
        from tracetui.otel.checked import read_checked

        return read_checked(path)
    return read_any(path, query)


def read_any(path: str | os.PathLike[str], query: Any = None) -> TraceFile:
    """A tracetui trace or an OTLP/JSON file, whichever it is, or a backend source (``phoenix+http://…``, the
    runs ``query`` chooses: :mod:`tracetui.otel.backend`); for ``check``, ``export`` and ``replay``."""
    from tracetui.otel.backend import Query, is_backend_source

    if is_backend_source(path):
        from tracetui.otel.phoenix_source import read_phoenix  # the one backend read so far

        return read_phoenix(str(path), query or Query())
    return read_otlp(path) if is_otlp(path) else read_trace(path)


def open_any(paths: Sequence[str], query: Any = None) -> TraceSource:
    """What ``tracetui open`` explores: tracetui traces are indexed in the background as before, and so is one
    OTLP/JSON file (its traces read as a stream: :mod:`tracetui.otel.stream_source`); several files of which
    any is OTLP/JSON, or a backend source, are read whole into one source."""
    from tracetui.otel.backend import is_backend_source
    from tracetui.trace.index import IndexedSource

    if not any(is_backend_source(p) or is_otlp(p) for p in paths):
        return IndexedSource(list(paths))
    if len(paths) == 1 and not is_backend_source(paths[0]):  # one OTLP/JSON file: read in the background
        from tracetui.otel.stream_source import StreamedOtlpSource

        return StreamedOtlpSource(paths[0])
    runs: dict[str, RunData] = {}
    problems: list[Problem] = []
    errors: list[str] = []
    for path in paths:
        try:
            trace = read_any(path, query)
        except TraceReadError as exc:
            if len(paths) == 1:
                raise
            errors.append(str(exc))
            problems.append(Problem(0, str(exc), str(path)))
            continue
        problems.extend(trace.problems)
        for name, run in trace.runs.items():
            if name in runs:
                unique = run_name(name, 2, runs.__contains__)
                run.run_id = unique
                name = unique
            runs[name] = run
    if not runs:
        raise TraceReadError("; ".join(errors) or ("no runs found in any file" if query is None
                                                   else "no run matches the --since and --status given"))
    label = str(paths[0]) if len(paths) == 1 else f"{len(paths)} files"
    return MemorySource(list(runs.values()), label, problems)
