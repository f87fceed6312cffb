"""Recipes for the traces in ``sample_traces/``: each is a plain CLI invocation.

``tracetui samples`` (:func:`tracetui.cli.regenerate_samples`) replays the
recipes; a test proves a fresh regeneration is byte-identical to the committed
files, which is the determinism guarantee.
"""
from __future__ import annotations

from pathlib import Path

from tracetui.loop.scenarios import FAULT_CHOICES

RESPONSES_DIR = Path(__file__).resolve().parent.parent / "sample_traces" / "responses"

RECIPES: dict[str, list[str]] = {
    "scenarios.jsonl": ["generate", "--all"],
    "ablations.jsonl": ["generate", "--scenario", "single", "--scenario", "parallel", "--all-ablations"],
    **{f"fault-{f}.jsonl": ["generate", "--fault", f] for f in FAULT_CHOICES},
    "transient-3.jsonl": ["generate", "--transient-failures", "3"],
    "retries-then-ok.jsonl": ["generate", "--fault", "429", "--fault", "timeout", "--seed", "7"],
    # the scenarios as OpenTelemetry GenAI spans (OTLP/JSON): opens in the explorer like any trace
    "otel-scenarios.jsonl": ["export", "{samples}/scenarios.jsonl", "--content"],
}
RECORDED = ("normal", "cross_tenant", "no_receipt", "rate_limited_then_ok", "invalid_json_arguments", "extra_field",
            "extra_field_then_answer")


def recipes(responses_dir: Path = RESPONSES_DIR) -> dict[str, list[str]]:
    out = dict(RECIPES)
    for name in RECORDED:
        out[f"recorded-{name}.jsonl"] = ["run", "--responses", str(responses_dir / f"{name}.json"),
                                         "--run-id", f"recorded-{name}"]
    return out
