"""Runs appended to one file under the same run id stay apart; malformed summary verdicts are re-derived.

The rule, identical in :func:`reader.read_trace` and :class:`index.IndexedSource`: a record
starts a new run of its id when the newest run of that id has ended (its summary line was
read) or already has a run line. The n-th run of an id is listed as ``id#n``; its records
keep the id they were written with. An event whose ``seq`` repeats in its run is a
problem line and the first event with that seq is kept.
"""
from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tracetui.cli import main
from tracetui.trace.verdict import first_failure as derived_failure
from tracetui.trace.verdict import status_of as verdict_status
from tracetui.trace.format import LANES
from tracetui.trace.index import IndexedSource
from tracetui.trace.reader import RunData, read_trace, run_name
from tracetui.trace.verdict import checked_failure
from tracetui.trace.source import entry_from_run, file_source

ROOT = Path(__file__).resolve().parent.parent
RESPONSES = ROOT / "sample_traces" / "responses"
CHUNKS = (64, 4096, 1 << 20)


@lru_cache(maxsize=None)
def cli_run(responses: str, run_id: str) -> bytes:
    """``tracetui run --responses sample_traces/responses/<responses>.json --run-id <run_id>``: the trace bytes."""
    result = CliRunner().invoke(main, ["run", "--responses", str(RESPONSES / f"{responses}.json"), "--run-id", run_id])
    assert result.exit_code in (0, 1), result.output
    assert result.stdout_bytes.count(b"\n") >= 3
    return result.stdout_bytes


def lines_of(data: bytes) -> list[bytes]:
    return data.splitlines(keepends=True)


def write(tmp_path: Path, data: bytes, name: str = "t.jsonl") -> str:
    path = tmp_path / name
    path.write_bytes(data)
    return str(path)


def as_written(data: bytes) -> list[dict]:
    return [orjson.loads(line) for line in lines_of(data)]


def both(path: str, chunk: int = 1 << 20):
    """The reader's runs and the index's (scanned, every run loaded), checked equal; returns both."""
    trace = read_trace(path)
    src = IndexedSource([path]).scan_all(chunk)
    want = {rid: entry_from_run(data) for rid, data in trace.runs.items()}
    during = {e.run_id: e for e in src.runs()}
    assert len(during) == len(src.runs()), "a name was listed twice"
    assert during.keys() == want.keys()
    for rid, entry in during.items():  # verdicts are right before any load
        w = want[rid]
        assert (entry.status, entry.ready, entry.complete, entry.first_failure) == \
               (w.status, w.ready, w.complete, w.first_failure)
    loaded = {}
    for entry in src.runs():
        data = src.load(entry)
        ref = trace.runs[entry.run_id]
        assert (data.run_id, data.run, data.summary, data.first_line) == \
               (ref.run_id, ref.run, ref.summary, ref.first_line)
        assert data.events == sorted(ref.events, key=lambda e: e["seq"])
        loaded[entry.run_id] = data
    assert {e.run_id: e for e in src.runs()} == want
    assert [(p.line, p.message) for p in src.problems()] == [(p.line, p.message) for p in trace.problems]
    return trace, src, loaded


def records_of(data: RunData) -> list[dict]:
    return [r for r in (data.run, *data.events, data.summary) if r is not None]


# -- the reviewer's repro ------------------------------------------------------------------------
def repro(tmp_path: Path) -> tuple[str, bytes, bytes]:
    first, second = cli_run("cross_tenant", "r1"), cli_run("normal", "r1")
    return write(tmp_path, first + second, "m.jsonl"), first, second


@pytest.mark.parametrize("chunk", CHUNKS)
def test_repro_two_appended_runs_stay_apart(tmp_path, chunk):
    path, first, second = repro(tmp_path)
    trace, src, loaded = both(path, chunk)
    assert list(trace.runs) == ["r1", "r1#2"]
    assert trace.problems == []
    assert [(e.run_id, e.status, e.ready, e.events) for e in src.runs()] == [
        ("r1", "permission_denied", False, 4), ("r1#2", "answer_ready", True, 8)]
    assert src.runs()[0].first_failure["lane"] == "authorization"
    # load() returns exactly each run's records, as written (their run_id untouched)
    assert records_of(loaded["r1"]) == records_of(trace.runs["r1"]) == as_written(first)
    assert records_of(loaded["r1#2"]) == records_of(trace.runs["r1#2"]) == as_written(second)
    assert all(r["run_id"] == "r1" for r in records_of(loaded["r1#2"]))
    assert trace.runs["r1#2"].first_line == len(lines_of(first)) + 1


