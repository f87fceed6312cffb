"""Search inside events: runs found by what their records hold, as the explorer shows them (redacted)."""
from __future__ import annotations

import json
import string
from pathlib import Path

import orjson
import pytest
from hypothesis import HealthCheck, assume, given, settings, strategies as st

from tracetui.loop.demo import demo_source
from tracetui.loop.runner import records_of, run_scenario
from tracetui.loop.scenarios import SCENARIOS
from tracetui.trace.index import IndexedSource
from tracetui.trace.redact import redact_value
from tracetui.trace.source import file_source
from tracetui.trace.writer import write_trace
from tracetui.triage import event_search
from tracetui.triage.event_search import EventSearch, Needle, matching_events, search_runs


@pytest.fixture(scope="module")
def scenarios_path(tmp_path_factory) -> str:
    path = tmp_path_factory.mktemp("search") / "scenarios.jsonl"
    write_trace(path, list(records_of(iter(run_scenario(name) for name in SCENARIOS))))
    return str(path)


def lines_file(path: Path, records: list[dict], dumps=orjson.dumps) -> str:
    path.write_bytes(b"".join(_bytes(dumps(r)) + b"\n" for r in records))
    return str(path)


def _bytes(data) -> bytes:
    return data if isinstance(data, bytes) else data.encode()


def a_run(run_id: str, *data: dict) -> list[dict]:
    """A run line, one event per ``data`` and a summary: the least a trace holds."""
    events = [{"rec": "event", "run_id": run_id, "seq": n, "lane": "receipt", "outcome": "ok", "kind": "tool.result",
               "data": d} for n, d in enumerate(data, start=1)]
    return [{"rec": "run", "run_id": run_id, "inputs": {"scenario": "single"}}, *events,
            {"rec": "summary", "run_id": run_id, "status": "answer_ready", "metrics": {"events": len(events)}}]


def indexed(path: str) -> IndexedSource:
    return IndexedSource([path]).scan_all()


def test_runs_are_found_by_their_tool_names_and_arguments_in_every_kind_of_source(scenarios_path):
    index = indexed(scenarios_path)
    whole = file_source(scenarios_path)
    for text in ("cancel_order", "CANCEL_order", "o-1", "o-2", "permission_denied", "shop-b"):
        found = search_runs(index, text)
        assert found, text
        assert found == search_runs(whole, text), text  # an indexed file and one read whole agree
    assert {run for _, run in search_runs(index, "cancel_order")} == {"unknown_tool"}
    assert search_runs(index, "no such text anywhere") == set()
    demo = demo_source()  # runs made in memory (`tracetui open` with no file)
    assert {run for _, run in search_runs(demo, "cancel_order")} == {"unknown_tool"}


def test_a_run_whose_lines_interleave_with_another_is_told_apart(tmp_path):
    a, b = a_run("run-a", {"note": "plain"}, {"note": "plain"}), a_run("run-b", {"note": "x"}, {"tool": "refund_order"})
    mixed = [line for pair in zip(a, b) for line in pair]
    index = indexed(lines_file(tmp_path / "t.jsonl", mixed))
    assert search_runs(index, "refund_order") == {(0, "run-b")}
    assert search_runs(index, "PLAIN") == {(0, "run-a")}


def test_bad_lines_are_not_found_and_a_repeated_run_id_is_found_under_its_listed_name(tmp_path):
    records = a_run("r", {"note": "first"}) + a_run("r", {"note": "second"})
    path = tmp_path / "t.jsonl"
    lines_file(path, records)
    with path.open("ab") as fh:
        fh.write(b'{"not a record": "second"}\n')
    index = indexed(str(path))
    assert search_runs(index, "second") == {(0, "r#2")}
    assert search_runs(index, "first") == {(0, "r")}


def test_matching_events_are_the_positions_of_events_holding_the_text():
    events = a_run("r", {"a": "x"}, {"b": "Needle here"}, {"c": 429}, {"d": ["deep", {"e": "needle"}]})[1:-1]
    assert matching_events(events, Needle.of("needle")) == [1, 3]
    assert matching_events(events, Needle.of("429")) == [2]  # a number is read as its JSON text


def test_a_search_can_be_cancelled_between_steps(tmp_path, monkeypatch):
    monkeypatch.setattr(event_search, "BLOCK_BYTES", 256)
    records = [r for n in range(50) for r in a_run(f"run-{n}", {"note": "findme"})]
    search = EventSearch(indexed(lines_file(tmp_path / "t.jsonl", records)), Needle.of("findme"))
    steps = search.steps()
    first = next(steps)
    search.cancel()
    rest = list(steps)
    assert not any(step.finished for step in rest)  # stopped, not finished
    assert len(first.found) + sum(len(s.found) for s in rest) < 50


def test_a_text_in_quotes_or_beyond_ascii_is_found_in_its_escaped_form(tmp_path):
    value = 'she said "héllo" to Łódź \\ ok'
    for dumps in (orjson.dumps, lambda r: json.dumps(r, ensure_ascii=True)):
        index = indexed(lines_file(tmp_path / "t.jsonl", a_run("r", {"note": value}), dumps=dumps))
        for needle in ('"héllo"', "héllo", "Łódź", "ŁÓDŹ", "\\ ok", '"', "é"):
            assert search_runs(index, needle) == {(0, "r")}, (needle, dumps)


