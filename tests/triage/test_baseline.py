"""A new trace judged against its baseline: matched by the name runs are listed under, repeats included."""
from __future__ import annotations

import pytest

from tracetui.loop.runner import run_scenario
from tracetui.trace.writer import encode_record
from tracetui.triage.baseline import (FIXED, LISTED, NEWLY_FAILING, ONLY_IN_NEW, STILL_FAILING, STILL_READY,
                                      BaselineComparison, baseline_outcomes, each_verdict)


def _trace(path, *runs: tuple[str, str]):
    """A trace of built-in scenarios, each ``(scenario, run id)``: ``single`` passes, ``cross_tenant`` fails."""
    path.write_bytes(b"".join(encode_record(r) for scenario, run_id in runs
                              for r in run_scenario(scenario, run_id=run_id).records))
    return path


def _verdict(run_id, outcome):
    return {"run_id": run_id, "outcome": outcome}


def test_each_pair_of_outcomes_is_judged_and_counted():
    comparison = BaselineComparison({"a": "ready", "b": "ready", "c": "failed", "d": "failed", "e": "incomplete",
                                     "gone": "ready"})
    judged = [comparison.judge(_verdict(*v)) for v in
              (("a", "ready"), ("b", "incomplete"), ("c", "ready"), ("d", "failed"), ("e", "failed"),
               ("new", "failed"))]
    assert judged == [STILL_READY, NEWLY_FAILING, FIXED, STILL_FAILING, STILL_FAILING, ONLY_IN_NEW]
    assert comparison.counts == {NEWLY_FAILING: 1, STILL_FAILING: 2, FIXED: 1, STILL_READY: 1}
    assert comparison.only_in_new.to_json() == {"count": 1, "runs": ["new"]}
    assert comparison.only_in_old().to_json() == {"count": 1, "runs": ["gone"]}
    assert comparison.words(comparison.only_in_old()) == (
        "5 run(s) matched: 1 newly failing, 2 still failing, 1 fixed, 1 still ready; "
        "1 only in the new trace, 1 only in the baseline")


def test_unmatched_runs_are_counted_all_and_named_up_to_a_bound():
    comparison = BaselineComparison({f"old-{i}": "ready" for i in range(LISTED + 5)})
    for i in range(LISTED + 7):
        comparison.judge(_verdict(f"new-{i}", "ready"))
    assert comparison.only_in_new.count == LISTED + 7 and len(comparison.only_in_new.names) == LISTED
    old = comparison.only_in_old()
    assert old.count == LISTED + 5 and len(old.names) == LISTED


def test_repeated_ids_are_matched_as_the_reader_names_them(tmp_path):
    """The second ``support`` of one file meets the second of the other: ``support#2`` newly fails."""
    old = _trace(tmp_path / "old.jsonl", ("single", "support"), ("single", "support"))
    new = _trace(tmp_path / "new.jsonl", ("single", "support"), ("cross_tenant", "support"),
                 ("cross_tenant", "support"))
    outcomes, problems = baseline_outcomes(str(old))
    assert outcomes == {"support": "ready", "support#2": "ready"} and problems == 0
    comparison = BaselineComparison(outcomes)
    judged = []
    each_verdict(str(new), lambda v: judged.append((v["run_id"], comparison.judge(v))), lambda p: None)
    assert judged == [("support", STILL_READY), ("support#2", NEWLY_FAILING), ("support#3", ONLY_IN_NEW)]


def test_an_otlp_baseline_gives_the_same_outcomes_as_the_trace_it_was_exported_from(tmp_path, root):
    from click.testing import CliRunner

    from tracetui.cli import main

    otlp = tmp_path / "spans.jsonl"
    result = CliRunner().invoke(main, ["export", str(root / "sample_traces" / "scenarios.jsonl"), "-o", str(otlp)])
    assert result.exit_code == 0, result.output
    assert baseline_outcomes(str(otlp))[0] == baseline_outcomes(str(root / "sample_traces" / "scenarios.jsonl"))[0]


def test_lines_that_are_not_records_are_counted_not_fatal(tmp_path):
    path = _trace(tmp_path / "t.jsonl", ("single", "a"))
    path.write_bytes(path.read_bytes() + b"not json\n")
    assert baseline_outcomes(str(path)) == ({"a": "ready"}, 1)


def test_a_file_with_no_run_is_an_error(tmp_path):
    from tracetui.trace.reader import TraceReadError

    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"")
    with pytest.raises(TraceReadError, match="no runs found"):
        baseline_outcomes(str(empty))