def test_repro_check_shows_both_runs_and_fails(tmp_path):
    path, _, _ = repro(tmp_path)
    result = CliRunner().invoke(main, ["check", path])
    assert result.exit_code == 1
    out = result.stdout.splitlines()
    assert len(out) == 2
    assert out[0].startswith("✗ r1  permission_denied  authorization@4: ")
    assert out[1] == "✓ r1#2  answer_ready"
    result = CliRunner().invoke(main, ["check", "--json", path])
    assert result.exit_code == 1
    runs = orjson.loads(result.stdout)["runs"]
    assert [(v["run_id"], v["status"]) for v in runs] == [("r1", "permission_denied"), ("r1#2", "answer_ready")]


def test_file_source_lists_both(tmp_path):
    path, _, _ = repro(tmp_path)
    src = file_source(path)
    assert [e.run_id for e in src.runs()] == ["r1", "r1#2"]
    assert src.load(src.runs()[1]).summary["status"] == "answer_ready"


# -- more runs, more ids ------------------------------------------------------------------------
@pytest.mark.parametrize("chunk", CHUNKS)
def test_three_runs_with_one_id(tmp_path, chunk):
    parts = [cli_run("cross_tenant", "r1"), cli_run("normal", "r1"), cli_run("rate_limited_then_ok", "r1")]
    _, src, loaded = both(write(tmp_path, b"".join(parts)), chunk)
    assert [e.run_id for e in src.runs()] == ["r1", "r1#2", "r1#3"]
    for name, part in zip(["r1", "r1#2", "r1#3"], parts):
        assert records_of(loaded[name]) == as_written(part)
    assert src.runs()[2].recovered > 0


def interleave(*runs: bytes) -> bytes:
    queues = [lines_of(r) for r in runs]
    out = []
    while any(queues):
        for q in queues:
            if q:
                out.append(q.pop(0))
    return b"".join(out)


@pytest.mark.parametrize("chunk", CHUNKS)
def test_two_ids_each_appended_twice_interleaved(tmp_path, chunk):
    a1, a2 = cli_run("cross_tenant", "A"), cli_run("normal", "A")
    b1, b2 = cli_run("no_receipt", "B"), cli_run("rate_limited_then_ok", "B")
    # two writers: A's and B's runs interleave line by line; each appends its second run after its first
    data = interleave(a1 + a2, b1 + b2)
    _, src, loaded = both(write(tmp_path, data), chunk)
    assert sorted(e.run_id for e in src.runs()) == ["A", "A#2", "B", "B#2"]
    for name, part in [("A", a1), ("A#2", a2), ("B", b1), ("B#2", b2)]:
        assert records_of(loaded[name]) == as_written(part)
    by_id = {e.run_id: e for e in src.runs()}
    assert by_id["A"].status == "permission_denied" and by_id["A#2"].ready and by_id["B#2"].ready
    assert not by_id["B"].ready


def test_different_ids_interleaved_are_unchanged(tmp_path):
    a, b, c = cli_run("cross_tenant", "A"), cli_run("normal", "B"), cli_run("no_receipt", "C")
    _, src, loaded = both(write(tmp_path, interleave(a, b, c)), 97)
    assert sorted(loaded) == ["A", "B", "C"]
    for name, part in [("A", a), ("B", b), ("C", c)]:
        assert records_of(loaded[name]) == as_written(part)


