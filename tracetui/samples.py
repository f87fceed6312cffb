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


#: recordings in ``responses/`` made from the built-in provider's wire: file -> (scenario, provider). Each is
#: the bodies that provider answered, one per model call, as ``run --responses FILE --provider P`` reads them
RECORDINGS: dict[str, tuple[str, str]] = {"anthropic_normal.json": ("single", "anthropic")}


def recipes(responses_dir: Path = RESPONSES_DIR) -> dict[str, list[str]]:
    out = dict(RECIPES)
    for name in RECORDED:
        out[f"recorded-{name}.jsonl"] = ["run", "--responses", str(responses_dir / f"{name}.json"),
                                         "--run-id", f"recorded-{name}"]
    for name, (_, provider) in RECORDINGS.items():  # a recording in another API's shape, run as the README says
        stem = name.removesuffix(".json")
        out[f"recorded-{stem}.jsonl"] = ["run", "--responses", str(responses_dir / name), "--provider", provider,
                                         "--run-id", f"recorded-{stem}"]
    return out


def recording(name: str) -> bytes:
    """The recording ``name`` (:data:`RECORDINGS`) as it is committed: the built-in provider's answers to the
    scenario's model calls, every HTTP 200 body in call order, as indented JSON."""
    import json

    from tracetui.loop.runner import run_scenario

    scenario, provider = RECORDINGS[name]
    bodies = [e["data"]["response"]["body"] for e in run_scenario(scenario, provider=provider).events
              if e.get("lane") == "http" and (e.get("data") or {}).get("response", {}).get("status") == 200]
    return (json.dumps(bodies, indent=2) + "\n").encode()
