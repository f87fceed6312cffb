"""One class per failed run on every surface: check, check --json, explain --json (top level, before and after),
the explorer's banner and run-list filter, and the OpenTelemetry export; for a trace the loop writes today and for
one written before the loop recorded the ablation in the failure's reason (``git show`` of an older
sample_traces/ablations.jsonl: the same runs without the phrase)."""
from __future__ import annotations

import json

import orjson
import pytest
from click.testing import CliRunner

from tracetui.cli import main
from tracetui.loop.runner import run_scenario
from tracetui.trace.responsibility import ABLATED
from tracetui.ui.app import open_paths
from tracetui.ui.model import responsibility_line, run_responsibility

RUNS = [("single", "sliding_window"), ("single", "flatten_roles"), ("duplicate_ids", "sliding_window"),
        ("cross_tenant", "complete"), ("response_cancelled", "complete")]


def _write(tmp_path, old: bool):
    path = tmp_path / ("old.jsonl" if old else "new.jsonl")
    lines = []
    for scenario, ablation in RUNS:
        for record in run_scenario(scenario, ablation).records:
            line = orjson.dumps(record).decode()
            if old:  # as the loop wrote it before: no ablation phrase in any reason
                line = line.replace(f"; {ABLATED} ({ablation})", "")
            lines.append(line)
    path.write_text("\n".join(lines) + "\n")
    return str(path)


def _surfaces(path: str, run_id: str) -> dict[str, object]:
    cli = CliRunner()
    found: dict[str, object] = {}
    text = next(line for line in cli.invoke(main, ["check", path]).stdout.splitlines()
                if line.startswith(f"✗ {run_id} "))
    found["check"] = text.rsplit("[", 1)[1].rstrip("]")
    runs = {r["run_id"]: r for r in json.loads(cli.invoke(main, ["check", path, "--json"]).stdout)["runs"]}
    found["check --json"] = runs[run_id]["responsibility"]
    data = json.loads(cli.invoke(main, ["explain", path, "--run", run_id, "--json"]).stdout)
    found["explain --json"] = data["responsibility"]
    found["explain --json before"] = data["before"]["responsibility"]
    source = open_paths([path]).scan_all()
    entry = next(e for e in source.runs() if e.run_id == run_id)
    found["run list filter"] = run_responsibility(entry)
    run = source.load(entry)
    found["banner"] = responsibility_line(run.verdict()["first_failure"], run.inputs)[0]
    return found


def _exported(path: str, tmp_path) -> dict[str, str]:
    out = tmp_path / "spans.json"
    result = CliRunner().invoke(main, ["export", path, "-o", str(out)])
    assert result.exit_code == 0, result.output
    found = {}
    for line in out.read_text().splitlines():
        for rs in json.loads(line).get("resourceSpans", []):
            for ss in rs.get("scopeSpans", []):
                for span in ss.get("spans", []):
                    attrs = {a["key"]: a["value"].get("stringValue") for a in span.get("attributes", [])}
                    if not span.get("parentSpanId") and "tracetui.failure.responsibility" in attrs:
                        found[attrs["tracetui.run.id"]] = attrs["tracetui.failure.responsibility"]
    return found


@pytest.mark.parametrize("old", [False, True], ids=["new trace", "old trace"])
def test_every_surface_gives_a_failed_run_one_class(tmp_path, old):
    path = _write(tmp_path, old)
    exported = _exported(path, tmp_path)
    for scenario, ablation in RUNS:
        run_id = scenario if ablation == "complete" else f"{scenario}-{ablation}"
        found = {**_surfaces(path, run_id), "OTLP export": exported[run_id]}
        assert len(set(found.values())) == 1, (run_id, found)
