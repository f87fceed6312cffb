"""The Agent Action Gate's attributes both ways: ``gen_ai.agent.tool.disposition`` (allow, simulate, deny) on
the authorization lane, ``gen_ai.agent.action_ledger.receipt_hash`` on the receipt lane."""
from __future__ import annotations

from pathlib import Path

from otel_builders import span, traces_data, write

from tracetui.otel.detect import read_any
from tracetui.otel.export_map import run_spans
from tracetui.trace.reader import read_trace

ROOT = Path(__file__).resolve().parents[2]
DISPOSITION, RECEIPT = "gen_ai.agent.tool.disposition", "gen_ai.agent.action_ledger.receipt_hash"


def _tool_spans(run, content=False):
    return [s for s in run_spans(run, content=content) if s.name.startswith("execute_tool")]


def test_export_writes_the_gates_disposition_and_the_ledgers_receipt():
    runs = read_trace(ROOT / "sample_traces" / "scenarios.jsonl").runs
    denied = next(r for r in runs.values() if (r.verdict()["first_failure"] or {}).get("code") == "permission_denied")
    dispositions = {s.attributes.get(DISPOSITION) for s in _tool_spans(denied)}
    assert "deny" in dispositions
    allowed = next(r for r in runs.values() if r.verdict()["ready"]
                   and any(e["lane"] == "authorization" for e in r.events))
    tools = _tool_spans(allowed, content=True)
    assert {s.attributes.get(DISPOSITION) for s in tools} == {"allow"}
    receipts = [s.attributes[RECEIPT] for s in tools if RECEIPT in s.attributes]
    assert receipts and all(r.startswith("sha256:") and len(r) == 71 for r in receipts)
    assert not any(RECEIPT in s.attributes for s in _tool_spans(allowed))  # content off: no hash of it either


def _gate_trace(tmp_path, disposition):
    root = span("invoke_agent a", "a000000000000001", "", 0, 100, gen_ai__operation__name="invoke_agent")
    tool = span("execute_tool refund", "b000000000000002", root["spanId"], 10, 20,
                gen_ai__operation__name="execute_tool", gen_ai__tool__name="refund",
                gen_ai__tool__call__id="call-1", gen_ai__tool__call__result="r-1",
                **{"gen_ai__agent__tool__disposition": disposition,
                   "gen_ai__agent__action_ledger__receipt_hash": "sha256:abc"})
    return read_any(write(tmp_path / "gate.jsonl", traces_data(root, tool)))


def test_import_reads_the_gate_on_the_authorization_lane(tmp_path):
    [run] = _gate_trace(tmp_path, "deny").runs.values()
    assert run.verdict()["first_failure"]["lane"] == "authorization"
    assert run.verdict()["first_failure"]["code"] == "permission_denied"
    assert not [e for e in run.events if e["lane"] == "receipt"]  # denied: nothing ran, so no receipt

    for disposition in ("allow", "simulate"):
        [run] = _gate_trace(tmp_path, disposition).runs.values()
        gate = [e for e in run.events if e["lane"] == "authorization"]
        assert [(e["outcome"], e["data"]["disposition"]) for e in gate] == [("ok", disposition)]
        [receipt] = [e for e in run.events if e["lane"] == "receipt"]
        assert receipt["outcome"] == "ok" and receipt["data"]["receipt_hash"] == "sha256:abc"
        assert "ledger receipt sha256:abc" in receipt["summary"]
    assert "simulated" in gate[0]["summary"]


def test_a_simulated_call_comes_back_simulated_after_a_round_trip(tmp_path):
    [run] = _gate_trace(tmp_path, "simulate").runs.values()
    [tool] = _tool_spans(run)
    assert tool.attributes[DISPOSITION] == "simulate"
