"""OTLP/JSON read as a stream: each trace assembled as its spans arrive, released once the file is past it.

A collector's file exporter writes one ``TracesData`` per line, each a batch of spans as they ended, so a
trace's spans are spread over neighbouring lines (its root, ending last, usually last of all). The
release rule: a trace is released (read into runs, then forgotten) once

- its tree is closed: it has a root span (no parent) and every parent its spans name is among them, and
- :data:`WINDOW_LINES` lines have been read since its last span,

or at the end of the file. A trace that is not closed waits for the end of the file, unless the spans
held reach :data:`MAX_HELD_SPANS`: then the traces idle longest are released as they are (a problem says
so; or once they hold :data:`MAX_HELD_BYTES` of the lines they came in: a few big spans weigh as much as
many small ones). For any file in which every trace's spans lie within ``WINDOW_LINES`` lines of each other (or whose
open traces fit the budget), the runs, verdicts, names and problems are exactly those of reading the file
whole (:func:`tracetui.otel.otlp_read.read_spans`). A span of a trace already released is read apart, as a
further run of that trace, and a problem names its line.

A single document (one ``{"resourceSpans": …}``, pretty-printed or on one line) cannot be cut by lines: it
is parsed whole (its own size bounds the memory, up to ``MAX_DOCUMENT_BYTES``) and its traces released one
by one from there.
"""
from __future__ import annotations

import os
from typing import Callable, Iterable, Iterator

from tracetui.otel import salvage
from tracetui.otel.otlp_read import MAX_DOCUMENT_BYTES, _line_of_span, line_spans, parent_cycles, spans_of
from tracetui.otel.spans import Span
from tracetui.trace.limits import MAX_LINE_BYTES
from tracetui.trace.reader import Problem, iter_fd_lines, iter_lines, open_checked

#: lines read past a closed trace's last span before it is released (a span ending after its trace's root,
#: an async task's, comes in one of the next few batches)
WINDOW_LINES = 4
#: spans held at once before the traces idle longest are released unfinished
MAX_HELD_SPANS = 200_000
#: or bytes of the lines they came in (each span weighs its share of its line): the spans of open traces are
#: about 1.4 times that in memory, so the peak stays within ~300 MB however big a span is
MAX_HELD_BYTES = 96 * 1024 * 1024

#: a released trace: (its place in the file: the ordinal of its first span, its spans)
Released = tuple[int, list[Span]]


class _Held:
    __slots__ = ("spans", "first", "last", "judged", "bytes")

    def __init__(self, first: int, line: int):
        self.spans: list[Span] = []
        self.first, self.last = first, line
        self.bytes = 0
        self.judged: tuple[int, bool] = (-1, False)  # (span count when last judged, whether closed then)

    def closed(self) -> bool:
        """Whether it has a root and every parent its spans name (judged again only when it has grown)."""
        if self.judged[0] != len(self.spans):
            ids = {s.span_id for s in self.spans}
            closed = (any(not s.parent_span_id for s in self.spans)
                      and all(not s.parent_span_id or s.parent_span_id in ids for s in self.spans))
            self.judged = (len(self.spans), closed)
        return self.judged[1]


def traces_of(path: str | os.PathLike[str], problems: list[Problem],
              seen: list[int] | None = None) -> Iterator[Released]:
    """The traces of an OTLP/JSON file as they are released; the lines that could not be read go into
    ``problems`` (in the order reading the file whole gives them, once the iterator is exhausted).
    ``seen[0]``: the bytes read so far, kept up to date (for a progress bar). ``path`` may instead be standard
    input, read as it arrives (:class:`tracetui.otel.arriving.Arriving`)."""
    if not isinstance(path, (str, os.PathLike)):  # standard input: its lines waited for as they arrive
        arriving = path
        return _traces(arriving.lines, arriving.size(), arriving.whole, str(arriving), problems,
                       lambda: arriving.lines(seen))
    p = open_checked(path)
    size = p.stat().st_size

    def lines() -> Iterator[tuple[int, bytes]]:
        for number, raw in iter_lines(p):
            if seen is not None:
                seen[0] += len(raw) + 1
            yield number, raw

    def whole() -> bytes:
        if seen is not None:
            seen[0] = size
        return p.read_bytes()

    return _traces(lambda: iter_lines(p), size, whole, str(path), problems, lines)


def traces_of_fd(fd: int, label: str, problems: list[Problem]) -> Iterator[Released]:
    """:func:`traces_of` of an open descriptor."""
    size = os.fstat(fd).st_size
    return _traces(lambda: iter_fd_lines(fd), size, lambda: os.pread(fd, size, 0), label, problems)


