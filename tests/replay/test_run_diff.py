"""Two recorded runs compared: aligned by turn and lane, the first divergence in words, each its own verdict."""
from __future__ import annotations

import copy
import sys
from pathlib import Path

import pytest

from tracetui.loop.runner import run_scenario
from tracetui.otel.detect import read_any
from tracetui.replay.run_diff import diff_runs
from tracetui.trace.reader import RunData, read_trace
from tracetui.trace.source import run_data_from_records

SAMPLES = Path(__file__).resolve().parents[2] / "sample_traces"


@pytest.fixture(scope="module")
def runs() -> dict[str, RunData]:
    return read_trace(SAMPLES / "scenarios.jsonl").runs


def scenario(name: str, provider: str = "openai-responses", **options) -> RunData:
    result = run_scenario(name, provider=provider, **options)
    return run_data_from_records([result.run, *result.events, result.summary])


def edited(run: RunData, seq: int, **changes) -> RunData:
    """A copy of ``run`` whose event ``seq`` has ``changes`` (``data`` merged), and no summary (re-derived)."""
    events = copy.deepcopy(run.events)
    for event in events:
        if event["seq"] == seq:
            data = changes.pop("data", None)
            event.update(changes)
            if data:
                event["data"].update(data)
    return RunData(run.run_id + "-edited", run=run.run, events=events)


def test_one_extra_http_retry_is_one_row_and_every_later_step_still_lines_up(runs):
    retried = read_trace(SAMPLES / "fault-429.jsonl").runs["single-fault-429"]
    diff = diff_runs(runs["single"], retried)
    assert [r.same for r in diff.rows].count(False) == 1
    extra = diff.rows[diff.first_index]
    assert extra.a is None and extra.b.seq == 1 and extra.b.facts.status == 429
    assert all(r.a is not None and r.b is not None and r.b.seq == r.a.seq + 1 for r in diff.rows if r is not extra)
    assert diff.first_divergence == "run B retried at turn 1: its HTTP call got HTTP 429 (rate_limited); A needed no such retry"
    assert diff.same_verdict


def test_an_extra_repair_turn_is_matched_as_a_turn_not_shifted_into_the_next(runs):
    diff = diff_runs(runs["refund"], runs["invalid_json"])
    only_b = [r for r in diff.rows if r.a is None]
    assert [r.b.turn for r in only_b] == [1, 1, 1] and all(r.a is None for r in diff.rows if not r.same)
    paired = [(r.a.turn, r.b.turn) for r in diff.rows if r.a is not None]
    assert set(paired) == {(1, 2), (2, 3)}
    assert diff.first_divergence == ("run B retried at turn 1: its arguments for refund_order were rejected "
                                     "(invalid_json) and the model was asked again; A needed no such retry")


def test_a_different_tool_and_different_arguments_are_named(runs):
    tool = diff_runs(runs["single"], runs["unknown_tool"])
    assert tool.first_divergence == "run B's model called cancel_order at turn 1 where A called read_order"
    args = diff_runs(runs["single"], runs["cross_tenant"])
    assert args.first_divergence == ('run B\'s model called read_order with {"order_id":"o-2"} at turn 1 where A '
                                     'passed {"order_id":"o-1"}')
    assert not args.same_verdict
    assert args.verdicts[1]["status"] == "permission_denied" and args.verdicts[0]["ready"]


def test_authorization_answer_and_an_earlier_end_are_named(runs):
    single = runs["single"]
    denied = edited(single, 4, outcome="failed", code="permission_denied", summary="permission denied")
    assert diff_runs(single, denied).first_divergence == (
        "run B's authorization denied read_order on o-1 at turn 1 (permission_denied) where A allowed it")
    said = edited(single, 8, data={"text": "o-1 is lost"})
    assert diff_runs(single, said, "yesterday", "today").first_divergence == (
        "run today's answer at turn 2 was “o-1 is lost” where yesterday's was "
        '“{"order_id":"o-1","source":"read_order","status":"delivered"}”')
    cut = RunData("cut", run=single.run, events=single.events[:5])
    diff = diff_runs(single, cut)
    assert diff.first_divergence == ("run B ended after turn 1 where A went on: http at turn 2 "
                                     "(POST /v1/responses attempt 1: 200 in 624 ms)")
    assert diff.verdicts[1]["outcome"] == "incomplete" and not diff.same_verdict


