"""Helpers the subcommands share: writing traces out, checking output paths, reading a trace or standard input."""
from __future__ import annotations

import sys
from typing import Any

import click

from tracetui.trace.reader import TraceReadError


def writes_over(output, original) -> bool:
    """Whether writing ``-o output`` would replace the input file (through links and ``..`` too)."""
    from tracetui.trace.output_path import writes_over as over

    return over(output, original)


def _emit(runs, output: str | None) -> int:
    """Write runs (each a sequence of records) to a file atomically, or to stdout for ``-``."""
    from tracetui.trace.safe_text import json_lines_out
    from tracetui.trace.writer import write_runs, write_trace_runs

    if output in (None, "-"):
        return write_runs(json_lines_out(sys.stdout), runs)
    try:
        return write_trace_runs(output, runs)
    except OSError as exc:
        raise click.ClickException(f"cannot write {output}: {exc.strerror or exc}") from None


def named_trace(trace_file: str, why: str) -> Any:
    """The whole trace at ``trace_file`` (tracetui's or OTLP/JSON), for a command whose output names the file
    (``why``: what it prints that does); standard input refused, an unreadable file said in words, exit 2."""
    from tracetui.otel.detect import read_any
    from tracetui.trace.safe_text import printable

    if trace_file == "-":
        raise click.UsageError(f"{why}: give a file, not -")
    try:
        return read_any(trace_file)
    except TraceReadError as exc:
        click.echo(printable(f"error: {exc}"), err=True)
    except OSError as exc:
        click.echo(printable(f"error: {trace_file}: {exc.strerror or exc}"), err=True)
    sys.exit(2)


def _verdict_line(v: dict[str, Any]) -> str:
    from tracetui.trace.verdict import verdict_line

    return verdict_line(v["run_id"], v)


def _is_otlp(trace_file: str) -> bool:
    """Whether a named file is OTLP/JSON (read whole); an unreadable one is reported by the streaming check."""
    if trace_file == "-":
        return False
    from tracetui.otel.backend import is_backend_source
    from tracetui.otel.detect import is_otlp

    if is_backend_source(trace_file):  # phoenix+http://…: read whole, as OTLP/JSON is
        return True

    try:
        return is_otlp(trace_file)
    except (TraceReadError, OSError):
        return False


def backend_options(command: Any) -> Any:
    """``--since``, ``--status`` and ``--limit``: which runs a backend source (``phoenix+http://…``) gives."""
    for option in reversed((
            click.option("--since", default=None, metavar="TIME",
                         help="Backend source only: runs started since TIME (ISO 8601, or back from now: 90m, 2h, "
                              "7d)."),
            click.option("--status", type=click.Choice(["error", "ok"]), default=None,
                         help="Backend source only: only failing or incomplete runs (error) or answer-ready ones "
                              "(ok), by tracetui's verdict."),
            click.option("--limit", type=click.IntRange(min=1), default=None, metavar="N",
                         help="Backend source only: at most N runs, the newest."))):
        command = option(command)
    return command


def backend_query(sources: Any, since: str | None, status: str | None, limit: int | None) -> Any:
    """The :class:`~tracetui.otel.backend.Query` of the filters given (None when none is); a usage error when
    no source is a backend (a file is read whole: there is nothing to choose from)."""
    if since is None and status is None and limit is None:
        return None
    from tracetui.otel.backend import Query, is_backend_source, parse_since

    if not any(is_backend_source(s) for s in sources):
        raise click.UsageError("--since, --status and --limit choose runs of a backend source "
                               "(phoenix+http://HOST:PORT/PROJECT); a file is read whole")
    try:
        when = parse_since(since) if since is not None else None
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--since") from None
    return Query(when, status, limit)


def _spooled_otlp(item: Any) -> Any:
    """Standard input (a spool) read as OTLP/JSON when it is one: as it arrives, its runs kept as their verdicts
    (bounded memory), as ``check`` reads an OTLP file; None otherwise (a file name, or a tracetui trace on
    standard input, streamed as a file is)."""
    if isinstance(item, str):
        return None
    from tracetui.otel.detect import spooled_for_check

    return spooled_for_check(item)


def _stdin_source() -> Any:
    """Standard input for a spool: its descriptor, read with os.read (a thread blocked reading the
    buffered object holds its lock, and an exit meanwhile, on Ctrl-C, aborts the interpreter), or the
    object itself when it has none (a test's)."""
    import io

    try:
        return sys.stdin.fileno()
    except (AttributeError, OSError, io.UnsupportedOperation):
        return getattr(sys.stdin, "buffer", sys.stdin)


class _trace_input:
    """The file named on the command line, or standard input for ``-`` (spooled: see tracetui.trace.spool)."""

    def __init__(self, name: str):
        self.name = name
        self.spool = None

    def __enter__(self) -> Any:
        if self.name != "-":
            return self.name
        from tracetui.trace.spool import Spool

        if sys.stdin is None:  # started with standard input closed (<&-)
            raise TraceReadError("-: standard input is closed; pipe a trace into it")
        self.spool = Spool(_stdin_source())
        return self.spool

    def __exit__(self, *exc: Any) -> None:
        if self.spool is not None:
            self.spool.close()

