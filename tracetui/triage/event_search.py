"""Search inside events: which runs of a source hold a text anywhere in their records, and which events.

The explorer's ``/`` matches run ids and statuses at once; this finds the runs whose records hold
the text (reasons, tool names, arguments, event data), off the UI thread, a batch at a time.

What counts as holding it (:mod:`.event_match`): the text, case aside (``casefold``), is part of one
key or one value of a record *as the explorer shows it*, that is redacted
(:func:`~tracetui.trace.redact.redact_value`): a secret the detail pane shows as ``<redacted>`` is never
found. Numbers, booleans and null are read as their JSON text (``/429`` finds an HTTP 429).

An indexed file is not parsed whole: its bytes are read in blocks (never a memory map), lowered,
and searched with ``bytes.find`` for a *prefilter* form of the text; only a line that holds it is
parsed and confirmed, and once a run is found the rest of its byte range is skipped. The prefilter
is the text's longest piece of plain ASCII (letters, digits, punctuation other than a quote, a
backslash or a slash: those may be escaped in JSON); a text without such a piece is searched in the
forms a JSON writer may give it (raw UTF-8, ``\\"``, ``\\u00e9``), in its upper, lower and folded case.
Memory: one block and its lowered copy, and the index's segment table copied as arrays.
"""
from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Sequence

from tracetui.trace import limits
from tracetui.trace.reader import parse_line
from tracetui.triage.event_match import Needle, holds, matching_events, record_matches, run_matches

__all__ = ["EventSearch", "Needle", "SearchStep", "holds", "matching_events", "record_matches", "run_matches",
           "search_runs"]

#: bytes read (and searched) at once from an indexed file
BLOCK_BYTES = 8 * 1024 * 1024
#: runs of an in-memory source searched between two reports
MEMORY_BATCH = 256
#: how often a search of a file still being indexed looks again for newly indexed lines, in seconds
POLL_SECONDS = 0.2

RunKey = tuple[int, str]  # (file of the source, the run's listed name): how the run list knows a run


@dataclass
class SearchStep:
    """What one step of a search found: runs new since the last step, and how far it is."""

    found: list[RunKey]
    done_bytes: int
    total_bytes: int
    finished: bool = False

    @property
    def fraction(self) -> float:
        return 1.0 if self.finished or not self.total_bytes else min(1.0, self.done_bytes / self.total_bytes)


