"""``tracetui share``: the page written atomically where asked (or named after the run), never over the input."""
from __future__ import annotations

import re
from pathlib import Path

from click.testing import CliRunner

from tracetui.cli import main

ROOT = Path(__file__).resolve().parents[2]
SCENARIOS = ROOT / "sample_traces" / "scenarios.jsonl"


def share(*args: str):
    return CliRunner().invoke(main, ["share", *args], catch_exceptions=False)


def test_one_run_is_written_to_its_name_in_the_current_folder_and_said_on_stderr(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    res = share(str(SCENARIOS), "--run", "cross_tenant")
    assert res.exit_code == 0, res.output
    page = (tmp_path / "cross_tenant.html").read_text()
    assert "first failing boundary: AUTHORIZATION at step 4" in page
    assert res.stderr.startswith("wrote cross_tenant.html: 1 run(s)")
    assert [p.name for p in tmp_path.iterdir()] == ["cross_tenant.html"]  # no temporary file left


def test_a_run_id_unsafe_as_a_file_name_gets_a_safe_default_name(tmp_path, monkeypatch):
    from tracetui.share import default_output

    assert str(default_output("t.jsonl", ["-rf ../../etc/passwd"], False)) == "rf_.._.._etc_passwd.html"
    assert str(default_output("dir/t.jsonl", ["a", "b"], True)) == "t.failed.html"


def test_several_runs_and_all_failed(tmp_path):
    out = tmp_path / "two.html"
    assert share(str(SCENARIOS), "--run", "single", "--run", "refusal", "-o", str(out)).exit_code == 0
    page = out.read_text()
    assert page.count('<section class="run"') == 2 and '<nav class="index">' in page
    out = tmp_path / "failed.html"
    res = share(str(ROOT / "sample_traces" / "fault-html.jsonl"), "--all-failed", "-o", str(out))
    assert res.exit_code == 0, res.output
    assert re.search(r'<h3 class="signature">\d+ × ', out.read_text())


def test_the_input_is_never_the_output_and_a_missing_run_is_a_clear_error(tmp_path):
    trace = tmp_path / "t.jsonl"
    trace.write_bytes(SCENARIOS.read_bytes())
    (tmp_path / "link.html").symlink_to(trace)
    res = share(str(trace), "--run", "single", "-o", str(tmp_path / "link.html"))
    assert res.exit_code == 2 and "is the trace this page shows" in res.stderr
    assert trace.read_bytes() == SCENARIOS.read_bytes()
    res = share(str(trace), "--run", "nope", "-o", str(tmp_path / "x.html"))
    assert res.exit_code == 2 and "no run 'nope'" in res.stderr and not (tmp_path / "x.html").exists()
    assert share(str(trace)).exit_code == 2  # neither --run nor --all-failed
