"""What is never a fix, whatever the replay says: rewriting the request, replacing the inputs or the tool data,
weakening a safeguard (the rule :func:`tracetui.replay.cause.is_safeguard` keeps for the explorer's ``e`` too), and
loosening a tool's schema to accept what the model sent."""
from __future__ import annotations

from pathlib import Path

import pytest

from tracetui.explain import explain
from tracetui.explain.candidate import Candidate, Edit
from tracetui.explain.evidence import Evidence
from tracetui.explain.kinds import FIX, WHAT_IF, kind_of
from tracetui.trace.reader import read_trace

ROOT = Path(__file__).resolve().parent.parent.parent


def evidence(run_id: str, file: str = "scenarios.jsonl") -> Evidence:
    return Evidence(read_trace(ROOT / "sample_traces" / file).runs[run_id])


@pytest.mark.parametrize("path,value,why", [
    ("/inputs/user_input", "What is the status of order o-9?", "it rewrites what the user asked"),
    ("/inputs/task", {"kind": "chat"}, "it rewrites what the user asked"),
    ("/inputs/tool_data", {}, "would defeat the authorization check: it replaces the tool data"),
    ("/inputs", {}, "would defeat the authorization check: it replaces every input"),
    ("/inputs/permissions", ["*"], "would defeat the authorization check: it changes who may do what"),
    ("/inputs/idempotency_guard", False, "would defeat the idempotency guard: it switches it off"),
    ("/inputs/tools/0/parameters/additionalProperties", True, "it loosens the check on the model's arguments"),
    ("/inputs/tools/0/parameters/properties/order_id/type", ["string", "integer"], "it loosens the check"),
    ("/inputs/tools/0", {"name": "read_order", "parameters": {}}, "it loosens the check"),
])
def test_an_edit_that_changes_the_request_or_weakens_a_check_is_never_a_fix(path, value, why):
    # no_receipt is the model's failure: any edit of the model's own would be a fix here
    ev = evidence("no_receipt")
    kind, why_not = kind_of(Candidate((Edit(path, value),), "an edit", "data", None), ev)
    assert kind == WHAT_IF and why_not.startswith(why)


def test_a_guard_switched_on_or_the_model_s_output_stays_a_fix():
    ev = evidence("no_receipt")
    assert kind_of(Candidate((Edit("/inputs/idempotency_guard", True),), "on", "setting", None), ev) == (FIX, None)
    edit = Edit("/responses/0/body/output/0/arguments", '{"order_id":"o-1"}')
    assert kind_of(Candidate((edit,), "the model", "model", None), ev) == (FIX, None)


def test_a_schema_loosened_to_accept_the_model_s_arguments_is_listed_as_a_what_if():
    result = explain(read_trace(ROOT / "sample_traces" / "recorded-extra_field.jsonl").runs["recorded-extra_field"])
    loosened = [p for p in result.fixes + result.what_ifs if any(e.path.startswith("/inputs/tools/") for e in p.edits)]
    assert loosened and all(p.kind == WHAT_IF for p in loosened)
    assert "the trace cannot tell" in loosened[0].why_not
    assert result.fixes  # the model's own arguments without the extra field: still a fix


@pytest.mark.parametrize("module", ["kinds", "input_side"])
def test_the_rule_modules_use_evidence_s_public_names(module):
    """kinds.py and input_side.py read events through evidence's public helpers, not its private ones."""
    import ast

    tree = ast.parse((ROOT / "tracetui" / "explain" / f"{module}.py").read_text())
    private = [(node.module, alias.name) for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
               for alias in node.names if alias.name.startswith("_") and node.module != "__future__"]
    assert private == []