@dataclass
class EventSearch:
    """A search of one source's runs for a text, run step by step (:meth:`steps`); :meth:`cancel` stops it
    at its next block. Sources: an indexed file (its raw lines, through the index's byte ranges; a file
    still being indexed is searched as far as it is indexed, then further as the index goes on), or any
    other :class:`~tracetui.trace.source.TraceSource` (the demo, small files, OTLP imports: its runs loaded)."""

    source: Any
    needle: Needle
    _cancelled: threading.Event = field(default_factory=threading.Event)

    def cancel(self) -> None:
        self._cancelled.set()

    @property
    def cancelled(self) -> bool:
        return self._cancelled.is_set()

    def steps(self) -> Iterator[SearchStep]:
        files = getattr(self.source, "indexed_files", None)
        yield from (self._indexed(files) if files is not None else self._loaded())

    def all(self) -> set[RunKey]:
        """Every run found (for the CLI and tests)."""
        found: set[RunKey] = set()
        for step in self.steps():
            found.update(step.found)
        return found

    # -- sources whose runs are loaded ---------------------------------------------------------
    def _loaded(self) -> Iterator[SearchStep]:
        entries = list(self.source.runs())
        found: list[RunKey] = []
        for n, entry in enumerate(entries):
            if self.cancelled:
                return
            try:
                data = self.source.load(entry)
            except Exception:  # noqa: BLE001 - a run that cannot be loaded holds nothing to find
                continue
            if run_matches(data, self.needle):
                found.append((entry.source, entry.run_id))
            if (n + 1) % MEMORY_BATCH == 0:
                yield SearchStep(found, n + 1, len(entries))
                found = []
        yield SearchStep(found, len(entries), len(entries), finished=True)

    # -- indexed files ----------------------------------------------------------------------------
    def _indexed(self, files: Callable[[], Sequence[Any]]) -> Iterator[SearchStep]:
        searched: dict[int, int] = {}  # file -> bytes searched from its start
        matched: set[RunKey] = set()
        while True:
            indexing = not getattr(self.source, "done", True) and not getattr(self.source, "following", False)
            progressed = False
            for f in files():
                spans = _Spans.of(f)
                start, end = searched.get(f.source, 0), spans.end
                if end <= start:
                    continue
                progressed = True
                for found, at in self._search_file(f, spans, start, end, matched):
                    searched[f.source] = at
                    yield SearchStep(found, sum(searched.values()), self._total(files()))
                    if self.cancelled:
                        return
            if not indexing and not progressed:
                break
            if not progressed:
                if self._cancelled.wait(POLL_SECONDS):
                    return
        yield SearchStep([], sum(searched.values()), sum(searched.values()), finished=True)

    def _total(self, files: Sequence[Any]) -> int:
        return max(sum(f.lines.size for f in files), 1)

    def _search_file(self, f: Any, spans: "_Spans", start: int, end: int,
                     matched: set[RunKey]) -> Iterator[tuple[list[RunKey], int]]:
        lines = f.lines
        pos = start
        while pos < end and not self.cancelled:
            block = lines.read(pos, min(BLOCK_BYTES, end - pos))
            if pos + len(block) < end:
                cut = block.rfind(b"\n") + 1
                if cut == 0:  # one line longer than a block: read it whole, or skip it when over the limit
                    cut = _line_end(lines, pos, end) - pos
                    block = lines.read(pos, cut) if cut <= limits.MAX_LINE_BYTES + 2 else b""
                block = block[:cut]
            else:
                cut = len(block)
            found = self._search_block(f, spans, pos, block, matched) if block else []
            pos += cut
            yield found, pos

    def _search_block(self, f: Any, spans: "_Spans", base: int, block: bytes, matched: set[RunKey]) -> list[RunKey]:
        low = block.lower()
        found: list[RunKey] = []
        at = 0
        names = f.runs.names
        while True:
            hit = _first(low, self.needle.forms, at)
            if hit < 0:
                return found
            line_start = low.rfind(b"\n", 0, hit) + 1
            line_end = low.find(b"\n", hit)
            line_end = len(low) if line_end < 0 else line_end
            k = spans.segment_at(base + hit)
            at = line_end + 1
            if k < 0:  # a line of no run (a bad line): nothing the explorer lists
                continue
            r = int(spans.run[k])
            key = (f.source, names[r])
            if key not in matched:
                obj, problem = parse_line(block[line_start:line_end].rstrip(b"\r"))
                if problem or not record_matches(obj, self.needle):
                    continue
                matched.add(key)
                found.append(key)
            at = max(at, int(spans.ends[k]) - base)  # the rest of this run's bytes here: it is found already


def _first(low: bytes, forms: tuple[bytes, ...], at: int) -> int:
    if len(forms) == 1:
        return low.find(forms[0], at)
    hits = [h for h in (low.find(form, at) for form in forms) if h >= 0]
    return min(hits) if hits else -1


def _line_end(lines: Any, start: int, end: int) -> int:
    pos = start
    while pos < end:
        data = lines.read(pos, min(BLOCK_BYTES, end - pos))
        nl = data.find(b"\n")
        if nl >= 0:
            return pos + nl + 1
        pos += len(data)
    return end


class _Spans:
    """An indexed file's run segments (byte ranges of one run's lines), copied and sorted by start, each
    with its run: which run a byte of the file belongs to. Copied (never viewed in place): the index may
    be growing its arrays in another thread."""

    def __init__(self, starts: Any, ends: Any, run: Any):
        self.starts, self.ends, self.run = starts, ends, run
        self.end = int(ends.max()) if len(ends) else 0

    @classmethod
    def of(cls, f: Any) -> "_Spans":
        import numpy as np

        lines, runs = f.lines, f.runs
        n = len(lines.seg_start)
        nr = len(runs.head)
        starts = np.frombuffer(lines.seg_start[:n], np.int64)
        ends = np.frombuffer(lines.seg_end[:n], np.int64)
        nxt = np.frombuffer(lines.seg_next[:n], np.int64)
        owner = np.full(n, -1, np.int64)
        cur = np.frombuffer(runs.head[:nr], np.int64).copy()
        r = np.arange(nr, dtype=np.int64)
        while True:
            ok = (cur >= 0) & (cur < n)
            if not ok.any():
                break
            cur, r = cur[ok], r[ok]
            owner[cur] = r
            cur = nxt[cur]
        known = owner >= 0
        order = np.argsort(starts[known], kind="stable")
        return cls(starts[known][order], ends[known][order], owner[known][order])

    def segment_at(self, pos: int) -> int:
        """The segment holding byte ``pos``, or -1."""
        import numpy as np

        k = int(np.searchsorted(self.starts, pos, side="right")) - 1
        return k if k >= 0 and pos < self.ends[k] else -1


def search_runs(source: Any, text: str) -> set[RunKey]:
    """Every run of ``source`` whose records hold ``text`` (see the module)."""
    return EventSearch(source, Needle.of(text)).all()
