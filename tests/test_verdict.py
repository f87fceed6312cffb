"""One verdict per run, from one rule, on every surface (issue 9).

The rule lives in :mod:`tracetui.trace.verdict`; the loop writes it, the reader and
the index read it back, the CLI and the explorer word it. These tests hold the
surfaces to each other and the rule to the seed's contract: an unresolved failure,
not its consequence (an unbacked answer, the end of a recording), decides a run.
"""
from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tracetui.cli import main
from tracetui.loop.inputs import responses_inputs
from tracetui.loop.runner import run_inputs, run_scenario
from tracetui.trace.index import IndexedSource
from tracetui.trace.reader import read_trace
from tracetui.trace.source import file_source
from tracetui.trace.verdict import FAILED, INCOMPLETE, OUTCOMES, READY, decide, first_failure
from tracetui.ui.model import RunQuery, headline, run_icon

ROOT = Path(__file__).resolve().parent.parent
RESPONSES = ROOT / "sample_traces" / "responses"


def run_recorded(name: str) -> dict:
    result = CliRunner().invoke(main, ["run", "--responses", str(RESPONSES / f"{name}.json")])
    assert result.exit_code == 1, result.output
    *_, summary = [orjson.loads(line) for line in result.stdout_bytes.splitlines()]
    return summary


# -- 1. the end of a recording is not blamed on HTTP --------------------------------------------------
@pytest.mark.parametrize("name, code, what", [
    ("invalid_json_arguments", "invalid_json", "arguments are not valid JSON"),
    ("extra_field", "schema_error", "'include_notes' was unexpected"),
])
def test_a_recording_that_ends_during_a_repair_fails_at_the_arguments(name, code, what):
    summary = run_recorded(name)
    ff = summary["first_failure"]
    assert (summary["status"], ff["lane"], ff["code"]) == (code, "arguments", code)
    assert what in ff["reason"] and ff["reason"].endswith("the recording ended before it was resolved")
    assert summary["ended_by"] == "recording"


def test_a_recording_that_ends_during_a_retry_fails_at_the_retried_status():
    limited = {"status": 429, "headers": {"retry-after": "1"}, "body": {"error": {"message": "slow down"}}}
    result = run_inputs("r", responses_inputs([limited]))
    ff = result.summary["first_failure"]
    assert (result.status, ff["lane"], ff["seq"]) == ("rate_limited", "http", 1)
    assert "HTTP 429" in ff["reason"] and ff["reason"].endswith("the recording ended before it was resolved")
    assert result.events[-1]["code"] == "cassette_exhausted" and result.summary["ended_by"] == "recording"


def test_a_recording_that_simply_runs_out_still_says_so_at_http():
    call = {"status": "completed", "output": [{"type": "function_call", "call_id": "c", "name": "read_order",
                                                "arguments": '{"order_id": "o-1"}'}]}
    result = run_inputs("r", responses_inputs([call]))
    ff = result.summary["first_failure"]
    assert (result.status, ff["lane"]) == ("cassette_exhausted", "http")
    assert "no response left in the recording (1 played)" in ff["reason"]


def test_an_extra_field_then_an_answer_fails_at_the_arguments_never_repaired():
    summary = run_recorded("extra_field_then_answer")
    ff = summary["first_failure"]
    assert (summary["status"], ff["lane"]) == ("schema_error", "arguments")
    assert ff["reason"].endswith("never repaired: the model answered instead")
    assert "ended_by" not in summary


def test_a_repair_that_succeeded_is_recovered_and_never_decides():
    assert run_scenario("invalid_args").status == "answer_ready"
    assert run_scenario("invalid_json").status == "answer_ready"


# -- 2. the denial reason names the failing check ----------------------------------------------------
@pytest.mark.parametrize("principal, check, words", [
    ({"tenant": "shop-a", "user": "u-1"}, "tenant and user", "tenant and user differ"),
    ({"tenant": "shop-b", "user": "u-1"}, "user", "caller is user u-1: user differs"),
    ({"tenant": "shop-a", "user": "u-2"}, "tenant", "caller is tenant shop-a (same user u-2): tenant differs"),
])
def test_a_denial_says_which_part_of_the_check_failed(principal, check, words):
    inputs = responses_inputs([{"status": "completed", "output": [
        {"type": "function_call", "call_id": "c", "name": "read_order", "arguments": '{"order_id": "o-2"}'}]}])
    inputs["principal"] = principal
    result = run_inputs("r", inputs)
    denied = result.events[-1]
    assert denied["code"] == "permission_denied" and denied["data"]["failed_check"] == check
    assert words in result.summary["first_failure"]["reason"]
    assert "paid" not in orjson.dumps(denied).decode()  # still no protected field


def test_replay_of_cross_tenant_with_the_owners_tenant_names_the_user(tmp_path):
    path = tmp_path / "c.jsonl"
    CliRunner().invoke(main, ["run", "--responses", str(RESPONSES / "cross_tenant.json"), "-o", str(path)])
    result = CliRunner().invoke(main, ["replay", str(path), "--run", "cross_tenant",
                                       "--set", "/inputs/principal/tenant=shop-b"])
    after = result.stdout.splitlines()[1]
    assert "caller is user u-1: user differs" in after and "caller is shop-b" not in after


