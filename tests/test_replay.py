"""Edit one field and re-run: reproduction, counterfactuals, and refused edits."""
from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from tracetui.cli import main
from tracetui.replay.edit import current_value, edited_inputs, event_path, parse_value
from tracetui.replay.pointer import EditError
from tracetui.replay.replay import replay
from tracetui.trace.reader import read_trace
from tracetui.trace.writer import encode_record

from tracetui.otel.detect import is_otlp

# the tracetui traces among the samples (an OTLP/JSON sample holds no inputs to replay)
SAMPLES = sorted(p.name for p in (__import__("pathlib").Path(__file__).parent.parent / "sample_traces").glob("*.jsonl")
                 if not is_otlp(p))


@pytest.mark.parametrize("name", SAMPLES)
def test_replay_without_edits_reproduces_every_sample_run_byte_for_byte(root, name):
    path = root / "sample_traces" / name
    lines = path.read_bytes().splitlines(keepends=True)
    trace = read_trace(path)
    assert trace.runs
    for run_id, run in trace.runs.items():
        original = b"".join(l for l in lines if l.startswith(b'{"rec":') and f'"run_id":{json.dumps(run_id)}'.encode() in l[:200])
        outcome = replay(run)
        assert b"".join(encode_record(r) for r in outcome.records) == original, run_id
        assert outcome.changes == []


@pytest.fixture(scope="module")
def scenarios(root=None):
    from pathlib import Path
    return read_trace(Path(__file__).parent.parent / "sample_traces" / "scenarios.jsonl")


def test_fix_the_arguments_makes_the_run_answer_ready(scenarios):
    run = scenarios.runs["cross_tenant"]
    # the question too: an answer about o-1 does not answer a question about o-2 (answer_off_topic)
    outcome = replay(run, [("/responses/0/body/output/0/arguments", '{"order_id": "o-1"}'),
                           ("/inputs/user_input", "What is the status of order o-1?")])
    assert (outcome.before["status"], outcome.after["status"]) == ("permission_denied", "answer_ready")
    assert [c.seq for c in outcome.changes] == [1, 2, 3, 4, 5, 6, 7, 8]  # 1-3 carry the edited arguments
    assert [c.seq for c in outcome.changes if c.verdict_changed] == [4, 5, 6, 7, 8]
    assert outcome.replayed.inputs["response_overrides"]["0"]["body"]["output"][0]["arguments"] == '{"order_id": "o-1"}'
    # the edited run is itself a replayable run
    again = replay(outcome.replayed)
    assert again.changes == [] and again.after["status"] == "answer_ready"


def test_an_edit_can_move_the_failure_to_another_lane(scenarios):
    outcome = replay(scenarios.runs["cross_tenant"], [("/inputs/principal/tenant", "shop-b")])
    # now the caller is shop-b but the user u-1 does not own o-2 either: still authorization
    assert outcome.after["first_failure"]["lane"] == "authorization"
    moved = replay(scenarios.runs["single"], [("/inputs/tools/0/parameters/properties/order_id/pattern", "^x-")])
    assert moved.before["ready"] and moved.after["first_failure"]["lane"] == "arguments"


def test_inputs_edits_for_each_kind_of_field(scenarios):
    assert replay(scenarios.runs["truncated"], [("/inputs/budgets/max_output_tokens", 500)]).after["ready"]
    assert replay(scenarios.runs["write_unguarded"], [("/inputs/idempotency_guard", True)]).after["ready"]
    assert replay(scenarios.runs["call_budget"], [("/inputs/budgets/max_calls", 3)]).after["status"] == "permission_denied"
    assert replay(scenarios.runs["tool_failure"], [("/inputs/tool_data/failures", {})]).after["ready"]
    assert replay(scenarios.runs["single"], [("/inputs/ablation", "mismatch_call_id")]).after["status"] == "request_rejected"
    assert replay(scenarios.runs["single"], [("/inputs/faults", ["429", "429", "429"])]).after["status"] == "rate_limited"


def test_editing_a_status_code_of_a_recorded_exchange(root):
    run = read_trace(root / "sample_traces" / "recorded-rate_limited_then_ok.jsonl").runs["recorded-rate_limited_then_ok"]
    outcome = replay(run, [("/responses/0/status", 401)])
    assert outcome.after["status"] == "auth_error" and outcome.after["first_failure"]["lane"] == "http"


def test_write_tools_replay_against_fresh_state(scenarios):
    run = scenarios.runs["refund"]
    a, b = replay(run), replay(run)
    receipts = [e["data"]["result"]["refund_id"] for e in (a.replayed.events + b.replayed.events) if e["lane"] == "receipt"]
    assert receipts == ["r-1", "r-1"]  # each replay starts from the recorded tool data


