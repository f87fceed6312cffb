"""Secrets never reach a trace: keys and tokens become a marker that quotes nothing."""
from __future__ import annotations

import orjson
from hypothesis import given, strategies as st

from tracetui.loop.inputs import responses_inputs
from tracetui.loop.runner import run_inputs
from tracetui.trace.redact import MARKER
from tracetui.trace.writer import encode_record

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
