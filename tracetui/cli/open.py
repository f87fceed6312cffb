"""``tracetui open``: the explorer; the one command that starts the UI (lazily, so the others never load textual)."""
from __future__ import annotations

import click

from tracetui.cli.group import main


@main.command(name="open")
@click.argument("trace_files", nargs=-1, type=click.Path())
@click.option("-f", "--follow", is_flag=True,
              help="Follow the files as they grow, as tail -f does: runs show as a writer appends them (F toggles).")
def open_(trace_files, follow) -> None:
    """Explore traces in the terminal. With no FILE, open a built-in demo of every scenario; - reads standard input.

    A FILE may also be OTLP/JSON (OpenTelemetry GenAI or OpenInference spans), told apart by content.
    """
    from tracetui.ui.app import run_app

    run_app(list(trace_files), follow=follow)