# -- 3. one run, one verdict ---------------------------------------------------------------------------
def ghost_trace(tmp_path: Path) -> str:
    path = tmp_path / "ghost.jsonl"
    lines = [orjson.dumps(r) for r in run_scenario("single").records]
    lines.append(b'{"rec":"summary","run_id":"ghost","status":"weird"}')
    path.write_bytes(b"\n".join(lines) + b"\n")
    return str(path)


def test_a_summary_without_events_gets_one_verdict_everywhere(tmp_path):
    path = ghost_trace(tmp_path)
    indexed = {e.run_id: e for e in IndexedSource([path]).scan_all().runs()}
    read = {e.run_id: e for e in file_source(path).runs()}
    for entry in (indexed["ghost"], read["ghost"]):
        assert (entry.status, entry.outcome, entry.first_failure) == ("weird", FAILED, None)
        assert run_icon(entry) == "✗"
        line, reason = headline(entry)
        assert line.startswith("✗ weird") and "every boundary passed" not in line
        assert "no failing boundary" in reason
    text = CliRunner().invoke(main, ["check", path])
    assert "✗ ghost  weird  (no event shows where it failed)" in text.stdout
    assert "2 run(s): 1 ready, 1 failed, 0 incomplete" in text.stderr
    as_json = orjson.loads(CliRunner().invoke(main, ["check", "--json", path]).stdout)
    ghost = next(v for v in as_json["runs"] if v["run_id"] == "ghost")
    assert (ghost["status"], ghost["outcome"], ghost["ready"]) == ("weird", FAILED, False)


def test_a_self_contradicting_summary_is_failed_on_every_surface(tmp_path):
    records = run_scenario("cross_tenant").records
    records[-1] = {**records[-1], "status": "answer_ready", "ready": True}
    path = tmp_path / "t.jsonl"
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in records))
    (indexed,) = IndexedSource([str(path)]).scan_all().runs()
    (read,) = file_source(str(path)).runs()
    assert indexed.outcome == read.outcome == FAILED
    assert indexed.status == read.status == "permission_denied"


# every way a summary can be odd: missing, a status of any kind, a failure well formed, malformed or absent
STATUSES = st.sampled_from(["answer_ready", "weird", "permission_denied", "", None, 7])
FAILURES = st.sampled_from([None, "keep", {"lane": "http"}, {"lane": "answer", "seq": 9, "code": "x", "reason": "y"}])


@st.composite
def odd_runs(draw):
    scenario = draw(st.sampled_from(["single", "cross_tenant", "tool_failure", "invalid_args", "stream_cut"]))
    records = run_scenario(scenario, run_id=f"{scenario}-{draw(st.integers(0, 10**6))}").records
    keep_events = draw(st.integers(0, len(records) - 2))
    run, events, summary = records[0], records[1:1 + keep_events], records[-1]
    if draw(st.booleans()):
        return [run, *events]  # no summary line
    summary = dict(summary)
    status = draw(STATUSES)
    if status is not None or draw(st.booleans()):
        summary["status"] = status
    failure = draw(FAILURES)
    if failure != "keep":
        summary["first_failure"] = failure
    return [run, *events, summary]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(runs=st.lists(odd_runs(), min_size=1, max_size=6, unique_by=lambda r: r[0]["run_id"]))
def test_every_surface_agrees_on_every_run(tmp_path, runs):
    path = tmp_path / "odd.jsonl"
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for run in runs for r in run))
    trace = read_trace(str(path))
    source = IndexedSource([str(path)]).scan_all()
    indexed = {e.run_id: e for e in source.runs()}
    read = {e.run_id: e for e in file_source(str(path)).runs()}
    for name, data in trace.runs.items():
        verdict = data.decide()
        for entry in (indexed[name], read[name]):
            assert (entry.status, entry.outcome, entry.complete) == (verdict.status, verdict.outcome, verdict.complete)
            assert (dict(entry.first_failure) if entry.first_failure else None) == verdict.first_failure
    result = CliRunner().invoke(main, ["check", str(path)])
    counts = {o: sum(1 for d in trace.runs.values() if d.decide().outcome == o) for o in OUTCOMES}
    assert f"{len(trace.runs)} run(s): {counts[READY]} ready, {counts[FAILED]} failed, " \
           f"{counts[INCOMPLETE]} incomplete" in result.stderr
    for outcome in OUTCOMES:  # the explorer's status filter counts what check counts
        assert len(RunQuery(status=outcome).apply(source.runs())) == counts[outcome]


def test_decide_takes_a_well_formed_summary_at_its_word_and_derives_the_rest():
    events = run_scenario("cross_tenant").events
    derived = first_failure(events)
    assert decide(None, events).first_failure == derived and not decide(None, events).complete
    assert decide({"status": "answer_ready", "first_failure": None}, events).outcome == READY
    assert decide({"status": "odd", "first_failure": None}, events).first_failure == derived
    assert decide({"status": "odd", "first_failure": None}, []).outcome == FAILED
    assert decide(None, []).outcome == INCOMPLETE


