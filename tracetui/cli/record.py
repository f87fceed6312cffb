"""``tracetui record -- COMMAND``: run your own agent through a recording proxy, written as a run."""
from __future__ import annotations

import os
import sys

import click

from tracetui.cli.group import main


@main.command(context_settings={"allow_interspersed_args": False})
@click.option("-o", "--output", default="record.jsonl", show_default=True, type=click.Path(dir_okay=False),
              help="Trace file to write; an existing one gets the run appended (its runs are kept).")
@click.option("--upstream", "upstreams", multiple=True, metavar="URL | PROVIDER=URL",
              help="Where requests are forwarded: URL is the API root for every provider (the request path is "
                   "kept), PROVIDER=URL (openai, anthropic, gemini) one provider's. Default: the base URL your "
                   "environment sets (OPENAI_BASE_URL, ending in /v1; ANTHROPIC_BASE_URL; GOOGLE_GEMINI_BASE_URL), "
                   "else each provider's public API (https://api.openai.com, https://api.anthropic.com, "
                   "https://generativelanguage.googleapis.com).")
@click.option("--run-id", default=None, help="The run's id (default: record-<command name>).")
@click.option("--port", type=click.IntRange(0, 65535), default=0, show_default=True,
              help="Port of the local endpoint on 127.0.0.1 (0: a free one).")
@click.argument("command", nargs=-1, required=True, type=click.UNPROCESSED, metavar="-- COMMAND [ARG...]")
def record(output, upstreams, run_id, port, command) -> None:
    """Run COMMAND (your agent) against a local endpoint that records every model request and answer.

    COMMAND runs with OPENAI_BASE_URL, ANTHROPIC_BASE_URL and GOOGLE_GEMINI_BASE_URL pointing at
    127.0.0.1 (a free port); each request is forwarded upstream and its answer passed back as it arrives
    (streams event by event). Your credential headers are forwarded, never written or printed. The run's
    verdict is read from the wire; business acceptance is COMMAND's exit status (0: accepted).

    Exits with COMMAND's status: 127 when it does not start, 130 after Ctrl-C (the child is stopped and
    the run written), 128+N when a signal N killed it.
    """
    from tracetui.record.child import HeldStops, exit_status
    from tracetui.record.endpoint import EndpointError
    from tracetui.record.routes import UpstreamError, parse_upstreams
    from tracetui.record.session import OutputError, check_output, record_run, save_run, verdict_of
    from tracetui.trace.held_interrupt import HeldInterrupt
    from tracetui.trace.safe_text import escape_controls, printable

    try:
        roots = parse_upstreams(list(upstreams), os.environ)  # a base URL the agent already has is kept
    except UpstreamError as exc:
        raise click.UsageError(str(exc)) from None
    try:  # before the agent runs: a run is never made only to be lost
        check_output(output)
    except OutputError as exc:
        raise click.BadParameter(str(exc), param_hint="'-o' / '--output'") from None
    # once the agent has ended, a Ctrl-C (or SIGTERM, SIGHUP) waits until its run is written
    with HeldInterrupt() as held, HeldStops() as stops:
        held.busy = True
        try:
            records, agent = record_run(list(command), roots, run_id, list(command), port=port)
        except EndpointError as exc:
            raise click.ClickException(f"cannot start the local endpoint: {exc.strerror}") from None
        if not agent.started:  # nothing ran, so there is no run to write
            # the reason names the user's own argv[0]: only its control characters are escaped (redaction
            # would read "/etc/passwd: permission denied" as a password)
            click.echo(f"tracetui record: {escape_controls(agent.reason or 'the command did not start')}", err=True)
            sys.exit(127)
        try:
            how = save_run(output, records)
        except OSError as exc:
            raise click.ClickException(f"the run could not be written to {printable(output)}: "
                                       f"{exc.strerror or exc}") from None
        click.echo(printable(verdict_of(records)), err=True)
        click.echo(f"run {printable(str(records[0].get('run_id')))} {how} {printable(output)}", err=True)
    sys.exit(130 if held.pending or stops.pending else exit_status(agent))
