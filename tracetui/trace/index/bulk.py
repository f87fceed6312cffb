"""Linking a whole chunk to its runs at once: the common case, with no Python work per line.

When every line of a chunk is fast (or blank) and nothing in it needs the reader's
rules for repeated run ids, each item (:mod:`.classify`) is linked to its run with
a few bulk operations: the run ids are looked up in one pass, new runs are
numbered in order of their first line, each item becomes a segment chained after
its run's last one, event counts are added per run, run lines are read by a regex
over the writer's layout and summary lines are decoded together (msgspec). Runs of
two writers appending to one file interleave freely within a chunk: their items
are chained per run.

Anything unusual sends the whole chunk back to the exact per-line path
(:meth:`.scanner.Scanner.apply`), before anything is changed: a line that is not
fast, a line of a run that has ended (it starts the run listed as ``id#2``), a
second run line, a run id with ``#`` or one a listed name took, a repeated ``seq``
(strict mode), a run line of another layout or a newer version, a summary that does
not read as one, or whose numbers or nesting the exact path must judge.
"""
from __future__ import annotations

from itertools import repeat
from operator import attrgetter, methodcaller
from typing import Any

import numpy as np

from tracetui.trace import limits
from tracetui.trace.index.classify import EVENT, RUN, SUMMARY, per_line

_ALL_DIGITS8 = np.frombuffer(b"\x01" * 8, np.uint64)[0]
_NEW = 1 << 62  # a run id the file has not had yet
_GROUPS = methodcaller("group", 1, 2, 3)
_REC, _RUN_ID = attrgetter("rec"), attrgetter("run_id")


def link_in_bulk(scan: Any, buf: bytes, base: int, size: int, chunk: Any, validation: Any) -> bool:
    """Link the chunk's lines to their runs; False (nothing changed) when it needs the per-line path."""
    n = chunk.n
    kinds = chunk.kinds
    if n == 0:
        return True
    fast = kinds > 0
    if not (fast | chunk.blank).all():
        return False
    item_starts, item_ends = chunk.item_starts, chunk.item_ends
    keep = kinds[item_starts] > 0  # blank lines are items of their own
    its, ite, events = item_starts[keep], item_ends[keep], chunk.item_events[keep]
    m = len(its)
    if m == 0:
        scan.lines.lineno += n
        return True
    first_kind, last_kind = kinds[its], kinds[ite - 1]
    keys = chunk.keys(its)
    runs = scan.runs
    ids = runs.ids
    item_run = np.fromiter(map(ids.get, keys, repeat(_NEW)), np.int64, m)
    if (item_run < 0).any():
        return False  # a line after its run's summary: it starts the next run of that id
    r0 = len(runs.names)
    at_run = np.flatnonzero(first_kind == RUN)
    new_items = np.flatnonzero(item_run == _NEW)
    if len(new_items):
        new_item_keys = [keys[j] for j in new_items.tolist()]
        first_item = dict(zip(reversed(new_item_keys), reversed(new_items.tolist())))  # each new id's first item
        new = list(dict.fromkeys(new_item_keys))  # in order of their first item
        names = [k.decode("utf-8") for k in new]
        if b"#" in b"".join(new) or (runs.named and not runs.named.keys().isdisjoint(names)):
            return False  # listed names (id#2…) follow the reader's rules
        numbered = dict(zip(new, range(r0, r0 + len(new))))
        item_run[new_items] = np.fromiter(map(numbered.__getitem__, new_item_keys), np.int64, len(new_items))
    else:
        new, names, first_item = [], [], {}
    # a run line must be its run's first line; a summary its last in the chunk
    if len(at_run) and not np.isin(at_run, np.fromiter(first_item.values(), np.int64, len(first_item))).all():
        return False
    at_summary = np.flatnonzero(last_kind == SUMMARY)
    if len(at_summary):
        last = dict(zip(keys, range(m)))
        if not (np.fromiter(map(last.__getitem__, [keys[j] for j in at_summary.tolist()]), np.int64,
                            len(at_summary)) == at_summary).all():
            return False
    starts, ends = chunk.starts, chunk.ends
    if validation is None:
        run_fields = _run_fields(buf, chunk, its[at_run])
        if run_fields is None:
            return False
    else:  # validated: only a version that needs a warning matters (a check shows no scenario)
        if validation.odd_versions and not validation.odd_versions.isdisjoint(its[at_run].tolist()):
            return False
        run_fields = []
    summary_lines = ite[at_summary] - 1
    if validation is not None:
        summaries = [validation.summaries.get(i) for i in summary_lines.tolist()]
        run_of, seqs = _events(chunk, validation, item_run, its, ite)
        if None in summaries or not _seqs_unique(runs, run_of, seqs):
            return False
    else:
        summaries = _summaries(buf, chunk, summary_lines, [keys[j] for j in at_summary.tolist()])
        if summaries is None:
            return False
    # -- everything checked: link ---------------------------------------------------------------
    first = scan.lines.lineno + 1
    runs.add_runs(new, names)
    seg_start = base + starts[its]
    seg_end = base + np.where(ite < n, starts[np.minimum(ite, n - 1)], size)
    scan.lines.add_segments(item_run, seg_start, seg_end, first + its, runs)
    runs.add_events(item_run, events)
    if run_fields:
        runs.set_fields(item_run[at_run], *run_fields)
    if validation is not None:
        _keep_open_seqs(runs, run_of, seqs, item_run, at_summary)
    scan.lines.lineno = first - 1 + n
    ended = item_run[at_summary].tolist()
    ids.update(zip([keys[j] for j in at_summary.tolist()], [~r for r in ended]))
    sink = scan.sink
    grown = item_run[(last_kind != SUMMARY) & (runs.published(item_run))]
    for r in dict.fromkeys(grown.tolist()):
        sink.run_grew(scan, r)
    if ended:
        runs_ended = getattr(sink, "runs_ended", None)
        if runs_ended is not None:
            runs_ended(scan, ended, summaries)
        else:
            for r, summary in zip(ended, summaries):
                sink.run_ended(scan, r, summary)
    return True


