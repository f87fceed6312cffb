"""The JUnit report: read back by junitparser, valid against the Jenkins xUnit JUnit XSD, whatever a trace says."""
from __future__ import annotations

import os
import shlex
from pathlib import Path

import pytest
import xmlschema
from junitparser import Error, Failure, JUnitXml, Skipped

from tracetui.trace.reader import Problem
from tracetui.triage.baseline import FIXED, NEWLY_FAILING, ONLY_IN_NEW, STILL_FAILING, STILL_READY, Unmatched
from tracetui.triage.junit import JUnitReport, output_problem, xml_text

#: the JUnit XSD of the Jenkins xUnit plugin, vendored beside this file (its source is noted in it)
XSD = xmlschema.XMLSchema(Path(__file__).with_name("junit-10.xsd"))


def _failed(run_id, reason="read_order failed", code="tool_failed", outcome="failed"):
    return {"run_id": run_id, "status": code, "outcome": outcome, "ready": False, "complete": outcome != "incomplete",
            "first_failure": {"lane": "receipt", "seq": 5, "code": code, "reason": reason, "decided_at": 5},
            "responsibility": "environment"}


def _ready(run_id):
    return {"run_id": run_id, "status": "answer_ready", "outcome": "ready", "ready": True, "complete": True,
            "first_failure": None, "responsibility": None}


def _incomplete(run_id):
    return {"run_id": run_id, "status": "incomplete", "outcome": "incomplete", "ready": False, "complete": False,
            "first_failure": None, "responsibility": None}


def _written(report: JUnitReport, path: Path, **kwargs) -> dict[str, object]:
    report.write(str(path), **kwargs)
    report.close()
    XSD.validate(str(path))  # raises when the document breaks the schema
    suite = next(iter(JUnitXml.fromfile(str(path))))
    return {case.name: case for case in suite} | {"": suite}


def test_each_run_is_a_testcase_with_its_failure_read_back(tmp_path):
    report = JUnitReport("runs dir/t.jsonl")
    report.add(_ready("ok"))
    report.add(_failed("broken"))
    report.add(_incomplete("cut"))
    cases = _written(report, tmp_path / "r.xml")
    suite = cases.pop("")
    assert (suite.tests, suite.failures, suite.errors, suite.skipped) == (3, 1, 1, 0)
    assert cases["ok"].is_passed
    (failure,) = cases["broken"].result
    assert isinstance(failure, Failure)
    assert failure.message == "receipt@5: read_order failed" and failure.type == "tool_failed"
    assert shlex.split(cases["broken"].system_out.splitlines()[0]) == [
        "tracetui", "replay", "runs dir/t.jsonl", "--run", "broken"]
    assert shlex.split(cases["broken"].system_out.splitlines()[1])[:2] == ["tracetui", "explain"]
    (error,) = cases["cut"].result  # stopped without a summary: an error, not a failure
    assert isinstance(error, Error) and error.message.startswith("incomplete")


def test_with_a_baseline_only_newly_failing_runs_fail(tmp_path):
    report = JUnitReport("new.jsonl", baseline="old.jsonl")
    report.add(_failed("regressed"), NEWLY_FAILING)
    report.add(_failed("known"), STILL_FAILING)
    report.add(_failed("fresh"), ONLY_IN_NEW)
    report.add(_ready("mended"), FIXED)
    report.add(_ready("fine"), STILL_READY)
    cases = _written(report, tmp_path / "r.xml", only_in_old=Unmatched(2, ["a", "b"]))
    suite = cases.pop("")
    assert (suite.tests, suite.failures, suite.errors, suite.skipped) == (5, 1, 0, 2)
    assert isinstance(cases["regressed"].result[0], Failure)
    assert "answer-ready in the baseline old.jsonl" in cases["regressed"].result[0].text
    for name, why in (("known", "failing in the baseline too"), ("fresh", "not in the baseline")):
        (skipped,) = cases[name].result
        assert isinstance(skipped, Skipped) and skipped.message == f"{why}: receipt@5: read_order failed"
    assert cases["mended"].is_passed and "fixed" in cases["mended"].system_out
    assert {p.name: p.value for p in suite.properties()} == {"baseline": "old.jsonl", "only_in_baseline": "2"}


HOSTILE = "a\x00b\x1b[31mred\x07 \ud800 \ufffe <tag> & \"q\" ]]> \r\nnext\u202e"


