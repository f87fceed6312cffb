"""What every producer test asserts: one run per planted question, in order, each failing first on its lane."""
from __future__ import annotations

from typing import Any

from tracetui.otel.detect import read_any


def first_lanes(path, planted: dict[str, str]) -> dict[str, Any]:
    """The runs of ``path`` by planted question, after asserting each one's first failing lane."""
    trace = read_any(path)
    assert not trace.problems, [p.message for p in trace.problems]
    runs = list(trace.runs.values())
    assert len(runs) == len(planted), [r.run_id for r in runs]
    lanes = {q: (r.verdict()["first_failure"] or {}).get("lane", "") for q, r in zip(planted, runs)}
    assert lanes == planted
    return dict(zip(planted, runs))


def failure(run) -> dict[str, Any]:
    return run.verdict()["first_failure"]
