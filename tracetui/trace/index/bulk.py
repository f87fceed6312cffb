"""Linking a whole chunk to its runs at once: the common case, with no Python work per line.

When every line of a chunk is fast (or blank) and nothing in it needs the reader's
rules for repeated run ids, each item (:mod:`.classify`) is linked to its run with
a few bulk operations: the run ids are looked up in one pass, new runs are
numbered in order of their first line, each item becomes a segment chained after
its run's last one, event counts are added per run. What the chunk alone decides
(its items, the run lines' fields read by a regex over the writer's layout, the
summary lines decoded together and made into run-list fields) is found where the
chunk is read (:mod:`.items`). Runs of two writers
appending to one file interleave freely within a chunk: their items are chained
per run.

Anything unusual sends the whole chunk back to the exact per-line path
(:meth:`.scanner.Scanner.apply`), before anything is changed: a line that is not
fast, a line of a run that has ended (it starts the run listed as ``id#2``), a
second run line, a run id with ``#`` or one a listed name took, a repeated ``seq``
(strict mode), a run line of another layout or a newer version, a summary that does
not read as one, or whose numbers or nesting the exact path must judge.
"""
from __future__ import annotations

from itertools import repeat
from typing import Any

import numpy as np

from tracetui.trace.index.classify import EVENT, SUMMARY
from tracetui.trace.index.items import ChunkItems

_NEW = 1 << 62  # a run id the file has not had yet


def link_in_bulk(scan: Any, base: int, chunk: Any, validation: Any, items: ChunkItems | None) -> bool:
    """Link the chunk's lines to their runs; False (nothing changed) when it needs the per-line path.
    ``items``: what the chunk alone decides, found where it was read (:func:`.items.chunk_items`; None:
    a line of it needs the per-line path)."""
    if items is None:
        return False
    n, m = items.n, items.m
    if m == 0:
        scan.lines.lineno += n
        return True
    its, ite, keys, at_run, at_summary = items.starts, items.ends, items.keys, items.at_run, items.at_summary
    runs = scan.runs
    ids = runs.ids
    item_run = np.fromiter(map(ids.get, keys, repeat(_NEW)), np.int64, m)
    if (item_run < 0).any():
        return False  # a line after its run's summary: it starts the next run of that id
    if len(at_run) and not (item_run[at_run] == _NEW).all():
        return False  # a run line for a run the file has had: the per-line rules decide
    r0 = len(runs.names)
    new_items = np.flatnonzero(item_run == _NEW)
    if len(new_items):
        new_item_keys = [keys[j] for j in new_items.tolist()]
        new = list(dict.fromkeys(new_item_keys))  # in order of their first item
        if "#" in "".join(new) or (runs.named and not runs.named.keys().isdisjoint(new)):
            return False  # listed names (id#2…) follow the reader's rules
        numbered = dict(zip(new, range(r0, r0 + len(new))))
        item_run[new_items] = np.fromiter(map(numbered.__getitem__, new_item_keys), np.int64, len(new_items))
    else:
        new = []
    if validation is not None:
        run_of, seqs = _events(chunk, validation, item_run, its, ite)
        if not _seqs_unique(runs, run_of, seqs):
            return False
    # -- everything checked: link ---------------------------------------------------------------
    first = scan.lines.lineno + 1
    runs.add_runs(new)
    scan.lines.add_segments(item_run, base + items.byte_starts, base + items.byte_ends, first + its, runs)
    runs.add_events(item_run, items.events)
    if len(at_run) and items.run_fields[0]:
        runs.set_fields(item_run[at_run], *items.run_fields)
    if validation is not None:
        _keep_open_seqs(runs, run_of, seqs, item_run, at_summary)
    scan.lines.lineno = first - 1 + n
    ended = item_run[at_summary].tolist()
    ids.update(zip([keys[j] for j in at_summary.tolist()], [~r for r in ended]))
    sink = scan.sink
    grown = item_run[(items.last_kind != SUMMARY) & (runs.published(item_run))]
    for r in dict.fromkeys(grown.tolist()):
        sink.run_grew(scan, r)
    if ended:
        if items.rows is not None:
            sink.rows_ended(scan, ended, items.rows)
        else:
            runs_ended = getattr(sink, "runs_ended", None)
            if runs_ended is not None:
                runs_ended(scan, ended, items.summaries)
            else:
                for r, summary in zip(ended, items.summaries):
                    sink.run_ended(scan, r, summary)
    return True


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