@pytest.mark.parametrize("chunk", CHUNKS)
def test_second_run_line_without_a_summary_in_between(tmp_path, chunk):
    crashed = lines_of(cli_run("cross_tenant", "r1"))[:-1]  # its writer died before the summary
    again = cli_run("normal", "r1")
    trace, src, loaded = both(write(tmp_path, b"".join(crashed) + again), chunk)
    assert list(trace.runs) == ["r1", "r1#2"]
    by_id = {e.run_id: e for e in src.runs()}
    assert not by_id["r1"].complete and by_id["r1"].status == "permission_denied"  # derived from its events
    assert by_id["r1#2"].ready and by_id["r1#2"].events == 8
    assert records_of(loaded["r1"]) == as_written(b"".join(crashed))
    assert records_of(loaded["r1#2"]) == as_written(again)
    assert trace.problems == []


def test_events_before_the_run_line_stay_in_the_same_run(tmp_path):
    lines = lines_of(cli_run("normal", "r1"))
    moved = [lines[1], lines[2], lines[0], *lines[3:]]  # the run line is not the first: still one run
    trace, src, _ = both(write(tmp_path, b"".join(moved)), 128)
    assert list(trace.runs) == ["r1"] and src.runs()[0].events == 8 and src.runs()[0].scenario is None


def test_lines_after_the_summary_start_the_next_run(tmp_path):
    lines = lines_of(cli_run("cross_tenant", "r1"))
    late_event, summary = lines[2], lines[-1]
    # an event after its run's summary, then a second summary
    trace, src, loaded = both(write(tmp_path, b"".join(lines) + late_event + summary), 128)
    assert list(trace.runs) == ["r1", "r1#2"]
    assert [e["seq"] for e in loaded["r1"].events] == [1, 2, 3, 4]
    assert loaded["r1#2"].run is None and loaded["r1#2"].events == [orjson.loads(late_event)]
    assert loaded["r1#2"].summary == orjson.loads(summary)
    # a summary alone after a summary is a run of its own
    trace, src, loaded = both(write(tmp_path, b"".join(lines) + summary, "s.jsonl"), 128)
    assert list(trace.runs) == ["r1", "r1#2"]
    assert loaded["r1#2"].events == [] and loaded["r1#2"].summary == orjson.loads(summary)
    assert src.runs()[1].status == "permission_denied" and src.runs()[1].events == 0


def test_a_run_line_that_only_looks_valid_does_not_split(tmp_path):
    """The index takes run lines by their layout; a broken one must not start a run the reader does not see."""
    lines = lines_of(cli_run("normal", "r1"))
    broken = lines[0].replace(b'"tools":', b'"tools"', 1)  # the writer's layout, then broken JSON
    assert broken != lines[0]
    # a broken run line first (the run has one as far as the index can tell), then a good one
    trace, src, _ = both(write(tmp_path, broken + b"".join(lines)), 256)
    assert list(trace.runs) == ["r1"] and [p.line for p in trace.problems] == [1]
    assert src.runs()[0].scenario == orjson.loads(lines[0])["inputs"]["scenario"]
    # a good run line, then a broken one, then the rest: still one run
    data = lines[0] + broken + b"".join(lines[1:])
    trace, src, _ = both(write(tmp_path, data, "b.jsonl"), 256)
    assert list(trace.runs) == ["r1"] and [p.line for p in trace.problems] == [2]
    # two good run lines around a broken one: two runs
    data = b"".join(lines[:3]) + broken + b"".join(lines)
    trace, src, _ = both(write(tmp_path, data, "c.jsonl"), 256)
    assert list(trace.runs) == ["r1", "r1#2"] and [p.line for p in trace.problems] == [4]


def test_names_never_collide_with_a_written_id(tmp_path):
    taken = cli_run("no_receipt", "r1#2")
    first, second, third = cli_run("cross_tenant", "r1"), cli_run("normal", "r1"), cli_run("rate_limited_then_ok", "r1")
    trace, src, loaded = both(write(tmp_path, taken + first + second + third))
    assert list(trace.runs) == ["r1#2", "r1", "r1#3", "r1#4"]
    assert records_of(loaded["r1#2"]) == as_written(taken)
    assert records_of(loaded["r1#3"]) == as_written(second)
    # and a written id that comes after the name was given out is listed under the next free one
    trace, src, loaded = both(write(tmp_path, first + second + taken, "late.jsonl"))
    assert list(trace.runs) == ["r1", "r1#2", "r1#2#2"]
    assert records_of(loaded["r1#2#2"]) == as_written(taken)


