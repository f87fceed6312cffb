"""``tracetui mcp``: a Model Context Protocol server on stdio, so a coding assistant can ask tracetui."""
from __future__ import annotations

import click

from tracetui.cli.group import main


@main.command(name="mcp")
@click.argument("dirs", nargs=-1, type=click.Path(file_okay=False), metavar="[DIR]...")
@click.option("--timeout", type=click.FloatRange(1, 3600), default=60, show_default=True,
              help="Seconds one call may take (explain and replay re-run the loop many times).")
def mcp_(dirs, timeout) -> None:
    """Serve tracetui's check, explain and replay to a coding assistant over MCP (stdio).

    \b
    claude mcp add tracetui -- tracetui mcp .

    Tools: list_runs, check_file, show_run, explain_run, replay_run. Only files
    under DIR (default: the current directory) are read: a path outside them, a
    symlink leading out, a device or a FIFO is refused. Every answer is bounded
    (64 KiB of JSON, a page at a time; --timeout seconds). Runs of your own agent
    (tracetui record) are never re-run: that would run a command the assistant
    chose. Nothing is written.
    """
    from tracetui.mcp.paths import PathRefused
    from tracetui.mcp.server import serve
    from tracetui.trace.safe_text import printable

    import sys

    if sys.stdin is not None and sys.stdin.isatty():  # started by hand: say what it waits for
        click.echo("tracetui mcp speaks the Model Context Protocol on standard input and output, to a coding "
                   "assistant that starts it (claude mcp add tracetui -- tracetui mcp .); Ctrl-D ends it", err=True)
    try:
        serve(list(dirs) or ["."], timeout)
    except PathRefused as exc:
        raise click.UsageError(printable(str(exc))) from None
