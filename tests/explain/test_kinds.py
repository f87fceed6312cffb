"""Fix, what-if or partial: no fix edits the caller, who owns the data, balances, injected faults or the environment."""
from __future__ import annotations

from pathlib import Path

import pytest

from tracetui.explain import explain
from tracetui.explain.report import top_fix_line
from tracetui.explain.search import FIX, PARTIAL, WHAT_IF
from tracetui.loop.ablations import ABLATIONS
from tracetui.loop.runner import run_scenario
from tracetui.loop.scenarios import FAULT_CHOICES, SCENARIOS
from tracetui.trace.reader import RunData, read_trace

ROOT = Path(__file__).resolve().parent.parent.parent
#: what a fix may never edit: the principal, ownership and balances, injected faults, the environment
NOT_A_FIX = ("/inputs/principal", "/inputs/tool_data", "/inputs/faults", "/inputs/transient_failures",
             "/inputs/user_input", "/inputs/task", "/inputs/tools/")  # nor what was asked, nor a tool's schema


def as_run(result) -> RunData:
    run = RunData(result.run["run_id"])
    for record in result.records:
        run.add(record)
    return run


def run_code(result) -> str | None:
    return (result.before.get("first_failure") or {}).get("code")


def every_failing_run() -> list[tuple[str, str, tuple[str, ...]]]:
    """``generate --all``, ``--all --all-ablations`` and ``--all --fault F`` (once, and enough to outlast retries)."""
    runs = [(name, ablation, ()) for name in SCENARIOS for ablation in ABLATIONS]
    runs += [(name, "complete", (fault,) * n) for name in SCENARIOS for fault in FAULT_CHOICES for n in (1, 3)]
    return [r for r in runs if run_scenario(*r).status != "answer_ready"]


@pytest.mark.parametrize("name,ablation,faults", every_failing_run())
def test_no_fix_edits_what_is_not_the_user_s_to_change(name, ablation, faults):
    result = explain(as_run(run_scenario(name, ablation, faults)))
    assert result.responsibility in ("model", "harness", "environment", "guard")
    for proof in result.fixes:
        assert not any(e.path.startswith(NOT_A_FIX) for e in proof.edits), (name, proof.candidate.words)
        not_the_model_s = result.responsibility == "environment" or run_code(result) in (
            "unexpected_body", "response_cancelled")  # a foreign body or a cancel: rewriting it is no fix either
        assert not (not_the_model_s and any(e.path.startswith("/responses") for e in proof.edits))
        assert not any(e.path == "/inputs/stream" for e in proof.edits) or result.responsibility != "environment"
    for proof in result.what_ifs:
        assert proof.why_not and proof.outcome.after["ready"]
    ranked = [p.kind for p in result.fixes + result.what_ifs]
    assert ranked == sorted(ranked, key=[FIX, WHAT_IF].index)  # never a what-if above a fix
    assert top_fix_line(result, "f.jsonl").lstrip().startswith("fix") == bool(result.fixes)


#: the kinds each built-in failing scenario's proposals have (the partials shown only when no fix is proven)
KINDS = {
    "tool_failure": {WHAT_IF}, "repeat": {FIX}, "refusal": {FIX}, "truncated": {FIX}, "duplicate_ids": {FIX},
    "truncated_tool_call": {FIX}, "unknown_tool": {FIX}, "cross_tenant": {WHAT_IF}, "reused_call_id": {FIX},
    "no_receipt": {FIX}, "response_failed": {WHAT_IF, PARTIAL}, "response_cancelled": {WHAT_IF, PARTIAL},
    "call_budget": {WHAT_IF, PARTIAL}, "turn_budget": {FIX}, "repair_exhausted": {FIX},
    "business_rule": {WHAT_IF}, "write_unguarded": {FIX, WHAT_IF}, "stream_cut": {WHAT_IF},
    "stream_no_completion": {WHAT_IF, PARTIAL}, "stream_bad_json": {WHAT_IF},
}


@pytest.mark.parametrize("run_id", sorted(KINDS))
def test_the_kind_of_each_scenario_s_proposals(run_id):
    from tracetui.explain.report import shown_partials

    result = explain(read_trace(ROOT / "sample_traces" / "scenarios.jsonl").runs[run_id])
    kinds = {p.kind for p in result.fixes + result.what_ifs + shown_partials(result)}
    assert kinds == KINDS[run_id]


@pytest.mark.parametrize("run_id,edit,why", [
    ("cross_tenant", "/inputs/principal", "would defeat the authorization check: it changes who the caller is"),
    ("cross_tenant", "/inputs/tool_data/orders/o-2", "would defeat the authorization check: it rewrites who owns o-2"),
    ("business_rule", "/inputs/tool_data/orders/o-1/paid", "would defeat the business rule"),
    ("tool_failure", "/inputs/tool_data/failures", "it removes a tool failure the run injects"),
    ("stream_cut", "/inputs/stream", "it turns streaming off"),
    ("response_failed", "/responses/0/body", "it replaces what the provider answered"),
])
def test_each_what_if_says_why_it_is_not_a_fix(run_id, edit, why):
    result = explain(read_trace(ROOT / "sample_traces" / "scenarios.jsonl").runs[run_id])
    proof = next(p for p in result.what_ifs if p.edits[0].path == edit)
    assert proof.why_not.startswith(why)


def test_a_failed_response_is_the_provider_s_and_the_retry_is_said_to_be_the_harness_s():
    result = explain(read_trace(ROOT / "sample_traces" / "scenarios.jsonl").runs["response_failed"])
    assert result.responsibility == "environment" and not result.fixes
    assert "retries a failed response" in result.headline
    assert all(p.candidate.side == "provider" and "the model should" not in p.candidate.words for p in result.what_ifs)


def test_a_budget_that_leads_to_the_guard_holding_says_the_run_then_ends_where_it_should():
    from click.testing import CliRunner

    from tracetui.cli import main

    out = CliRunner().invoke(main, ["explain", str(ROOT / "sample_traces" / "scenarios.jsonl"), "--run", "call_budget"])
    lines = out.stdout.splitlines()
    at = lines.index(" 2. partial: a call budget of 3 covers the calls the model makes (2 ran out)")
    assert lines[at + 3] == "    ✗ budget_exhausted @ generation 3  →  ✗ permission_denied @ authorization 7"
    assert lines[at + 4] == "    then a guard refuses what the user asked for: the run ends where it should"