def test_a_different_http_status_is_named_across_two_providers_wires():
    diff = diff_runs(scenario("response_failed"), scenario("response_failed", "anthropic"))
    assert diff.first_divergence == "run B's HTTP call at turn 1 got HTTP 500 where A's got HTTP 200"
    assert diff.verdicts[0]["status"] == "response_failed" and diff.verdicts[1]["status"] == "server_error"


@pytest.mark.parametrize("provider", ["anthropic", "openai-chat"])
def test_the_same_scenario_on_two_providers_wires_reads_the_same(provider):
    for name in ("single", "parallel", "cross_tenant", "tool_failure", "refund"):
        diff = diff_runs(scenario(name), scenario(name, provider))
        assert diff.first_divergence is None, (name, diff.first_divergence)
        assert diff.same_verdict and all(r.same for r in diff.rows)


def test_an_imported_otlp_run_reads_the_same_as_the_run_it_was_exported_from(runs):
    imported = read_any(SAMPLES / "otel-scenarios.jsonl").runs
    for name, run in runs.items():
        diff = diff_runs(run, imported[name])
        assert diff.first_divergence is None, (name, diff.first_divergence)


def test_recorded_agent_runs_are_compared_from_their_wire():
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "explain"))
    try:
        import agent_runs
    finally:
        sys.path.pop(0)
    diff = diff_runs(agent_runs.unbacked_run(), agent_runs.denied_run())
    assert diff.first_divergence == ('run B\'s model called read_order with {"order_id":"o-2"} at turn 1 where A '
                                     'passed {"order_id":"o-1"}')
    limited = diff_runs(agent_runs.unbacked_run(), agent_runs.rate_limited_run())
    assert limited.first_divergence == "run B's HTTP call at turn 1 got HTTP 429 where A's got HTTP 200"


def test_json_holds_both_verdicts_the_words_and_every_row(runs):
    document = diff_runs(runs["single"], runs["cross_tenant"]).to_json()
    assert document["a"]["run_id"] == "single" and document["b"]["verdict"]["status"] == "permission_denied"
    assert document["same_verdict"] is False and document["first_divergence_row"] == 1
    assert document["rows_differing"] == 7 and len(document["rows"]) == 8
    row = document["rows"][3]
    assert row["lane"] == "authorization" and row["b"]["code"] == "permission_denied" and row["a"]["seq"] == 4


def test_a_run_compared_with_itself_has_no_divergence(runs):
    diff = diff_runs(runs["parallel"], runs["parallel"])
    assert diff.first_divergence is None and diff.first_index is None and diff.same_verdict


def test_a_model_call_that_failed_is_said_to_have_failed_not_to_have_answered(runs):
    """A cancelled, refused, cut-short or broken model call asked for nothing: the sentence says it failed
    (it used to say "B's model answered", or quote the cut-short half of the arguments)."""
    single = runs["single"]
    assert diff_runs(single, runs["response_cancelled"]).first_divergence == (
        "run B's model call failed (response_cancelled) at turn 1 where A's model called read_order")
    assert diff_runs(runs["response_failed"], single).first_divergence == (
        "run B's model called read_order at turn 1 where A's model call failed (response_failed)")
    assert diff_runs(single, runs["truncated"]).first_divergence == (
        "run B's model call failed (incomplete) at turn 1 where A's model called read_order")
    assert diff_runs(runs["text"], runs["refusal"]).first_divergence == (
        "run B's model call failed (refused) at turn 1 where A's model answered")


def test_an_http_200_whose_stream_broke_is_not_said_to_have_had_no_response(runs):
    assert diff_runs(runs["stream"], runs["stream_cut"]).first_divergence == (
        "run B's HTTP call at turn 1 got HTTP 200 but no whole response (stream_interrupted) where A's got HTTP 200")


def test_a_long_run_with_an_extra_turn_first_and_another_end_still_lines_up():
    """Past difflib's bound (here 700 × 701 turns) the turns are still matched, not paired by position: one
    extra turn at the start and a different last turn leave every other turn beside its counterpart."""
    from tracetui.replay.run_diff import MATCHED_AT_MOST, align

    a = [("read_order", i % 3) for i in range(700)]
    b = [("retry",), *a[:-1], ("answer",)]
    assert len(a) * len(b) > MATCHED_AT_MOST
    pairs = align(a, b, key=lambda x: x)
    assert pairs[0] == (None, ("retry",))
    assert [x == y for x, y in pairs[1:-1]] == [True] * 699
    assert pairs[-1] == (a[-1], ("answer",))
