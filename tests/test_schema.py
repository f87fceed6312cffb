"""Every line of every sample trace conforms to the published schema."""
from __future__ import annotations

import orjson
import pytest
from jsonschema import Draft202012Validator

from tracetui.otel.detect import is_otlp
from tracetui.trace.schema import SCHEMA


def test_schema_is_valid():
    Draft202012Validator.check_schema(SCHEMA)


def test_sample_lines_validate(root):
    validator = Draft202012Validator(SCHEMA)
    n = 0
    for path in sorted((root / "sample_traces").glob("*.jsonl")):
        if is_otlp(path):  # OpenTelemetry spans, not trace lines
            continue
        for number, line in enumerate(path.read_bytes().splitlines(), 1):
            errors = list(validator.iter_errors(orjson.loads(line)))
            assert not errors, f"{path.name}:{number}: {errors[0].message}"
            n += 1
    assert n > 300


@pytest.mark.parametrize("bad", [
    {"rec": "event", "run_id": "r", "seq": 1, "lane": "network", "kind": "x", "outcome": "ok", "turn": 1, "t_ms": 0,
     "call_id": None, "code": None, "summary": "", "data": {}},
    {"rec": "summary", "run_id": "r", "status": "answer_ready", "ready": "yes", "metrics": {}, "first_failure": None},
])
def test_schema_rejects_bad_lines(bad):
    assert list(Draft202012Validator(SCHEMA).iter_errors(bad))
