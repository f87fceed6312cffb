"""The MCP server's diff_runs: ``diff --json`` of two runs, its rows a page at a time, within the answer's bounds."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tracetui.mcp import tools
from tracetui.mcp.bounds import MAX_BYTES, size
from tracetui.mcp.paths import Confinement, PathRefused

SAMPLES = Path(__file__).resolve().parents[2] / "sample_traces"


@pytest.fixture
def where(tmp_path):
    for name in ("scenarios.jsonl", "otel-scenarios.jsonl", "fault-429.jsonl"):
        (tmp_path / name).write_bytes((SAMPLES / name).read_bytes())
    return Confinement([str(tmp_path)])


def test_diff_runs_answers_what_diff_json_prints(where, tmp_path):
    got = tools.diff_runs(where, "scenarios.jsonl", "single", "scenarios.jsonl", "cross_tenant")
    done = subprocess.run([sys.executable, "-m", "tracetui", "diff", "scenarios.jsonl:single",
                           "scenarios.jsonl:cross_tenant", "--json"], cwd=tmp_path, capture_output=True, timeout=60)
    printed = json.loads(done.stdout)
    assert done.returncode == 1
    for key in ("first_divergence", "first_divergence_row", "same_verdict", "rows_differing"):
        assert got[key] == printed[key], key
    assert got["rows"] == printed["rows"] and got["next_page"] is None
    assert got["a"]["verdict"] == printed["a"]["verdict"] and got["b"]["file"] == "scenarios.jsonl"


def test_two_files_and_rows_a_page_at_a_time(where):
    first = tools.diff_runs(where, "scenarios.jsonl", "single", "fault-429.jsonl", "single-fault-429", limit=4)
    assert first["first_divergence"].startswith("run B retried at turn 1: its HTTP call got HTTP 429")
    assert first["rows_in_all"] == 9 and len(first["rows"]) == 4 and first["next_page"] == "4"
    rest = tools.diff_runs(where, "scenarios.jsonl", "single", "fault-429.jsonl", "single-fault-429",
                           page=first["next_page"], limit=50)
    assert len(rest["rows"]) == 5 and rest["next_page"] is None and size(rest) <= MAX_BYTES
    imported = tools.diff_runs(where, "scenarios.jsonl", "refund", "otel-scenarios.jsonl", "refund")
    assert imported["first_divergence"] is None and imported["same_verdict"] is True


def test_a_missing_run_or_a_path_outside_is_refused_in_words(where, tmp_path):
    with pytest.raises(tools.ToolFailed, match="no run 'nope' in scenarios.jsonl"):
        tools.diff_runs(where, "scenarios.jsonl", "single", "scenarios.jsonl", "nope")
    with pytest.raises(PathRefused):
        tools.diff_runs(where, "scenarios.jsonl", "single", "/etc/passwd", "x")
