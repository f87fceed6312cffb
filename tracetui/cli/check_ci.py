"""``check --baseline OLD`` and ``check --junit FILE``: what CI asks of a trace.

``--baseline``: only the runs that were answer-ready in OLD and fail (or are incomplete) in the new trace
are printed, and only they make the exit status 1; runs only one trace holds are counted apart. ``--junit``:
a JUnit XML report beside the usual output (:mod:`tracetui.triage.junit`). The new trace is streamed as
``check`` streams it; Ctrl-C prints what was decided, closes the JSON document, writes no report, exits 130.
"""
from __future__ import annotations

import sys
from typing import Any

import click

from tracetui.cli.check_json import close_json, first_problems, json_item, json_open, write_json_list
from tracetui.cli.common import _trace_input
from tracetui.trace.reader import TraceReadError

#: names shown of the runs only one trace holds, in the text output (--json lists more)
NAMES_SHOWN = 10


def check_ci(trace_file: str, baseline: str | None, junit: str | None, as_json: bool, query: Any = None) -> None:
    """Run the check against ``baseline`` and/or into a JUnit report at ``junit``; exits."""
    from tracetui.trace.held_interrupt import HeldInterrupt
    from tracetui.trace.safe_text import printable

    if baseline == "-" and trace_file == "-":
        raise click.UsageError("standard input can be one trace only: give the baseline or the new trace as a file")
    if junit == "-":
        raise click.UsageError("--junit writes a file: standard output carries the verdicts; give a file name")
    if junit is not None:
        from tracetui.triage.junit import output_problem

        problem = output_problem(junit, [t for t in (trace_file, baseline) if t is not None])
        if problem:  # said before anything is read: no check is made only to lose its report
            click.echo(printable(f"error: cannot write the JUnit report to {junit}: {problem}"), err=True)
            sys.exit(2)
    with HeldInterrupt() as held:
        outcomes = _read_baseline(baseline) if baseline is not None else None
        _compare_and_print(trace_file, baseline, outcomes, junit, as_json, held, query)


def _read_baseline(baseline: str) -> tuple[dict[str, str], int]:
    from tracetui.trace.index.changes import TraceChanged
    from tracetui.trace.safe_text import printable
    from tracetui.triage.baseline import baseline_outcomes

    try:
        with _trace_input(baseline) as item:
            return baseline_outcomes(item)
    except KeyboardInterrupt:
        click.echo("interrupted (Ctrl-C) while reading the baseline; nothing was compared", err=True)
        sys.exit(130)
    except (TraceReadError, TraceChanged) as exc:
        click.echo(printable(f"error: the baseline cannot be read: {exc}"), err=True)
    except OSError as exc:
        click.echo(printable(f"error: the baseline cannot be read: {baseline}: {exc.strerror or exc}"), err=True)
    sys.exit(2)


