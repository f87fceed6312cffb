"""An OTLP file's tool schemas are untrusted: reading one never hangs on a pattern, never fetches a $ref
(issue 18): neither from a network, nor from this machine's files."""
from __future__ import annotations

import json
import socket
import subprocess
import sys
from pathlib import Path

import orjson
from click.testing import CliRunner
from otel_builders import span, traces_data, write
from ref_server import counting_server  # noqa: F401 - a fixture

from tracetui.cli import main
from tracetui.otel.detect import read_any

ROOT = Path(__file__).resolve().parents[2]
REDOS, REDOS_TEXT = "^(a+)+$", "a" * 46 + "!"  # Python's re backtracks 2**46 ways on this
SAFE_RUN = 60  # seconds: only a safety net, so a regression fails instead of hanging the suite
COMMANDS = [["check", "{f}"], ["explain", "{f}"], ["replay", "{f}", "--run", "{run}"]]


def otlp_file(path: Path, parameters: dict, arguments: dict) -> str:
    """An agent whose model calls read_order once, with a declared schema of ``parameters``."""
    tools = json.dumps([{"type": "function", "name": "read_order", "parameters": parameters}])
    parts = [{"type": "tool_call", "id": "call_1", "name": "read_order", "arguments": json.dumps(arguments)}]
    return write(path, traces_data(
        span("invoke_agent shop", "a000000000000001", "", 0, 100, gen_ai__operation__name="invoke_agent",
             gen_ai__agent__name="shop"),
        span("chat gpt-x", "c000000000000001", "a000000000000001", 1, 6, kind=3, gen_ai__operation__name="chat",
             gen_ai__request__model="gpt-x", gen_ai__tool__definitions=tools,
             gen_ai__response__finish_reasons=["tool_calls"],
             gen_ai__output__messages=json.dumps([{"role": "assistant", "parts": parts,
                                                   "finish_reason": "tool_calls"}]))))


def arguments_event(path: str) -> dict:
    (run,) = read_any(path).runs.values()
    return next(e for e in run.events if e["lane"] == "arguments")


def commands(path: str) -> list[list[str]]:
    # the run's id, named from its agent and trace id (not read here: on a hostile file, reading is what is tested)
    return [[a.format(f=path, run="shop-0af76519") for a in c] for c in COMMANDS]


def tracetui(*args: str) -> subprocess.CompletedProcess:
    # in a child: a pattern stuck in re, or a read from a silent server, could not be timed out in this process
    return subprocess.run([sys.executable, "-m", "tracetui", *args], capture_output=True, text=True,
                          timeout=SAFE_RUN, cwd=ROOT)


def test_a_catastrophic_pattern_is_decided_at_once_by_check_explain_and_replay(tmp_path):
    path = otlp_file(tmp_path / "redos.otlp.jsonl", {"type": "object", "properties": {
        "order_id": {"type": "string", "pattern": REDOS}}}, {"order_id": REDOS_TEXT})
    check, explain, replay = (tracetui(*c) for c in commands(path))
    assert check.returncode == 1 and f"does not match '{REDOS}'" in check.stdout, check.stderr
    for out in (explain, replay):  # an imported run has no inputs to re-run: said, after reading the file
        assert out.returncode in (1, 2) and "Traceback" not in out.stderr, out.stderr


def test_a_pattern_that_cannot_be_decided_gives_no_verdict_and_says_so(tmp_path):
    path = otlp_file(tmp_path / "ahead.otlp.jsonl", {"type": "object", "properties": {
        "order_id": {"type": "string", "pattern": "^(?!x)o-[0-9]+$"}}}, {"order_id": "x"})
    event = arguments_event(path)
    assert event["outcome"] == "ok"
    assert event["summary"] == ("read_order arguments unchecked: pattern '^(?!x)o-[0-9]+$' not checked: tracetui "
                                "does not run lookahead or lookbehind (they can take unbounded time)")


def test_a_remote_ref_is_never_requested_and_gives_no_verdict_in_words(tmp_path, counting_server):
    url, requests = counting_server
    path = otlp_file(tmp_path / "ref.otlp.jsonl", {"$ref": url}, {"order_id": "o-1"})
    for command in commands(path):
        CliRunner().invoke(main, command)
    event = arguments_event(path)
    assert requests == []
    assert event["outcome"] == "ok" and event["summary"].startswith(
        "read_order arguments unchecked: $ref not followed: tracetui fetches no reference from outside the schema "
        f"(no network, no file): '{url}'")


def test_a_ref_to_a_server_that_never_answers_does_not_hang_check(tmp_path):
    with socket.socket() as silent:  # listens, so a connection is made, and never reads nor answers
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        url = f"http://127.0.0.1:{silent.getsockname()[1]}/s.json"
        path = otlp_file(tmp_path / "silent.otlp.jsonl", {"$ref": url}, {"order_id": "o-1"})
        out = tracetui("check", path)
    assert out.returncode in (0, 1) and "1 run(s)" in out.stdout + out.stderr, out.stderr


def test_a_file_ref_puts_nothing_of_the_file_in_the_verdict_nor_in_an_export(tmp_path):
    secret = tmp_path / "secret.json"
    secret.write_text('{"const": "CANARY-7f3a-from-a-local-file"}')
    path = otlp_file(tmp_path / "file.otlp.jsonl", {"$ref": secret.as_uri()}, {"order_id": "o-1"})
    check = CliRunner().invoke(main, ["check", path])
    exported = tmp_path / "out.otlp.jsonl"
    CliRunner().invoke(main, ["export", path, "-o", str(exported)])
    (run,) = read_any(path).runs.values()
    assert "CANARY" not in check.output
    assert b"CANARY" not in orjson.dumps([run.events, run.summary])
    assert exported.exists() and b"CANARY" not in exported.read_bytes()
    assert "$ref not followed" in arguments_event(path)["summary"]


def test_arguments_a_schema_gave_no_verdict_on_are_shown_unchecked_not_valid(tmp_path):
    from tracetui.ui.model import cell_label

    unchecked = otlp_file(tmp_path / "ahead.otlp.jsonl", {"type": "object", "properties": {
        "order_id": {"type": "string", "pattern": "^(?!x)o-[0-9]+$"}}}, {"order_id": "o-1"})
    valid = otlp_file(tmp_path / "plain.otlp.jsonl", {"type": "object", "properties": {
        "order_id": {"type": "string", "pattern": "^o-[0-9]+$"}}}, {"order_id": "o-1"})
    assert cell_label(arguments_event(unchecked)) == "unchecked"
    assert cell_label(arguments_event(valid)) == "valid"


def test_a_schema_of_false_is_a_schema_no_arguments_fit(tmp_path):
    event = arguments_event(otlp_file(tmp_path / "false.otlp.jsonl", False, {"order_id": "o-1"}))
    assert (event["outcome"], event["code"]) == ("failed", "schema_error")
    assert "False schema does not allow" in event["summary"]
