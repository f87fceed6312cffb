"""The credential-key patterns are tried only on texts holding one of their literals: that gate never hides a key.

:func:`may_name_credential` saying False must mean no pattern made of ``CREDENTIAL_KEY`` matches, and redaction with
the gate gives exactly what it gives with the gate always open.
"""
from __future__ import annotations

import re

import orjson
import pytest
from hypothesis import given, settings, strategies as st

from tests.secret_corpus import BENIGN, instances
from tracetui.trace import redact
from tracetui.trace.secret_shapes import (CREDENTIAL_KEY, CREDENTIAL_WORD, EDIT_OF_CREDENTIAL, ESCAPED_KEYED, HEADER_OF_CREDENTIAL,
                                          KEY_NAME, KEYED, may_name_credential)

#: pieces texts are made of: parts of credential names, their separators, JSON's quotes and escapes
PIECES = ["api", "ap", "i", "key", "_", "-", "/", "\\/", "\\", "\\\\", "\"", "\":", ":", " ", "auth", "au", "th",
          "orization", "pass", "pa", "ss", "word", "wd", "phrase", "secret", "sec", "ret", "ary", "token", "tok",
          "en", "s", "usage", "bearer", "bear", "er", "private", "priv", "ate", "cookie", "coo", "kie", "\\u0070",
          "\\u00", "pin", "otp", "cvv", "cvc", "ship", "ping", "code", "{", "}", "[", "]", "[[\"", "\"name\":", "\"path\":\"/inputs/", "\",\"value\":", "x", "1"]
texts = st.lists(st.sampled_from(PIECES), max_size=14).map("".join)


@settings(max_examples=3000, deadline=None)
@given(texts)
def test_a_text_the_gate_turns_away_matches_no_credential_pattern(text):
    low = text.lower().encode()
    assert may_name_credential(b"x " * 300 + low) == may_name_credential(low)  # (long texts: RE2's scan)
    if may_name_credential(low):
        return
    for pattern in (KEYED, ESCAPED_KEYED, CREDENTIAL_WORD, EDIT_OF_CREDENTIAL, HEADER_OF_CREDENTIAL, KEY_NAME):
        assert pattern.search(low) is None, (pattern.pattern[:40], text)
    assert CREDENTIAL_WORD.search(low.replace(b"\\", b"")) is None


@settings(max_examples=2000, deadline=None)
@given(st.from_regex(re.compile(b"(?:" + CREDENTIAL_KEY + b")"), fullmatch=True))
def test_every_name_the_credential_key_pattern_accepts_opens_the_gate(name):
    """Drawn from the pattern itself: a name added to CREDENTIAL_KEY without its literal fails here."""
    assert may_name_credential(name.lower()), name
    assert may_name_credential(b"order " * 100 + name.lower() + b" refund"), name  # (a long text: RE2's scan)


def _open_gate_redaction(line: bytes) -> bytes:
    with pytest.MonkeyPatch.context() as m:
        m.setattr(redact, "may_name_credential", lambda low: True)
        return redact.redact_line(line)


@settings(max_examples=1500, deadline=None)
@given(texts, texts)
def test_redaction_is_the_same_with_the_gate_always_open(key, value):
    for line in (orjson.dumps({key: value}), orjson.dumps({"k": key + value}), orjson.dumps({"k": {key: value}}),
                 orjson.dumps({"args": orjson.dumps({key: value}).decode()})):
        assert redact.redact_line(line) == _open_gate_redaction(line), line


def test_the_corpora_redact_the_same_with_the_gate_always_open():
    lines = [orjson.dumps({"text": text}) for _, text, _ in instances()]
    lines += [orjson.dumps({"text": text}) for text in BENIGN]
    lines += [orjson.dumps({"api_key": "abc", "password": {"x": 1}, "headers": [["X-Auth-Token", "v"]]}),
              b'{"args":"{\\"pa\\u0073sword\\": \\"hunter22\\"}"}', b'{"path":"/inputs/cfg/api_key","value":"k-1"}']
    assert any(not may_name_credential(line.lower()) for line in lines)  # (the gate is exercised both ways)
    for line in lines:
        assert redact.redact_line(line) == _open_gate_redaction(line), line


def test_a_reason_without_a_credential_word_skips_the_key_patterns_and_still_loses_its_secret():
    reason = 'loop guard: read_order {"order_id":"o-9484068"} already ran; sk-proj-Q7xT2mV9pL4kR8wZ1nB6cY3hJ5fD0gSaT3Bl'
    assert not may_name_credential(orjson.dumps(reason).lower())
    assert "sk-proj-Q7xT" not in redact.redact_text(reason)
    assert '{"order_id":"o-9484068"}' in redact.redact_text(reason)
