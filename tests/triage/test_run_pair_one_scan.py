"""Two runs of one big trace (``diff A B``) found in one strict scan that stops once both have ended,
with every error load_run would give, in its words."""
from __future__ import annotations

from pathlib import Path

import pytest

from tracetui.trace import checking
from tracetui.trace.reader import TraceReadError
from tracetui.triage.run_pair import load_run, load_runs

SAMPLES = Path(__file__).resolve().parents[2] / "sample_traces"


@pytest.fixture
def scans(monkeypatch):
    """Every strict scan made, and how far each read (a small file is scanned as a big one would be)."""
    monkeypatch.setattr(checking, "SMALL_FILE_BYTES", 0)
    made: list[checking.StrictScan] = []
    real_init = checking.StrictScan.__init__

    def init(self, *args, **kwargs):
        real_init(self, *args, **kwargs)
        made.append(self)

    monkeypatch.setattr(checking.StrictScan, "__init__", init)
    return made


def _trace(tmp_path: Path, copies: int = 40) -> str:
    """scenarios.jsonl's runs, then ``copies`` more files' worth under new ids (a tail no diff of its first
    runs needs to read)."""
    text = (SAMPLES / "scenarios.jsonl").read_text()
    path = tmp_path / "big.jsonl"
    path.write_text(text + "".join(text.replace('"run_id":"', f'"run_id":"c{k}-') for k in range(copies)))
    return str(path)


def test_two_runs_of_one_file_take_one_scan_that_stops_when_both_have_ended(tmp_path, scans):
    trace = _trace(tmp_path)
    a, b = load_runs([(trace, "single"), (trace, "cross_tenant")], chunk_bytes=4096)
    assert (a.run_id, b.run_id) == ("single", "cross_tenant")
    assert b.verdict()["status"] == "permission_denied" and a.verdict()["status"] == "answer_ready"
    assert len(scans) == 1
    assert scans[0].lines.pos < Path(trace).stat().st_size // 4  # stopped long before the end
    # the same runs as two separate loads give
    assert [e["seq"] for e in b.events] == [e["seq"] for e in load_run(trace, "cross_tenant").events]


def test_a_run_near_the_end_and_one_without_a_summary_are_found_in_the_same_scan(tmp_path, scans):
    trace = _trace(tmp_path, copies=3)
    lines = Path(trace).read_text().splitlines(keepends=True)
    no_summary = [line for line in lines if not ('"rec":"summary"' in line and '"run_id":"c2-refund"' in line)]
    Path(trace).write_text("".join(no_summary))
    a, b = load_runs([(trace, "c2-single"), (trace, "c2-refund")], chunk_bytes=4096)
    assert (a.run_id, b.run_id) == ("c2-single", "c2-refund") and b.summary is None
    assert len(scans) == 1


@pytest.mark.parametrize("ids", [("singel", "single"), ("single", "singel"), ("singel", "nope")])
def test_a_missing_run_is_said_as_load_run_says_it_first_error_first(tmp_path, scans, ids):
    trace = _trace(tmp_path, copies=2)
    with pytest.raises(TraceReadError) as separately:
        for run_id in ids:
            load_run(trace, run_id)
    scans.clear()
    with pytest.raises(TraceReadError) as together:
        load_runs([(trace, run_id) for run_id in ids])
    assert str(together.value) == str(separately.value)
    assert "no run 'singel'" in str(together.value) or "no run 'nope'" in str(together.value)
    assert len(scans) == 1


def test_unreadable_and_empty_files_are_sentences_as_before(tmp_path, scans):
    gone = str(tmp_path / "gone.jsonl")
    with pytest.raises(TraceReadError, match="gone.jsonl: no such file"):
        load_runs([(gone, "a"), (gone, "b")])
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    with pytest.raises(TraceReadError, match="no runs found"):
        load_runs([(str(empty), "a"), (str(empty), "b")])


def test_an_otlp_file_is_read_once(monkeypatch):
    from tracetui.otel import detect

    reads: list[str] = []
    real = detect.read_any
    monkeypatch.setattr(detect, "read_any", lambda path, *a: reads.append(path) or real(path, *a))
    trace = str(SAMPLES / "otel-scenarios.jsonl")
    a, b = load_runs([(trace, "single"), (trace, "refund")])
    assert (a.run_id, b.run_id) == ("single", "refund") and a.run["source"] == "otel"
    assert reads == [trace]


@pytest.mark.parametrize("big", [True, False])
def test_a_second_name_of_the_same_file_names_its_own_errors(tmp_path, monkeypatch, big):
    """``diff runs.jsonl:a link.jsonl:nope`` (a link, or ./runs.jsonl): the error names link.jsonl, as before."""
    if big:
        monkeypatch.setattr(checking, "SMALL_FILE_BYTES", 0)
    trace = _trace(tmp_path, copies=2)
    link = tmp_path / "link.jsonl"
    link.symlink_to(trace)
    for other in (str(link), str(tmp_path / "." / "big.jsonl")):
        with pytest.raises(TraceReadError) as separately:
            for path, run_id in ((trace, "single"), (other, "singel")):
                load_run(path, run_id)
        with pytest.raises(TraceReadError) as together:
            load_runs([(trace, "single"), (other, "singel")])
        assert str(together.value) == str(separately.value)
        assert str(together.value).startswith(f"{other}: no run 'singel'")
