"""The scenario matrix in every wire shape: the same verdicts, except where an API cannot express a scenario.

`tracetui generate --provider NAME` runs the built-in provider as that API's fake
server; every difference from the Responses API's verdicts must be one that
`tracetui scenarios` declares (and each declared one must be real).
"""
from __future__ import annotations

import orjson
import pytest
from click.testing import CliRunner

from tracetui.cli import main
from tracetui.loop.ablations import ABLATIONS
from tracetui.loop.runner import run_scenario
from tracetui.loop.scenarios import FAULT_CHOICES, PROVIDERS, SCENARIOS, differences, expected_status
from tracetui.providers.fake_wire import WIRES

OTHERS = [p for p in PROVIDERS if p != "openai-responses"]


def matrix():
    for name in SCENARIOS:
        for ablation in ABLATIONS:
            yield name, ablation, ()
        for fault in FAULT_CHOICES:
            yield name, "complete", (fault,)


@pytest.mark.parametrize("provider", PROVIDERS)
def test_every_scenario_ends_as_expected_in_every_wire_shape(provider):
    for name in SCENARIOS:
        assert run_scenario(name, provider=provider).status == expected_status(name, provider), name


@pytest.mark.parametrize("provider", OTHERS)
def test_the_whole_matrix_gives_the_responses_verdicts_except_where_declared(provider):
    declared = set(differences(provider))
    undeclared, shown = [], set()
    for name, ablation, faults in matrix():
        ours = run_scenario(name, ablation, faults, provider=provider).status
        theirs = run_scenario(name, ablation, faults).status
        if ours != theirs:
            shown.add(name)
            if name not in declared:
                undeclared.append((name, ablation, faults, theirs, ours))
    assert undeclared == []
    assert declared <= shown | {n for n in declared if expected_status(n, provider) == SCENARIOS[n].expect}


@pytest.mark.parametrize("provider", OTHERS)
def test_declared_fault_differences_are_real(provider):
    for fault, (status, _) in WIRES[provider].fault_differences.items():
        faults = (fault,) * 3  # past the retry budget: the fault decides the run
        assert run_scenario("single", faults=faults, provider=provider).status == status


def test_generate_speaks_the_chosen_wire_shape(tmp_path):
    out = tmp_path / "a.jsonl"
    res = CliRunner().invoke(main, ["generate", "--scenario", "single", "--provider", "anthropic", "-o", str(out)])
    assert res.exit_code == 0, res.output
    records = [orjson.loads(line) for line in out.read_bytes().splitlines()]
    assert records[0]["inputs"]["provider"] == "anthropic"
    attempt = next(r for r in records if r["rec"] == "event" and r["lane"] == "http")
    assert attempt["data"]["request"]["url"] == "fake://provider/v1/messages"
    assert attempt["data"]["response"]["body"]["type"] == "message"
    assert records[-1]["status"] == "answer_ready"


def test_scenarios_lists_what_each_api_cannot_express():
    out = CliRunner().invoke(main, ["scenarios"]).output
    for provider in PROVIDERS:
        assert f"  {provider}" in out
        for name, (status, why) in WIRES[provider].differences.items():
            assert f"{name}" in out and why in out
    assert "Anthropic answers an overload with 529 overloaded_error" in out
