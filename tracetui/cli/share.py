"""``tracetui share``: runs as one self-contained HTML page, to hand to someone else or keep as a CI artifact."""
from __future__ import annotations

import shlex
import sys

import click

from tracetui.cli.common import named_trace
from tracetui.cli.group import main


@main.command()
@click.argument("trace_file", type=click.Path())
@click.option("--run", "run_ids", multiple=True, metavar="ID", help="A run to show (repeatable).")
@click.option("--all-failed", is_flag=True, help="Every failing run, grouped by failure signature.")
@click.option("-o", "--output", type=click.Path(dir_okay=False), default=None,
              help="The HTML file to write (atomically). Default: RUN.html (one run) or "
                   "TRACE.failed.html / TRACE.runs.html, in the current folder.")
def share(trace_file, run_ids, all_failed, output) -> None:
    """Write runs as one self-contained HTML page: opened offline, it fetches nothing and runs no script.

    \b
    tracetui share runs.jsonl --run cross_tenant
    tracetui share runs.jsonl --all-failed -o failures.html

    The page shows each run as the explorer does: the six lanes with the first failing
    boundary marked, whose failure it was and why, the proven fixes with their replay
    commands (for a run tracetui can re-run by itself), and every event with its data,
    redacted. Exit 0 when written, 2 when the input cannot be read or a run is not in it.
    """
    from tracetui.share import WritesOverInput, default_output, share_page, write_page
    from tracetui.trace.output_path import writes_over
    from tracetui.trace.safe_text import printable

    if not run_ids and not all_failed:
        raise click.UsageError("choose the runs: --run ID (repeatable) or --all-failed")
    trace = named_trace(trace_file, "share names the trace in the page's replay commands")
    missing = [rid for rid in run_ids if rid not in trace.runs]
    if missing:
        known = ", ".join(list(trace.runs)[:12]) + (" …" if len(trace.runs) > 12 else "")
        click.echo(printable(f"error: no run {missing[0]!r} in {trace_file}; runs: {known}"), err=True)
        sys.exit(2)
    chosen = list(dict.fromkeys(run_ids))
    if all_failed:
        chosen += [rid for rid, run in trace.runs.items() if not run.verdict()["ready"] and rid not in chosen]
        if not chosen:
            click.echo(printable(f"no failing run in {trace_file}: nothing to share"), err=True)
            sys.exit(1)
    command = shlex.join(["tracetui", "share", *sys.argv[2:]]) if sys.argv[1:2] == ["share"] else \
        shlex.join(["tracetui", "share", trace_file, *(a for r in run_ids for a in ("--run", r)),
                    *(["--all-failed"] if all_failed else []), *(["-o", output] if output else [])])
    target = output or str(default_output(trace_file, chosen, all_failed))
    if writes_over(target, trace_file):  # said before the page is made (proving fixes takes a while)
        click.echo(printable(f"error: -o {target} is the trace this page shows; choose another file"), err=True)
        sys.exit(2)
    page = share_page([trace.runs[rid] for rid in chosen], trace_file, command, grouped=all_failed,
                      problems=getattr(trace, "problems", ()))
    try:
        write_page(target, page, trace_file)
    except WritesOverInput as exc:
        click.echo(printable(f"error: -o {exc}"), err=True)
        sys.exit(2)
    except OSError as exc:
        click.echo(printable(f"error: cannot write {target}: {exc.strerror or exc}"), err=True)
        sys.exit(2)
    click.echo(printable(f"wrote {target}: {len(chosen)} run(s) from {trace_file}"), err=True)