def test_run_name():
    free = set().__contains__
    assert run_name("x", 1, free) == "x"
    assert run_name("x", 2, free) == "x#2"
    assert run_name("x", 3, {"x#3", "x#4"}.__contains__) == "x#5"
    assert run_name("x", 1, {"x"}.__contains__) == "x#2"


# -- a seq that repeats inside one run ----------------------------------------------------------
@pytest.mark.parametrize("chunk", CHUNKS)
def test_repeated_seq_is_a_problem_and_the_first_event_is_kept(tmp_path, chunk):
    lines = lines_of(cli_run("normal", "r1"))
    dup = orjson.loads(lines[3])
    dup["summary"] = "a second event 3"
    data = b"".join(lines[:5]) + orjson.dumps(dup) + b"\n" + b"".join(lines[5:])
    path = write(tmp_path, data)
    trace, src, loaded = both(path, chunk)
    assert [(p.line, p.message) for p in trace.problems] == [(6, "seq 3 repeats in run r1")]
    assert [e["seq"] for e in loaded["r1"].events] == list(range(1, 9))
    assert loaded["r1"].events[2] == orjson.loads(lines[3])
    assert src.runs()[0].events == 8
    result = CliRunner().invoke(main, ["check", path])
    assert result.exit_code in (0, 1) and result.stdout == "✓ r1  answer_ready\n"
    assert "line 6: seq 3 repeats in run r1" in result.stderr


def test_repeated_seq_in_a_named_run_names_it(tmp_path):
    first = cli_run("cross_tenant", "r1")
    lines = lines_of(cli_run("normal", "r1"))
    data = first + b"".join(lines[:3]) + lines[2] + b"".join(lines[3:])
    trace, _, _ = both(write(tmp_path, data), 300)
    assert [p.message for p in trace.problems] == ["seq 2 repeats in run r1#2"]


# -- bug 2: a malformed first_failure or status in a summary ----------------------------------
PARTIAL_FAILURES = [
    {"lane": "http"},
    {"lane": "authorization", "seq": 4, "code": "permission_denied"},
    {"lane": "authorization", "seq": 4, "reason": "r"},
    {"lane": "nowhere", "seq": 4, "code": "x", "reason": "y"},
    {"lane": "http", "seq": 0, "code": "x", "reason": "y"},
    {"lane": "http", "seq": "4", "code": "x", "reason": "y"},
    {"lane": "http", "seq": True, "code": "x", "reason": "y"},
    {"lane": "http", "seq": 4.0, "code": "x", "reason": "y"},
    {"lane": "http", "seq": 4, "code": None, "reason": "y"},
    {"lane": "http", "seq": 4, "code": "x", "reason": 7},
    {"lane": "http", "seq": 4, "code": "x", "reason": "y", "decided_at": "5"},
    {"lane": ["http"], "seq": 4, "code": "x", "reason": "y"},
    {},
    "http",
    ["http", 4],
    7,
    True,
]


def with_summary(data: bytes, **changes) -> bytes:
    lines = lines_of(data)
    summary = orjson.loads(lines[-1])
    summary.update(changes)
    return b"".join(lines[:-1]) + orjson.dumps(summary) + b"\n"


@pytest.mark.parametrize("failure", PARTIAL_FAILURES, ids=repr)
def test_malformed_first_failure_is_derived_from_the_events(tmp_path, failure):
    original = cli_run("cross_tenant", "r1")
    path = write(tmp_path, with_summary(original, first_failure=failure))
    trace, src, _ = both(path, 256)
    run = trace.runs["r1"]
    want = derived_failure(run.events)
    assert want == orjson.loads(lines_of(original)[-1])["first_failure"]  # the writer's, re-derived
    assert run.verdict()["first_failure"] == want
    assert src.runs()[0].first_failure == want and src.runs()[0].status == "permission_denied"
    result = CliRunner().invoke(main, ["check", path])
    assert result.exit_code == 1, result.output
    assert result.stdout.startswith("✗ r1  permission_denied  authorization@4: permission denied")


