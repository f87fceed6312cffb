"""The run list's compact first failure reads and compares like the summary's dict."""
from __future__ import annotations

import orjson
import pytest

from tracetui.trace import index as index_mod
from tracetui.trace.failure import DeferredFailure, Failure
from tracetui.trace.index import IndexedSource
from tracetui.trace.reader import read_trace
from tracetui.trace.source import entry_from_run
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


def test_an_index_of_distinct_failures_keeps_each_reason_and_a_bounded_memo(tmp_path, monkeypatch):
    """Beyond the shared ones, a failure's reason stays in the file until the run is shown."""
    monkeypatch.setattr(index_mod, "MAX_SHARED_FAILURES", 8)
    path = _distinct_failures(tmp_path, 40)
    source = IndexedSource([path]).scan_all()
    deferred = [e.first_failure for e in source.runs()[8:]]
    assert all(isinstance(f, DeferredFailure) and f._reason is None for f in deferred)
    assert source.runs()[20].first_failure["reason"] == "permission denied: o-20 belongs to tenant shop-b"
    expected = [entry_from_run(run) for run in read_trace(path).runs.values()]
    assert list(source.runs()) == expected
    assert [e.first_failure["reason"] for e in source.runs()] == [
        f"permission denied: o-{i} belongs to tenant shop-b" for i in range(40)]
    assert len(source._failures) == 8


def test_a_reason_that_cannot_be_read_back_says_so(tmp_path, monkeypatch):
    monkeypatch.setattr(index_mod, "MAX_SHARED_FAILURES", 0)
    source = IndexedSource([_distinct_failures(tmp_path, 2)]).scan_all()
    first = source.runs()[0].first_failure
    source.close()
    assert first["lane"] == "authorization" and "could not be read back" in first["reason"]
