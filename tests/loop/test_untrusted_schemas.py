"""A trace's tool schemas are untrusted: a pattern cannot hang the loop, and no $ref is fetched (issue 18)."""
from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from ref_server import counting_server  # noqa: F401 - a fixture

from tracetui.cli import main
from tracetui.loop.validation import SCHEMA_UNCHECKED, validate_arguments
from tracetui.replay.pointer import EditError
from tracetui.replay.replay import replay
from tracetui.trace.reader import read_trace
from tracetui.trace.responsibility import HARNESS, responsibility
from tracetui.trace.writer import encode_record

ROOT = Path(__file__).resolve().parents[2]
PATTERN = "/inputs/tools/0/parameters/properties/order_id/pattern"
ARGUMENTS = "/responses/0/body/output/0/arguments"
REDOS, REDOS_TEXT = "^(a+)+$", "a" * 46 + "!"  # Python's re backtracks 2**46 ways on this
SAFE_RUN = 60  # seconds: only a safety net, so a regression fails instead of hanging the suite


def single_run(name: str = "single"):
    return read_trace(ROOT / "sample_traces" / "scenarios.jsonl").runs[name]


def write_redos_trace(path: Path) -> str:
    """The sample run ``single`` whose tool's ``order_id`` pattern is ``^(a+)+$`` and whose model sends 46
    ``a`` and a ``!``. Made with a harmless pattern of the same shape, then renamed in the text, so that
    building it cannot hang whatever engine runs patterns."""
    outcome = replay(single_run(), [(PATTERN, "^(b+)-$"), (ARGUMENTS, json.dumps({"order_id": "b" * 46 + "!"}))])
    text = b"".join(encode_record(r) for r in outcome.records)
    path.write_bytes(text.replace(b"^(b+)-$", REDOS.encode()).replace(b"b" * 46 + b"!", REDOS_TEXT.encode()))
    return str(path)


def write_run_with_parameters(path: Path, parameters: dict) -> str:
    """The failing sample run ``cross_tenant`` as written by a hand other than tracetui's: its tool's schema
    replaced (failing, so that explain re-runs it)."""
    run = single_run("cross_tenant")
    first = copy.deepcopy(run.run)
    first["inputs"]["tools"][0]["parameters"] = parameters
    path.write_bytes(b"".join(encode_record(r) for r in (first, *run.events, run.summary)))
    return str(path)


def tracetui(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "tracetui", *args], capture_output=True, text=True,
                          timeout=SAFE_RUN, cwd=ROOT)


@pytest.mark.parametrize("command", [["replay", "{f}", "--run", "single"], ["explain", "{f}", "--run", "single"],
                                     ["check", "{f}", "--explain"]])
def test_a_catastrophic_pattern_in_a_native_trace_is_decided_at_once(tmp_path, command):
    path = write_redos_trace(tmp_path / "redos.jsonl")
    out = tracetui(*(a.format(f=path) for a in command))
    assert out.returncode in (0, 1), out.stderr  # (run in a child: a pattern stuck in re could not be timed out)
    assert "does not match '^(a+)+$'" in out.stdout


def test_a_pattern_that_needs_backtracking_is_not_passed_but_unchecked_in_words():
    tool = {"name": "read_order", "parameters": {"type": "object", "properties": {
        "order_id": {"type": "string", "pattern": "^(?=o-)o-[0-9]+$"}}}}
    args, error, message = validate_arguments(tool, "read_order", '{"order_id": "o-1"}')
    assert (args, error) == (None, SCHEMA_UNCHECKED)
    assert message == ("arguments not accepted unchecked: pattern '^(?=o-)o-[0-9]+$' not checked: tracetui does "
                       "not run lookahead or lookbehind (they can take unbounded time)")


def test_an_undecided_schema_stops_the_run_blamed_on_the_harness_without_burning_repair_rounds():
    """The tool's schema is the harness's: no argument the model could send makes it decidable."""
    outcome = replay(single_run(), [(PATTERN, "^(?=o-)o-[0-9]+$")])
    arguments = [e for e in outcome.replayed.events if e["lane"] == "arguments"]
    assert [(e["outcome"], e["code"]) for e in arguments] == [("failed", SCHEMA_UNCHECKED)]
    assert arguments[0]["data"]["attempt"] == 1
    verdict = outcome.after
    assert verdict["first_failure"]["code"] == SCHEMA_UNCHECKED
    assert responsibility(verdict["first_failure"]) == HARNESS


@pytest.mark.parametrize("pattern, text, fits", [
    ("^o-[0-9]+$", "o-1\n", False),  # ECMA-262's $ is the end of the text (Python's re matched before a newline)
    ("^\\u006f-[0-9]+$", "o-1", True),  # an ECMA \uXXXX escape
    ("^\\\\u006f$", "\\u006f", True),  # an escaped backslash, then the letters
    ("o-", "the o-1", True),  # search, not match: JSON Schema's patterns are not anchored
])
def test_patterns_are_read_as_json_schema_reads_them(pattern, text, fits):
    tool = {"name": "t", "parameters": {"type": "object", "properties": {"s": {"type": "string", "pattern": pattern}}}}
    assert (validate_arguments(tool, "t", json.dumps({"s": text}))[1] is None) == fits


def test_an_edited_schema_with_a_remote_ref_is_refused_in_words_and_nothing_is_fetched(counting_server):
    url, requests = counting_server
    with pytest.raises(EditError) as refused:
        replay(single_run(), [("/inputs/tools/0/parameters", {"$ref": url})])
    assert str(refused.value) == ("cannot re-run with this edit: a tool's parameters are not a JSON Schema the loop "
                                  "can check arguments with: $ref not followed: tracetui fetches no reference from "
                                  f"outside the schema (no network, no file): '{url}'")
    assert requests == []


@pytest.mark.parametrize("command", [["replay", "{f}", "--run", "cross_tenant"],
                                     ["explain", "{f}", "--run", "cross_tenant"], ["check", "{f}", "--explain"]])
def test_a_native_trace_with_a_remote_ref_sends_no_request(tmp_path, counting_server, command):
    url, requests = counting_server
    path = write_run_with_parameters(tmp_path / "ref.jsonl", {"$ref": url})
    CliRunner().invoke(main, [a.format(f=path) for a in command])
    assert requests == []
    if command[0] == "replay":
        out = CliRunner().invoke(main, [a.format(f=path) for a in command])
        assert out.exit_code == 2 and "fetches no reference from outside the schema" in out.output


def test_a_ref_inside_the_schema_still_resolves():
    tool = {"name": "t", "parameters": {"$id": "https://example.invalid/s.json", "type": "object",
                                        "properties": {"id": {"$ref": "#/$defs/id"}},
                                        "$defs": {"id": {"type": "string"}}}}
    assert validate_arguments(tool, "t", '{"id": "x"}')[1] is None
    assert validate_arguments(tool, "t", '{"id": 1}')[2] == "id: 1 is not of type 'string'"
