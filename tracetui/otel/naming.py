"""Names of imported runs: stable whatever the file order, and decided once every trace is known.

A foreign run is ``{label}-{trace id prefix}`` (``-{root span id prefix}`` when its trace holds several
runs). 8 hex digits of the trace id, 4 more at a time where two traces of runs with the same label share
them; 4 of the root span id, more where two runs of one trace with the same label share them. A counter
(``#2``) only for a run tracetui exported whose id repeats, or a name another file took. The lengths
depend on the set of ids, not on their order: a streamed read names its runs at the end of the file.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

from tracetui.trace.reader import run_name

#: a run of a trace before it is named: (root span, member spans, complete, label, suffix)
Planned = tuple[Any, list[Any], bool, str, "str | None"]


def _prefix_lengths(trace_ids: set[str], least: int = 8) -> dict[str, int]:
    """For each id, how many of its hex digits name it among ``ids`` (those of runs with the same label):
    ``least``, or 4 more at a time where that many are shared. Decided from the set, so file order plays no
    part; in sorted order an id shares the most with a neighbour, so no pair is compared twice."""
    ordered = sorted(trace_ids)
    out = {}
    for n, trace_id in enumerate(ordered):
        shared = max(_common(trace_id, ordered[n - 1]) if n else 0,
                     _common(trace_id, ordered[n + 1]) if n + 1 < len(ordered) else 0)
        length = least if shared < least else least + 4 * ((shared - least) // 4 + 1)
        out[trace_id] = min(length, len(trace_id))
    return out


def root_suffixes(planned: list[Planned]) -> list[Planned]:
    """Each run of a trace of several named ``-{4 digits of its root span id}``, more digits where two runs of
    the trace with the same label share 4 (two calls of one agent): never a ``#2`` that file order decides."""
    sharing: dict[tuple[str, str], set[str]] = {}
    for root, members, _, label, suffix in planned:
        if suffix and suffix.startswith("root:"):
            sharing.setdefault((members[0].trace_id, label), set()).add(root.span_id)
    lengths = {key: _prefix_lengths(ids, 4) for key, ids in sharing.items()}
    out = []
    for root, members, complete, label, suffix in planned:
        if suffix and suffix.startswith("root:"):
            suffix = "-" + root.span_id[:lengths[(members[0].trace_id, label)][root.span_id]]
        out.append((root, members, complete, label, suffix))
    return out


def _common(a: str, b: str) -> int:
    """How many leading characters two ids share."""
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return n


def run_names(keys: Sequence[tuple[str, str | None, str]], taken: Callable[[str], bool] | None = None) -> list[str]:
    """The names of runs given as (label, suffix, trace id), in file order (which decides only ``#2``)."""
    sharing: dict[tuple[str, str], set[str]] = {}  # (label, suffix) → the traces of runs named so
    for label, suffix, trace_id in keys:
        if suffix is not None:
            sharing.setdefault((label, suffix), set()).add(trace_id)
    lengths = {key: _prefix_lengths(ids) for key, ids in sharing.items()}
    names: dict[str, int] = {}
    listed: set[str] = set()
    out = []

    def is_taken(name: str) -> bool:
        return name in listed or (taken is not None and taken(name))

    for label, suffix, trace_id in keys:
        if suffix is not None:
            label = f"{label}-{trace_id[:lengths[(label, suffix)][trace_id]]}{suffix}"
        nth = names[label] = names.get(label, 0) + 1
        name = run_name(label, nth, is_taken)  # only a repeated exported id, or a name of another file, gets #2
        listed.add(name)
        out.append(name)
    return out
