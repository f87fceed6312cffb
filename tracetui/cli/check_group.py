"""``tracetui check FILE --group``: one line per failure signature (count, lane, code, an example run).

Streams as ``check`` does (:mod:`tracetui.triage.grouped_check`): a huge file is grouped in flat
memory, standard input and OTLP/JSON included. Exit codes are ``check``'s: 0 when every run is
answer-ready and every line was read, 1 when any run failed (or a line could not be read), 2 when
the file cannot be read, 130 on Ctrl-C (the groups of the runs read so far are printed, marked so).
"""
from __future__ import annotations

import sys
from typing import Any

import click

from tracetui.cli.common import _is_otlp, _spooled_otlp, _trace_input
from tracetui.trace.reader import TraceReadError
from tracetui.trace.safe_text import printable, printable_json
from tracetui.trace.verdict import OUTCOMES

#: an example run id wider than this is cut in the text table (whole in --json)
EXAMPLE_WIDTH = 40


def check_group(trace_file: str, as_json: bool, query: Any = None) -> None:
    """Print the failure groups of ``trace_file`` and exit with ``check``'s status."""
    from tracetui.trace.index.changes import TraceChanged
    from tracetui.triage.grouped_check import GroupedCheck, group_streaming, group_trace

    report = GroupedCheck()
    interrupted = False
    try:
        if query is not None or _is_otlp(trace_file):
            from tracetui.otel.detect import read_for_check

            group_trace(read_for_check(trace_file, query), report)  # OTLP/JSON: runs kept as their verdicts
        else:
            with _trace_input(trace_file) as item:
                imported = _spooled_otlp(item)  # OTLP/JSON on standard input: streamed
                if imported is not None:
                    group_trace(imported, report)
                else:
                    group_streaming(item, report)
    except KeyboardInterrupt:
        interrupted = True
    except TraceReadError as exc:
        _fail(report, f"error: {exc}")
    except TraceChanged as exc:
        _fail(report, f"error: {exc}: the groups would be wrong; check it again")
    except OSError as exc:
        _fail(report, f"error: {trace_file}: {exc.strerror or exc}")
    if as_json:
        _print_json(trace_file, report, interrupted)
    else:
        _print_text(report)
    if interrupted:
        click.echo(f"interrupted (Ctrl-C): the groups above are those of the {report.runs} run(s) read "
                   "before it; the rest of the file was not read", err=True)
        sys.exit(130)
    sys.exit(0 if report.all_ready and not len(report.problems) else 1)


def group_lines(report: Any) -> list[str]:
    """The table: a line per group, the biggest first, every field printable."""
    groups = report.grouper.groups()
    codes = max((len(printable(g.code)) for g in groups), default=0)
    examples = min(EXAMPLE_WIDTH, max((len(printable(g.example_run_id)) for g in groups), default=0))
    width = len(f"{groups[0].count:,}") if groups else 0
    lines = []
    for g in groups:
        example = printable(g.example_run_id)
        example = example if len(example) <= examples else example[:examples - 1] + "…"
        lines.append(f"{g.count:>{width},} × {printable(g.lane or '—'):<13}  {printable(g.code):<{codes}}  "
                     f"e.g. {example:<{examples}}  {printable(g.reason)}".rstrip())
    return lines


def _summary(report: Any) -> str:
    groups = len(report.grouper.groups())
    return (f"{report.runs} run(s): " + ", ".join(f"{report.counts.get(o, 0)} {o}" for o in OUTCOMES)
            + f"; {groups} failure group(s); {len(report.problems)} problem line(s)")


def _print_text(report: Any) -> None:
    from tracetui.trace.output_stream import write_out

    lines = group_lines(report)
    write_out("".join(line + "\n" for line in lines), flush=True)
    _print_problems(report)
    if not lines and report.runs:
        click.echo("no run failed: there is no failure group", err=True)
    click.echo(_summary(report), err=True)


def _print_problems(report: Any) -> None:
    block: list[str] = []
    for p in report.problems:
        block.append(f"line {p.line}: {printable(p.message)}\n")
        if len(block) >= 1024:
            click.echo("".join(block), nl=False, err=True)
            block.clear()
    click.echo("".join(block), nl=False, err=True)


def _print_json(trace_file: str, report: Any, interrupted: bool) -> None:
    """One document: the groups, the counts, then the problems written one by one (they may be many)."""
    from tracetui.trace.output_stream import write_out

    head = {"file": trace_file, "groups": [g.to_json() for g in report.grouper.groups()], "runs": report.runs,
            "outcomes": report.counts}
    text = printable_json(head)
    write_out(text[:text.rindex("}")].rstrip() + ',\n  "problems": [')
    first = True
    for p in report.problems:
        item = printable_json({"line": p.line, "message": p.message}, indent=False)
        write_out(("\n    " if first else ",\n    ") + item)
        first = False
    write_out(("]" if first else "\n  ]") + (',\n  "interrupted": true' if interrupted else "") + "\n}\n", flush=True)


def _fail(report: Any, message: str) -> None:
    """The file could not be read (at all, or to its end): said, with the problem lines first; exit 2."""
    _print_problems(report)
    click.echo(printable(message), err=True)
    sys.exit(2)
