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


def _verdict_line(v: dict[str, Any]) -> str:
    from tracetui.trace.verdict import verdict_line

    return verdict_line(v["run_id"], v)


def _is_otlp(trace_file: str) -> bool:
    """Whether a named file is OTLP/JSON (read whole); an unreadable one is reported by the streaming check."""
    if trace_file == "-":
        return False
    from tracetui.otel.detect import is_otlp

    try:
        return is_otlp(trace_file)
    except (TraceReadError, OSError):
        return False


def _spooled_otlp(item: Any) -> Any:
    """Standard input (a spool) read as OTLP/JSON when it is one; None otherwise (a file name, or a
    tracetui trace on standard input, streamed as a file is)."""
    if isinstance(item, str):
        return None
    from tracetui.otel.detect import spooled_otlp

    return spooled_otlp(item)


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

