"""Imported runs can be found again where they came from: names stable whatever the file order, and the full
trace id and the service in ``check --json`` and ``explain --json``."""
from __future__ import annotations

import json

from click.testing import CliRunner
from otel_builders import span, traces_data, write

from tracetui.cli import main
from tracetui.otel.detect import read_any

#: two traces sharing their first 16 digits: 20 name them (4 more at a time)
SHARED = ("4bf92f3577b34da6a3ce929d0e0e4736", "4bf92f3577b34da6b000000000000001")
ALONE = "0af7651916cd43dd8448eb211c80319c"


def _run(trace_id: str, failed: bool = False) -> dict:
    root = span("invoke_agent orders", f"{trace_id[:15]}1", "", 0, 10, trace=trace_id, status=2 if failed else 0,
                message="boom" if failed else "", gen_ai__operation__name="invoke_agent",
                gen_ai__agent__name="orders")
    return traces_data(root)


def _names(path) -> dict[str, str]:
    """Trace id → run name."""
    return {r.run["otel"]["trace_id"]: r.run_id for r in read_any(path).runs.values()}


def test_names_take_a_longer_prefix_where_eight_digits_collide_in_any_order(tmp_path):
    forward = _names(write(tmp_path / "a.jsonl", _run(SHARED[0]), _run(ALONE), _run(SHARED[1])))
    backward = _names(write(tmp_path / "b.jsonl", _run(SHARED[1]), _run(ALONE), _run(SHARED[0])))
    assert forward == backward
    assert forward == {SHARED[0]: "orders-4bf92f3577b34da6a3ce", SHARED[1]: "orders-4bf92f3577b34da6b000",
                       ALONE: "orders-0af76519"}
    assert not any("#" in name for name in forward.values())


def test_check_and_explain_json_carry_the_trace_id_and_the_service(tmp_path):
    path = write(tmp_path / "runs.jsonl", _run(ALONE, failed=True))
    checked = json.loads(CliRunner().invoke(main, ["check", "--json", path]).output)
    [verdict] = checked["runs"]
    assert verdict["trace_id"] == ALONE and verdict["service_name"] == "shop-agent"
    result = CliRunner().invoke(main, ["explain", "--json", path, "--run", verdict["run_id"]])
    explained = json.loads(result.output)
    assert explained["trace_id"] == ALONE and explained["service_name"] == "shop-agent"


def test_a_native_runs_json_has_no_trace_id(tmp_path):
    from pathlib import Path

    sample = Path(__file__).resolve().parents[2] / "sample_traces" / "fault-429.jsonl"
    checked = json.loads(CliRunner().invoke(main, ["check", "--json", str(sample)]).output)
    assert checked["runs"] and not any("trace_id" in v for v in checked["runs"])


def test_two_calls_of_one_agent_whose_span_ids_share_four_digits_get_longer_suffixes_not_a_counter(tmp_path):
    root = span("request", "00000000000000f0", "", 0, 20, trace=ALONE)
    calls = [span("invoke_agent orders", f"abcd00000000000{n}", "00000000000000f0", n, 10 + n, trace=ALONE,
                  gen_ai__operation__name="invoke_agent", gen_ai__agent__name="orders") for n in (1, 2)]
    forward = sorted(read_any(write(tmp_path / "a.jsonl", traces_data(root, *calls))).runs)
    backward = sorted(read_any(write(tmp_path / "b.jsonl", traces_data(*reversed(calls)), traces_data(root))).runs)
    assert forward == backward == ["orders-0af76519-abcd000000000001", "orders-0af76519-abcd000000000002"]


def test_checks_closing_tally_agrees_with_its_lines_on_runs_without_a_root(tmp_path):
    failed = span("chat m", "00000000000000b1", "00000000000000ff", 0, 5, trace=SHARED[0], status=2,
                  message="boom", gen_ai__operation__name="chat")
    cut_short = span("chat m", "00000000000000c1", "00000000000000fe", 0, 5, trace=ALONE,
                     gen_ai__operation__name="chat")
    result = CliRunner().invoke(main, ["check", write(tmp_path / "runs.jsonl", traces_data(failed),
                                                      traces_data(cut_short))])
    lines = [line for line in result.output.splitlines() if line.startswith(("✓", "✗", "…", "!"))]
    tally = next(line for line in result.output.splitlines() if line.startswith("2 run(s)"))
    said_incomplete = sum("incomplete" in line for line in lines)
    assert f"{said_incomplete} incomplete" in tally and "1 failed" in tally and said_incomplete == 1
