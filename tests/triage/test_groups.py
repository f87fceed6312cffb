"""Failure groups over the index's rows: runs that failed alike counted together, cheaply (issue 24)."""
from __future__ import annotations

import tracemalloc
from array import array
from pathlib import Path

from tracetui.trace.failure import DeferredFailure
from tracetui.trace.index import IndexedSource
from tracetui.trace.index import entries as entries_mod
from tracetui.trace.reader import read_trace
from tracetui.trace.signature import failure_signature, memo_key
from tracetui.trace.source import MemorySource, RunEntry
from tracetui.triage.groups import FailureGrouper, group_entries, group_verdicts

SAMPLES = Path(__file__).resolve().parents[2] / "sample_traces"
LANE_ORDER = ("http", "generation", "arguments", "authorization", "receipt", "answer")


def sample_rows() -> list[RunEntry]:
    """Every run of the tracetui sample traces, as run-list rows (several files: kinds repeat across them)."""
    runs = [run for path in sorted(SAMPLES.glob("*.jsonl")) if "otel" not in path.name
            for run in read_trace(path).runs.values()]
    return list(MemorySource(runs, "samples").runs())


def test_groups_count_every_failed_run_once_the_biggest_first_then_in_lane_order():
    rows = sample_rows()
    groups = group_entries(rows)
    failed = [k for k, row in enumerate(rows) if not row.ready]
    assert sum(g.count for g in groups) == len(failed) and len(groups) < len(failed)
    assert sorted(k for g in groups for k in g.rows) == failed  # passing runs are in no group
    keys = [(-g.count, LANE_ORDER.index(g.lane)) for g in groups]
    assert keys == sorted(keys)
    for g in groups:
        assert isinstance(g.rows, array) and g.rows.typecode == "I" and len(g.rows) == g.count
        assert list(g.rows) == sorted(g.rows) and rows[g.rows[0]].run_id == g.example_run_id
        assert {failure_signature(rows[k].first_failure) for k in g.rows} == {g.signature}
        assert (g.lane, g.code) == (g.signature[0], g.signature[1]) and g.words.startswith(f"{g.lane} · {g.code} · ")
    denied = next(g for g in groups if g.code == "permission_denied")
    assert "tenant #" in denied.reason and "shop-" not in denied.reason


def test_a_signature_is_computed_once_per_distinct_failure_however_many_rows_share_it():
    rows = sample_rows()
    distinct = {id(row.first_failure) for row in rows if not row.ready}
    many = rows * 500  # rows sharing their shapes, as an index's do
    grouper = FailureGrouper()
    grouper.add_entries(many)
    assert grouper.reasons_seen == len(distinct)  # once per distinct failure, not per row
    kinds = {(row.first_failure.lane, row.first_failure.code, memo_key(row.first_failure.reason))
             for row in rows if not row.ready}
    assert grouper.signatures_computed == len(kinds) < len(distinct)  # redacted once per kind
    assert [(g.signature, g.count) for g in grouper.groups()] == [
        (g.signature, g.count * 500) for g in group_entries(rows)]


def test_rows_added_as_the_index_publishes_them_give_the_groups_of_the_whole_list():
    rows = sample_rows()
    grouper = FailureGrouper()
    for end in (0, 7, 8, 30, len(rows)):
        grouper.add_entries(rows, end)
    assert grouper.seen == len(rows)
    assert [(g.signature, list(g.rows)) for g in grouper.groups()] == [
        (g.signature, list(g.rows)) for g in group_entries(rows)]
    assert grouper.passed == sum(1 for row in rows if row.ready)


def test_reasons_left_in_the_file_are_read_for_their_signature_and_not_kept(tmp_path, monkeypatch):
    monkeypatch.setattr(entries_mod, "MAX_SHARED_FAILURES", 0)  # every reason stays in the file
    path = SAMPLES / "scenarios.jsonl"
    source = IndexedSource([str(path)]).scan_all()
    rows = source.runs()
    deferred = [row.first_failure for row in rows if isinstance(row.first_failure, DeferredFailure)]
    assert deferred
    indexed = group_entries(rows)
    assert all(f._reason is None for f in deferred)  # read back, masked, dropped: memory stays the index's
    whole = group_entries(list(MemorySource(list(read_trace(path).runs.values()), "s").runs()))
    assert [(g.signature, g.count, g.example_run_id) for g in indexed] == [
        (g.signature, g.count, g.example_run_id) for g in whole]


def test_verdicts_group_as_rows_do():
    trace = read_trace(SAMPLES / "ablations.jsonl")
    by_verdicts = group_verdicts(run.verdict() for run in trace.runs.values())
    by_rows = group_entries(list(MemorySource(list(trace.runs.values()), "a").runs()))
    assert [(g.signature, g.count, g.example_run_id) for g in by_verdicts.groups()] == [
        (g.signature, g.count, g.example_run_id) for g in by_rows]


def grouped_with_peak(rows):
    """The groups of ``rows`` and the peak of the memory grouping them took."""
    tracemalloc.start()
    try:
        groups = group_entries(rows)
        return groups, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_grouping_100k_rows_costs_a_few_bytes_a_run():
    """The index holds ~400 bytes a run; grouping adds its row numbers (4 bytes a run) and a little per group."""
    rows = sample_rows()
    many = (rows * (100_000 // len(rows) + 1))[:100_000]
    groups, peak = grouped_with_peak(many)
    assert sum(g.count for g in groups) == sum(1 for row in many if not row.ready)
    assert peak < 100_000 * 12  # (measured: about 3 bytes a run, the samples being a third failures)


def test_failures_alike_but_for_their_ids_are_redacted_once_and_show_only_the_first_ones_text():
    from test_terminal_output import SECRET

    other = SECRET[:-6] + "ZZZZZZ"
    grouper = FailureGrouper()
    first = grouper.signature("authorization", "permission_denied", f"denied o-1 for tenant shop-a (key {SECRET})")
    second = grouper.signature("authorization", "permission_denied", f"denied o-2 for tenant acme (key {other})")
    assert first == second and grouper.signatures_computed == 1 and grouper.reasons_seen == 2
    assert SECRET not in first[2] and other not in first[2] and "<redacted>" in first[2]
    assert first == failure_signature({"lane": "authorization", "code": "permission_denied",
                                       "reason": f"denied o-1 for tenant shop-a (key {SECRET})"})


def test_rows_with_shapes_of_their_own_are_grouped_in_bounded_memory():
    """Beyond the shapes the index shares (16,384), each row has its own: remembering every one by identity
    cost ~130 bytes a run (39 MiB for 300k runs); the memo is capped, so a run costs its row number."""
    from tracetui.trace.failure import Failure
    from tracetui.trace.source import RunShape

    failures = [Failure("http", 4, "request_rejected", f"request req_{k:06x}: HTTP 400", 4) for k in range(40)]
    n = 300_000
    rows = [RunEntry(f"run-{k}", RunShape(0, "s", None, "request_rejected" if k % 3 == 0 else "answer_ready",
                                          "failed" if k % 3 == 0 else "ready", True,
                                          failures[k % 40] if k % 3 == 0 else None, 1, 0, 0, k))
            for k in range(n)]
    groups, peak = grouped_with_peak(rows)
    assert [(g.count, g.reason) for g in groups] == [(n // 3, "request req_#: HTTP 400")]
    assert peak < n * 20
