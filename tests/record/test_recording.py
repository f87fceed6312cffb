"""A recorded agent run as trace records: run line, events, summary; written redacted, appended in one write."""
from __future__ import annotations

import copy
import hashlib
import json
import os

import orjson
import pytest

from tracetui.explain.evidence import Evidence
from tracetui.record.exchange import AgentExit, WireExchange
from tracetui.record.recording import records_to_bytes, run_records, write_run
from tracetui.trace.reader import read_trace
from tracetui.trace.verdict import first_failure

from wire_run import CTRL_C, EXITED_0, EXITED_1, call_reply, run_agent, status_reply, text_reply

READ_O1 = call_reply(("read_order", {"order_id": "o-1"}, "call_1"))
ANSWER = text_reply('{"order_id":"o-1","status":"delivered"}')
UPSTREAM = {"openai": "https://api.openai.com", "anthropic": "https://api.anthropic.com",
            "gemini": "https://generativelanguage.googleapis.com"}
SECRET = "sk-proj-abcdefghijklmnopqrstuvwxyz0123456789ABCD"


def clean(provider="openai-chat"):
    return run_agent(provider, [READ_O1, ANSWER])[0]


def test_the_run_line_holds_nothing_to_run_or_edit():
    records = run_records("record-agent.py", clean("anthropic"), EXITED_0, ["python", "agent.py"], UPSTREAM)
    assert records[0] == {"rec": "run", "run_id": "record-agent.py", "trace_version": 1, "producer": "tracetui 0.1.0",
                          "inputs": {"source": "record", "provider": "anthropic", "upstream": UPSTREAM,
                                     "command_hint": ["python", "agent.py"]}}
    assert [r["rec"] for r in records] == ["run"] + ["event"] * 8 + ["summary"]
    assert all(r["run_id"] == "record-agent.py" for r in records)


def test_the_summary_counts_and_the_verdict_comes_from_the_one_rule():
    exchanges = run_agent("openai-chat", [status_reply(429, **{"retry-after-ms": "1"}), READ_O1, ANSWER])[0]
    records = run_records("r", exchanges, EXITED_0, [], {})
    summary = records[-1]
    assert summary == {"rec": "summary", "run_id": "r", "status": "answer_ready", "ready": True,
                       "metrics": {"iterations": 2, "model_calls": 2, "http_attempts": 3, "tool_calls": 1,
                                   "input_units": 0, "events": 9, "recovered": 1},
                       "first_failure": None}
    failing = run_records("r", exchanges, EXITED_1, [], {})
    assert failing[-1]["status"] == "answer_rejected" and not failing[-1]["ready"]
    assert failing[-1]["first_failure"] == first_failure(failing[1:-1])


def test_no_exchanges_has_no_provider_and_says_so():
    records = run_records("r", [], EXITED_0, ["./agent"], {})
    assert records[0]["inputs"]["provider"] is None
    assert records[-1]["status"] == "no_exchanges"
    assert records[-1]["metrics"]["iterations"] == 0


def test_ctrl_c_ends_by_interrupt():
    records = run_records("r", clean()[:1], CTRL_C, [], {})
    assert records[-1]["ended_by"] == "interrupt" and records[-1]["status"] == "interrupted"


def test_the_same_exchanges_give_byte_identical_records():
    one = records_to_bytes(run_records("r", clean(), EXITED_0, ["a"], UPSTREAM))
    two = records_to_bytes(run_records("r", clean(), EXITED_0, ["a"], UPSTREAM))
    assert one == two


def test_secrets_in_what_the_agent_sent_never_reach_the_trace(tmp_path):
    exchanges = run_agent("openai-chat", [READ_O1, ANSWER],
                          tools={"read_order": lambda a: (json.dumps({"status": "ok", "api_key": SECRET}), False)})[0]
    records = run_records("r", exchanges, EXITED_0, ["python", "agent.py", f"--key={SECRET}"], {})
    assert SECRET in json.dumps(records)  # what the agent sent holds it: the writer must take it out
    data = records_to_bytes(records)
    assert SECRET.encode() not in data and b"<redacted>" in data
    assert all(json.loads(line) for line in data.splitlines())
    for path in (tmp_path / "new.jsonl", tmp_path / "new.jsonl"):  # a new file, then an append
        write_run(path, records)
        assert SECRET.encode() not in path.read_bytes()


@pytest.mark.parametrize("pad", range(20, 80, 7))
def test_a_secret_cut_short_for_a_summary_is_redacted_before_the_cut(pad):
    """Summaries show a result's first words; a key they cut in half has no key's shape left for the writer."""
    said = "Permission denied: " + "x" * pad + " for key " + SECRET
    exchanges = run_agent("anthropic", [READ_O1, ANSWER], tools={"read_order": lambda a: (said, True)})[0]
    data = records_to_bytes(run_records("r", exchanges, EXITED_1, [], {}))
    assert SECRET[:9].encode() not in data  # "sk-proj-a": a key's shape and the first of its secret characters


