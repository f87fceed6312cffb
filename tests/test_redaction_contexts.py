"""Redaction where a secret sits in a structure: header lists and objects, allowlisted source lines, model tokens
named like credentials, odd text (lone surrogates), and a few more token shapes."""
from __future__ import annotations

import subprocess
import sys

import orjson
import pytest

from tracetui.trace.known_secret import KnownSecret
from tracetui.trace.redact import redact_line, redact_text, text_spans
from tracetui.trace.safe_text import printable
from tracetui.trace.stream_redact import StreamRedactor, redact_events
from tracetui.trace.writer import encode_record, encode_records

TOKEN = "Zq8vR2mX7pL4kW9nB3cY6hJ1"
KEY = "sk-proj-Q7xT2mV9pL4kR8wZ1nB6cY3hJ5fD0gSaT3BlbkFJ"


def _line(data) -> bytes:
    return encode_record({"rec": "event", "run_id": "r", "data": data})


@pytest.mark.parametrize("headers", [
    [["X-Auth-Token", TOKEN]],
    [["Accept", "application/json"], ["Private-Token", TOKEN]],
    [["X-Goog-Api-Key", TOKEN]],
    {"name": "X-Api-Token", "value": TOKEN},
    {"name": "Cookie", "comment": "", "value": f"sid={TOKEN}"},
    {"value": f"sid={TOKEN}", "name": "Cookie"},
    [{"name": "Authorization", "value": f"Token {TOKEN}"}],
])
def test_a_header_named_as_a_credential_is_redacted_in_any_header_list(headers):
    assert TOKEN.encode() not in _line({"headers": headers})


@pytest.mark.parametrize("data", [
    {"required": ["password", "api_key"]},
    [["user", "password"]],
    {"name": "token_count", "value": "12"},
    [["Accept", "application/json"]],
])
def test_header_lists_without_credentials_are_left_as_they_are(data):
    assert orjson.loads(_line(data))["data"] == data


def test_an_allowlisted_line_is_the_source_line_around_the_secret():
    """gitleaks allows a secret on a line such as an ``import … from`` (a line of code); that line is the one
    inside the string holding the secret, never another field of the same record."""
    secret_line = f"MY_KEY: {TOKEN}"
    assert TOKEN.encode() not in _line({"code": "import { a } from 'b'", "t": secret_line})
    assert TOKEN.encode() not in _line({"code": "import { a } from 'b'\n" + secret_line})
    records = [{"rec": "event", "run_id": "import { a } from 'b'", "seq": 1, "data": {"t": secret_line}}]
    whole = b"".join(redact_line(orjson.dumps(r)) + b"\n" for r in records)
    assert encode_records(records) == whole and TOKEN.encode() not in whole


