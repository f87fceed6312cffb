"""Recipes for the traces in ``sample_traces/``: each is a plain CLI invocation.

``tracetui samples`` replays the recipes; a test proves a fresh regeneration is
byte-identical to the committed files, which is the determinism guarantee.
"""
from __future__ import annotations

import os
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
RECORDED = ("normal", "cross_tenant", "no_receipt", "rate_limited_then_ok")


def recipes(responses_dir: Path = RESPONSES_DIR) -> dict[str, list[str]]:
    out = dict(RECIPES)
    for name in RECORDED:
        out[f"recorded-{name}.jsonl"] = ["run", "--responses", str(responses_dir / f"{name}.json"),
                                         "--run-id", f"recorded-{name}"]
    return out


def regenerate(directory: str | os.PathLike[str], responses_dir: Path = RESPONSES_DIR) -> list[str]:
    from tracetui.cli import main

    Path(directory).mkdir(parents=True, exist_ok=True)
    written = []
    for name, argv in recipes(responses_dir).items():
        argv = [arg.replace("{samples}", str(directory)) for arg in argv]  # a sample made from another
        try:
            main.main(args=[*argv, "-o", str(Path(directory) / name)], prog_name="tracetui", standalone_mode=False)
        except SystemExit as exc:  # `run` exits 1 for a failed run: still a sample
            if exc.code not in (0, 1, None):
                raise
        written.append(name)
    return written