def test_an_upstream_error_message_cut_short_is_redacted_before_the_cut():
    message = "Incorrect API key provided: " + "y" * 120 + " " + SECRET
    failing = run_agent("openai-chat", [status_reply(401)], max_retries=0)[0]
    failing[0].response["body"] = {"error": {"message": message, "type": "invalid_request_error"}}
    data = records_to_bytes(run_records("r", failing, EXITED_1, [], {}))
    assert SECRET[:9].encode() not in data


def test_an_argument_that_is_no_utf8_does_not_lose_the_run(tmp_path):
    name = os.fsdecode(b"orders-caf\xe9.csv")  # a Latin-1 file name, as Python hands it over
    records = run_records(f"record-{name}", clean(), EXITED_0, ["python", "agent.py", name], {})
    path = tmp_path / "runs.jsonl"
    write_run(path, records)
    trace = read_trace(path)
    (run,) = trace.runs.values()
    assert run.run_id == "record-orders-caf\ufffd.csv"
    assert records[0]["inputs"]["command_hint"] == ["python", "agent.py", "orders-caf\ufffd.csv"]


def test_a_command_that_did_not_start_for_a_name_that_is_no_utf8_is_written():
    name = os.fsdecode(b"./caf\xe9")
    records = run_records("r", [], AgentExit(None, None, False, False, f"{name}: no such file"), [name], {})
    assert b"caf\xef\xbf\xbd: no such file" in records_to_bytes(records)


def test_an_empty_run_id_still_gives_a_run_the_format_accepts(tmp_path):
    path = tmp_path / "runs.jsonl"
    write_run(path, run_records("", clean(), EXITED_0, [], {}))
    trace = read_trace(path)
    assert list(trace.runs) == ["record-agent"] and not trace.problems


def test_write_run_makes_a_file_then_appends_runs_readers_tell_apart(tmp_path):
    path = tmp_path / "runs.jsonl"
    assert write_run(path, run_records("record-agent", clean(), EXITED_0, [], {})) == "written"
    assert write_run(path, run_records("record-agent", clean(), EXITED_1, [], {})) == "appended"
    trace = read_trace(path)
    assert list(trace.runs) == ["record-agent", "record-agent#2"] and not trace.problems
    assert trace.runs["record-agent"].verdict()["ready"] is True
    assert trace.runs["record-agent#2"].verdict()["status"] == "answer_rejected"


def test_an_append_is_one_write_on_an_append_descriptor(tmp_path, monkeypatch):
    path = tmp_path / "runs.jsonl"
    path.write_bytes(b"")
    calls = []
    real = os.write

    def write(fd, data):
        calls.append(len(data))
        return real(fd, data)

    monkeypatch.setattr(os, "write", write)
    records = run_records("r", clean(), EXITED_0, [], {})
    write_run(path, records)
    assert calls == [len(records_to_bytes(records))]
    assert path.read_bytes() == records_to_bytes(records)


def test_a_run_written_to_a_pipe_is_written_whole():
    """``-o /dev/stdout | jq``: a pipe cannot be read back for its last line; the run must still go out."""
    records = run_records("r", [], EXITED_0, [], {})
    read_end, write_end = os.pipe()
    try:
        assert write_run(f"/dev/fd/{write_end}", records) == "appended"
        os.close(write_end)
        write_end = -1
        with os.fdopen(read_end, "rb") as pipe:
            read_end = -1
            assert pipe.read() == records_to_bytes(records)
    finally:
        for fd in (read_end, write_end):
            if fd >= 0:
                os.close(fd)


def test_an_append_after_a_last_line_without_its_end_starts_a_new_line(tmp_path):
    path = tmp_path / "runs.jsonl"
    first = records_to_bytes(run_records("a", [], EXITED_0, [], {}))
    path.write_bytes(first.rstrip(b"\n"))
    write_run(path, run_records("b", [], EXITED_0, [], {}))
    trace = read_trace(path)
    assert sorted(trace.runs) == ["a", "b"] and not trace.problems


def test_explain_reads_the_calls_and_receipts_of_a_recorded_run(tmp_path):
    path = tmp_path / "runs.jsonl"
    write_run(path, run_records("r", clean("gemini"), EXITED_1, ["python", "agent.py"], UPSTREAM))
    evidence = Evidence(read_trace(path).runs["r"])
    assert evidence.lane == "answer" and evidence.provider == "gemini"
    (call,) = evidence.calls(1)
    assert (call.turn, call.exchange, call.call_id, call.name, call.arguments) == (
        1, 0, "call_1", "read_order", '{"order_id":"o-1"}')
    assert evidence.receipts() == [{"order_id": "o-1", "status": "delivered"}]
    assert len(evidence.exchanges) == 2 and evidence.exchanges[1]["status"] == 200
    assert evidence.failing[-1]["kind"] == "answer.verify"