@pytest.mark.parametrize("path,text,message", [
    ("/inputs/budgets/max_calls", "abc", "not valid JSON"),
    ("/inputs/budgets/max_calls", '"3"', "expected a whole number, got a string"),
    ("/inputs/idempotency_guard", "1", "expected true or false"),
    ("/inputs/nope/deeper", "1", "no field 'nope'"),
    ("/responses/9/status", "200", "no item '9' \\(the list has 2\\)"),
    ("/inputs/tools/7/name", '"x"', "no item '7'"),
    ("inputs/user_input", "x", "a path starts with '/'"),
])
def test_invalid_edits_are_refused_with_a_clear_message(scenarios, path, text, message):
    run = scenarios.runs["single"]
    with pytest.raises(EditError, match=message):
        current, exists = current_value(run, path)
        edited_inputs(run, path, parse_value(current, text, exists=exists))


def test_string_fields_take_text_as_typed():
    assert parse_value("abc", '{"order_id": "o-1"}') == '{"order_id": "o-1"}'
    assert parse_value("abc", '"quoted"') == "quoted"
    assert parse_value(1.5, "2") == 2 and parse_value(None, "[1]") == [1]
    assert parse_value(None, '{"a": 1}', exists=False) == {"a": 1}


def test_event_paths_point_at_what_decided_the_event(scenarios):
    run = scenarios.runs["cross_tenant"]
    by_lane = {e["lane"]: e for e in run.events}
    assert event_path(by_lane["arguments"], run) == "/responses/0/body/output/0/arguments"
    assert event_path(by_lane["http"], run) == "/responses/0/status"
    assert event_path(by_lane["authorization"], run) == "/inputs/principal/tenant"


ODD_VALUES = [None, True, -1, 1.5, "", "x", "[/]", [], {}, [1, "a"], {"a": None}]


@pytest.mark.parametrize("field", ["turn", "seq", "data", "call_id", "exchange", "response", "body", "output"])
@pytest.mark.parametrize("odd", ODD_VALUES)
def test_an_event_path_from_a_hostile_trace_is_a_path_or_none_never_a_crash(scenarios, field, odd):
    """The explorer's `e` asks for the selected event's path: any JSON where a field is expected must not crash it."""
    import copy

    from tracetui.trace.reader import RunData

    run = scenarios.runs["cross_tenant"]
    events = copy.deepcopy(run.events)
    for event in events:
        data = event.get("data")
        if field in ("turn", "seq", "data", "call_id"):
            event[field] = odd
        elif field == "exchange" and isinstance(data, dict) and "exchange" in data:
            data["exchange"] = odd
        elif field == "response" and isinstance(data, dict) and "response" in data:
            data["response"] = odd
        elif field in ("body", "output") and isinstance(data, dict) and isinstance(data.get("response"), dict):
            body = data["response"].get("body")
            if field == "body":
                data["response"]["body"] = odd
            elif isinstance(body, dict):
                body["output"] = odd
    hostile = RunData(run.run_id, run=run.run, events=events, summary=run.summary)
    for event in events:
        path = event_path(event, hostile)
        assert path is None or path.startswith(("/inputs/", "/responses/"))


def test_the_original_file_is_never_modified(root, tmp_path):
    src = root / "sample_traces" / "scenarios.jsonl"
    before = src.read_bytes()
    out = tmp_path / "edited.jsonl"
    r = CliRunner().invoke(main, ["replay", str(src), "--run", "cross_tenant", "--set",
                                  '/responses/0/body/output/0/arguments={"order_id": "o-1"}',
                                  "--set", "/inputs/user_input=What is the status of order o-1?", "-o", str(out)])
    assert r.exit_code == 0, r.output
    assert "after   ✓ cross_tenant  answer_ready" in r.output
    assert "5 event(s) differ (*), and 3 more read the same but carry other data:" in r.output
    assert src.read_bytes() == before
    assert read_trace(out).runs["cross_tenant"].verdict()["ready"]


def test_a_replay_of_a_newer_trace_warns_and_says_what_differs(root, tmp_path):
    """A trace written by another version (here a newer trace_version) re-runs to the same events: the
    output said '0 event(s) differ:' and nothing more."""
    src = tmp_path / "other.jsonl"
    src.write_bytes((root / "sample_traces" / "fault-429.jsonl").read_bytes().replace(
        b'"trace_version":1', b'"trace_version":999', 1))
    r = CliRunner().invoke(main, ["replay", str(src), "--run", "single-fault-429"])
    assert "0 event(s) differ" not in r.output
    assert "warning: trace_version 999 is newer than 1" in r.output  # as check says it
    assert "no event differs; only the run line (its inputs, trace version or producer) differs" in r.output


