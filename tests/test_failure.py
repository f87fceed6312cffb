"""The run list's compact first failure reads and compares like the summary's dict."""
from __future__ import annotations

import copy
import gc
import pickle

import orjson
import pytest

from tracetui.trace.index import entries as entries_mod
from tracetui.trace.index import files as files_mod
from tracetui.trace.failure import DeferredFailure, Failure
from tracetui.trace.index import IndexedSource
from tracetui.trace.reader import read_trace
from tracetui.trace.source import entry_from_run, file_source
from tracetui.trace.writer import encode_records

SUMMARY = {"lane": "authorization", "seq": 4, "code": "permission_denied",
           "reason": "permission denied: o-2 belongs to tenant shop-b", "decided_at": 4}


def test_reads_like_the_dict_it_was_made_from():
    failure = Failure.of(dict(SUMMARY))
    assert failure == SUMMARY and SUMMARY == failure and dict(failure) == SUMMARY
    assert failure["lane"] == "authorization" and failure.get("seq") == 4 and failure.get("nope", "-") == "-"
    assert list(failure) == list(SUMMARY) and len(failure) == 5 and "reason" in failure
    with pytest.raises(KeyError):
        failure["nope"]
    assert failure != {**SUMMARY, "seq": 5} and Failure.of(None) is None


def test_keeps_the_other_keys_a_summary_gave():
    failure = Failure.of({**SUMMARY, "note": {"x": 1}})
    assert failure == {**SUMMARY, "note": {"x": 1}} and failure["note"] == {"x": 1} and len(failure) == 6


def test_failures_read_from_separate_lines_share_their_lane_and_code():
    a, b = (Failure.of(orjson.loads(orjson.dumps(SUMMARY))) for _ in range(2))
    assert a.lane is b.lane and a.code is b.code


def _distinct_failures(tmp_path, n: int) -> str:
    """A trace of ``n`` failed runs whose reasons all differ, as real traces' reasons do."""
    records = []
    for i in range(n):
        failure = {**SUMMARY, "reason": f"permission denied: o-{i} belongs to tenant shop-b"}
        records += [{"rec": "run", "run_id": f"r{i}", "trace_version": 1, "inputs": {"scenario": "x"}},
                    {"rec": "event", "run_id": f"r{i}", "seq": 4, "lane": "authorization", "kind": "authorization.check",
                     "outcome": "failed", "code": "permission_denied", "summary": failure["reason"]},
                    {"rec": "summary", "run_id": f"r{i}", "status": "permission_denied", "ready": False,
                     "metrics": {"model_calls": 1, "tool_calls": 1}, "first_failure": failure}]
    path = tmp_path / "distinct.jsonl"
    path.write_bytes(encode_records(records))
    return str(path)


def _count_reads(monkeypatch) -> list[str]:
    reads: list[str] = []
    read_back = files_mod.FileIndex.failure_reason

    def counted(self, run_name):
        reads.append(run_name)
        return read_back(self, run_name)
    monkeypatch.setattr(files_mod.FileIndex, "failure_reason", counted)
    return reads


def test_an_index_of_distinct_failures_keeps_each_reason_and_a_bounded_memo(tmp_path, monkeypatch):
    """Beyond the shared ones, a failure's reason stays in the file until the run is shown."""
    monkeypatch.setattr(entries_mod, "MAX_SHARED_FAILURES", 8)
    reads = _count_reads(monkeypatch)
    path = _distinct_failures(tmp_path, 40)
    source = IndexedSource([path]).scan_all()
    assert all(isinstance(e.first_failure, DeferredFailure) for e in source.runs()[8:])
    assert [e.failing_lane for e in source.runs()] == ["authorization"] * 40 and "reason" in source.runs()[20].first_failure
    assert reads == []  # listing, filtering by lane and asking which keys there are read nothing back
    assert source.runs()[20].first_failure["reason"] == "permission denied: o-20 belongs to tenant shop-b"
    assert source.runs()[20].first_failure["reason"] and reads == ["r20"]  # read once, then kept
    expected = [entry_from_run(run) for run in read_trace(path).runs.values()]
    assert list(source.runs()) == expected
    assert [e.first_failure["reason"] for e in source.runs()] == [
        f"permission denied: o-{i} belongs to tenant shop-b" for i in range(40)]
    assert len(source._row_maker.failures) == 8


def test_a_copy_is_a_plain_failure_and_leaves_the_source_open(tmp_path, monkeypatch):
    monkeypatch.setattr(entries_mod, "MAX_SHARED_FAILURES", 0)
    source = IndexedSource([_distinct_failures(tmp_path, 3)]).scan_all()
    deferred = source.runs()[1].first_failure
    copied, pickled = copy.deepcopy(deferred), pickle.loads(pickle.dumps(deferred))
    assert type(copied) is type(pickled) is Failure and copied == pickled == deferred
    del copied, pickled
    gc.collect()
    assert source.runs()[2].first_failure["reason"].startswith("permission denied: o-2 ")
    assert source.load(source.runs()[2]).summary["status"] == "permission_denied"


def test_a_closed_index_of_distinct_failures_is_freed(tmp_path, monkeypatch):
    """Rows are not tracked by the garbage collector: a failure whose reason stays in the file must not
    keep its file's index (and so every row) alive once the source is dropped (a reload, a new file)."""
    import weakref

    monkeypatch.setattr(entries_mod, "MAX_SHARED_FAILURES", 0)
    source = IndexedSource([_distinct_failures(tmp_path, 3)]).scan_all()
    rows = source.runs()
    assert isinstance(rows[1].first_failure, DeferredFailure)
    gone = weakref.ref(source._files[0])
    source.close()
    del source
    gc.collect()
    assert gone() is None
    assert "could not be read back" in rows[1].first_failure["reason"]


def test_a_verdict_derived_from_events_keeps_their_values_as_they_are(tmp_path):
    """A run without a summary takes its failure from its events, whose code may be any JSON value."""
    path = tmp_path / "odd.jsonl"
    path.write_bytes(b'{"rec":"run","run_id":"r1","inputs":{}}\n'
                     b'{"rec":"event","run_id":"r1","seq":1,"lane":"http","kind":"http.attempt",'
                     b'"outcome":"failed","code":503,"summary":"boom"}\n')
    for source in (IndexedSource([str(path)]).scan_all(), file_source(str(path))):
        (entry,) = source.runs()
        assert entry.failing_lane == "http" and entry.first_failure["code"] == 503 and entry.status == "503"


def test_a_reason_that_cannot_be_read_back_says_so(tmp_path, monkeypatch):
    monkeypatch.setattr(entries_mod, "MAX_SHARED_FAILURES", 0)
    source = IndexedSource([_distinct_failures(tmp_path, 2)]).scan_all()
    first = source.runs()[0].first_failure
    source.close()
    assert first["lane"] == "authorization" and "could not be read back" in first["reason"]


def test_a_file_rewritten_under_the_index_never_lends_another_runs_reason(tmp_path, monkeypatch):
    monkeypatch.setattr(entries_mod, "MAX_SHARED_FAILURES", 0)
    path = _distinct_failures(tmp_path, 2)
    source = IndexedSource([path]).scan_all()
    lines = open(path, "rb").read().splitlines(keepends=True)
    swapped = lines[3:] + lines[:3]  # the same bytes, the two runs in the other order
    with open(path, "r+b") as f:
        f.write(b"".join(swapped))
    assert "could not be read back" in source.runs()[0].first_failure["reason"]
