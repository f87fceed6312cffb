"""``tracetui explain``: who is responsible for a failing run, and the smallest fixes proven by replay."""
from __future__ import annotations

import sys

import click

from tracetui.cli.common import named_trace
from tracetui.cli.group import main


@main.command(name="explain")
@click.argument("trace_file", type=click.Path())
@click.option("--run", "run_id", default=None, help="Id of the failing run to explain (optional when only one failed, or the file holds one run).")
@click.option("--json", "as_json", is_flag=True, help="Print the fixes as JSON.")
@click.option("--limit", type=click.IntRange(1, 1000), default=5, show_default=True, help="Fixes (then what-ifs) to show at most.")
@click.argument("command", nargs=-1, type=click.UNPROCESSED, metavar="[-- COMMAND [ARG]...]")
def explain_(trace_file, run_id, as_json, limit, command) -> None:
    """Say who is responsible for a failing run, and find the smallest edits that fix it, each proven by replay.

    \b
    Candidate edits come from the run's own evidence (the failing event, its inputs,
    its recorded responses); each is re-run, and only those that change the verdict
    are shown: fixes first (edits in your control: every one of the smallest size,
    grouped by side, then larger ones), then what-ifs (true, but edits of the
    environment or of what a guard protects, each saying why it is not a fix).
    Each comes with the `tracetui replay` command that reproduces it.

    FILE may be a tracetui trace or an OTLP/JSON file (whose imported runs cannot be
    re-run: explain says so). A run of your own agent (tracetui record) is proven by
    re-running your COMMAND, given after --, against its recording: tracetui explain
    agent.jsonl --run support -- python agent.py. Each re-run runs your agent for real,
    its tools included, on model answers taken from the trace (and written by explain):
    use test data. A re-run is stopped after 300 s (TRACETUI_REPLAY_TIMEOUT).
    Exit 0 when a fix was proven (or the run is already
    answer-ready), 1 when none was or the run cannot be re-run, 2 when the input
    cannot be read or the COMMAND cannot start.
    """
    from tracetui.explain import explain
    from tracetui.explain.report import as_data, as_text
    from tracetui.trace.safe_text import printable, printable_json

    trace = named_trace(trace_file, "explain prints replay commands that name the trace")
    if run_id is None and len(trace.runs) == 1:  # a file of one run: it is the one meant, failed or not
        run_id = next(iter(trace.runs))
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
    from tracetui.replay.agent_replay import command_problem, is_recorded, needs_command

    if command and not is_recorded(run):
        click.echo(printable(f"error: run {run_id} is a run of tracetui's built-in loop: it is re-run from its "
                             f"recorded inputs, without a command; leave out the -- COMMAND"), err=True)
        sys.exit(2)
    if is_recorded(run) and not command:
        click.echo(printable(f"error: {needs_command(run, 'explain', trace_file)}"), err=True)
        sys.exit(2)
    problem = command_problem(command) if command else None
    if problem:  # said now: each re-run failing to start would read as "no edit fixes this run"
        click.echo(printable(f"error: cannot re-run: the command did not start: {problem}"), err=True)
        sys.exit(2)
    result = explain(run, command=list(command)) if command else explain(run)
    if as_json:
        from tracetui.otel.origin import origin  # an imported run's trace id and service: findable again

        click.echo(printable_json({**as_data(result, trace_file, limit), **origin(run)}))
    else:
        for line in as_text(result, trace_file, limit):
            click.echo(line)
    sys.exit(0 if result.fixes or result.before.get("ready") else 1)