# -- 4. edits the loop cannot represent are refused -----------------------------------------------------
@pytest.fixture(scope="module")
def scenarios_file(tmp_path_factory) -> str:
    path = tmp_path_factory.mktemp("v") / "all.jsonl"
    assert CliRunner().invoke(main, ["generate", "--all", "-o", str(path)]).exit_code == 0
    return str(path)


def replay(path: str, run: str, *sets: str):
    args = ["replay", path, "--run", run]
    for s in sets:
        args += ["--set", s]
    return CliRunner().invoke(main, args)


def test_null_clears_an_exchange_error_and_the_verdict_follows(scenarios_file):
    result = replay(scenarios_file, "stream_cut", "/responses/0/error=null")
    after = result.stdout.splitlines()[1]
    assert result.exit_code == 1 and "protocol_error" in after and "stream ended without a completion event" in after
    assert "null" not in after.split("protocol_error")[0]


@pytest.mark.parametrize("edit, words", [
    ("/responses/0/error=bogus", "/responses/0: error 'bogus' is not one of timeout, connection"),
    ("/responses/0/status=700", "/responses/0: status 700 is not an HTTP status code"),
    ('/responses/0/status="200"', "expected a whole number, got a string"),
    ("/responses/0/status=null", "an attempt without a status needs an error"),
    ("/responses/0/headers=[]", "expected a JSON object, got a JSON list"),
    ("/inputs/user_input=null", "user_input must be a string (got null)"),
    ("/inputs/budgets/max_retries=1000000000", "budgets.max_retries must be a whole number from 0 to 10"),
    ("/inputs/transient_failures=100000", "transient_failures must be a whole number from 0 to 50"),
    ("/inputs/budgets/max_turns=1.5", "expected a whole number, got a number"),
])
def test_an_edit_the_loop_cannot_represent_is_refused_with_the_field(scenarios_file, edit, words):
    result = replay(scenarios_file, "single" if "status=null" in edit else "stream_cut", edit)
    assert result.exit_code == 2 and words in result.stderr, result.stderr
    assert "Traceback" not in result.output


@pytest.mark.parametrize("path", ["/responses/²/status", "/responses/٣/status", "/responses/" + "9" * 5000 + "/status",
                                  "/inputs/tools/¹/name"])
def test_a_path_index_is_ascii_digits_only(scenarios_file, path):
    result = replay(scenarios_file, "single", f"{path}=1")
    assert result.exit_code == 2 and "no item" in result.stderr and "Traceback" not in result.output
    assert len(result.stderr) < 300


def test_a_value_nested_too_deep_is_refused(scenarios_file):
    result = replay(scenarios_file, "single", "/inputs/task=" + "[" * 300 + "]" * 300)
    assert result.exit_code == 2 and "deeper than 200 levels" in result.stderr


def test_a_trace_with_unbounded_inputs_is_refused_not_run(tmp_path):
    records = run_scenario("single").records
    records[0] = {**records[0], "inputs": {**records[0]["inputs"], "transient_failures": 10**9,
                                           "budgets": {**records[0]["inputs"]["budgets"], "max_retries": 10**9}}}
    path = tmp_path / "big.jsonl"
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in records))
    result = CliRunner().invoke(main, ["replay", str(path), "--run", "single"])
    assert result.exit_code == 2 and "budgets.max_retries must be a whole number from 0 to 10" in result.stderr


def test_any_json_code_and_any_event_order_give_one_verdict(tmp_path):
    """A code that is a list, and a run's events out of step order, in every reader alike."""
    records = run_scenario("tool_failure").records
    run, events, summary = records[0], records[1:-1], records[-1]
    events = [dict(e) for e in events]
    for e in events:
        if e["outcome"] == "failed":
            e["code"] = ["not", "a", "string"]
    path = tmp_path / "odd.jsonl"
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in [run, *reversed(events)]))
    trace = read_trace(str(path))
    (entry,) = IndexedSource([str(path)]).scan_all().runs()
    verdict = trace.runs[run["run_id"]].decide()
    assert verdict.outcome == entry.outcome == FAILED
    assert verdict.first_failure == dict(entry.first_failure) and verdict.first_failure["lane"] == "receipt"
    result = CliRunner().invoke(main, ["check", str(path)])
    assert result.exit_code == 1 and "Traceback" not in result.output


@pytest.mark.parametrize("edit, words", [
    ("=", "--set takes PATH=VALUE"),
    ("=1", "--set takes PATH=VALUE"),
    ("/inputs/ablation=null", "unknown ablation null; choose from complete"),
])
def test_odd_set_arguments_are_refused_in_words(scenarios_file, edit, words):
    result = replay(scenarios_file, "single", edit)
    assert result.exit_code == 2 and words in result.stderr, result.stderr
