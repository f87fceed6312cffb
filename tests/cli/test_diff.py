"""``tracetui diff``: the real command on the sample traces, both forms of naming a run, exit codes, JSON."""
from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from tracetui.cli import main

SAMPLES = Path(__file__).resolve().parents[2] / "sample_traces"
TRACE = str(SAMPLES / "scenarios.jsonl")


def diff(*args: str):
    return CliRunner().invoke(main, ["diff", *args], catch_exceptions=False)


def test_two_runs_of_one_file_by_file_colon_id():
    result = diff(f"{TRACE}:single", f"{TRACE}:cross_tenant")
    assert result.exit_code == 1, result.output  # the verdicts differ
    lines = result.output.splitlines()
    assert lines[0].startswith("A  ") and lines[0].endswith("✓ answer_ready")
    assert "✗ permission_denied  authorization@4" in lines[1]
    assert lines[2] == "verdicts differ"
    assert lines[3] == ('first divergence (A step 2, B step 2): run B\'s model called read_order with '
                        '{"order_id":"o-2"} at turn 1 where A passed {"order_id":"o-1"}')
    assert any(line.startswith("> 1     generation") for line in lines)


def test_file_dash_run_form_across_two_files_exits_0_for_the_same_verdict():
    result = diff(TRACE, "--run", "single", str(SAMPLES / "fault-429.jsonl"), "--run", "single-fault-429")
    assert result.exit_code == 0, result.output
    assert "same verdict" in result.output
    assert "run B retried at turn 1: its HTTP call got HTTP 429 (rate_limited); A needed no such retry" in result.output


def test_a_trace_against_its_otlp_export_reads_the_same():
    result = diff(f"{TRACE}:refund", f"{SAMPLES / 'otel-scenarios.jsonl'}:refund")
    assert result.exit_code == 0 and "no step differs" in result.output


def test_json():
    result = diff(f"{TRACE}:single", "--json", f"{TRACE}:unknown_tool")
    assert result.exit_code == 1
    document = json.loads(result.output)
    assert document["first_divergence"] == "run B's model called cancel_order at turn 1 where A called read_order"
    assert document["a"]["source"] == TRACE and document["b"]["run_id"] == "unknown_tool"
    assert document["same_verdict"] is False


def test_unreadable_input_and_bad_names_exit_2_in_words(tmp_path):
    missing = diff(f"{TRACE}:single", f"{tmp_path / 'gone.jsonl'}:single")
    assert missing.exit_code == 2 and "gone.jsonl" in missing.output
    typo = diff(f"{TRACE}:single", f"{TRACE}:singel")
    assert typo.exit_code == 2 and "no run 'singel'; runs (of 30): single" in typo.output
    one = diff(f"{TRACE}:single")
    assert one.exit_code == 2 and "diff compares two runs; 1 given" in one.output
    many = diff(TRACE, f"{TRACE}:single")
    assert many.exit_code == 2 and "holds 30 runs: choose one" in many.output


def test_trace_text_is_printed_literally(tmp_path):
    hostile = tmp_path / "hostile.jsonl"
    lines = (SAMPLES / "scenarios.jsonl").read_text().splitlines()
    single = [line for line in lines if '"run_id":"single"' in line]
    hostile.write_text("\n".join(line.replace("allowed: o-1 belongs to the caller",
                                              "allowed \\u001b[31mred\\u001b]8;;http://x\\u0007")
                                  for line in single) + "\n")
    result = diff(f"{TRACE}:cross_tenant", f"{hostile}:single")
    assert "\x1b" not in result.output and "\x07" not in result.output
    assert "\\x1b[31mred" in result.output


def test_the_examples_in_docs_triage_are_real_output(monkeypatch):
    import re
    import shlex

    root = SAMPLES.parent
    monkeypatch.chdir(root)
    examples = re.findall(r"```\n\$ (tracetui diff [^\n]*)\n(.*?)```", (root / "docs" / "triage.md").read_text(), re.S)
    assert len(examples) >= 3
    for command, shown in examples:
        printed = CliRunner().invoke(main, shlex.split(command)[1:]).output
        expected = shown[:-len("…\n")] if shown.endswith("\n…\n") else shown  # a block may stop short with …
        assert printed.startswith(expected), command


def test_standard_input_is_refused_in_words_also_as_dash_colon_id():
    for given in ("-", "-:single"):
        result = diff(given, f"{TRACE}:single")
        assert result.exit_code == 2 and "give a file, not - (standard input)" in result.output, result.output
