"""``tracetui open``: the explorer; the one command that starts the UI (lazily, so the others never load textual)."""
from __future__ import annotations

import click

from tracetui.cli.common import backend_options, backend_query
from tracetui.cli.group import main


@main.command(name="open")
@click.argument("trace_files", nargs=-1, type=click.Path())
@click.option("-f", "--follow", is_flag=True,
              help="Follow the files as they grow, as tail -f does: runs show as a writer appends them (F toggles).")
@backend_options
def open_(trace_files, follow, since, status, limit) -> None:
    """Explore traces in the terminal. With no FILE, open a built-in demo of every scenario; - reads standard input.

    A FILE may also be OTLP/JSON (OpenTelemetry GenAI or OpenInference spans), told apart by content,
    or a Phoenix project: phoenix+http://HOST:PORT/PROJECT (filtered with --since, --status, --limit).
    """
    from tracetui.otel.backend import is_backend_source

    query = backend_query(trace_files, since, status, limit)
    if follow and any(is_backend_source(f) for f in trace_files):
        raise click.UsageError("--follow follows files as they grow; a backend source is read once")
    from tracetui.ui.app import run_app

    run_app(list(trace_files), follow=follow, query=query)

