"""What linking a chunk in bulk needs that the chunk's bytes alone decide: made where the chunk is
read, before anything is linked.

Bulk linking (:mod:`.bulk`) takes a chunk whose lines are all fast or blank. Its *items*
(:mod:`.classify`) and their run ids, the checks that need no run table (a run line is the
first item of its id in the chunk, a summary the last), the run lines' scenario and ablation,
and each summary's run-list fields (:func:`~tracetui.trace.index.entries.row_fields`) are
found here; what depends on the scan so far (which ids are new, which runs ended) is left to
the linking. None means the chunk needs the exact per-line path, whatever the scan found before.
"""
from __future__ import annotations

from dataclasses import dataclass
from operator import attrgetter, methodcaller
from typing import Any

import numpy as np

from tracetui.trace import limits
from tracetui.trace.index.classify import RUN, SUMMARY, per_line
from tracetui.trace.index.entries import ChunkRows, RowFields, row_fields
from tracetui.trace.index.memo import RUN_HEADS, SUMMARY_TAILS

_ALL_DIGITS8 = np.frombuffer(b"\x01" * 8, np.uint64)[0]
_REC, _RUN_ID = attrgetter("rec"), attrgetter("run_id")
_utf8 = methodcaller("decode", "utf-8")


@dataclass(slots=True)
class ChunkItems:
    """A chunk's items that are not blank lines, in order (``m`` of them; ``n``: the chunk's lines).

    ``starts``/``ends``/``events``: each item's first line, the line after its last, its event
    lines; ``byte_starts``/``byte_ends``: where its lines begin and end (their line ends included) in
    the chunk's bytes; ``last_kind``: the kind of its last line; ``keys``: its run
    id; ``at_run``/``at_summary``: the items that open with a run line / close with a summary;
    ``run_fields``: (scenarios, ablations) of the ``at_run`` items' run lines (empty in strict
    mode, which shows neither); ``rows``: the ``at_summary`` items' run-list fields (not in strict
    mode); ``summaries``: strict mode's decoded summaries, for the verdicts.
    """

    n: int
    m: int
    starts: Any
    ends: Any
    events: Any
    byte_starts: Any
    byte_ends: Any
    last_kind: Any
    keys: list[str]
    at_run: Any
    at_summary: Any
    run_fields: tuple[list[Any], list[Any]]
    rows: Any = None
    summaries: list[Any] | None = None


def chunk_items(buf: bytes, chunk: Any, validation: Any, size: int) -> ChunkItems | None:
    """The chunk's items ready to link (``size``: the bytes of its whole lines); None when a line of it
    needs the per-line path."""
    n = chunk.n
    kinds = chunk.kinds
    if n and not ((kinds > 0) | chunk.blank).all():
        return None
    keep = kinds[chunk.item_starts] > 0  # blank lines are items of their own
    its, ite, events = chunk.item_starts[keep], chunk.item_ends[keep], chunk.item_events[keep]
    m = len(its)
    first_kind, last_kind = kinds[its], kinds[ite - 1]
    keys = list(map(_utf8, chunk.keys(its)))  # (a fast line is valid UTF-8)
    at_run = np.flatnonzero(first_kind == RUN)
    at_summary = np.flatnonzero(last_kind == SUMMARY)
    if len(at_run):  # a run line must be the first line of its run in the chunk
        first = dict(zip(reversed(keys), range(m - 1, -1, -1)))
        if not (np.fromiter(map(first.__getitem__, [keys[j] for j in at_run.tolist()]), np.int64,
                            len(at_run)) == at_run).all():
            return None
    summary_keys = [keys[j] for j in at_summary.tolist()]
    if len(at_summary):  # and a summary its last
        last = dict(zip(keys, range(m)))
        if not (np.fromiter(map(last.__getitem__, summary_keys), np.int64, len(at_summary)) == at_summary).all():
            return None
    summary_lines = ite[at_summary] - 1
    starts = chunk.starts
    byte_ends = np.where(ite < n, starts[np.minimum(ite, n - 1)], size) if n else ite
    items = ChunkItems(n, m, its, ite, events, starts[its], byte_ends, last_kind, keys, at_run,
                       at_summary, ([], []))
    if validation is not None:  # validated: only a version that needs a warning matters (a check shows no scenario)
        if validation.odd_versions and not validation.odd_versions.isdisjoint(its[at_run].tolist()):
            return None
        items.summaries = [validation.summaries.get(i) for i in summary_lines.tolist()]
        if None in items.summaries:
            return None
        return items
    run_fields = _run_fields(buf, chunk, its[at_run])
    rows = _row_fields_of_summaries(buf, chunk, summary_lines, summary_keys)
    if run_fields is None or rows is None:
        return None
    items.run_fields = run_fields
    items.rows = ChunkRows.of(rows)
    return items


