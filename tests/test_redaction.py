"""Secrets never reach a trace: keys and tokens become a marker that quotes nothing."""
from __future__ import annotations

import io

import orjson
from hypothesis import given, settings, strategies as st

from tracetui.loop.inputs import build_inputs, responses_inputs
from tracetui.loop.runner import run_inputs
from tracetui.trace.redact import MARKER, redact_line, redact_text
from tracetui.trace.writer import encode_record, encode_records, write_records, write_runs

from safety_net import safety_net

SECRET_CHARS = st.text(alphabet="ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789", min_size=24,
                       max_size=48)


@given(secret=SECRET_CHARS, key=st.sampled_from(["api_key", "apiKey", "Authorization", "cookie", "Set-Cookie",
                                                 "password", "x-api-key", "x-goog-api-key", "client_secret",
                                                 "access_token", "token"]))
def test_credential_keys_are_redacted_at_any_depth(secret, key):
    record = {"rec": "event", "run_id": "r", "data": {"headers": {key: secret}, "nested": [{key: secret}]}}
    line = encode_record(record)
    assert secret.encode() not in line
    assert line.count(MARKER) == 2
    assert orjson.loads(line)["data"]["headers"][key] == "<redacted>"


@given(secret=SECRET_CHARS)
def test_token_shapes_in_free_text_are_redacted(secret):
    for text in (f"key is sk-{secret}", f"Authorization was Bearer {secret}", f"AIza{secret}{secret}",
                 f"sk-ant-{secret}", f"ghp_{secret}"):
        line = encode_record({"rec": "event", "run_id": "r", "summary": text})
        assert secret.encode() not in line, text
        assert MARKER in line


def test_ordinary_fields_survive():
    record = {"rec": "event", "run_id": "r", "data": {"usage": {"input_tokens": 12, "max_output_tokens": 500},
                                                     "order_id": "o-1", "text": "the token budget was fine"}}
    assert orjson.loads(encode_record(record)) == record


def test_a_recorded_run_with_secrets_in_its_responses_is_redacted():
    secret = "sk-proj-" + "Z" * 40
    responses = [{"status": 429, "headers": {"retry-after": "1", "authorization": f"Bearer {secret}",
                                             "set-cookie": "session=abcdef123456"},
                  "body": {"error": {"message": f"bad key {secret}"}}},
                 {"status": "completed", "output": [{"type": "message", "role": "assistant", "status": "completed",
                                                     "content": [{"type": "output_text", "text": "hi"}]}]}]
    result = run_inputs("r", responses_inputs(responses))
    blob = b"".join(encode_record(r) for r in result.records)
    assert secret.encode() not in blob and b"abcdef123456" not in blob
    assert blob.count(MARKER) >= 3


@given(secret=SECRET_CHARS)
def test_objects_and_lists_under_credential_keys_are_redacted_whole(secret):
    record = {"rec": "event", "run_id": "r", "data": {"password": {"value": secret}, "api_key": [secret],
                                                     "auth": secret, "author": "Ann", "keep": {"x": 1}}}
    line = encode_record(record)
    assert secret.encode() not in line
    data = orjson.loads(line)["data"]
    assert data == {"password": "<redacted>", "api_key": "<redacted>", "auth": "<redacted>", "author": "Ann",
                    "keep": {"x": 1}}


def test_container_redaction_keeps_the_run_line_intact():
    record = {"rec": "run", "run_id": "r", "inputs": {"headers": {"Authorization": {"scheme": "Bearer", "v": "x"}},
                                                      "n": 1}}
    assert orjson.loads(encode_record(record)) == {"rec": "run", "run_id": "r",
                                                   "inputs": {"headers": {"Authorization": "<redacted>"}, "n": 1}}


