"""``tracetui export``: runs as OpenTelemetry GenAI spans, to an OTLP/JSON file or a collector."""
from __future__ import annotations

import sys

import click

from tracetui.cli.common import backend_options, backend_query, writes_over
from tracetui.cli.group import main
from tracetui.trace.reader import TraceReadError


@main.command()
@click.argument("trace_file", type=click.Path())
@click.option("--run", "run_ids", multiple=True, metavar="ID", help="Export only this run (repeatable). Default: all.")
@click.option("-o", "--output", type=click.Path(dir_okay=False, writable=True), default=None,
              help="OTLP/JSON file to write (atomically): one TracesData per line, the collector file-exporter "
                   "format. '-' for standard output.")
@click.option("--endpoint", default=None, metavar="URL",
              help="Send OTLP/HTTP to a collector instead, e.g. http://127.0.0.1:4318 (/v1/traces is added when "
                   "the URL has no path); else OTEL_EXPORTER_OTLP_TRACES_ENDPOINT (as it is) or "
                   "OTEL_EXPORTER_OTLP_ENDPOINT (with /v1/traces). Needs: pip install 'tracetui[otel]'.")
@click.option("--header", "headers", multiple=True, metavar="NAME=VALUE",
              help="When sending: an HTTP header (repeatable); also read from OTEL_EXPORTER_OTLP_HEADERS.")
@click.option("--protocol", type=click.Choice(["http/protobuf", "http/json"]), default=None,
              help="When sending: the OTLP encoding (default http/protobuf, or OTEL_EXPORTER_OTLP_PROTOCOL).")
@click.option("--compression", type=click.Choice(["gzip", "none"]), default=None,
              help="When sending: compress each request (default none, or OTEL_EXPORTER_OTLP_COMPRESSION).")
@click.option("--content", is_flag=True,
              help="Include message content (prompts, answers, tool arguments and results). Off by default, as in "
                   "OpenTelemetry; redaction applies either way.")
@click.option("--start", default=None, metavar="TIME",
              help="Where the runs start in time: ISO 8601 or 'now'. Traces hold no wall clock; the default "
                   "(2025-01-01T00:00:00Z) keeps exports byte-identical.")
@click.option("--timeout", "timeout_s", type=click.FloatRange(0.1, 300), default=None,
              help="When sending: seconds to wait for each request (default 10, or OTEL_EXPORTER_OTLP_TIMEOUT "
                   "in milliseconds).")
@backend_options
def export(trace_file, run_ids, output, endpoint, headers, protocol, compression, content, start,
           timeout_s, since, status, limit) -> None:
    """Export runs as OpenTelemetry GenAI spans: to an OTLP/JSON file (-o) or a collector (--endpoint).

    \b
    tracetui export runs.jsonl -o spans.jsonl
    tracetui export runs.jsonl --run cross_tenant --content -o spans.jsonl
    tracetui export runs.jsonl --endpoint http://127.0.0.1:6006
    OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:4318 tracetui export runs.jsonl
    tracetui export phoenix+http://127.0.0.1:6006/default --status error -o failing.jsonl

    Flags win over the OTEL_EXPORTER_OTLP_(TRACES_)* variables, as in every
    OpenTelemetry exporter; -o writes a file whatever they say. One trace per
    run; ids derive from the run id, so exporting twice is idempotent. Exit 0
    on success, 1 when the collector rejected some spans, 2 when the input
    cannot be read or the collector refuses (or answers with
    something that is not an OTLP response); runs delivered before a refused
    request are listed.
    """
    from tracetui.otel.export import ExportError, select, send_runs, spans_of_runs, start_ns, write_file
    from tracetui.trace.safe_text import printable

    from tracetui.otel.exporter_env import SettingError, settings

    if output is not None and endpoint is not None:
        raise click.UsageError("give either -o FILE or --endpoint URL")
    if output is None:
        try:
            sending = settings(endpoint, protocol, timeout_s, compression)
        except SettingError as exc:
            click.echo(f"error: {printable(str(exc))}", err=True)
            sys.exit(2)
        if sending.endpoint is None:
            raise click.UsageError("give either -o FILE or --endpoint URL (or set OTEL_EXPORTER_OTLP_ENDPOINT)")
    elif headers or protocol or compression or timeout_s is not None:
        raise click.UsageError("--header, --protocol, --compression and --timeout only apply when sending")
    if trace_file == "-":
        raise click.UsageError("export reads the trace whole: give a file, not - (standard input is read by "
                               "check, replay and open)")
    if output and output != "-" and writes_over(output, trace_file):
        click.echo(f"error: -o {output} is the input trace; choose another file", err=True)
        sys.exit(2)
    pairs = {}
    for item in headers:
        name, sep, value = item.partition("=")
        if not sep or not name.strip():
            raise click.BadParameter(f"{item!r}: expected NAME=VALUE", param_hint="--header")
        pairs[name.strip()] = value
    try:
        selection = select(trace_file, run_ids, backend_query([trace_file], since, status, limit))
        start = start_ns(start)
    except (ExportError, TraceReadError) as exc:
        click.echo(f"error: {printable(str(exc))}", err=True)
        sys.exit(2)
    for p in selection.trace.problems:
        click.echo(f"line {p.line}: {printable(p.message)} (skipped)", err=True)
    runs = spans_of_runs(selection.runs, content, start)
    if output:
        try:
            spans = write_file(output, runs)
        except OSError as exc:
            raise click.ClickException(f"cannot write {output}: {exc.strerror or exc}") from None
        where = f" to {output}" if output != "-" else ""
        click.echo(f"wrote {len(selection.runs)} run(s), {spans} span(s){where}", err=True)
        return
    from tracetui.otel.export_proto import ProtoUnavailable
    from tracetui.otel.send import SendError

    try:
        report = send_runs(sending.endpoint, runs, pairs, sending.timeout_s, sending.protocol, sending.compression,
                           sending.endpoint_is_url)
    except (SendError, ProtoUnavailable) as exc:
        click.echo(f"error: {printable(str(exc))}", err=True)
        if isinstance(exc, SendError):  # a later request refused: say which runs did arrive
            from tracetui.otel.export import delivery_words

            for line in delivery_words(selection.runs, exc.delivered, exc.refused_runs):
                click.echo(printable(line), err=True)
            for message in exc.delivered.messages if exc.delivered else ():
                click.echo(f"collector: {printable(message)}", err=True)
        sys.exit(2)
    click.echo(f"sent {len(selection.runs)} run(s), {report.spans} span(s) in {report.requests} request(s)"
               + (f"; the collector rejected {report.rejected}" if report.rejected else ""), err=True)
    for message in report.messages:
        click.echo(f"collector: {printable(message)}", err=True)
    sys.exit(1 if report.rejected else 0)

