"""Shared helpers for the explorer's tests: apps over the demo or over trace files."""
from __future__ import annotations

import pytest

from tracetui.loop.runner import records_of, run_scenario
from tracetui.loop.scenarios import SCENARIOS
from tracetui.loop.demo import demo_source
from tracetui.trace.writer import write_trace


@pytest.fixture(scope="session")
def demo():
    return demo_source()


@pytest.fixture(scope="session")
def scenario_records() -> list[dict]:
    return list(records_of(iter(run_scenario(name) for name in SCENARIOS)))


@pytest.fixture
def scenarios_file(tmp_path, scenario_records) -> str:
    path = tmp_path / "scenarios.jsonl"
    write_trace(path, scenario_records)
    return str(path)