def test_malformed_first_failure_in_a_run_without_failed_events(tmp_path):
    path = write(tmp_path, with_summary(cli_run("normal", "r1"), status="weird", ready=False,
                                        first_failure={"lane": "http"}))
    trace, src, _ = both(path)
    assert trace.runs["r1"].verdict()["first_failure"] is None
    assert src.runs()[0].status == "weird" and src.runs()[0].first_failure is None
    result = CliRunner().invoke(main, ["check", path])
    assert result.exit_code == 1 and result.stdout == "✗ r1  weird  (no event shows where it failed)\n"
    assert src.runs()[0].outcome == "failed"


def test_decided_at_defaults_to_seq(tmp_path):
    failure = {"lane": "authorization", "seq": 4, "code": "permission_denied", "reason": "no"}
    for decided_at in ({}, {"decided_at": None}):
        path = write(tmp_path, with_summary(cli_run("cross_tenant", "r1"), first_failure={**failure, **decided_at}))
        trace, src, _ = both(path)
        assert trace.runs["r1"].verdict()["first_failure"] == {**failure, "decided_at": 4}
        assert src.runs()[0].first_failure == {**failure, "decided_at": 4}
        assert trace.runs["r1"].summary["first_failure"] == {**failure, **decided_at}  # the record is untouched


def test_a_well_formed_first_failure_is_kept_as_written(tmp_path):
    failure = {"lane": "http", "seq": 2, "code": "made_up", "reason": "as written", "decided_at": 3, "extra": [1]}
    trace, src, _ = both(write(tmp_path, with_summary(cli_run("cross_tenant", "r1"), first_failure=failure)))
    assert trace.runs["r1"].verdict()["first_failure"] == failure == src.runs()[0].first_failure
    assert checked_failure(failure) is failure


@pytest.mark.parametrize("status", [None, "", 5, ["x"], {"a": 1}, True])
def test_non_string_status_is_derived(tmp_path, status):
    path = write(tmp_path, with_summary(cli_run("cross_tenant", "r1"), status=status))
    trace, src, _ = both(path)
    failure = trace.runs["r1"].verdict()["first_failure"]
    assert src.runs()[0].status == trace.runs["r1"].verdict()["status"] == verdict_status(failure)
    assert src.runs()[0].status == "permission_denied"


json_values = st.recursive(st.none() | st.booleans() | st.integers(-3, 10) | st.sampled_from(["", "x", *LANES]),
                           lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
                               st.sampled_from(["lane", "seq", "code", "reason", "decided_at", "z"]), inner,
                               max_size=6), max_leaves=10)
failures = json_values | st.fixed_dictionaries(
    {"lane": st.sampled_from([*LANES, "x"]), "seq": st.integers(-1, 9) | st.none(), "code": st.sampled_from(["c", 1]),
     "reason": st.sampled_from(["r", None])},
    optional={"decided_at": st.integers(-1, 9) | st.none() | st.just("2")})


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(failure=failures, status=json_values,
       responses=st.sampled_from(["cross_tenant", "normal", "no_receipt", "rate_limited_then_ok"]))
def test_property_any_summary_verdict_is_well_formed(tmp_path, failure, status, responses):
    path = write(tmp_path, with_summary(cli_run(responses, "r1"), first_failure=failure, status=status))
    trace, src, _ = both(path, 512)
    verdict = trace.runs["r1"].verdict()
    ff = verdict["first_failure"]
    assert isinstance(verdict["status"], str) and verdict["status"]
    if ff is not None:
        assert ff["lane"] in LANES and isinstance(ff["code"], str) and isinstance(ff["reason"], str)
        assert type(ff["seq"]) is int and ff["seq"] > 0 and type(ff["decided_at"]) is int
    if checked_failure(failure) is None and failure is not None:
        assert ff == derived_failure(trace.runs["r1"].events)
    result = CliRunner().invoke(main, ["check", path])
    assert result.exit_code in ((0, 1) if verdict["ready"] else (1,)), result.output
    assert result.stdout.startswith(("✓ r1  " if verdict["ready"] else "✗ r1  ") + verdict["status"])