def test_cli_replay_json_and_errors(root):
    src = str(root / "sample_traces" / "scenarios.jsonl")
    r = CliRunner().invoke(main, ["replay", src, "--run", "single", "--json"])
    data = json.loads(r.output)
    assert r.exit_code == 0 and data["identical"] is True and data["changes"] == []
    r = CliRunner().invoke(main, ["replay", src, "--run", "truncated", "--json",
                                  "--set", "/inputs/budgets/max_output_tokens=500"])
    assert r.exit_code == 0 and json.loads(r.output)["after"]["status"] == "answer_ready"
    r = CliRunner().invoke(main, ["replay", src, "--run", "nope"])
    assert r.exit_code == 2 and "no run 'nope'" in r.output
    r = CliRunner().invoke(main, ["replay", src, "--run", "single", "--set", "/inputs/budgets/max_calls=x"])
    assert r.exit_code == 2 and "not valid JSON" in r.output
    r = CliRunner().invoke(main, ["replay", src, "--run", "single", "--set", "no-equals"])
    assert r.exit_code == 2 and "PATH=VALUE" in r.output
    r = CliRunner().invoke(main, ["replay", src + ".missing", "--run", "single"])
    assert r.exit_code == 2 and "no such file" in r.output
    r = CliRunner().invoke(main, ["replay", src, "--run", "cross_tenant"])
    assert r.exit_code == 1


def test_editable_paths_cover_inputs_and_responses(scenarios):
    from tracetui.replay.edit import editable_paths

    paths = editable_paths(scenarios.runs["cross_tenant"])
    for path in ("/inputs/principal/tenant", "/inputs/budgets/max_calls", "/inputs/tool_data/orders/o-2/tenant",
                 "/inputs/tools/0/parameters/properties/order_id/pattern", "/responses/0/status",
                 "/responses/0/body/output/0/arguments"):
        assert path in paths
    assert all(current_value(scenarios.runs["cross_tenant"], p)[1] for p in paths)


REFUND_AGAIN = ('[{"type":"function_call","id":"fc_9","call_id":"call-9","name":"refund_order",'
                '"arguments":"{\\"order_id\\":\\"o-1\\",\\"amount\\":%s,\\"reason\\":\\"damaged, as said\\"}",'
                '"status":"completed"}]')


def test_a_committed_write_asked_for_again_returns_its_receipt_before_any_business_rule(scenarios):
    import orjson
    outcome = replay(scenarios.runs["refund"], [
        ("/inputs/user_input", "Refund 30.00 on order o-1: it arrived damaged."),
        ("/responses/1/body/output", orjson.loads(REFUND_AGAIN % "30.0"))])
    receipts = [e for e in outcome.replayed.events if e["lane"] == "receipt"]
    assert [e["data"].get("replayed", False) for e in receipts] == [False, True]
    assert not any(e["code"] == "business_rule_violation" for e in outcome.replayed.events)


def test_a_duplicate_write_is_flagged_outside_the_timeout_path_too(scenarios):
    import orjson
    outcome = replay(scenarios.runs["refund"], [
        ("/inputs/idempotency_guard", False),
        ("/responses/1/body/output", orjson.loads(REFUND_AGAIN % "20.0"))])
    assert outcome.after["status"] == "duplicate_execution"
    last = outcome.replayed.events[-1]
    assert [x["refund_id"] for x in last["data"]["executions"]] == ["r-1", "r-2"]


@pytest.mark.parametrize("guard", [True, False])
def test_a_write_that_times_out_twice_is_handed_over_not_crashed(scenarios, guard):
    outcome = replay(scenarios.runs["refund"], [("/inputs/tool_data/failures", {"refund_order:o-1": "timeout"}),
                                                ("/inputs/idempotency_guard", guard)])
    assert outcome.after["status"] == "write_outcome_unknown"
    assert "failed again (timeout) when retried" in outcome.replayed.events[-1]["summary"]


def test_call_ids_added_by_an_edit_are_not_reissued_by_the_fake_model(scenarios):
    import orjson
    output = orjson.loads('[{"type":"function_call","id":"fc_1","call_id":"call-1","name":"read_order",'
                          '"arguments":"{\\"orderId\\":\\"o-1\\"}","status":"completed"},'
                          '{"type":"function_call","id":"fc_2","call_id":"call-2","name":"read_order",'
                          '"arguments":"{\\"order_id\\":\\"o-3\\"}","status":"completed"}]')
    outcome = replay(scenarios.runs["invalid_args"], [("/responses/0/body/output", output)])
    assert outcome.after["status"] != "duplicate_call_id"
    repaired = [e for e in outcome.replayed.events if e["lane"] == "arguments" and e["turn"] == 2]
    assert [e["call_id"] for e in repaired] == ["call-3"]


