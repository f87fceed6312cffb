"""``check --baseline`` and ``--junit`` as CI runs them, on traces made by the CLI from the samples."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
import xmlschema
from click.testing import CliRunner
from junitparser import Failure, JUnitXml, Skipped

from tracetui.cli import main

XSD = xmlschema.XMLSchema(Path(__file__).resolve().parent.parent / "triage" / "junit-10.xsd")


def cli(*args, input=None):
    return CliRunner().invoke(main, [str(a) for a in args], input=input, catch_exceptions=False)


@pytest.fixture
def traces(tmp_path, root):
    """OLD and NEW: the sample scenarios, plus ``support`` answer-ready in OLD and refused in NEW, ``gone`` only
    in OLD and ``fresh`` (failing) only in NEW. Each run made by ``tracetui run`` over a recorded response."""
    responses = root / "sample_traces" / "responses"
    scenarios = (root / "sample_traces" / "scenarios.jsonl").read_bytes()

    def made(recording, run_id):
        out = tmp_path / f"{run_id}-{recording}.jsonl"
        cli("run", "--responses", responses / f"{recording}.json", "--run-id", run_id, "-o", out)
        return out.read_bytes()

    old, new = tmp_path / "old.jsonl", tmp_path / "new.jsonl"
    old.write_bytes(scenarios + made("normal", "support") + made("normal", "gone"))
    new.write_bytes(scenarios + made("cross_tenant", "support") + made("no_receipt", "fresh"))
    return old, new


def test_only_the_newly_failing_run_is_printed_and_fails_the_check(traces):
    old, new = traces
    r = cli("check", new, "--baseline", old)
    assert r.exit_code == 1
    assert r.stdout.splitlines() == [line for line in r.stdout.splitlines() if line.startswith("✗ support  ")]
    assert len(r.stdout.splitlines()) == 1
    assert "only in the new trace (1): fresh\n" in r.stderr and "only in the baseline (1): gone\n" in r.stderr
    assert ("31 run(s) matched: 1 newly failing, 20 still failing, 0 fixed, 10 still ready; "
            "1 only in the new trace, 1 only in the baseline; 0 problem line(s)") in r.stderr


def test_failures_already_in_the_baseline_exit_0(traces):
    old, new = traces
    r = cli("check", old, "--baseline", new)  # the other way round: support is fixed, nothing newly fails
    assert r.exit_code == 0 and r.stdout == ""
    assert "0 newly failing, 20 still failing, 1 fixed" in r.stderr
    assert cli("check", old).exit_code == 1  # (the same trace fails a plain check)


def test_json_names_the_newly_failing_runs_and_the_unmatched_ones(traces):
    old, new = traces
    r = cli("check", new, "--baseline", old, "--json")
    assert r.exit_code == 1
    doc = json.loads(r.stdout)
    assert doc["file"] == str(new) and doc["baseline"] == str(old)
    assert [v["run_id"] for v in doc["newly_failing"]] == ["support"]
    assert doc["newly_failing"][0]["first_failure"]["code"] == "permission_denied"
    assert doc["counts"] == {"newly_failing": 1, "still_failing": 20, "fixed": 0, "still_ready": 10,
                             "only_in_new": 1, "only_in_baseline": 1}
    assert doc["only_in_new"] == {"count": 1, "runs": ["fresh"]}
    assert doc["only_in_baseline"] == {"count": 1, "runs": ["gone"]}
    assert doc["problems"] == [] and "interrupted" not in doc


def test_new_trace_from_standard_input_and_otlp_files_compare_alike(traces, tmp_path):
    old, new = traces
    piped = cli("check", "-", "--baseline", old, input=new.read_bytes())
    assert piped.exit_code == 1 and piped.stdout.startswith("✗ support  ")
    spans = tmp_path / "new.otlp.jsonl"
    assert cli("export", new, "-o", spans).exit_code == 0
    imported = cli("check", spans, "--baseline", old)
    assert imported.exit_code == 1 and imported.stdout.startswith("✗ support  ")
    assert "1 newly failing, 20 still failing" in imported.stderr


def test_junit_with_a_baseline_fails_only_the_newly_failing_run(traces, tmp_path):
    old, new = traces
    report = tmp_path / "report.xml"
    r = cli("check", new, "--baseline", old, "--junit", report)
    assert r.exit_code == 1
    assert f"wrote the JUnit report to {report}: 32 testcase(s), 1 failure(s), 0 error(s), 21 skipped" in r.stderr
    XSD.validate(str(report))
    suite = next(iter(JUnitXml.fromfile(str(report))))
    cases = {case.name: case for case in suite}
    assert len(cases) == 32 and "gone" not in cases
    (failure,) = cases["support"].result
    assert isinstance(failure, Failure) and failure.type == "permission_denied"
    assert failure.message.startswith("authorization@4: permission denied: o-2 belongs to tenant shop-b")
    assert f"tracetui replay {new} --run support" in cases["support"].system_out
    assert isinstance(cases["cross_tenant"].result[0], Skipped)
    assert cases["single"].is_passed


def test_junit_alone_keeps_the_check_output_and_exit_and_fails_every_failing_run(root, tmp_path):
    trace = root / "sample_traces" / "scenarios.jsonl"
    report = tmp_path / "report.xml"
    plain = cli("check", trace)
    r = cli("check", trace, "--junit", report)
    assert (r.exit_code, r.stdout) == (plain.exit_code, plain.stdout)
    XSD.validate(str(report))
    suite = next(iter(JUnitXml.fromfile(str(report))))
    failing = {line.split()[1] for line in plain.stdout.splitlines() if line.startswith("✗")}
    assert {case.name for case in suite if case.result} == failing
    for case in suite:
        for result in case.result:
            assert isinstance(result, Failure) and result.message and result.type
    lines = {line.split()[1]: line for line in plain.stdout.splitlines()}
    case = next(c for c in suite if c.name == "tool_failure")
    assert case.result[0].message in lines["tool_failure"]


def test_the_report_is_refused_over_an_input_and_nothing_is_touched(traces):
    old, new = traces
    before = old.read_bytes()
    r = cli("check", new, "--baseline", old, "--junit", old)
    assert r.exit_code == 2 and "cannot write the JUnit report" in r.stderr and r.stdout == ""
    assert old.read_bytes() == before


def test_lines_that_are_not_records_are_listed_but_only_a_newly_failing_run_fails(traces, tmp_path):
    old, _ = traces
    damaged = tmp_path / "damaged.jsonl"
    damaged.write_bytes(old.read_bytes() + b"not a record\n")
    r = cli("check", damaged, "--baseline", old)
    assert r.exit_code == 0 and r.stdout == ""
    last = len(damaged.read_bytes().splitlines())
    assert f"line {last}: malformed JSON" in r.stderr and "0 newly failing" in r.stderr and "; 1 problem line(s)" in r.stderr
    report = tmp_path / "plain.xml"
    assert cli("check", damaged, "--junit", report).exit_code == 1  # without a baseline, as check: 1
    suite = next(iter(JUnitXml.fromfile(str(report))))
    assert [c.result[0].type for c in suite if c.name == "trace lines"] == ["unreadable_line"]


def test_the_report_goes_to_a_file_never_to_standard_output(traces):
    old, new = traces
    r = cli("check", new, "--baseline", old, "--junit", "-")
    assert r.exit_code == 2 and "--junit writes a file" in r.stderr and r.stdout == ""


def test_an_unreadable_baseline_exits_2(traces, tmp_path):
    _, new = traces
    r = cli("check", new, "--baseline", tmp_path / "missing.jsonl")
    assert r.exit_code == 2 and "error: the baseline cannot be read" in r.stderr


def test_baseline_and_explain_do_not_mix(traces):
    old, new = traces
    r = cli("check", new, "--baseline", old, "--explain")
    assert r.exit_code == 2 and "--explain" in r.stderr


def test_ctrl_c_closes_the_json_document_and_writes_no_report(traces, tmp_path, monkeypatch):
    from tracetui.triage import baseline

    real = baseline.each_verdict
    new = traces[1]

    def first_then_ctrl_c(item, on_verdict, on_problem, query=None):
        if str(item) != str(new):  # the baseline is read whole
            return real(item, on_verdict, on_problem, query)
        seen = []

        def one(v):
            if seen:
                raise KeyboardInterrupt
            seen.append(v)
            on_verdict(v)
        real(item, one, on_problem, query)

    old, new = traces
    monkeypatch.setattr(baseline, "each_verdict", first_then_ctrl_c)
    report = tmp_path / "report.xml"
    r = cli("check", new, "--baseline", old, "--json", "--junit", report)
    assert r.exit_code == 130
    doc = json.loads(r.stdout)
    assert doc["interrupted"] is True and "only_in_baseline" not in doc
    assert not report.exists() and "was not written" in r.stderr


RUNS = 2100  # newly failing verdicts enough to fill standard output's buffer before the input ends


@pytest.mark.skipif(__import__("sys").platform == "win32", reason="SIGINT to a child process is POSIX")
def test_a_real_ctrl_c_on_a_streamed_new_trace_exits_130_with_a_whole_document(root, tmp_path):
    """NEW on standard input, kept open by this test: the check cannot end by itself, so SIGINT, sent once
    the first newly failing runs arrive, always lands while it runs."""
    import os
    import subprocess
    import sys
    import threading

    from first_output import interrupted_at_first_output

    lines = (root / "sample_traces" / "scenarios.jsonl").read_bytes().splitlines()

    def many(scenario: bytes) -> bytes:
        run = [line for line in lines if b'"run_id":"%s"' % scenario in line]
        return b"".join(line.replace(b'"run_id":"%s"' % scenario, b'"run_id":"r-%d"' % i) + b"\n"
                        for i in range(RUNS) for line in run)

    old = tmp_path / "old.jsonl"
    old.write_bytes(many(b"single"))
    report = tmp_path / "report.xml"
    child = subprocess.Popen([sys.executable, "-m", "tracetui", "check", "-", "--baseline", str(old), "--json",
                              "--junit", str(report)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, cwd=root, env={**os.environ, "TRACETUI_WORKER": "off"})

    def feed() -> None:
        try:
            child.stdin.write(many(b"cross_tenant"))
            child.stdin.flush()  # standard input stays open: the check waits for more
        except (OSError, ValueError):
            pass
    writer = threading.Thread(target=feed, daemon=True)
    try:
        writer.start()
        status, out, err = interrupted_at_first_output(child, 60)
    finally:
        writer.join(timeout=60)
        if child.poll() is None:
            child.kill()
            child.wait()
    assert status == 130, err
    doc = json.loads(out)
    assert doc["interrupted"] is True and doc["newly_failing"]
    assert all(v["run_id"].startswith("r-") and v["outcome"] == "failed" for v in doc["newly_failing"])
    assert not report.exists() and b"was not written" in err
