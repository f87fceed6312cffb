"""Failure groups: a trace's failing runs gathered by failure signature, the biggest group first.

Thousands of failures read as a handful of kinds (:mod:`tracetui.trace.signature`): the explorer's
``g`` and ``check --group`` both list one group per signature. Grouping must cost little beside the
index itself, so it works on the index's rows as they are: rows share their :class:`RunShape`
(and shapes their first failure), so a signature is computed once per distinct shape or failure,
not once per run; a group keeps its rows' numbers in a compact ``array('I')`` (4 bytes a run); and
a reason the index left in the file (:class:`~tracetui.trace.failure.DeferredFailure`) is read
back for its signature without being kept.
"""
from __future__ import annotations

from array import array
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Sequence

from tracetui.trace.failure import DeferredFailure
from tracetui.trace.format import LANES
from tracetui.trace.signature import memo_key, signature_of, signature_words
from tracetui.trace.source import RunEntry
from tracetui.trace.verdict import READY

Signature = tuple[str, str, str]
_LANE_ORDER = {lane: k for k, lane in enumerate(LANES)}
#: signatures remembered by a failure's raw parts when grouping verdicts (a trace mostly fails in a
#: few hundred ways; beyond it, each new one is masked again)
MAX_REMEMBERED = 4096
#: shapes and failures remembered by identity: the index shares at most 16,384 shapes, beyond which
#: each row has its own, and remembering those would cost ~130 bytes a run (a third of the index)
MAX_SHAPES = 1 << 15


@dataclass(eq=False, slots=True)
class FailureGroup:
    """The runs whose first failure has one signature (lane, code, masked reason)."""

    signature: Signature
    example_run_id: str  # the group's first run, in list order
    first: int  # the row (or run number) of that run: ties in size are listed in order of appearance
    count: int = 0
    rows: array = field(default_factory=lambda: array("I"))  # row numbers, in order (empty when not kept)

    @property
    def lane(self) -> str:
        return self.signature[0]

    @property
    def code(self) -> str:
        return self.signature[1]

    @property
    def reason(self) -> str:
        """The masked reason."""
        return self.signature[2]

    @property
    def words(self) -> str:
        """The signature as one heading (``authorization · permission_denied · permission denied: o-# …``)."""
        return signature_words(self.signature)

    def to_json(self) -> dict[str, Any]:
        return {"count": self.count, "lane": self.lane or None, "code": self.code, "reason": self.reason,
                "example_run_id": self.example_run_id}


def unfailed_signature(status: str) -> Signature:
    """The signature of a run that is not ready yet names no failing boundary (incomplete: no summary)."""
    return "", str(status), ""


