"""Coverage and speed of `tracetui explain` over every kind of failing run tracetui produces.

Prints figures; asserts nothing (issue 14). For each failing run it asks explain for
its proven fixes and reports:

- fix coverage: the share of failing runs with a proven one-edit fix, over the runs that
  admit one. A run admits none when no single field of its inputs or responses can
  carry the fix, when a guard refused what the user asked for (nothing needs fixing), or
  when the environment failed and nothing in the user's control rides it out, or when the
  fix is outside the trace (another vendor's body: the base URL; a cancelled response); those are
  listed with the reason (and what explain proves instead);
- what-if coverage, apart: the share of failing runs with a proven what-if (an edit of the
  environment or of what a guard protects: true, but not a fix), and the runs per
  responsibility (model, harness, environment, guard);
- time per run, median and p90, beside a reference measured in the same run: one
  plain replay of the same run (explain tries a few dozen edits, each one replay);
- the total time for every run in sample_traces/;
- ``tracetui explain FILE --run ID`` as users run it (a fresh process each, min and median of
  ``--commands`` ≥ 3) for a few sample runs, beside the start-up every command pays
  (``python -c "import tracetui.cli"``): most of a real call is start-up and reading, not the search.

Run sets: `generate --all`, `generate --all --all-ablations`, `generate --all --fault F`
for every fault, every file in sample_traces/, and every recording in
sample_traces/responses/ run as `tracetui run --responses` does.

    python benchmarks/bench_explain.py [--quick] [--commands N]
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path
from typing import Iterator

sys.path.insert(0, str(Path(__file__).resolve().parent))

import measure  # noqa: E402
from measure import TRACETUI  # noqa: E402
from tracetui.explain import explain  # noqa: E402
from tracetui.explain.evidence import Evidence
from tracetui.loop.ablations import ABLATIONS
from tracetui.loop.inputs import responses_inputs
from tracetui.loop.runner import run_inputs, run_scenario
from tracetui.loop.scenarios import FAULT_CHOICES, SCENARIOS
from tracetui.replay.replay import replay
from tracetui.trace.reader import RunData, read_trace
from tracetui.trace.source import run_data_from_records

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "sample_traces"
#: The scripted model's quirks that no single field can undo, and why.
SCRIPTED_NO_SINGLE = {
    "refusal": "the scripted model refuses every request: both its call and its answer must be supplied",
    "response_failed": "the scripted model fails every request: both its call and its answer must be supplied",
    "response_cancelled": "the scripted model cancels every request: both its call and its answer must be supplied",
    "call_budget": "a bigger call budget reaches o-2, another tenant's order: the budget and the call both need a change",
}


def _runs(records) -> RunData:
    return run_data_from_records(list(records))


def run_sets(quick: bool) -> Iterator[tuple[str, RunData]]:
    for name in SCENARIOS:
        yield "generate --all", _runs(run_scenario(name).records)
    for name in SCENARIOS:
        for ablation in ABLATIONS:
            if ablation != "complete":
                yield "--all-ablations", _runs(run_scenario(name, ablation).records)
    for fault in FAULT_CHOICES:
        for name in (list(SCENARIOS)[:6] if quick else SCENARIOS):
            yield f"--fault {fault}", _runs(run_scenario(name, faults=(fault,)).records)
    for path in sorted(p for p in SAMPLES.glob("*.jsonl") if not p.name.startswith("otel-")):
        for run in read_trace(path).runs.values():
            yield f"sample {path.name}", run
    import orjson

    for path in sorted((SAMPLES / "responses").glob("*.json")):
        inputs = responses_inputs(orjson.loads(path.read_bytes()))
        yield "recording", _runs(run_inputs(path.stem, inputs).records)


def no_single_edit(run: RunData) -> str | None:
    """Why no single field can fix this run, or None when one edit should be able to."""
    ev = Evidence(run)
    scenario = ev.inputs.get("scenario")
    if ev.inputs.get("source") == "scenario":
        if scenario in SCRIPTED_NO_SINGLE:
            return SCRIPTED_NO_SINGLE[scenario]
        own = SCENARIOS[scenario].expect if scenario in SCENARIOS else "answer_ready"
        ablation = ev.inputs.get("ablation") or "complete"
        fatal = [f for f in ev.inputs.get("faults") or () if f in ("html", "vendor")]
        if own != "answer_ready" and (ablation != "complete" or fatal):
            second = f"the {ablation} ablation" if ablation != "complete" else f"the injected {fatal[0]} fault"
            return f"two independent faults: the scenario's own {own} and {second}"
        return None
    failing = ev.event(ev.failure.get("seq"))
    k = ev.exchange_of(failing) if failing else None
    answered = [i for i, x in enumerate(ev.exchanges) if x.get("status") == 200 and not x.get("error")]
    if k is not None and not any(i > k for i in answered):
        return "the recording ends at the failing response: a fix needs the next response supplied too"
    return None


#: sample runs whose explain command is timed: a guard, a model and an environment failure
COMMAND_RUNS = ("cross_tenant", "invalid_json", "stream_cut")


def commands(repeat: int) -> None:
    measure.header("bench_explain: `tracetui explain sample_traces/scenarios.jsonl --run ID` as a command")
    measure.columns()
    start = measure.startup(repeat)
    measure.row("start-up: python -c 'import tracetui.cli'", start)
    sample = SAMPLES / "scenarios.jsonl"
    for run_id in COMMAND_RUNS:
        samples = measure.series(lambda: measure.run([*TRACETUI, "explain", str(sample), "--run", run_id]), repeat)
        measure.row(f"explain --run {run_id}", [s.wall for s in samples], start, "start-up",
            note=f"(CPU median {statistics.median(s.cpu for s in samples):.3f} s)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="fewer fault runs")
    parser.add_argument("--no-list", action="store_true", help="leave out the runs that admit no one-edit fix")
    parser.add_argument("--commands", type=int, default=3, help="samples of each explain command (at least 3)")
    args = parser.parse_args()
    commands(max(3, args.commands))
    measure.header("bench_explain: coverage over every kind of failing run, and the search's own time (in-process)")
    times, replays, sample_total = [], [], 0.0
    admit = fixed = failing = any_fix = partial_only = any_what_if = what_if_only = 0
    by_class: dict[str, int] = {}
    by_set: dict[str, list[int]] = {}
    misses, none_rows = [], []
    for label, run in run_sets(args.quick):
        if run.verdict()["ready"]:
            continue
        failing += 1
        start = time.perf_counter()
        result = explain(run)
        took = time.perf_counter() - start
        start = time.perf_counter()
        replay(run)
        replays.append(time.perf_counter() - start)
        times.append(took)
        if label.startswith("sample"):
            sample_total += took
        any_fix += bool(result.fixes)
        any_what_if += bool(result.what_ifs)
        what_if_only += not result.fixes and bool(result.what_ifs)
        partial_only += not result.fixes and not result.what_ifs and bool(result.partials)
        by_class[str(result.responsibility)] = by_class.get(str(result.responsibility), 0) + 1
        reason = no_single_edit(run)
        if result.guard_held:
            reason = "a guard refused what the user asked for: nothing needs fixing"
        elif result.responsibility == "environment" and not result.fixes:
            reason = reason or "the environment failed, and nothing in the user's control rides it out"
        elif (run.verdict().get("first_failure") or {}).get("code") in ("unexpected_body", "response_cancelled") \
                and not result.fixes:  # the fix is outside the trace: the base URL or adapter, what cancelled it
            reason = reason or "the fix is outside the trace (the loop's base URL or adapter, what cancelled it)"
        counts = by_set.setdefault(label.split(" ")[0] if label.startswith("sample") else label, [0, 0, 0])
        counts[0] += 1
        if reason is not None and not result.single_edit_fix:
            best = result.best.candidate.words if result.best else (
                "what-if: " + result.what_ifs[0].candidate.words if result.what_ifs else
                "partial: " + result.partials[0].candidate.words if result.partials else "nothing proven")
            none_rows.append((label, run.run_id, reason, len(result.best.edits) if result.best else 0, best))
            continue
        admit += 1
        counts[1] += 1
        if result.single_edit_fix:
            fixed += 1
            counts[2] += 1
        else:
            misses.append((label, run.run_id, run.verdict()["status"]))
    print(f"failing runs: {failing}; admit a one-edit fix: {admit}; proven one-edit fix: {fixed} "
          f"= {fixed / max(admit, 1):.1%} (target ≥ 90 %)")
    print(f"all failing runs: a proven fix (one edit or a pair) for {any_fix} = {any_fix / max(failing, 1):.1%}; "
          f"only what-ifs for {what_if_only}; only partial fixes for {partial_only}; "
          f"nothing proven for {failing - any_fix - what_if_only - partial_only}")
    print(f"what-if coverage (apart from fixes): a proven what-if for {any_what_if} = "
          f"{any_what_if / max(failing, 1):.1%} of failing runs")
    print("responsibility: " + ", ".join(f"{k} {v}" for k, v in sorted(by_class.items())))
    for label, (n, a, f) in by_set.items():
        print(f"  {label:<22} failing {n:>4}  admit {a:>4}  fixed {f:>4}")
    if misses:
        print("runs that admit one but got none:")
        for row in misses:
            print("  ", *row)
    print(f"runs that admit no one-edit fix ({len(none_rows)}), and what explain proves instead:"
          + (" (left out: --no-list)" if args.no_list else ""))
    seen = set()
    for label, run_id, reason, n, best in [] if args.no_list else none_rows:
        key = (run_id, reason)
        if key in seen:
            continue
        seen.add(key)
        print(f"  {run_id} ({label}): {reason}\n      → {n}-edit fix: {best}" if n else
              f"  {run_id} ({label}): {reason}\n      → {best}")
    measure.columns()
    p90 = sorted(times)[int(len(times) * 0.9)]
    measure.row(f"explain, in-process, over {len(times)} runs", times, replays, "one replay of each", unit="ms",
        note=f"(target ≤ 1000 ms; p90 {p90 * 1000:.1f} ms; min / median over runs, not samples)")
    print(f"every failing run in sample_traces/: {sample_total:.2f} s (target ≤ 60 s)")


if __name__ == "__main__":
    main()
