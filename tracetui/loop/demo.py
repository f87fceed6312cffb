"""The built-in demo ``tracetui open`` shows without a file: every failure, run in memory."""
from __future__ import annotations

from tracetui.loop.ablations import ABLATIONS
from tracetui.loop.runner import run_scenario
from tracetui.loop.scenarios import FAULT_CHOICES, SCENARIOS
from tracetui.trace.source import MemorySource, run_data_from_records


def demo_source() -> MemorySource:
    """Every scenario, every ablation of ``single`` and every HTTP fault, run in memory."""
    results = [run_scenario(name) for name in SCENARIOS]
    results += [run_scenario("single", ablation) for ablation in ABLATIONS if ablation != "complete"]
    results += [run_scenario("single", faults=(fault,)) for fault in FAULT_CHOICES]
    results.append(run_scenario("single", transient_failures=3))
    return MemorySource([run_data_from_records(r.records) for r in results], "built-in demo")