def _run_fields(buf: bytes, chunk: Any, lines: Any) -> tuple[list[Any], list[Any]] | None:
    """(scenarios, ablations) of the run lines, read from the writer's layout; None when one needs the
    per-line path (another layout, or a trace version that is not this one)."""
    from tracetui.trace.index.layout import CURRENT_VERSION, RUN_LAYOUT

    if not len(lines):
        return [], []
    found = list(map(RUN_LAYOUT, repeat(buf), chunk.id_end[lines].tolist(), chunk.ends[lines].tolist()))
    if None in found:
        return None
    versions, scenarios, ablations = zip(*map(_GROUPS, found))
    if versions.count(CURRENT_VERSION) != len(versions):
        return None
    return _names(scenarios), _names(ablations)


def _names(raw: tuple[bytes | None, ...]) -> list[str | None]:
    """Scenario or ablation names from their bytes, one string per name."""
    from tracetui.trace.index.runs import _INTERNED_BYTES as interned
    from tracetui.trace.index.runs import intern_bytes

    names = list(map(interned.get, raw))
    if None in names:
        for j, value in enumerate(raw):
            if names[j] is None and value is not None:
                names[j] = intern_bytes(value)
    return names


def _summaries(buf: bytes, chunk: Any, lines: Any, keys: list[bytes]) -> list[Any] | None:
    """Each summary line's fields, decoded together (:class:`.records.SummaryFields`); None when one
    needs the per-line path (it does not read as a summary of its run).

    A line that may nest too deep, or holds 15 digits or more in a row (msgspec and orjson read an
    integer beyond 64 bits differently), is read by orjson, as the per-line path reads it.
    """
    if not len(lines):
        return []
    from tracetui.trace.index.records import SUMMARY_DECODER, SUMMARY_READ_DECODER, SummaryFields
    from tracetui.trace.index.layout import summary_of

    starts, ends = chunk.starts[lines].tolist(), chunk.ends[lines].tolist()
    pieces = list(map(buf.__getitem__, map(slice, starts, ends)))
    joined = b"\n".join(pieces)
    exact = _exact_summaries(joined, starts, ends)
    if exact.any():
        decoded: list[Any] = [None] * len(pieces)
        rest = np.flatnonzero(~exact).tolist()
        for j in np.flatnonzero(exact).tolist():
            obj = summary_of(pieces[j], keys[j])
            if obj is None:
                return None
            decoded[j] = SummaryFields("summary", obj["run_id"], obj.get("status"), obj.get("metrics"),
                                       obj.get("first_failure"))
        joined = b"\n".join([pieces[j] for j in rest])
    else:
        rest = None
    try:
        fields = SUMMARY_READ_DECODER.decode_lines(joined)
    except Exception:  # noqa: BLE001 - metrics or a first failure of another shape: read as dicts
        try:
            fields = SUMMARY_DECODER.decode_lines(joined)
        except Exception:  # noqa: BLE001 - the per-line path words the problem
            return None
    if rest is not None:
        if len(fields) != len(rest):
            return None
        for j, summary in zip(rest, fields):
            decoded[j] = summary
        fields = decoded
    elif len(fields) != len(pieces):
        return None
    try:
        if (list(map(_REC, fields)).count("summary") != len(fields)
                or list(map(str.encode, map(_RUN_ID, fields))) != keys):
            return None  # a key given twice: its last value is not the prefix's
    except TypeError:  # a run id that is not a string
        return None
    return fields


