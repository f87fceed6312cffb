"""The share page: the run as the explorer shows it, and trace content only ever as text (issue 23)."""
from __future__ import annotations

import re
from html import escape
from html.parser import HTMLParser
from pathlib import Path

import orjson
import pytest

from tracetui.otel.detect import read_any
from tracetui.share import share_page
from tracetui.trace.reader import RunData, read_trace

from hostile_share import HOSTILE_RUN_ID, JS_URL, ONERROR, SCRIPT, clean_trace, hostile_trace
from test_terminal_output import RAW_CONTROLS, SECRET

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "sample_traces"


class Elements(HTMLParser):
    """Every start tag with its attributes, as a browser's parser would read them."""

    def __init__(self, page: str) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.feed(page)

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))


def run_of(path: Path, run_id: str) -> RunData:
    return read_trace(path).runs[run_id]


def page_of(path: Path, *run_ids: str, grouped: bool = False) -> str:
    trace = read_trace(path)
    return share_page([trace.runs[r] for r in run_ids], str(path), "tracetui share test", grouped=grouped)


@pytest.fixture(scope="module")
def hostile(tmp_path_factory) -> str:
    return page_of(hostile_trace(tmp_path_factory.mktemp("hostile")), HOSTILE_RUN_ID)


def test_the_page_shows_the_lanes_with_the_first_failure_marked_the_banner_and_the_fixes(tmp_path):
    page = page_of(SAMPLES / "scenarios.jsonl", "cross_tenant")
    marked = re.findall(r'<td class="deciding" data-first-failure="true"[^>]*>(.*?)</td>', page)
    assert len(marked) == 1 and "permission_denied ◀" in marked[0]
    assert '<th class="lane-name ff-lane" scope="row">▶ authorization</th>' in page
    assert "first failing boundary: AUTHORIZATION at step 4" in page
    assert '<span class="resp guard">guard</span>' in page and "a check did its job" in page
    assert "o-2 belongs to tenant shop-b" in page
    # the proven what-ifs, each with the replay command that reproduces it
    assert "the caller would need tenant shop-b and user u-2" in page
    assert "tracetui replay " in page and "--run cross_tenant --set" in page
    # every event, the deciding one open
    assert page.count('<details class="event') == 4
    assert re.search(r'<details class="event deciding-event" id="r1-e3" open>', page)
    assert "tracetui 0.1.0" in page and "tracetui share test" in page


def test_a_fixable_run_lists_its_fix_and_command():
    page = page_of(SAMPLES / "transient-3.jsonl", "single-transient-3")
    assert re.search(r"<p>\d+ proven fix(es)? \(\d+ edits? tried by replay\)</p>", page)
    assert "--set /inputs/budgets/max_retries=3" in page


def test_a_recorded_agent_run_and_an_otel_import_list_no_fix_and_say_why(tmp_path):
    imported = read_any(str(SAMPLES / "otel-scenarios.jsonl")).runs["cross_tenant"]
    otel = share_page([imported], "spans.jsonl", "c")
    assert "cannot be re-run" in otel
    trace = read_trace(clean_trace(tmp_path))
    run = trace.runs["cross_tenant"]
    run.run["inputs"]["source"] = "record"
    called = []
    page = share_page([run], "agent.jsonl", "c", prove=lambda r: called.append(r))
    assert not called  # never re-run: the page does not know the user's command
    assert "tracetui explain agent.jsonl --run cross_tenant -- COMMAND" in page
    assert "tracetui replay" not in page


def test_hostile_text_in_a_tool_argument_and_the_run_id_renders_as_text(hostile):
    tags = Elements(hostile).tags
    assert not [t for t, _ in tags if t in ("script", "img", "svg", "iframe", "object", "embed", "base", "link")]
    for tag, attrs in tags:
        assert not [a for a in attrs if a.startswith("on")], (tag, attrs)
        for name in ("href", "src", "action", "formaction"):
            value = attrs.get(name)
            assert value is None or value.startswith("#"), (tag, attrs)  # only the page's own anchors
    for planted in (SCRIPT, ONERROR, HOSTILE_RUN_ID):  # in the run id, the summaries and the reason: as text
        assert escape(planted, quote=True) in hostile, planted
    for planted in (SCRIPT, ONERROR, JS_URL):  # in the tool argument: as the JSON of its data
        assert escape(orjson.dumps(planted).decode()[1:-1], quote=True) in hostile, planted


def test_no_secret_and_no_raw_control_character_reaches_the_page(hostile):
    assert SECRET not in hostile and SECRET[:20] not in hostile
    assert "&lt;redacted&gt;" in hostile
    assert not any(c in hostile for c in RAW_CONTROLS)
    assert "\\x1b]52;c;" in hostile and "\\u202eevil" in hostile  # the terminal fixtures, shown literally


def test_the_page_fetches_nothing_and_allows_nothing(hostile):
    assert not re.search(r"""(?:src|href|action)\s*=\s*["']?\s*(?:https?:|//|javascript:|data:)""", hostile, re.I)
    csp = re.search(r'<meta http-equiv="Content-Security-Policy" content="([^"]*)">', hostile)
    assert csp and csp.group(1).startswith("default-src 'none'") and "script-src" not in csp.group(1)


def test_all_failed_groups_runs_by_signature_with_links_within_the_page():
    trace = read_trace(SAMPLES / "scenarios.jsonl")
    failing = [run for run in trace.runs.values() if not run.verdict()["ready"]]
    page = share_page(failing, "scenarios.jsonl", "c", grouped=True, prove=lambda run: _nothing(run))
    assert f"{len(failing)} runs, " in page
    heading = re.search(r'<h3 class="signature">2 × generation · incomplete · (.*?)</h3>', page)
    assert heading and "max_output_tokens; # partial tool call(s) not executed" in heading.group(1)
    links = re.findall(r'href="([^"]*)"', page)
    assert links and all(re.fullmatch(r"#r\d+(-e\d+)?", link) for link in links)
    assert page.count('<section class="run"') == len(failing)


def _nothing(run):
    from tracetui.explain.search import Explanation

    return Explanation(run, run.verdict(), reason="not proven in this test")