class FailureGrouper:
    """Groups built up as runs arrive (the index publishes rows while it scans): :meth:`add_entries`
    takes the rows not yet seen, :meth:`groups` lists the groups so far, ordered."""

    def __init__(self, keep_rows: bool = True) -> None:
        self.keep_rows = keep_rows
        self.seen = 0  # rows of the list given to add_entries that are grouped
        self.passed = 0  # ready runs: not a group
        self._groups: dict[Signature, FailureGroup] = {}
        # id -> (the object, its group): the object is held so its id stays its own
        self._by_shape: dict[int, tuple[Any, FailureGroup | None]] = {}
        self._by_failure: dict[int, tuple[Any, Signature]] = {}
        self._by_parts: dict[tuple, Signature] = {}  # a verdict's (lane, code, reason) as the trace gave them
        self._by_mask: dict[tuple, Signature] = {}  # (lane, code, memo_key(reason))
        self.signatures_computed = 0  # how many times a reason was redacted and masked (the memos' misses)
        self.reasons_seen = 0  # reasons looked at (once per distinct failure object, or per row left in the file)

    # -- adding ---------------------------------------------------------------------------
    def add_entries(self, entries: Sequence[RunEntry], end: int | None = None) -> int:
        """Group ``entries[self.seen:end]`` (rows appended since the last call); how many were added."""
        end = len(entries) if end is None else end
        start, by_shape = self.seen, self._by_shape
        for row in range(start, end):
            entry = entries[row]
            shape = entry.shape
            known = by_shape.get(id(shape))
            if known is not None and known[0] is shape:
                group = known[1]
            else:
                group = self._group_of_shape(shape, entry.run_id, row)
            if group is None:
                self.passed += 1
                continue
            group.count += 1
            if self.keep_rows:
                group.rows.append(row)
        self.seen = max(start, end)
        return end - start

    def _group_of_shape(self, shape: Any, run_id: str, row: int) -> FailureGroup | None:
        remember = len(self._by_shape) < MAX_SHAPES
        if shape.outcome == READY:
            if remember:
                self._by_shape[id(shape)] = (shape, None)
            return None
        failure = shape.first_failure
        if failure is None:
            return self.group(unfailed_signature(shape.status), run_id, row)
        if type(failure) is DeferredFailure:  # its own row's: nothing to share, its reason not kept
            return self.group(self.signature(failure.lane, failure.code, failure.reason_unkept()), run_id, row)
        known = self._by_failure.get(id(failure))
        if known is None or known[0] is not failure:
            known = (failure, self.signature(failure.lane, failure.code, failure.reason))
            if len(self._by_failure) < MAX_SHAPES:
                self._by_failure[id(failure)] = known
        group = self.group(known[1], run_id, row)
        if remember:
            self._by_shape[id(shape)] = (shape, group)
        return group

    def signature(self, lane: Any, code: Any, reason: Any) -> Signature:
        """The signature of a failure's parts, remembered under its reason masked but not redacted
        (:func:`~tracetui.trace.signature.memo_key`): failures alike but for their ids are redacted once."""
        self.reasons_seen += 1
        if type(reason) is not str:
            self.signatures_computed += 1
            return signature_of(lane, code, reason)
        key = (lane, code, memo_key(reason))
        try:
            found = self._by_mask.get(key)
        except TypeError:  # a lane or code that is a list or an object
            key, found = None, None
        if found is None:
            self.signatures_computed += 1
            found = signature_of(lane, code, reason)
            if key is not None and len(self._by_mask) < MAX_REMEMBERED:
                self._by_mask[key] = found
        return found

    def group(self, signature: Signature, run_id: str, row: int) -> FailureGroup:
        """The group of ``signature``, made (with ``run_id`` as its example) when it is the first of it."""
        group = self._groups.get(signature)
        if group is None:
            group = self._groups[signature] = FailureGroup(signature, run_id, row)
        return group

    def add_verdict(self, verdict: Mapping[str, Any], row: int) -> None:
        """One run's ``check --json`` verdict (the streaming check's path: no rows, only verdicts)."""
        signature = self.verdict_signature(verdict)
        if signature is None:
            self.passed += 1
            return
        group = self.group(signature, str(verdict.get("run_id")), row)
        group.count += 1
        if self.keep_rows:
            group.rows.append(row)

    def verdict_signature(self, verdict: Mapping[str, Any]) -> Signature | None:
        """A verdict's signature (None when ready), remembered by its failure's raw parts."""
        if verdict.get("outcome") == READY:
            return None
        failure = verdict.get("first_failure")
        if not isinstance(failure, Mapping):
            return unfailed_signature(verdict.get("status") or "failed")
        parts = (failure.get("lane"), failure.get("code"), failure.get("reason"))
        try:
            signature = self._by_parts.get(parts)
        except TypeError:  # a value that is a list or an object
            parts, signature = None, None
        if signature is None:
            signature = self.signature(*parts) if parts is not None else self.signature(
                failure.get("lane"), failure.get("code"), failure.get("reason"))
            if parts is not None and len(self._by_parts) < MAX_REMEMBERED:
                self._by_parts[parts] = signature
        return signature

    # -- reading --------------------------------------------------------------------------
    def groups(self) -> list[FailureGroup]:
        """The groups, the biggest first, then in lane order (http … answer; none last), then in
        order of first appearance."""
        return sorted(self._groups.values(),
                      key=lambda g: (-g.count, _LANE_ORDER.get(g.lane, len(LANES)), g.first))

    @property
    def failed(self) -> int:
        """Runs grouped (failed or incomplete)."""
        return sum(g.count for g in self._groups.values())


def group_entries(entries: Sequence[RunEntry]) -> list[FailureGroup]:
    """The failure groups of a source's rows (passing runs are in none), the biggest first."""
    grouper = FailureGrouper()
    grouper.add_entries(entries)
    return grouper.groups()


def group_verdicts(verdicts: Iterable[Mapping[str, Any]], keep_rows: bool = False) -> FailureGrouper:
    """The failure groups of verdicts (``check --json``'s), in run order."""
    grouper = FailureGrouper(keep_rows)
    for row, verdict in enumerate(verdicts):
        grouper.add_verdict(verdict, row)
    return grouper
