"""The explain command and `check --explain`: text, JSON, commands that paste, errors in words."""
from __future__ import annotations

import json
import shlex
from pathlib import Path

from click.testing import CliRunner

from tracetui.cli import main
from tracetui.explain.candidate import Edit
from tracetui.explain.command import replay_command, set_text
from tracetui.trace.reader import read_trace
from tracetui.trace.writer import write_trace

ROOT = Path(__file__).resolve().parent.parent.parent
SCENARIOS = ROOT / "sample_traces" / "scenarios.jsonl"


def invoke(*args: str):
    return CliRunner().invoke(main, list(args))


def test_explain_prints_verdicts_path_value_and_a_command_per_fix():
    out = invoke("explain", str(SCENARIOS), "--run", "unknown_tool")
    assert out.exit_code == 0, out.output
    lines = out.output.splitlines()
    assert lines[:3] == ["✗ unknown_tool @ arguments 3  run unknown_tool",
                         "   no tool named 'cancel_order' is offered to the model",
                         "   responsibility: model (the model chose wrong)"]
    assert " 1. the model should have called read_order (cancel_order is not offered)" in lines
    assert '    /responses/0/body/output/0/name = read_order' in lines
    assert "    ✗ unknown_tool @ arguments 3  →  ✓ answer_ready" in lines
    assert f"    tracetui replay {SCENARIOS} --run unknown_tool --set /responses/0/body/output/0/name=read_order" in lines


def test_explain_says_the_guard_held_and_lists_only_what_ifs_below_it():
    out = invoke("explain", str(SCENARIOS), "--run", "cross_tenant")
    assert out.exit_code == 1, out.output  # no fix: nothing in the model or the harness needs one
    lines = out.output.splitlines()
    held = lines.index("the authorization check held: the caller asked for o-2, which belongs to shop-b; "
                       "nothing in the model or the harness needs fixing")
    assert "   responsibility: guard (a check did its job)" in lines[:held]
    numbered = [line for line in lines if line[:4].strip().rstrip(".").isdigit()]
    assert numbered and all(line.split(". ", 1)[1].startswith("what if: ") for line in numbered)
    assert lines.index(numbered[0]) > held
    assert lines.count("    not a fix: would defeat the authorization check: it changes who the caller is") == 1
    assert "    not a fix: would defeat the authorization check: it rewrites who owns o-2" in lines
    assert not any("proven fix" in line and "no proven fix" not in line for line in lines)
    data = json.loads(invoke("explain", str(SCENARIOS), "--run", "cross_tenant", "--json").output)
    assert data["responsibility"] == "guard" and data["fixes"] == [] and data["partials"] == []
    assert data["headline"] == lines[held]
    assert {w["kind"] for w in data["what_ifs"]} == {"what_if"} and all(w["why_not"] for w in data["what_ifs"])


def test_explain_json_is_the_same_as_data():
    out = invoke("explain", str(SCENARIOS), "--run", "truncated", "--json")
    data = json.loads(out.output)
    assert out.exit_code == 0 and data["run_id"] == "truncated" and data["single_edit_fix"] is True
    fix = data["fixes"][0]
    assert fix["kind"] == "fix" and fix["rank"] == 1 and fix["side"] == "budget" and fix["at_first_failure"]
    assert fix["edits"] == [{"path": "/inputs/budgets/max_output_tokens", "value": 64,
                             "set": "/inputs/budgets/max_output_tokens=64"}]
    assert fix["before"]["status"] == "incomplete" and fix["after"]["status"] == "answer_ready"
    assert fix["command"] == f"tracetui replay {SCENARIOS} --run truncated --set /inputs/budgets/max_output_tokens=64"


def test_limit_caps_the_fixes_shown():
    data = json.loads(invoke("explain", str(SCENARIOS), "--run", "write_unguarded", "--json", "--limit", "1").output)
    assert len(data["fixes"]) == 1 and data["what_ifs"] == [] and data["more"] == 1  # one budget, as the text
    text = invoke("explain", str(SCENARIOS), "--run", "write_unguarded", "--limit", "1").output
    assert " 1. the idempotency guard prevents the second refund" in text and " 2. " not in text
    assert "… 1 more (--limit 2 to see them)" in text


def test_explain_without_run_picks_the_only_failing_run_or_lists_them():
    out = invoke("explain", str(ROOT / "sample_traces" / "transient-3.jsonl"))
    assert out.exit_code == 0 and "a retry budget of 3 rides out the 5xx burst" in out.output
    out = invoke("explain", str(SCENARIOS))
    assert out.exit_code == 2 and "20 runs failed" in out.output and "choose one with --run ID" in out.output
    out = invoke("explain", str(SCENARIOS), "--run", "nope")
    assert out.exit_code == 2 and "no run 'nope'" in out.output
    out = invoke("explain", str(SCENARIOS) + ".missing", "--run", "x")
    assert out.exit_code == 2 and "error:" in out.output