def test_hostile_trace_text_cannot_break_the_document(tmp_path):
    report = JUnitReport("t.jsonl")
    report.add(_failed(HOSTILE, reason=HOSTILE, code=HOSTILE))
    cases = _written(report, tmp_path / "r.xml", problems=[Problem(3, HOSTILE)], problem_count=1)
    suite = cases.pop("")
    (name,) = [n for n in cases if n != "trace lines"]
    assert name == xml_text(HOSTILE)
    assert "\\x1b[31mred" in name and "\\ud800" in name and "<tag>" in name  # visible, never acted on
    failure = cases[name].result[0]
    assert failure.message == "receipt@5: " + xml_text(HOSTILE) and failure.type == xml_text(HOSTILE)
    assert (suite.tests, suite.errors) == (2, 1)  # a line that is not a record fails the check: an error too
    assert cases["trace lines"].result[0].type == "unreadable_line"


def test_a_secret_in_a_reason_is_redacted(tmp_path):
    from secret_corpus import SECRETS  # the corpus the redaction tests share

    secret = SECRETS[0][2]
    report = JUnitReport("t.jsonl")
    report.add(_failed("leaky", reason=f"the key {secret} was refused"))
    path = tmp_path / "r.xml"
    report.write(str(path))
    report.close()
    assert secret not in path.read_text()


def test_the_report_is_never_written_over_an_input_nor_into_a_pipe_or_folder(tmp_path):
    trace = tmp_path / "t.jsonl"
    trace.write_text("{}\n")
    link = tmp_path / "link.xml"
    link.symlink_to(trace)
    fifo = tmp_path / "pipe.xml"
    os.mkfifo(fifo)
    assert "is the trace" in output_problem(str(trace), [str(trace)])
    assert "is the trace" in output_problem(str(link), [str(trace)])  # through a link too
    assert "not a regular file" in output_problem(str(fifo), [str(trace)])
    assert "not a regular file" in output_problem(str(tmp_path), [str(trace)]) or \
        "folder" in output_problem(str(tmp_path), [str(trace)])
    assert "does not exist" in output_problem(str(tmp_path / "no" / "r.xml"), [str(trace)])
    assert output_problem(str(tmp_path / "r.xml"), [str(trace), "-"]) is None


def test_a_report_replaces_an_old_one_atomically(tmp_path):
    path = tmp_path / "r.xml"
    path.write_text("old")
    report = JUnitReport("t.jsonl")
    report.add(_ready("ok"))
    _written(report, path)
    assert path.read_text().startswith("<?xml") and not list(tmp_path.glob(".*tmp"))


@pytest.mark.parametrize("trace_file", ["-"])
def test_standard_input_says_how_to_replay(tmp_path, trace_file):
    report = JUnitReport(trace_file)
    report.add(_failed("x"))
    cases = _written(report, tmp_path / "r.xml")
    assert "save the trace to a file" in cases["x"].system_out


def test_long_distinct_reasons_are_not_kept_in_memory_run_after_run(tmp_path):
    """Each run's testcase goes to a temporary file; the texts remembered across runs must not hold every
    long reason (200 distinct 100 kB reasons once stayed cached: 40 MB, growing with the runs)."""
    import tracemalloc

    report = JUnitReport("t.jsonl")
    tracemalloc.start()
    try:
        for k in range(200):
            report.add(_failed(f"r{k}", reason=f"{k} " + "word " * 20_000))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 8_000_000
    cases = _written(report, tmp_path / "r.xml")
    assert cases["r7"].result[0].text.startswith("tool_failed: receipt@5: 7 word word")  # the whole reason kept


def test_a_long_reason_is_cut_in_the_failure_message_and_whole_in_its_text(tmp_path):
    """CI shows the message attribute on one line: a megabyte there (twice per run, with the text) is unreadable."""
    report = JUnitReport("t.jsonl")
    report.add(_failed("long", reason="word " * 20_000))
    (failure,) = _written(report, tmp_path / "r.xml")["long"].result
    assert len(failure.message) < 600 and failure.message.endswith("characters more in the failure's text)")
    assert failure.text.count("word") == 20_000


def test_a_run_id_shown_redacted_or_escaped_is_quoted_and_said_to_differ(tmp_path):
    """The id is made safe before it is quoted: a redacted id once read ``--run <redacted>``, a shell redirect."""
    secret = "sk-proj-ABCDEFGHIJKLMNOPQRSTUVWX1234567890abcd"
    report = JUnitReport("t.jsonl")
    report.add(_failed(secret))
    report.add(_failed("plain-id"))
    cases = _written(report, tmp_path / "r.xml")
    out = cases["<redacted>"].system_out
    assert secret not in out and "--run '<redacted>'\n" in out
    assert out.startswith("the run id or the file name is shown redacted or escaped here: copy it from the trace\n")
    odd = JUnitReport("t\x1b.jsonl")  # a file name with a control character: escaped, so said too
    odd.add(_failed("plain-id"))
    assert _written(odd, tmp_path / "o.xml")["plain-id"].system_out.startswith("the run id or the file name is")
    assert cases["plain-id"].system_out == ("tracetui replay t.jsonl --run plain-id\n"
                                            "tracetui explain t.jsonl --run plain-id\n")