def _row_fields_of_summaries(buf: bytes, chunk: Any, lines: Any, keys: list[str]) -> list[RowFields] | None:
    """The row fields of each summary line (:func:`.entries.row_fields`); None when one needs the
    per-line path.

    A line's fields depend only on its bytes after the run id unless those give the run id again
    (then the last one counts, not the prefix's): lines whose tail holds no ``run_id`` and no escape
    (``run\u005fid`` is ``run_id`` too) are remembered by it.
    """
    tails = list(map(buf.__getitem__, map(slice, chunk.id_end[lines].tolist(), chunk.ends[lines].tolist())))
    found: list[Any] = list(map(SUMMARY_TAILS.table.get, tails))
    if None not in found:
        return found
    missing = [j for j, row in enumerate(found) if row is None]
    decoded = _summaries(buf, chunk, lines[missing], [keys[j] for j in missing])
    if decoded is None:
        return None
    for j, summary in zip(missing, decoded):
        row = found[j] = row_fields(summary)
        tail = tails[j]
        if b"run_id" not in tail and b"\\" not in tail:
            SUMMARY_TAILS.remember(tail, row)
    return found


def _run_fields(buf: bytes, chunk: Any, lines: Any) -> tuple[list[Any], list[Any]] | None:
    """(scenarios, ablations) of the run lines, read from the writer's layout; None when one needs the
    per-line path (another layout, or a trace version that is not this one)."""
    from tracetui.trace.index.layout import CURRENT_VERSION, RUN_LAYOUT

    if not len(lines):
        return [], []
    starts, ends = chunk.id_end[lines].tolist(), chunk.ends[lines].tolist()
    size = RUN_HEADS.key_bytes
    heads = list(map(buf.__getitem__, map(slice, starts, [min(s + size, e) for s, e in zip(starts, ends)])))
    found: list[Any] = list(map(RUN_HEADS.table.get, heads))
    if None in found:
        for j in [j for j, fields in enumerate(found) if fields is None]:
            m = RUN_LAYOUT(buf, starts[j], ends[j])
            if m is None:
                return None
            version, scenario, ablation = m.group(1, 2, 3)
            found[j] = (version, _names((scenario,))[0], _names((ablation,))[0])
            if m.end() < starts[j] + len(heads[j]):  # the layout ended before the bytes remembered did
                RUN_HEADS.remember(heads[j], found[j])
    versions, scenarios, ablations = map(list, zip(*found))
    if versions.count(CURRENT_VERSION) != len(versions):
        return None
    return scenarios, ablations


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


def _summaries(buf: bytes, chunk: Any, lines: Any, keys: list[str]) -> list[Any] | None:
    """Each summary line's fields, decoded together (:class:`.records.SummaryFields`); None when one
    needs the per-line path (it does not read as a summary of its run).

    A line that may nest too deep, or holds 15 digits or more in a row (msgspec and orjson read an
    integer beyond 64 bits differently), is read by orjson, as the per-line path reads it.
    """
    if not len(lines):
        return []
    from tracetui.trace.index.layout import summary_of
    from tracetui.trace.index.records import SUMMARY_DECODER, SUMMARY_READ_DECODER, SummaryFields

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
    if list(map(_REC, fields)).count("summary") != len(fields) or list(map(_RUN_ID, fields)) != keys:
        return None  # a key given twice: its last value is not the prefix's (or not a string)
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
