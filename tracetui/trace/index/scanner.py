"""Scanning one trace file chunk by chunk: lines linked to their runs, runs that end, problems.

A chunk is read with ``pread`` and classified in bulk (:mod:`.steps`, :mod:`.classify`). The
common *item* (consecutive lines of one run with a plain id: its run line, its
events, its summary) is linked in one step; anything else goes line by line
through the same rules as :func:`~tracetui.trace.reader.read_trace`.

Only ``summary`` lines are parsed in the default mode. A ``run`` line gives its
scenario, ablation and trace version through a regex over the writer's layout
(parsed whole when the layout differs: run lines can be megabytes of recorded
responses). Event lines are only checked cheaply: the prefix, a plain run id, a
closing ``}``, valid UTF-8. A line that fails a cheap check, or has no known prefix
(another writer, another key order), goes through
:func:`~tracetui.trace.reader.parse_line` exactly as the reader reads it. By design,
an event or run line that passes the cheap checks yet is not a valid record, and an
event whose ``seq`` repeats in its run, are found when its run is loaded.

In *strict* mode (``check``, ``replay``) every line is validated as the reader
would (:class:`.classify.Validation`), repeated ``seq`` are found as they are read,
and so every problem is reported during the scan, in line order.

What the scan finds goes to a :class:`Sink`: the source that publishes run-list
rows (:mod:`.source`), or ``check``'s verdict printer (:mod:`tracetui.trace.checking`).
"""
from __future__ import annotations

from typing import Any, Iterator, Protocol

import orjson

from tracetui.trace import limits
from tracetui.trace.format import version_problem
from tracetui.trace.index.changes import REWRITTEN, Change, TraceChanged
from tracetui.trace.index.layout import CURRENT_VERSION as _CURRENT_VERSION
from tracetui.trace.index.layout import RUN_LAYOUT as _RUN_LAYOUT
from tracetui.trace.index.layout import summary_of
from tracetui.trace.index.lines import FileLines
from tracetui.trace.index.runs import _INTERNED_BYTES as _INTERNED
from tracetui.trace.index.runs import RunTable, intern_bytes, intern_name
from tracetui.trace.index.steps import Prepared, prepare
from tracetui.trace.reader import LongLine, parse_line, record_warning


class Sink(Protocol):
    """Where a scan's findings go."""

    def run_ended(self, scan: "Scanner", r: int, summary: dict[str, Any]) -> None:
        """Run ``r`` read its summary line (its last)."""

    def run_grew(self, scan: "Scanner", r: int) -> None:
        """A run already published got more lines (only when following a growing file)."""

    def problem(self, scan: "Scanner", line: int, message: str) -> None:
        """A line that is not a record (or a record read with a warning)."""

    def rows_ended(self, scan: "Scanner", rs: list[int], rows: Any) -> None:
        """Runs ``rs`` of a chunk linked in bulk read their summaries, whose run-list fields are ``rows``
        (:class:`~tracetui.trace.index.entries.ChunkRows`): not strict scans only. A strict scan's sink
        gets ``runs_ended(scan, rs, summaries)`` when it has it, else ``run_ended`` for each."""