def _compare_and_print(trace_file: str, baseline: str | None, outcomes: Any, junit: str | None, as_json: bool,
                       held: Any, query: Any) -> None:
    from tracetui.trace.checking import ProblemLog
    from tracetui.trace.index.changes import TraceChanged
    from tracetui.trace.output_stream import write_out
    from tracetui.trace.safe_text import printable, printable_json
    from tracetui.trace.verdict import OUTCOMES
    from tracetui.triage.baseline import NEWLY_FAILING, BaselineComparison, each_verdict
    from tracetui.triage.junit import JUnitReport

    from tracetui.trace.verdict_lines import PrintableVerdicts

    line_of = PrintableVerdicts()
    comparison = BaselineComparison(outcomes[0]) if outcomes is not None else None
    report = JUnitReport(trace_file, baseline) if junit is not None else None
    problems = ProblemLog()
    counts = dict.fromkeys(OUTCOMES, 0)
    state = {"shown": 0, "ready": True, "runs": 0}
    key = "newly_failing" if comparison is not None else "runs"

    def opening() -> str:
        head = json_open(trace_file)
        if comparison is None:
            return head
        return head.replace('\n  "runs": [\n', f'\n  "baseline": {printable_json(baseline, indent=False)},\n'
                                                f'  "{key}": [\n')

    def on_verdict(v: dict[str, Any]) -> None:
        held.busy = True  # a Ctrl-C now waits until this verdict is whole, counted and written
        judgement = comparison.judge(v) if comparison is not None else None
        counts[v["outcome"]] += 1
        state["runs"] += 1
        state["ready"] = state["ready"] and v["ready"]
        if report is not None:
            report.add(v, judgement)
        if comparison is None or judgement == NEWLY_FAILING:
            if as_json:
                write_out((opening() if not state["shown"] else ",\n") + json_item(v))
            else:
                write_out(line_of(v) + "\n")  # printable(verdict line), its repeated part remembered
            state["shown"] += 1
        held.release()

    interrupted = False
    try:
        try:
            with _trace_input(trace_file) as item:
                each_verdict(item, on_verdict, problems.append, query)
        finally:
            held.busy = True
            write_out("", flush=True)
            held.release()
    except KeyboardInterrupt:
        interrupted = True
    except (TraceReadError, TraceChanged) as exc:
        close_json(as_json and state["shown"], str(exc), getattr(exc, "problems", None) or problems)
        first = first_problems(getattr(exc, "problems", None) or problems)
        click.echo(first + printable(f"error: {exc}"), err=True)
        sys.exit(2)
    except OSError as exc:
        close_json(as_json and state["shown"], f"{trace_file}: {exc.strerror or exc}", problems)
        click.echo(printable(f"error: {trace_file}: {exc.strerror or exc}"), err=True)
        sys.exit(2)
    held.hold_for_good()  # closing the output: a Ctrl-C now would only cut it short
    only_in_old = comparison.only_in_old() if comparison is not None and not interrupted else None
    if as_json:
        write_out(("" if state["shown"] else opening()) + "\n  ],\n")
        if comparison is not None:
            write_out('  "counts": ' + printable_json({**comparison.counts, "only_in_new": comparison.only_in_new.count,
                                                       **({"only_in_baseline": only_in_old.count} if only_in_old
                                                          else {})}, indent=False) + ",\n")
            write_out('  "only_in_new": ' + printable_json(comparison.only_in_new.to_json(), indent=False) + ",\n")
            if only_in_old is not None:
                write_out('  "only_in_baseline": ' + printable_json(only_in_old.to_json(), indent=False) + ",\n")
            write_out(f'  "baseline_problems": {outcomes[1]},\n')
        write_out('  "problems": ')
        write_json_list({"line": p.line, "message": p.message} for p in problems)
        write_out(",\n  \"interrupted\": true\n}\n" if interrupted else "\n}\n", flush=True)
    else:
        for p, _ in zip(problems, range(10_000)):
            click.echo(f"line {p.line}: {printable(p.message)}", err=True)
        if comparison is not None:
            for title, unmatched in (("only in the new trace", comparison.only_in_new),
                                     ("only in the baseline", only_in_old)):
                if unmatched is not None and unmatched.count:
                    names = ", ".join(printable(n) for n in unmatched.names[:NAMES_SHOWN])
                    more = f", … and {unmatched.count - NAMES_SHOWN} more" if unmatched.count > NAMES_SHOWN else ""
                    click.echo(f"{title} ({unmatched.count}): {names}{more}", err=True)
            old_problems = f"; the baseline had {outcomes[1]} problem line(s)" if outcomes[1] else ""
            click.echo(comparison.words(only_in_old) + f"; {len(problems)} problem line(s){old_problems}", err=True)
        else:
            click.echo(f"{state['runs']} run(s): " + ", ".join(f"{counts[o]} {o}" for o in OUTCOMES)
                       + f"; {len(problems)} problem line(s)", err=True)
    if report is not None:
        try:
            if interrupted:
                click.echo(printable(f"the JUnit report {junit} was not written: the check did not finish"), err=True)
            else:
                report.write(junit, problems, len(problems), only_in_old)
                click.echo(printable(f"wrote the JUnit report to {junit}: {report.tests} testcase(s), "
                                     f"{report.failures} failure(s), {report.errors} error(s), "
                                     f"{report.skipped} skipped"), err=True)
        except OSError as exc:
            click.echo(printable(f"error: cannot write the JUnit report to {junit}: {exc.strerror or exc}"), err=True)
            sys.exit(2)
        finally:
            report.close()
    if interrupted:
        click.echo(f"interrupted (Ctrl-C): the verdicts above are those of the {state['runs']} run(s) checked "
                   f"before it; the rest of the file was not read", err=True)
        sys.exit(130)
    if comparison is not None:
        sys.exit(1 if comparison.counts[NEWLY_FAILING] else 0)
    sys.exit(0 if state["ready"] and not len(problems) else 1)
