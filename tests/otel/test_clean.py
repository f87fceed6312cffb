"""An import's records redacted string by string (:mod:`tracetui.otel.clean`) hold no secret that the trace
writer's whole line would redact: a secret in a key, a long value whose key holds a rule's keyword, a list
that names a service before its key, a JSON text that does not parse with a credential key in it."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import orjson
import pytest
from otel_builders import span, traces_data

from tracetui.otel.clean import Cleaner
from tracetui.otel.detect import read_any
from tracetui.trace.writer import encode_record

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from secret_corpus import instances, pieces  # noqa: E402

PAD = "lorem ipsum dolor sit amet " * 10  # longer than clean.LONG: redacted on its own
HEROKU = "3f9a0c2e-7b14-4d6a-8f05-c9e2b7d1a4c6"


def _shapes(text: str, secret: str):
    yield {"attr": {text: {"a": 1}}}  # a secret as a key, of an object
    yield {"attr": {text: "x"}}  # and of a string
    yield {"heroku": HEROKU + " " + PAD}  # a rule's keyword in the key of a long value
    yield {"attr": ["heroku", HEROKU]}  # and in the list before it
    yield {"attr": json.dumps({"pad": PAD, "api_key": {"v": secret}}) + " (cut)"}  # a JSON text that does not parse


@pytest.mark.parametrize("name,text,secret", instances(), ids=[i[0] for i in instances()])
def test_a_record_is_redacted_as_the_writer_redacts_it(name, text, secret):
    for data in _shapes(text, secret):
        record = {"rec": "event", "run_id": "r", "seq": 1, "data": data}
        written = orjson.loads(encode_record(record))
        assert Cleaner().record(record) == written
        shown = orjson.dumps(written).decode()
        assert not any(piece in shown for piece in pieces(secret) + [HEROKU])


def test_a_secret_in_an_attribute_key_never_reaches_an_imported_run(tmp_path):
    """(Before: a string attribute so keyed stopped the import with a KeyError; a key-value list so keyed
    was shown as it came.)"""
    secret, other = "sk-proj-Q7xT2mV9pL4kR8wZ1nB6cY3hJ5fD0gSaT3BlbkFJ", "ghp_Q7xT2mV9pL4kR8wZ1nB6cY3hJ5fD0gSaT3bk"
    root = span("invoke_agent", "00000000000000a1", "", 0, 9, gen_ai__operation__name="invoke_agent",
                gen_ai__agent__name="orders")
    chat = span("chat", "00000000000000a2", "00000000000000a1", 1, 5, gen_ai__operation__name="chat",
                **{secret: "x", "config": {other: {"a": 1}}, "heroku": HEROKU + " " + PAD})
    path = tmp_path / "spans.jsonl"
    path.write_bytes(orjson.dumps(traces_data(root, chat)) + b"\n")
    runs = read_any(path).runs
    shown = orjson.dumps([[r.run, *r.events, r.summary] for r in runs.values()]).decode()
    assert runs and "lorem ipsum" in shown  # (the attributes are shown)
    assert secret not in shown and other not in shown and HEROKU not in shown
