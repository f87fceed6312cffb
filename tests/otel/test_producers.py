"""Real producers, offline: pydantic-ai and the OpenAI Agents SDK (through OpenInference) write OTLP/JSON
with planted failures; tracetui opens both and flags each failure on its lane."""
from __future__ import annotations

import pytest
from click.testing import CliRunner
from otel_producers import openai_agents_trace, pydantic_ai_trace

from tracetui.cli import main
from tracetui.otel.detect import is_otlp, read_any


@pytest.fixture(scope="module")
def offline(tmp_path_factory):
    """No key, no exporter of the SDK's own, nothing to phone home to."""
    with pytest.MonkeyPatch.context() as mp:
        for name in ("OPENAI_API_KEY", "OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"):
            mp.delenv(name, raising=False)
        mp.setenv("OTEL_SDK_DISABLED", "false")
        mp.setenv("LOGFIRE_SEND_TO_LOGFIRE", "false")
        yield tmp_path_factory.mktemp("producers")


def _runs_in_order(path):
    trace = read_any(path)
    assert not trace.problems
    return list(trace.runs.values())


def _failed(run):
    return [(e["lane"], e["code"]) for e in run.events if e["outcome"] == "failed"]


def test_pydantic_ai_failures_land_on_their_lanes(offline):
    path = offline / "pydantic-ai.jsonl"
    planted = pydantic_ai_trace(path)
    assert is_otlp(path)
    runs = _runs_in_order(path)
    assert len(runs) == len(planted) == 3
    raises, bad_arguments, truncated = runs
    assert raises.run["producer"].endswith("pydantic-ai")
    assert [r.verdict()["first_failure"]["lane"] for r in runs] == list(planted.values())
    # the tool that raises: its receipt, with the exception in words
    failure = raises.verdict()["first_failure"]
    assert failure["code"] == "tool_failed" and "order service unavailable" in failure["reason"]
    assert failure["lane"] == "receipt" and raises.events[failure["seq"] - 1]["call_id"] == "call-raise"
    # bad arguments: checked against the schema pydantic-ai declared, retried once, then given up
    assert _failed(bad_arguments) == [("arguments", "schema_error")] * 2
    failure = bad_arguments.verdict()["first_failure"]
    assert "42 is not of type 'string'" in failure["reason"] and failure["decided_at"] > failure["seq"]
    # the length-truncated answer: generation, from the finish reason
    assert truncated.verdict()["first_failure"]["code"] == "incomplete"
    assert truncated.events[0]["data"]["attributes"]["gen_ai.response.finish_reasons"] == ["length"]


def test_openai_agents_sdk_failures_land_on_their_lanes(offline):
    path = offline / "openai-agents.jsonl"
    planted = openai_agents_trace(path)
    runs = _runs_in_order(path)
    assert len(runs) == len(planted) == 5
    assert "openinference" in runs[0].run["producer"]
    lanes = [(r.verdict()["first_failure"] or {}).get("lane", "") for r in runs]
    assert lanes == list(planted.values())
    raises, unknown, repaired, truncated, guarded = runs
    assert ("receipt", "tool_failed") in _failed(raises)
    assert ("answer", "unverified_answer") in _failed(raises)  # the model answered with nothing to back it
    assert unknown.verdict()["first_failure"]["code"] == "unknown_tool"
    assert "cancel_order" in unknown.verdict()["first_failure"]["reason"]
    assert [(e["lane"], e["outcome"], e["code"]) for e in repaired.events if e["lane"] == "arguments"] == [
        ("arguments", "recovered", "invalid_json"), ("arguments", "ok", None)]
    assert repaired.verdict()["status"] == "answer_ready"
    assert truncated.verdict()["first_failure"]["code"] == "incomplete"
    assert guarded.verdict()["first_failure"]["code"] == "guardrail_triggered"
    assert "no_refunds" in guarded.verdict()["first_failure"]["reason"]


def test_check_reads_a_producer_file(offline):
    path = offline / "check.jsonl"
    pydantic_ai_trace(path)
    result = CliRunner().invoke(main, ["check", str(path)])
    assert result.exit_code == 1
    assert "receipt@" in result.output and "arguments@" in result.output and "generation@" in result.output