def _exact_summaries(joined: bytes, starts: list[int], ends: list[int]) -> Any:
    """Which of the summary lines joined by newlines the per-line reader must read: those with an
    aligned block of 8 digits (any run of 15 holds one), or more opening brackets than the nesting
    limit."""
    a = np.frombuffer(joined, np.uint8)
    offsets = np.cumsum([0] + [e - s + 1 for s, e in zip(starts, ends)])[:-1]
    digit = (a - 0x30) < 10
    blocks = np.flatnonzero(digit[:len(a) - len(a) % 8].view(np.uint64) == _ALL_DIGITS8) * 8
    exact = np.zeros(len(starts), bool)
    if len(blocks):
        exact[np.searchsorted(offsets, blocks, side="right") - 1] = True
    brackets = np.flatnonzero((a | 0x20) == 0x7B)  # [ or {
    if len(brackets) > limits.MAX_DEPTH:
        exact |= per_line(brackets, offsets) > limits.MAX_DEPTH
    return exact


def _events(chunk: Any, validation: Any, item_run: Any, its: Any, ite: Any) -> tuple[Any, Any]:
    """Strict mode: (the run, the ``seq``) of each event line of the chunk's items, in line order."""
    lines = np.flatnonzero(chunk.kinds > 0)  # the items' lines: every line but the blank ones
    line_run = np.repeat(item_run, ite - its)
    events = chunk.kinds[lines] == EVENT
    return line_run[events], validation.seqs[lines[events]]


def _seqs_unique(runs: Any, run_of: Any, seq: Any) -> bool:
    """Strict mode: whether no event's ``seq`` repeats in its run (within the chunk, or after the run's
    lines in earlier chunks)."""
    if not len(seq):
        return True
    by = np.lexsort((seq, run_of))
    ordered_runs, ordered_seqs = run_of[by], seq[by]
    if ((ordered_runs[1:] == ordered_runs[:-1]) & (ordered_seqs[1:] == ordered_seqs[:-1])).any():
        return False
    if runs.seqs:
        opened = np.isin(run_of, np.fromiter(runs.seqs, np.int64, len(runs.seqs)))
        for r, s in zip(run_of[opened].tolist(), seq[opened].tolist()):
            if s in runs.seqs[r]:
                return False
    return True


def _keep_open_seqs(runs: Any, run_of: Any, seq: Any, item_run: Any, at_summary: Any) -> None:
    """Strict mode: remember the ``seq`` of runs still open after the chunk; forget those of runs that ended."""
    ended = item_run[at_summary]
    for r in ended.tolist():
        runs.seqs.pop(r, None)
    still_open = ~np.isin(run_of, ended)
    for r, s in zip(run_of[still_open].tolist(), seq[still_open].tolist()):
        runs.seqs.setdefault(r, set()).add(s)
