"""Small stumbles of the CLI (issue 24, item 7): what replay counts, --run for a one-run file, the README's
Anthropic recording."""
from __future__ import annotations

import json
import re

from click.testing import CliRunner

from tracetui.cli import main


def cli(*args, input=None):
    return CliRunner().invoke(main, [str(a) for a in args], input=input, catch_exceptions=False)


EDIT = '/responses/0/body/output/0/arguments={"order_id": "o-1"}'


def test_replay_counts_apart_the_rows_that_read_the_same(root):
    """Edited arguments change the data of the first three events, not what they say: they were counted
    among '8 event(s) differ' and printed with the same words on both sides."""
    r = cli("replay", root / "sample_traces" / "scenarios.jsonl", "--run", "cross_tenant", "--set", EDIT)
    assert "8 event(s) differ" not in r.stdout
    assert "5 event(s) differ (*), and 3 more read the same but carry other data:" in r.stdout
    rows = [line for line in r.stdout.splitlines() if re.match(r"^ [ *]\s*\d+  ", line)]
    assert len(rows) == 8
    assert rows[0].rstrip().endswith("= the same; its data differs: response")
    assert all(line.startswith(" *") == ("→" in line) for line in rows)
    doc = json.loads(cli("replay", root / "sample_traces" / "scenarios.jsonl", "--run", "cross_tenant", "--set",
                         EDIT, "--json").stdout)
    assert [c["data_changed"] for c in doc["changes"][:3]] == [["response"], ["calls"], ["arguments"]]


def test_replay_of_a_one_run_file_needs_no_run(root):
    one = root / "sample_traces" / "transient-3.jsonl"
    r = cli("replay", one)
    assert r.exit_code == 1 and r.stdout.startswith("before  ✗ single-transient-3")
    piped = cli("replay", "-", input=one.read_bytes())
    assert piped.stdout == r.stdout
    many = cli("replay", root / "sample_traces" / "scenarios.jsonl")
    assert many.exit_code == 2
    assert "error: 30 runs in" in many.stderr and "choose one with --run ID; runs: text, single" in many.stderr


def test_explain_of_a_one_run_file_needs_no_run_even_when_it_passed(root):
    r = cli("explain", root / "sample_traces" / "fault-429.jsonl")
    assert r.exit_code == 0 and "already answer-ready" in r.stdout


def test_the_readme_anthropic_recording_runs_and_is_the_built_in_provider_s(root, tmp_path):
    from tracetui.samples import RECORDINGS, recording

    readme = (root / "README.md").read_text()
    (command,) = re.findall(r"^tracetui run --responses (\S+) --provider anthropic", readme, re.M)
    assert (root / command).name in RECORDINGS
    assert (root / command).read_bytes() == recording((root / command).name)  # regenerated, the same bytes
    out = tmp_path / "run.jsonl"
    r = cli("run", "--responses", root / command, "--provider", "anthropic", "-o", out)
    assert r.exit_code == 0 and "✓ anthropic_normal  answer_ready" in r.stderr
    failed = cli("run", "--responses", root / "sample_traces" / "responses" / "cross_tenant.json")
    assert failed.exit_code == 1  # as the README says: a failed run exits 1
    assert "exits 1 when the run failed" in readme