def test_a_long_run_of_private_key_headers_costs_linear_time():
    """The key block's body is read once to the next dashes (a lazy body searching for END from every BEGIN was
    quadratic: 14 s for 100 KB); the timeout is only a safety net."""
    code = ("from tracetui.trace.redact import redact_text\n"
            "assert 'MII' not in redact_text('-----BEGIN PRIVATE KEY-----' * 8000 + 'MIIEvQIBADANBgkqhkiG9w0BAQEFAAS')\n"
            "print('done')\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.stdout == "done\n", done.stderr


def test_a_private_key_block_is_redacted_to_its_end_line_and_no_further():
    block = ("-----BEGIN RSA PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC,3F9A0C2E\n\n"
             "MIIEowIBAAKCAQEA7xT2mV9pL4kR8wZ1nB6cY3h\n-----END RSA PRIVATE KEY-----")
    assert redact_text(f"key:\n{block}\nthen more words") == "key:\n<redacted>\nthen more words"


def test_model_tokens_and_token_counts_are_not_taken_for_credentials():
    data = {"logprobs": {"content": [{"token": "Hello", "logprob": -0.1, "bytes": [72],
                                      "top_logprobs": [{"token": "Hi", "logprob": -2.3}]}]},
            "token_ids": [1, 2], "tokenIds": [3], "token_type_ids": [0, 0], "token_logprobs": [-0.5],
            "tokenCount": 7, "token_budget": 1000, "token_limit": 4096, "secretary": "Alice"}
    assert orjson.loads(_line(data))["data"] == data


@pytest.mark.parametrize("key", ["token", "token_ids", "tokenCount", "token_budget", "token_limit",
                                 "token_logprobs", "secretary"])
def test_a_secret_under_an_excluded_key_is_still_caught_by_its_shape(key):
    entry = {"token": KEY, "logprob": -0.1} if key == "token" else {key: KEY}
    assert KEY.encode() not in _line({"logprobs": {"content": [entry]}, "x": {key: [KEY]}})


def test_a_credential_token_key_is_still_redacted():
    assert TOKEN.encode() not in _line({"token": TOKEN, "auth": {"token": TOKEN}})


@pytest.mark.parametrize("text,secret", [
    ("export GROQ_API_KEY=gsk_" + "a1B2c3D4" * 7, "gsk_" + "a1B2c3D4" * 7),
    ("xai key xai-" + TOKEN * 3, "xai-" + TOKEN * 3),
    ("the key is key-3f9a0c2e7b14d6a8f05c9e2b7d1a4c6e.", "key-3f9a0c2e7b14d6a8f05c9e2b7d1a4c6e"),
    (f"git clone https://{TOKEN}@example.com/a/b.git", TOKEN),
])
def test_more_token_shapes_are_redacted(text, secret):
    assert secret not in redact_text(text)
    assert secret.encode() not in _line({"message": text})


@pytest.mark.parametrize("text", ["write to https://someone@example.com", "monkey-3f9a0c2e7b14d6a8f05c9e2b7d1a4c6e"])
def test_look_alikes_of_the_new_shapes_stay(text):
    assert redact_text(text) == text


def test_lone_surrogates_neither_crash_nor_leak():
    assert redact_text("\ud800 password=hunter2abc") == "\ud800 password=<redacted>"
    assert "hunter2abc" not in printable("\ud800 password=hunter2abc")
    text = f"\ud800 {KEY} x"
    (start, end), = text_spans(text)
    assert text[start:end] == KEY
    redactor = StreamRedactor()
    assert KEY not in redactor.feed(text) + redactor.close()
    events = redact_events([{"delta": text[:20]}, {"delta": text[20:]}])
    assert KEY not in "".join(e["delta"] for e in events)


def test_a_known_secret_with_odd_input_neither_crashes_nor_leaks():
    assert KEY not in KnownSecret("\ud800" + KEY).redact(f"x {KEY} y")
    assert KnownSecret(KEY).scrub({1: KEY, "a": (KEY,)}) == {1: "<redacted>", "a": ["<redacted>"]}


@pytest.mark.parametrize("form", [
    "".join(f"%{b:02X}" for b in KEY.encode()),
    "".join(f"%{b:02x}" for b in KEY.encode()),
    "".join(f"\\u{ord(c):04x}" for c in KEY),
    "".join(f"\\u{ord(c):04X}" for c in KEY),
])
def test_the_known_key_is_found_wholly_percent_encoded_or_escaped(form):
    assert form not in KnownSecret(KEY).redact(f"echo: {form} done")


@pytest.mark.parametrize("text", ['{"value": "sid=Zq8vR2mX7pL4kW9nB3cY6hJ1", "name": "Cookie"}',
                                  '[("Set-Cookie", "session=Zq8vR2mX7pL4kW9nB3cY6hJ1")]'])
def test_header_pairs_written_as_text_are_redacted(text):
    assert TOKEN not in redact_text(text)
    assert TOKEN.encode() not in _line({"arguments": orjson.dumps({"note": text}).decode()})