def _traces(lines_of: Callable[[], Iterable[tuple[int, bytes]]], size: int, whole: Callable[[], bytes],
            label: str, problems: list[Problem],
            counted: Callable[[], Iterable[tuple[int, bytes]]] | None = None) -> Iterator[Released]:
    first = next(iter(lines_of()), None)
    broken: Problem | None = None
    if first is not None and size <= MAX_DOCUMENT_BYTES and (
            len(first[1]) > MAX_LINE_BYTES or salvage.loads(first[1])[2] is not None):
        text = whole().removeprefix(b"\xef\xbb\xbf")
        doc, notes, error = salvage.loads(text)
        if error is None:  # one (pretty-printed) document: parsed whole, released trace by trace
            problems.extend(Problem(note.line, note.message, label) for note in notes)
            spans = spans_of(doc, 1, label, problems, locate=_line_of_span(text))
            del doc, text
            yield from _released_whole(spans, label, problems)
            return
        broken = Problem(error.line, error.message, label)
    stream = _Stream(label, problems)
    read_any_line = False
    for number, raw in (counted or lines_of)():
        spans = line_spans(raw, number, label, problems)
        if spans is None:
            continue
        read_any_line = True
        yield from stream.add(spans, number, len(raw))
    if broken is not None and broken.line > 1 and not read_any_line:
        problems[:] = [broken]  # its first line began a document that breaks further down: that is the reason
        return
    yield from stream.finish()


def _released_whole(spans: list[Span], label: str, problems: list[Problem]) -> Iterator[Released]:
    traces: dict[str, list[Span]] = {}
    order: dict[str, int] = {}
    for n, span in enumerate(spans):
        order.setdefault(span.trace_id, n)
        traces.setdefault(span.trace_id, []).append(span)
    problems.extend(parent_cycles(spans, label))
    spans.clear()
    for trace_id in list(traces):
        yield order[trace_id], traces.pop(trace_id)


class _Stream:
    """The traces not yet released, and the rule that releases them."""

    def __init__(self, label: str, problems: list[Problem]):
        self.label, self.problems = label, problems
        self.held: dict[str, _Held] = {}
        self.released: set[str] = set()
        self.late: set[str] = set()  # released traces whose late spans were said
        self.cycles: list[tuple[int, list[Problem]]] = []
        self.spans_held = 0
        self.bytes_held = 0
        self.ordinal = 0

    def add(self, spans: list[Span], line: int, size: int = 0) -> Iterator[Released]:
        weight = size // len(spans) if spans else 0
        for span in spans:
            held = self.held.get(span.trace_id)
            if held is None:
                if span.trace_id in self.released and span.trace_id not in self.late:
                    self.late.add(span.trace_id)
                    self.problems.append(Problem(line, f"spans of trace {span.trace_id} come more than "
                                                       f"{WINDOW_LINES} lines after the rest of it, which was read "
                                                       f"already: read as a further run of it", self.label))
                held = self.held[span.trace_id] = _Held(self.ordinal, line)
            held.spans.append(span)
            held.bytes += weight
            held.last = line
            self.ordinal += 1
        self.spans_held += len(spans)
        self.bytes_held += weight * len(spans)
        yield from self._release(line)

    def _release(self, line: int) -> Iterator[Released]:
        ready = [t for t, h in self.held.items() if line - h.last >= WINDOW_LINES and h.closed()]
        for trace_id in ready:
            yield self._out(trace_id)
        if self.spans_held > MAX_HELD_SPANS or self.bytes_held > MAX_HELD_BYTES:
            victims, spans, size = [], self.spans_held, self.bytes_held  # the idle longest, down to half of each
            for trace_id in sorted(self.held, key=lambda t: self.held[t].last):
                if spans <= MAX_HELD_SPANS // 2 and size <= MAX_HELD_BYTES // 2:
                    break
                victims.append(trace_id)
                spans, size = spans - len(self.held[trace_id].spans), size - self.held[trace_id].bytes
            more = f" and {len(victims) - 1:,} more traces were" if len(victims) > 1 else " was"
            self.problems.append(Problem(line, f"trace {victims[0]}{more} read before the root span or a parent "
                                               f"arrived (open traces held more than {MAX_HELD_SPANS:,} spans or "
                                               f"{MAX_HELD_BYTES >> 20} MiB): any span of them further down is "
                                               f"read as a further run", self.label))  # (one problem a round)
            for trace_id in victims:
                yield self._out(trace_id)

    def _out(self, trace_id: str) -> Released:
        held = self.held.pop(trace_id)
        self.spans_held -= len(held.spans)
        self.bytes_held -= held.bytes
        self.released.add(trace_id)
        cycles = parent_cycles(held.spans, self.label)
        if cycles:
            self.cycles.append((held.first, cycles))
        return held.first, held.spans

    def finish(self) -> Iterator[Released]:
        for trace_id in sorted(self.held, key=lambda t: self.held[t].first):
            yield self._out(trace_id)
        for _, cycles in sorted(self.cycles, key=lambda c: c[0]):
            self.problems.extend(cycles)
