"""Naming one run of any trace (FILE:ID, FILE --run ID) and loading it, with errors in words."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tracetui.trace.reader import TraceReadError
from tracetui.triage.run_pair import RunSpecError, load_run, nearby, parse_run_spec, split_specs

SAMPLES = Path(__file__).resolve().parents[2] / "sample_traces"


def test_file_colon_id_and_file_with_run(tmp_path):
    trace = str(SAMPLES / "scenarios.jsonl")
    assert parse_run_spec(f"{trace}:cross_tenant") == (trace, "cross_tenant")
    assert parse_run_spec(trace, "single") == (trace, "single")
    assert parse_run_spec(trace) == (trace, None)


def test_a_path_that_holds_colons_is_split_where_a_file_exists(tmp_path):
    odd = tmp_path / "C:runs:v2.jsonl"
    shutil.copy(SAMPLES / "scenarios.jsonl", odd)
    assert parse_run_spec(f"{odd}:single") == (str(odd), "single")
    assert parse_run_spec(str(odd)) == (str(odd), None)  # the whole name is a file: no id in it
    assert parse_run_spec(f"{odd}:a:b") == (str(odd), "a:b")  # an id may hold a colon too
    # a Windows-like path that does not exist is a path, never split at its drive letter
    assert parse_run_spec("C:\\traces\\runs.jsonl") == ("C:\\traces\\runs.jsonl", None)
    assert parse_run_spec("missing.jsonl:single") == ("missing.jsonl", "single")


def test_a_backend_source_is_split_after_its_address():
    assert parse_run_spec("phoenix+http://localhost:6006/default:run-1") == (
        "phoenix+http://localhost:6006/default", "run-1")
    assert parse_run_spec("phoenix+http://localhost:6006") == ("phoenix+http://localhost:6006", None)
    assert parse_run_spec("phoenix+http://localhost:6006/default", "r") == ("phoenix+http://localhost:6006/default", "r")


def test_bad_names_say_why():
    with pytest.raises(RunSpecError, match="names no run after its colon"):
        parse_run_spec(f"{SAMPLES / 'scenarios.jsonl'}:")
    with pytest.raises(RunSpecError, match="--run after"):
        parse_run_spec("x.jsonl", "")


def test_words_of_a_command_line_pair_each_run_with_its_file():
    assert split_specs(["a.jsonl", "--run", "x", "b.jsonl:y"]) == [("a.jsonl", "x"), ("b.jsonl:y", None)]
    assert split_specs(["a.jsonl", "--run=x", "b.jsonl", "--run", "y"]) == [("a.jsonl", "x"), ("b.jsonl", "y")]
    with pytest.raises(RunSpecError, match="before any file"):
        split_specs(["--run", "x", "a.jsonl"])
    with pytest.raises(RunSpecError, match="two runs"):
        split_specs(["a.jsonl", "--run", "x", "--run", "y"])
    with pytest.raises(RunSpecError, match="needs a run id"):
        split_specs(["a.jsonl", "--run"])


def test_load_a_run_from_a_trace_and_from_otlp():
    assert load_run(str(SAMPLES / "scenarios.jsonl"), "cross_tenant").verdict()["status"] == "permission_denied"
    imported = load_run(str(SAMPLES / "otel-scenarios.jsonl"), "cross_tenant")
    assert imported.run["source"] == "otel" and imported.verdict()["status"] == "permission_denied"
    assert load_run(str(SAMPLES / "fault-429.jsonl"), None).run_id == "single-fault-429"  # its only run


def test_no_such_run_lists_the_nearest_ids_first():
    with pytest.raises(TraceReadError) as caught:
        load_run(str(SAMPLES / "scenarios.jsonl"), "cros_tenant")
    message = str(caught.value)
    assert "no run 'cros_tenant'" in message and "runs (of 30): cross_tenant," in message
    with pytest.raises(TraceReadError, match="no run 'singel'; runs \\(of 30\\): single"):
        load_run(str(SAMPLES / "otel-scenarios.jsonl"), "singel")
    assert nearby("parallel", ["a", "parallel_partial_failure", "b", "parallel"])[:2] == [
        "parallel", "parallel_partial_failure"]


def test_a_file_of_many_runs_needs_an_id_and_an_unreadable_file_is_a_sentence(tmp_path):
    with pytest.raises(TraceReadError, match="holds 30 runs: choose one"):
        load_run(str(SAMPLES / "scenarios.jsonl"), None)
    with pytest.raises(TraceReadError, match="missing.jsonl"):
        load_run(str(tmp_path / "missing.jsonl"), "x")
    with pytest.raises(TraceReadError, match="directory"):
        load_run(str(tmp_path), "x")