_SECRETISH = st.sampled_from(["Bearer abcdefghijklmnop", "sk-" + "x" * 20, "AKIA" + "Q" * 16, "ghp_" + "a" * 24,
                              'api_key":"leak', 'x\\"token', "auth", '{"password": "p", "pass":"q"}',
                              'password\\": \\"x', "\\", '\\"', "pass=abc&x=1", "password: y\nz",
                              "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.sig", "https://u:pw@h/", "\\u0073k-" + "a" * 20,
                              "-----BEGIN PRIVATE KEY-----\nabc", "Cookie: a=b", "?token=t&", "AccountKey=k;",
                              "Bearer abc!Q7x9", '"path"', "/inputs/x/api_key"])
_KEYS = st.sampled_from(["api_key", "password", "Authorization", "auth", "note", "text", "run_id", "rec", "seq",
                         "_", "path", "value", "pass", "edits"]) | \
    st.text(max_size=8)
_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-10**6, 10**6) | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=30) | _SECRETISH,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_KEYS, inner, max_size=3), max_leaves=8)
_RUN_IDS = st.text(max_size=24) | _SECRETISH | st.sampled_from(['a"b', "x\\", "r\n1", "run"])


def _redacted_line_by_line(records) -> bytes:
    return b"".join(redact_line(orjson.dumps(r)) + b"\n" for r in records)


@settings(max_examples=150, deadline=None)
@given(run_id=_RUN_IDS, other_id=_RUN_IDS, bodies=st.lists(st.dictionaries(_KEYS, _VALUES, max_size=4), min_size=1,
                                                          max_size=4))
def test_encoding_runs_equals_redacting_every_line_whole(run_id, other_id, bodies):
    """The memoised, part-by-part encoder writes exactly what redacting each whole line would."""
    records = ([{"rec": "run", "run_id": run_id, **bodies[0]}]
               + [{"rec": "event", "run_id": run_id, "seq": n, **body} for n, body in enumerate(bodies[1:], 1)]
               + [{"rec": "summary", "run_id": run_id, "status": "answer_ready"}])
    renamed = [{**r, "run_id": other_id} for r in records]  # the same lines under another id: remembered parts
    for batch in (records, renamed, records + renamed, records[::-1]):
        assert encode_records(batch) == _redacted_line_by_line(batch)
        out = io.BytesIO()
        assert write_records(out, iter(batch)) == len(batch)
        assert out.getvalue() == _redacted_line_by_line(batch)
    assert b"".join(encode_record(r) for r in renamed) == _redacted_line_by_line(renamed)


def test_a_key_named_underscore_survives_beside_a_redacted_container():
    line = encode_record({"rec": "event", "run_id": "r", "_": 12345, "token": [1], "api_key": {"a": 1}})
    assert orjson.loads(line) == {"rec": "event", "run_id": "r", "_": 12345, "token": "<redacted>",
                                  "api_key": "<redacted>"}


def test_records_written_in_batches_match_runs_encoded_whole():
    results = [run_inputs(f"r{i}", build_inputs(name)) for i, name in enumerate(("single", "parallel", "refund"))]
    records = [r for result in results for r in result.records]
    out_records, out_runs = io.BytesIO(), io.BytesIO()
    runs = (iter(r.records) for r in results)  # a run may be any iterable of records
    assert write_records(out_records, iter(records)) == write_runs(out_runs, runs) == len(records)
    assert out_records.getvalue() == out_runs.getvalue() == _redacted_line_by_line(records)


def test_a_long_run_of_credential_words_is_read_in_linear_time():
    """A key name is read from each credential word in it to the key's end: over a 40,000-character run of
    them that was quadratic (10 s for one text); the name's tail past its word is bounded now."""
    with safety_net():
        assert redact_text("token" * 8000 + '":') == "token" * 8000 + '":'
        assert redact_text('x \\"' + "token" * 8000 + '\\": \\"hunter2\\"').endswith('\\": \\"<redacted>\\"')
        line = encode_record({"rec": "event", "run_id": "r", "data": {"secret" * 6000: "hunter2", "n": 1}})
    assert orjson.loads(line)["data"] == {"secret" * 6000: "<redacted>", "n": 1}