class Scanner:
    """Indexes one file (``lines``) into its run table (``runs``), reporting to ``sink``."""

    def __init__(self, lines: FileLines, runs: RunTable, sink: Sink, strict: bool = False):
        self.lines = lines
        self.runs = runs
        self.sink = sink
        self.strict = strict

    # -- one step -------------------------------------------------------------------------------
    def step(self, chunk_bytes: int, final: bool) -> int:
        """Index the whole lines in the next ``chunk_bytes`` (or the one line longer than that); returns
        how many bytes were consumed. Unless ``final``, a last line without its line end is left for
        later (a writer may be in the middle of it): then 0 means "wait for more"."""
        return self.apply(self.prepare(self.lines.pos, self.lines.size, chunk_bytes, final))

    def steps(self, chunk_bytes: int, final: bool) -> Iterator[int]:
        """:meth:`step` until the end of the file (or a line still being written), yielding the bytes
        consumed by each."""
        f = self.lines
        while f.pos < f.size:
            consumed = self.step(chunk_bytes, final)
            if not consumed:
                return
            yield consumed

    def prepare(self, start: int, size: int, chunk_bytes: int, final: bool) -> Prepared:
        """Read and classify the step from ``start`` (see :func:`.steps.prepare`)."""
        return prepare(self.lines, self.strict, start, size, chunk_bytes, final)

    # -- a chunk of whole lines -----------------------------------------------------------------
    def apply(self, prepared: Prepared) -> int:
        """Link the lines of a prepared step to their runs; returns the bytes consumed (0: wait for more)."""
        f = self.lines
        if prepared.end == prepared.start:
            return 0
        if prepared.too_long is not None:
            f.lineno += 1
            self.sink.problem(self, f.lineno, limits.too_long(prepared.too_long) or "")
        else:
            self._index(prepared.buf, prepared.base, prepared.size, prepared.chunk, prepared.validation,
                        prepared.items)
        f.pos = prepared.end
        return prepared.end - prepared.start

    def _index(self, buf: bytes, base: int, size: int, chunk: Any, validation: Any, items: Any) -> None:
        """Index the lines of ``buf[:size]``, which starts at ``base`` in the file (see :meth:`prepare`):
        in bulk (:mod:`.bulk`) when nothing in it needs the per-line rules, else item by item."""
        from tracetui.trace.index import classify as cl
        from tracetui.trace.index.bulk import link_in_bulk

        if link_in_bulk(self, base, chunk, validation, items):
            return
        self.validation = validation
        first = self.lines.lineno + 1  # line number of the chunk's line 0
        starts, ends, kinds, id_start, id_end = chunk.lists()
        item_starts, item_ends, item_events = (x.tolist() for x in (chunk.item_starts, chunk.item_ends,
                                                                    chunk.item_events))
        runs, lines, sink, strict = self.runs, self.lines, self.sink, self.strict
        ids, named, head, tail, nevents, pub = runs.ids, runs.named, runs.head, runs.tail, runs.nevents, runs.pub
        names, scenarios, ablations = runs.names, runs.scenario, runs.ablation
        seg_start, seg_end, seg_line, seg_next = lines.seg_start, lines.seg_end, lines.seg_line, lines.seg_next
        run_layout, loads, decode_error, run_ended = _RUN_LAYOUT, orjson.loads, orjson.JSONDecodeError, sink.run_ended
        interned = _INTERNED
        n = chunk.n
        EVENT, RUN, SUMMARY = cl.EVENT, cl.RUN, cl.SUMMARY
        deep = limits.MAX_DEPTH
        seqs = validation.seqs.tolist() if strict and validation.seqs is not None else None
        for s, e, events in zip(item_starts, item_ends, item_events):
            k0 = kinds[s]
            if not k0:
                self._line(buf, base, chunk, s, first + s, size)
                continue
            # the common item: [run line] events… [summary] of one run, linked at once; anything
            # unusual goes line by line
            key = self._run_id(buf, id_start[s], id_end[s])
            r = ids.get(key)
            if (r is None and "#" in key) or (r is not None and (r < 0 or (k0 == RUN and head[r] >= 0))):
                self._lines(buf, base, chunk, s, e, first, size)
                continue
            m = summary = None
            if k0 == RUN:
                m = run_layout(buf, id_end[s], ends[s])
                if m is None:
                    self._lines(buf, base, chunk, s, e, first, size)
                    continue
            if kinds[e - 1] == SUMMARY:
                raw = buf[starts[e - 1]:ends[e - 1]]
                try:
                    summary = loads(raw)
                except decode_error:
                    summary = None
                if (type(summary) is not dict or summary.get("rec") != "summary"
                        or type(summary.get("run_id")) is not str or summary["run_id"] != key
                        or (len(raw) > 2 * deep and raw.count(b"[") + raw.count(b"{") > deep
                            and limits.too_deep(summary))):
                    self._lines(buf, base, chunk, s, e, first, size)
                    continue
            if strict and events:
                seen = runs.seqs.get(r) if r is not None else None
                item_seqs = [seqs[i] for i in range(s, e) if kinds[i] == EVENT]
                if len(set(item_seqs)) != len(item_seqs) or (seen and not seen.isdisjoint(item_seqs)):
                    self._lines(buf, base, chunk, s, e, first, size)
                    continue
                runs.seqs.setdefault(r if r is not None else len(names), set()).update(item_seqs)
            start, end = base + starts[s], base + (starts[e] if e < n else size)  # its lines, with their line ends
            if r is None:  # a new run: its first segment
                if named and key in named:
                    r = runs.new_run(key, None)
                else:
                    r = len(names)
                    ids[key] = r
                    names.append(key)
                    tail.append(-1)
                    nevents.append(0)
                    pub.append(-1)
                    scenarios.append(None)
                    ablations.append(None)
                    head.append(-1)
            t = tail[r]
            if t >= 0 and seg_end[t] == start:
                seg_end[t] = end
            else:
                k = len(seg_start)
                seg_start.append(start)
                seg_end.append(end)
                seg_line.append(first + s)
                seg_next.append(-1)
                if t >= 0:
                    seg_next[t] = k
                else:
                    head[r] = k
                tail[r] = k
            if events:
                nevents[r] += events
            if m is not None:
                version, scenario, ablation = m.group(1, 2, 3)
                if scenario is not None:
                    scenarios[r] = interned.get(scenario) or intern_bytes(scenario)
                if ablation is not None:
                    ablations[r] = interned.get(ablation) or intern_bytes(ablation)
                if version != _CURRENT_VERSION:
                    self._version(version, first + s)
            if summary is not None:
                ids[key] = ~r
                if strict:
                    runs.seqs.pop(r, None)
                run_ended(self, r, summary)
            elif pub[r] >= 0:
                sink.run_grew(self, r)
        self.lines.lineno = first - 1 + n

    def _run_id(self, buf: bytes, start: int, end: int) -> str:
        """A fast line's run id. It was valid UTF-8 where the line was classified: when not here, the
        bytes changed since (TraceChanged)."""
        try:
            return buf[start:end].decode("utf-8")
        except UnicodeDecodeError:
            raise TraceChanged(Change(self.lines.path, REWRITTEN)) from None

    def _version(self, version: bytes, line: int) -> None:
        warning = version_problem(int(version))
        if warning:
            self.sink.problem(self, line, warning)

    def _run_fields(self, r: int, m: Any, line: int) -> None:
        version, scenario, ablation = m.group(1, 2, 3)
        runs = self.runs
        runs.scenario[r] = None if scenario is None else intern_bytes(scenario)
        runs.ablation[r] = None if ablation is None else intern_bytes(ablation)
        if version != _CURRENT_VERSION:
            self._version(version, line)

    def _lines(self, buf: bytes, base: int, chunk: Any, s: int, e: int, first: int, size: int) -> None:
        for i in range(s, e):
            self._line(buf, base, chunk, i, first + i, size)

    # -- one line, exactly as the reader reads it ----------------------------------------------
    def _line(self, buf: bytes, base: int, chunk: Any, i: int, lineno: int, size: int) -> None:
        from tracetui.trace.index.classify import EVENT, RUN, SUMMARY

        starts, ends, kinds, id_start, id_end = chunk.lists()
        kind = kinds[i]
        start, end = starts[i], ends[i]
        after = base + (starts[i + 1] if i + 1 < chunk.n else size)
        runs = self.runs
        if kind:
            key = self._run_id(buf, id_start[i], id_end[i])
            m = summary = None
            if kind == RUN:
                m = _RUN_LAYOUT(buf, id_end[i], end)
            elif kind == SUMMARY:
                summary = summary_of(buf[start:end], key)
            if kind == EVENT or m is not None or summary is not None:
                r = runs.ids.get(key)
                # A run that may be listed as id#n, or whose id looks like one, is only made from a
                # line known to be a record, so that names are given out as the reader does.
                if r is None:
                    if "#" not in key or kind == SUMMARY or self._is_record(buf, start, end):
                        r = runs.new_run(key, None)
                elif r < 0:  # its newest run has ended: this line starts the next one
                    r = (runs.new_run(key, ~r) if kind == SUMMARY or self._is_record(buf, start, end)
                         else None)
                elif kind == RUN and runs.head[r] >= 0:
                    r = self._run_line(key, r, buf, start, end)
                if r is not None:
                    seq_problem = (self._seq(r, self.validation.seq(i))  # type: ignore[union-attr]
                                   if self.strict and kind == EVENT else None)
                    self._link(r, base + start, after, lineno)
                    if kind == EVENT:
                        if seq_problem:
                            self.sink.problem(self, lineno, seq_problem)
                        else:
                            runs.nevents[r] += 1
                    elif kind == RUN:
                        self._run_fields(r, m, lineno)
                    else:
                        self._ended(key, r, summary)
                        return
                    if runs.pub[r] >= 0:
                        self.sink.run_grew(self, r)
                    return
        # the slow path: run and summary lines of other layouts, and anything that failed a cheap check
        raw = buf[start:end].rstrip(b"\r\n")
        if not raw.strip():
            return
        if self.lines.long_lines and base + start in self.lines.long_lines:  # a spool kept only its start
            raw = LongLine(raw)
            raw.length = self.lines.true_length(base + start, len(raw))
        obj, problem = parse_line(raw)
        if problem:
            self.sink.problem(self, lineno, problem)
        else:
            self._add_record(obj, base + start, after, lineno)

    def _add_record(self, obj: dict[str, Any], start: int, end: int, lineno: int) -> None:
        """A parsed, checked record: link its line to its run; a summary ends the run."""
        runs = self.runs
        run_id = obj["run_id"]
        r = runs.ids.get(run_id)
        rec = obj["rec"]
        if r is None:
            r = runs.new_run(run_id, None)
        elif r < 0:
            r = runs.new_run(run_id, ~r)
        elif rec == "run" and runs.head[r] >= 0 and self._has_run_line(r):
            r = runs.new_run(run_id, r)
        seq_problem = self._seq(r, obj["seq"]) if self.strict and rec == "event" else None
        self._link(r, start, end, lineno)
        if rec == "event":
            if seq_problem:
                self.sink.problem(self, lineno, seq_problem)
            else:
                runs.nevents[r] += 1
        elif rec == "run":
            inputs = obj.get("inputs")
            inputs = inputs if isinstance(inputs, dict) else {}
            runs.scenario[r] = intern_name(inputs.get("scenario"))
            runs.ablation[r] = intern_name(inputs.get("ablation"))
            warning = record_warning(obj)
            if warning:
                self.sink.problem(self, lineno, warning)
        else:
            self._ended(run_id, r, obj)
            return
        if runs.pub[r] >= 0:
            self.sink.run_grew(self, r)

    def _ended(self, key: str, r: int, summary: dict[str, Any]) -> None:
        self.runs.ids[key] = ~r
        self.runs.seqs.pop(r, None)
        self.sink.run_ended(self, r, summary)

    def _link(self, r: int, start: int, end: int, lineno: int) -> None:
        runs = self.runs
        t = self.lines.link(runs.tail[r], start, end, lineno)
        if runs.head[r] < 0:
            runs.head[r] = t
        runs.tail[r] = t

    def _seq(self, r: int, seq: Any) -> str | None:
        """Strict mode: why an event's ``seq`` cannot be its run's (it repeats), or None."""
        seen = self.runs.seqs.setdefault(r, set())
        if seq in seen:
            return f"seq {seq} repeats in run {self.runs.names[r]}"
        seen.add(seq)
        return None

    def _is_record(self, buf: bytes, start: int, end: int) -> bool:
        """Whether a line the fast path took (maybe only looking valid) is a record."""
        return self.strict or parse_line(buf[start:end].rstrip(b"\r"))[1] is None

    def _run_line(self, key: str, r: int, buf: bytes, start: int, end: int) -> int | None:
        """A fast-path run line for open run ``r``, which has lines: the run it belongs to, None for the slow path.

        Only a record (it may just look valid) after a run line that is a record starts the next run;
        a broken line goes to the slow path, which reports it.
        """
        if not self._is_record(buf, start, end):
            return None
        return self.runs.new_run(key, r) if self._has_run_line(r) else r

    def _has_run_line(self, r: int) -> bool:
        """Whether run ``r`` has a valid run line: its lines parsed (rare: a run line came for a run with lines)."""
        for _, raw in self.lines.lines(self.runs.head[r]):
            obj, _ = parse_line(raw)
            if obj is not None and obj["rec"] == "run":
                return True
        return False

