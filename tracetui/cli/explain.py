"""``tracetui explain``: who is responsible for a failing run, and the smallest fixes proven by replay."""
from __future__ import annotations

import sys

import click

from tracetui.cli.group import main
from tracetui.trace.reader import TraceReadError


@main.command(name="explain")
@click.argument("trace_file", type=click.Path())
@click.option("--run", "run_id", default=None, help="Id of the failing run to explain (optional when only one failed).")
@click.option("--json", "as_json", is_flag=True, help="Print the fixes as JSON.")
@click.option("--limit", type=click.IntRange(1, 1000), default=5, show_default=True, help="Fixes (then what-ifs) to show at most.")
def explain_(trace_file, run_id, as_json, limit) -> None:
    """Say who is responsible for a failing run, and find the smallest edits that fix it, each proven by replay.

    \b
    Candidate edits come from the run's own evidence (the failing event, its inputs,
    its recorded responses); each is re-run, and only those that change the verdict
    are shown: fixes first (edits in your control: every one of the smallest size,
    grouped by side, then larger ones), then what-ifs (true, but edits of the
    environment or of what a guard protects, each saying why it is not a fix).
    Each comes with the `tracetui replay` command that reproduces it.

    FILE may be a tracetui trace or an OTLP/JSON file (whose imported runs cannot be
    re-run: explain says so). Exit 0 when a fix was proven (or the run is already
    answer-ready), 1 when none was or the run cannot be re-run, 2 when the input
    cannot be read.
    """
    from tracetui.explain import explain
    from tracetui.explain.report import as_data, as_text
    from tracetui.otel.detect import read_any
    from tracetui.trace.safe_text import printable, printable_json

    if trace_file == "-":
        raise click.UsageError("explain prints replay commands that name the trace: give a file, not -")
    try:
        trace = read_any(trace_file)
    except TraceReadError as exc:
        click.echo(printable(f"error: {exc}"), err=True)
        sys.exit(2)
    except OSError as exc:
        click.echo(printable(f"error: {trace_file}: {exc.strerror or exc}"), err=True)
        sys.exit(2)
    if run_id is None:
        failing = [rid for rid, run in trace.runs.items() if not run.verdict()["ready"]]
        if len(failing) != 1:
            listed = ", ".join(failing[:12]) + (" …" if len(failing) > 12 else "")
            click.echo(printable(f"error: {len(failing)} runs failed in {trace_file}; choose one with --run ID"
                                 + (f": {listed}" if failing else "")), err=True)
            sys.exit(2)
        run_id = failing[0]
    run = trace.runs.get(run_id)
    if run is None:
        known = ", ".join(list(trace.runs)[:12]) + (" …" if len(trace.runs) > 12 else "")
        click.echo(printable(f"error: no run {run_id!r} in {trace_file}; runs: {known}"), err=True)
        sys.exit(2)
    result = explain(run)
    if as_json:
        click.echo(printable_json(as_data(result, trace_file, limit)))
    else:
        for line in as_text(result, trace_file, limit):
            click.echo(line)
    sys.exit(0 if result.fixes or result.before.get("ready") else 1)