@pytest.mark.parametrize("path,text,message", [
    ("/inputs/budgets/max_retries", "-1", "budgets.max_retries must be a whole number"),
    ("/inputs/ablation", "bogus", 'unknown ablation "bogus"'),
    ("/inputs/provider", "bogus", 'unknown provider "bogus"'),
    ("/inputs/faults", '["bogus"]', "faults must be a list of"),
    ("/inputs/tools/0/parameters", '{"$ref": "#/x"}', "cannot re-run with this edit"),
    ("/inputs/tool_data/orders", '{"o-1": 5}', "tool_data.orders must map"),
    ("/inputs/tools", "[{}]", "tools must be a list of objects"),
    ("/inputs/budgets", "{}", "budgets.max_turns"),
])
def test_edits_the_loop_cannot_run_are_refused_not_crashed(scenarios, path, text, message):
    run = scenarios.runs["single"]
    current, exists = current_value(run, path)
    with pytest.raises(EditError, match=message):
        replay(run, [(path, parse_value(current, text, exists=exists))])


def test_a_repeated_run_id_replays_byte_for_byte(tmp_path, root):
    from tracetui.trace.writer import encode_record
    S = root / "sample_traces"
    a = read_trace(S / "recorded-cross_tenant.jsonl").runs["recorded-cross_tenant"]
    b = read_trace(S / "recorded-normal.jsonl").runs["recorded-normal"]
    lines = [encode_record(r) for r in (a.run, *a.events, a.summary)]
    lines += [encode_record({**r, "run_id": "recorded-cross_tenant"}) for r in (b.run, *b.events, b.summary)]
    path = tmp_path / "appended.jsonl"
    path.write_bytes(b"".join(lines))
    runs = read_trace(path).runs
    assert list(runs) == ["recorded-cross_tenant", "recorded-cross_tenant#2"]
    second = runs["recorded-cross_tenant#2"]
    outcome = replay(second)
    assert outcome.changes == [] and outcome.after["ready"]
    second_lines = lines[2 + len(a.events):]  # after the first run's run line, events and summary
    assert b"".join(encode_record(r) for r in outcome.records) == b"".join(second_lines)


@pytest.mark.parametrize("path,message", [
    ("/inputs/budgets/max_output_token", "no field 'max_output_token' here (did you mean 'max_output_tokens'?)"),
    ("/inputs/principal/tenantt", "did you mean 'tenant'?"),
    ("/inputs/budget/max_turns", "no field 'budget' here (did you mean 'budgets'?)"),
    ("/inputs/sed", "only a field that exists can be edited here"),
])
def test_a_typo_in_a_path_is_refused_with_the_nearest_field(scenarios, path, message):
    with pytest.raises(EditError, match=message.replace("(", "\\(").replace(")", "\\)").replace("?", "\\?")):
        current_value(scenarios.runs["truncated"], path)


@pytest.mark.parametrize("path", ["/inputs/tool_data/orders/o-9", "/inputs/tool_data/failures/read_order:o-1",
                                  "/inputs/tools/0/parameters/minProperties", "/responses/0/headers/x-new",
                                  "/responses/0/body/x_vendor_field"])
def test_a_new_key_is_accepted_where_keys_are_data(scenarios, path):
    assert current_value(scenarios.runs["truncated"], path) == (None, False)


def test_the_next_exchange_can_be_supplied_whole_and_only_whole(scenarios, root):
    run = read_trace(root / "sample_traces" / "recorded-no_receipt.jsonl").runs["recorded-no_receipt"]
    assert current_value(run, "/responses/1") == (None, False)
    with pytest.raises(EditError, match="no item '2'"):
        current_value(run, "/responses/2")
    with pytest.raises(EditError, match="supplies a whole next exchange"):
        edited_inputs(run, "/responses/1/status", 200)
    call = orjson_loads('[{"type":"function_call","call_id":"c1","name":"read_order","arguments":"{\\"order_id\\":\\"o-1\\"}"}]')
    answer = {"status": 200, "headers": {}, "body": run.inputs["responses"][0]}
    outcome = replay(run, [("/responses/0/body/output", call), ("/responses/1", answer)])
    assert outcome.after["ready"]


def orjson_loads(text):
    import orjson
    return orjson.loads(text)