def test_explain_finds_the_denied_call_it_would_edit(tmp_path):
    exchanges = run_agent("anthropic", [call_reply(("read_order", {"order_id": "o-2"}, "call_1")), ANSWER],
                          tools={"read_order": lambda a: ("permission denied: o-2 is not yours", True)})[0]
    path = tmp_path / "runs.jsonl"
    write_run(path, run_records("r", exchanges, EXITED_1, [], {}))
    evidence = Evidence(read_trace(path).runs["r"])
    assert evidence.lane == "authorization"
    denied = evidence.failing[0]
    call = evidence.call_of(denied)
    assert (call.exchange, call.position, call.arguments) == (0, 0, '{"order_id":"o-2"}')
    assert evidence.exchange_of(denied) == 0


# -- a replay's records ------------------------------------------------------------------------------------
def test_a_replay_that_sends_the_recorded_requests_has_no_request_changed_event():
    recorded = clean()
    records = run_records("r", clean(), EXITED_0, [], {}, recorded=recorded)
    attempts = [r for r in records if r.get("kind") == "http.attempt"]
    assert [a["data"]["request_match"]["match"] for a in attempts] == ["exact", "exact"]
    assert not [r for r in records if r.get("kind") == "http.request_changed"]


def test_a_replay_whose_request_changed_records_where():
    recorded = clean()
    replayed = copy.deepcopy(recorded)
    body = replayed[1].request["body"]
    body["messages"][3]["content"] = "edited"
    replayed[1].request["body_sha256"] = hashlib.sha256(orjson.dumps(body)).hexdigest()
    events = run_records("r", replayed, EXITED_0, [], {}, recorded=recorded)[1:-1]
    at = next(n for n, e in enumerate(events) if e["kind"] == "http.request_changed")
    assert events[at - 1]["kind"] == "http.attempt" and events[at - 1]["data"]["exchange"] == 1
    changed = events[at]
    assert (changed["lane"], changed["outcome"], changed["code"]) == ("http", "ok", None)
    assert changed["summary"] == "request 1 differs from the recording: same turn, changed content at /messages/3/content"


def test_a_replay_server_match_on_the_exchange_is_used_as_it_came():
    replayed = clean()
    replayed[0].request_match = {"match": "different_turn", "words": "another turn: 3 messages instead of 2"}
    events = run_records("r", replayed, EXITED_0, [], {})[1:-1]
    assert events[1]["kind"] == "http.request_changed"
    assert events[1]["summary"] == "request 0 differs from the recording: another turn: 3 messages instead of 2"


def test_a_replay_past_the_end_of_the_recording_ends_by_recording():
    recorded = clean()
    past = WireExchange(2, "openai-chat", {**recorded[1].request, "body_sha256": "f" * 64},
                        {"status": None, "headers": {}, "body": {"error": {
                            "type": "recording_ended", "message": "tracetui replay: the recording has no response for "
                                                                 "request 2 (it holds 2); edit /responses/2 to supply one"}},
                         "error": "cassette_exhausted", "latency_ms": 0}, False)
    records = run_records("r", [*copy.deepcopy(recorded), past], EXITED_0, [], {}, recorded=recorded)
    summary, events = records[-1], records[1:-1]
    attempt = next(e for e in events if e["kind"] == "http.attempt" and e["data"]["exchange"] == 2)
    assert (attempt["outcome"], attempt["code"]) == ("failed", "cassette_exhausted")
    assert attempt["data"]["request_match"]["match"] == "past_end"
    assert "no response left in the recording (2 played)" in attempt["summary"]
    assert summary["ended_by"] == "recording"
    # exit 0 after running out proves nothing: the end of the recording stays the verdict
    assert summary["status"] == "cassette_exhausted" and summary["first_failure"]["lane"] == "http"


@pytest.mark.parametrize("exit_", [EXITED_1, AgentExit(None, "SIGKILL", False, True, None)])
def test_a_replay_past_the_end_after_an_unresolved_failure_names_that_failure(exit_):
    exchanges = run_agent("openai-chat", [READ_O1, ANSWER], tools={"read_order": lambda a: ("Error: down", False)})[0]
    past = WireExchange(2, "openai-chat", dict(exchanges[1].request),
                        {"status": None, "headers": {}, "body": None, "error": "cassette_exhausted", "latency_ms": 0},
                        False)
    summary = run_records("r", [*exchanges, past], exit_, [], {}, recorded=exchanges)[-1]
    assert summary["first_failure"]["code"] == "tool_failed" and summary["ended_by"] == "recording"


@pytest.mark.parametrize("provider", ["openai-chat", "openai-responses", "anthropic", "gemini"])
def test_every_line_of_a_recorded_run_conforms_to_the_published_schema(provider):
    from jsonschema import Draft202012Validator

    from tracetui.trace.schema import SCHEMA

    records = run_records("record-agent.py", clean(provider), EXITED_1, ["python", "agent.py"], UPSTREAM)
    validator = Draft202012Validator(SCHEMA)
    for record in records:
        errors = list(validator.iter_errors(orjson.loads(records_to_bytes([record]))))
        assert not errors, f"{record['rec']}: {errors[0].message}"