def test_commands_are_quoted_for_the_shell_whatever_the_file_and_run_are_called(tmp_path):
    """A file name with spaces and quotes, a run id with a quote: the command still pastes."""
    trace = read_trace(SCENARIOS)
    run = trace.runs["truncated"]
    odd_id = "it's truncated; $(rm -rf x)"
    records = [{**r, "run_id": odd_id} for r in (run.run, *run.events, run.summary)]
    path = tmp_path / "my \"odd\" runs.jsonl"
    write_trace(path, records)
    out = invoke("explain", str(path), "--run", odd_id, "--json")
    command = json.loads(out.output)["fixes"][0]["command"]
    args = shlex.split(command)
    assert args[2] == str(path) and args[4] == odd_id
    again = invoke(*args[1:])
    assert again.exit_code == 0 and "after   ✓" in again.output


def test_a_text_field_value_is_written_as_typed_and_a_quote_or_null_as_json():
    run = read_trace(SCENARIOS).runs["cross_tenant"]
    assert set_text(run, Edit("/inputs/user_input", "What about o-1?")) == "What about o-1?"
    assert set_text(run, Edit("/inputs/user_input", "null")) == '"null"'  # the word, not a cleared field
    assert set_text(run, Edit("/inputs/user_input", '"quoted"')) == '"\\"quoted\\""'
    assert set_text(run, Edit("/inputs/budgets/max_turns", 3)) == "3"
    assert set_text(run, Edit("/inputs/budgets/nope", 3)) is None  # not a field: no command can set it
    command = replay_command("f.jsonl", "cross_tenant", run, [Edit("/inputs/user_input", "it's")])
    assert shlex.split(command)[-1] == "/inputs/user_input=it's"


def test_check_explain_adds_each_failing_run_s_top_fix():
    out = invoke("check", str(SCENARIOS), "--explain")
    assert out.exit_code == 1
    lines = out.output.splitlines()
    at = lines.index(next(line for line in lines if line.startswith("✗ unknown_tool")))
    assert lines[at + 1] == "    fix: the model should have called read_order (cancel_order is not offered)"
    assert lines[at + 2].startswith(f"      tracetui replay {SCENARIOS} --run unknown_tool --set ")
    assert "    fix (2 edits): the model should have called read_order with order_id o-1, then answered" in out.output
    held = lines.index(next(line for line in lines if line.startswith("✗ cross_tenant")))
    assert lines[held + 1] == ("    no fix: the authorization check held: the caller asked for o-2, which belongs to "
                               "shop-b; nothing in the model or the harness needs fixing")
    for run_id in ("tool_failure", "stream_cut", "response_failed", "business_rule"):  # only what-ifs: never "fix"
        at = lines.index(next(line for line in lines if line.startswith(f"✗ {run_id} ")))
        assert lines[at + 1].startswith("    no fix: ") and not lines[at + 2].startswith("      tracetui"), run_id
    assert not any(line.startswith("    fix") for line in lines[:lines.index(next(
        line for line in lines if line.startswith("✗")))])  # ready runs get no fix line


def test_check_explain_json_adds_a_fix_to_each_failing_run():
    data = json.loads(invoke("check", str(SCENARIOS), "--explain", "--json").output)
    runs = {r["run_id"]: r for r in data["runs"]}
    assert "fix" not in runs["single"]
    fix = runs["truncated"]["fix"]
    assert fix["words"] == "max_output_tokens 64 is enough (16 cut the response off)"
    assert fix["after"]["ready"] and fix["command"].endswith("--set /inputs/budgets/max_output_tokens=64")
    plain = json.loads(invoke("check", str(SCENARIOS), "--json").output)
    assert all("fix" not in r for r in plain["runs"])  # without --explain the output is as before


def test_explain_json_is_redacted_and_escaped_like_check_json(tmp_path):
    """Trace text reaches the terminal through one path: no secret, no raw C1 or bidi control in the JSON."""
    run = read_trace(SCENARIOS).runs["unknown_tool"]
    odd_id = "ct\u009b31m\u202eX"
    token = "ghp_" + "a" * 36
    summary = {**run.summary, "first_failure": {**run.summary["first_failure"], "reason": f"denied; token {token}"}}
    path = tmp_path / "hostile.jsonl"
    path.write_bytes(b"".join(json.dumps({**r, "run_id": odd_id}).encode() + b"\n"
                              for r in (run.run, *run.events, summary)))  # as another tool might write it
    out = invoke("explain", str(path), "--run", odd_id, "--json")
    assert out.exit_code == 0, out.output
    assert token not in out.output and "\u009b" not in out.output and "\u202e" not in out.output
    data = json.loads(out.output)
    assert data["run_id"] == odd_id and data["before"]["first_failure"]["reason"] == "denied; token <redacted>"


def test_a_command_for_a_file_named_like_an_option_still_pastes(tmp_path, monkeypatch):
    """``-runs.jsonl`` as typed would be read as options: the command names it ``./-runs.jsonl``."""
    monkeypatch.chdir(tmp_path)
    run = read_trace(SCENARIOS).runs["truncated"]
    write_trace(tmp_path / "-runs.jsonl", [r for r in (run.run, *run.events, run.summary)])
    out = invoke("explain", "--run", "truncated", "--json", "--", "-runs.jsonl")
    assert out.exit_code == 0, out.output
    args = shlex.split(json.loads(out.output)["fixes"][0]["command"])
    assert args[2] == "./-runs.jsonl"
    again = invoke(*args[1:])
    assert again.exit_code == 0 and "after   ✓" in again.output