def test_a_secret_the_explorer_shows_redacted_is_not_found(tmp_path):
    data = {"password": "hunter2-horse", "headers": [["authorization", "Bearer abcdefghijklmnopqrstu"]],
            "key": "AKIAIOSFODNN7EXAMPLE", "note": "see the password"}
    path = lines_file(tmp_path / "t.jsonl", a_run("r", data))  # written by another tool: not redacted
    assert b"hunter2-horse" in Path(path).read_bytes()
    for source in (indexed(path), file_source(path)):
        for secret in ("hunter2-horse", "abcdefghijklmnopq", "AKIAIOSFODNN7EXAMPLE"):
            assert search_runs(source, secret) == set(), secret
        assert search_runs(source, "see the password") == {(0, "r")}  # what is shown is found


values = st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=40)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(value=values, cut=st.tuples(st.integers(0, 40), st.integers(1, 40)), ascii_only=st.booleans(),
       key=st.sampled_from(["note", "text", "arguments"]))
def test_any_part_of_a_string_value_is_found_however_it_is_escaped(tmp_path, value, cut, ascii_only, key):
    start = min(cut[0], len(value) - 1)
    needle = value[start:start + cut[1]]
    record_data = {key: value}
    assume(redact_value(record_data) == record_data)  # (a value that looks like a secret is shown redacted)
    path = lines_file(tmp_path / "h.jsonl", a_run("r", record_data),
                      dumps=lambda r: json.dumps(r, ensure_ascii=ascii_only))
    assert search_runs(indexed(path), needle) == {(0, "r")}, (value, needle)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(secret=st.text(string.ascii_letters + string.digits, min_size=10, max_size=30),
       key=st.sampled_from(["password", "api_key", "client_secret", "x-api-key"]))
def test_a_value_under_a_credential_key_is_never_found(tmp_path, secret, key):
    assume(secret.casefold() not in "<redacted>" and not any(secret.casefold() in w for w in (
        key, "note", "receipt", "tool.result", "answer_ready", "single", "scenario", "inputs", "summary")))
    path = lines_file(tmp_path / "s.jsonl", a_run("r", {key: secret}))
    assert search_runs(indexed(path), secret) == set()
    assert search_runs(indexed(path), key) == {(0, "r")}  # its key is shown, so found


_PAD = "words of a long model response " * 150  # a string well over 4 KiB around the secret
_KEY_BODY = "".join(f"MIIEow{n:04d}IBAAKCAQEA7bq9Xk3/p+Q" for n in range(60))  # ~1.7 KiB of a key's base64


@pytest.mark.parametrize("data, fragment", [
    # a private key block in a long string: the block's header lies further from the fragment than any window
    ({"text": _PAD + "-----BEGIN RSA PRIVATE KEY-----\n" + _KEY_BODY + "\n-----END RSA PRIVATE KEY-----" + _PAD},
     _KEY_BODY[1500:1520]),
    # a long quoted value after a credential word in free text
    ({"text": _PAD + "password='Q" + "a9" * 700 + "' " + _PAD}, "a9" * 10),
    # a credential word, then much white space before its value
    ({"text": _PAD + "password:" + " " * 1100 + "hunter2zzQ9" + _PAD}, "hunter2zzQ9"),
    # an edit of a credential field whose path is long
    ({"edit": {"path": "/inputs/" + "a" * 300 + "/api_key", "value": "hunter2zzQ9"}}, "hunter2zzQ9"),
])
def test_a_secret_whose_redaction_depends_on_text_far_from_the_match_is_not_found(tmp_path, data, fragment):
    assert fragment not in json.dumps(redact_value(data))  # the explorer shows it as <redacted>
    path = lines_file(tmp_path / "far.jsonl", a_run("r", data))
    assert search_runs(indexed(path), fragment) == set()


secretish = st.sampled_from([
    "password=", "password: ", "Authorization: Bearer ", "-----BEGIN PRIVATE KEY-----\n", "api_key=", " ", "\n",
    "sk-proj-", "ghp_", "AKIA", "token ", "x" * 3000, "y " * 2500, "{\"auth\": {\"pin\": \"", "\"}}"])


@settings(max_examples=150, deadline=None)
@given(pieces=st.lists(st.one_of(secretish, st.text(string.ascii_letters + string.digits + "+/=-_", min_size=1,
                                                    max_size=60)), min_size=1, max_size=12),
       cut=st.tuples(st.integers(0, 10_000), st.integers(4, 40)),
       key=st.sampled_from(["text", "arguments", "value"]), beside=st.sampled_from([{}, {"name": "X-Api-Key"},
                                                                                    {"path": "/x/token"}]))
def test_a_search_finds_only_what_the_explorer_shows(pieces, cut, key, beside):
    """The search is no oracle: whatever it finds, the whole record redacted as the explorer redacts it
    still holds."""
    text = "".join(pieces)
    start = min(cut[0], max(len(text) - 1, 0))
    needle = text[start:start + cut[1]]
    assume(needle.strip())
    record = {"rec": "event", "data": {**beside, key: text}}
    if event_search.record_matches(record, Needle.of(needle)):
        assert event_search.holds(redact_value(record), needle.casefold()), needle
