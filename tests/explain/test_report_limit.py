"""``explain --limit N`` shows N proposals in all, in text and in JSON alike, numbered once across the lists."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from tracetui.cli import main

SCENARIOS = Path(__file__).resolve().parent.parent.parent / "sample_traces" / "scenarios.jsonl"
NUMBERED = re.compile(r"^ *(\d+)\. (?:what if: |partial: )?(.*)$")


def _text(run_id: str, *flags: str) -> list[tuple[int, str]]:
    out = CliRunner().invoke(main, ["explain", str(SCENARIOS), "--run", run_id, *flags])
    return [(int(m[1]), m[2]) for m in map(NUMBERED.match, out.output.splitlines()) if m]


def _data(run_id: str, *flags: str) -> tuple[list[tuple[int, str]], dict]:
    out = CliRunner().invoke(main, ["explain", str(SCENARIOS), "--run", run_id, "--json", *flags])
    data = json.loads(out.output)
    return [(p["rank"], p["words"]) for key in ("fixes", "what_ifs", "partials") for p in data[key]], data


@pytest.mark.parametrize("run_id", ["write_unguarded", "response_failed", "truncated", "repeat"])
@pytest.mark.parametrize("limit", ["1", "2", "5"])
def test_json_lists_what_the_text_lists_in_the_same_order_and_numbering(run_id, limit):
    text = _text(run_id, "--limit", limit)
    data, _ = _data(run_id, "--limit", limit)
    assert data == text
    assert [rank for rank, _ in data] == list(range(1, len(data) + 1))  # one numbering, no repeats
    assert len(data) <= int(limit)


def test_one_budget_across_fixes_and_what_ifs():
    data, document = _data("write_unguarded", "--limit", "1")
    assert len(data) == 1 and len(document["fixes"]) == 1 and document["what_ifs"] == []
    assert document["more"] == 1  # the what-if left out, as the text's "… 1 more" says


def test_a_what_if_and_a_partial_are_ranked_one_and_two():
    data, document = _data("response_failed")
    assert [p["rank"] for p in document["what_ifs"]] == [1] and [p["rank"] for p in document["partials"]] == [2]
