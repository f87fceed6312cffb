"""``tracetui check``: a verdict per run, streamed in bounded memory or read whole (OTLP/JSON, --explain)."""
from __future__ import annotations

import sys
from typing import Any

import click

from tracetui.cli.common import _is_otlp, _spooled_otlp, _trace_input, _verdict_line, backend_options, backend_query
from tracetui.cli.check_json import fail, first_problems, json_item, json_open, write_json_list
from tracetui.cli.group import main
from tracetui.trace.reader import TraceReadError


@main.command()
@click.argument("trace_file", type=click.Path())
@click.option("--json", "as_json", is_flag=True, help="Print verdicts as JSON.")
@click.option("--explain", "with_fixes", is_flag=True,
              help="Add each failing run's top fix, proven by replay, with its replay command.")
@click.option("--baseline", default=None, metavar="OLD",
              help="Print only the runs answer-ready in the trace OLD that fail in FILE (matched by run id); "
                   "exit 1 only for those. Runs only one trace holds are counted apart.")
@click.option("--junit", default=None, metavar="REPORT",
              help="Also write a JUnit XML report to REPORT (one testcase per run; with --baseline, only newly "
                   "failing runs are failures), atomically.")
@click.option("--group", "grouped", is_flag=True,
              help="One line per failure signature: count, lane, code, an example run id, the masked reason.")
@backend_options
@click.argument("command", nargs=-1, type=click.UNPROCESSED, metavar="[-- COMMAND [ARG]...]")
def check(trace_file, as_json, with_fixes, baseline, junit, grouped, command, since, status, limit) -> None:
    """Verdict per run, headless. FILE may be - for standard input, or an OTLP/JSON file (told apart by content),
    or a Phoenix project: phoenix+http://HOST:PORT/PROJECT (filtered with --since, --status, --limit).

    Exit 0 when every run is answer-ready and every line was read; 1 when any run
    failed or is incomplete, or some lines could not be read (they are listed);
    2 when the file cannot be read at all (or changed while it was read); 130
    when interrupted (Ctrl-C): the verdicts printed are whole, and --json's
    document is closed with "interrupted": true. 141, and no word, when standard
    output is closed early (check FILE | head -1).

    With --explain, runs of your own agent (tracetui record) are proven by re-running
    your COMMAND, given after --: tracetui check agent.jsonl --explain -- python agent.py.

    With --baseline OLD: exit 1 only when a run answer-ready in OLD fails or is incomplete
    in FILE, else 0 (runs only one trace holds are counted apart). --junit REPORT: with a
    baseline, only those runs are failures; runs failing in both are skipped.
    """
    if with_fixes and trace_file == "-":
        raise click.UsageError("--explain re-runs each failing run: give a file, not -")
    if command and not with_fixes:
        raise click.UsageError("only --explain re-runs anything: a -- COMMAND needs --explain")
    if command:
        from tracetui.replay.agent_replay import command_problem
        from tracetui.trace.safe_text import printable

        problem = command_problem(command)
        if problem:  # said now: each re-run failing to start would read as "no fix"
            click.echo(printable(f"error: cannot re-run: the command did not start: {problem}"), err=True)
            sys.exit(2)
    query = backend_query([trace_file], since, status, limit)
    if grouped:  # failures by signature (tracetui/cli/check_group.py)
        if with_fixes or baseline is not None or junit is not None:
            raise click.UsageError("--group lists failure groups; run --explain, --baseline or --junit on its own")
        from tracetui.cli.check_group import check_group

        check_group(trace_file, as_json, query)
    if baseline is not None or junit is not None:  # what CI asks: what newly fails, and a report it renders
        if with_fixes:
            raise click.UsageError("--baseline and --junit report verdicts; run --explain on its own")
        from tracetui.cli.check_ci import check_ci

        check_ci(trace_file, baseline, junit, as_json, query)
    if with_fixes or _is_otlp(trace_file):
        _check_whole(trace_file, as_json, with_fixes, command=tuple(command), query=query)
    _check_streaming(trace_file, as_json)


def _check_streaming(trace_file: str, as_json: bool) -> None:
    """``check`` in bounded memory: verdicts printed as the scan decides them (tracetui.trace.checking).

    Ctrl-C ends the scan, never a verdict half printed: what was checked is printed whole, the JSON
    document is closed (with ``"interrupted": true``), and the exit status is 130."""
    from tracetui.trace.held_interrupt import HeldInterrupt

    with HeldInterrupt() as held:
        _scan_and_print(trace_file, as_json, held)


def _scan_and_print(trace_file: str, as_json: bool, held: Any) -> None:
    from tracetui.trace.checking import Checker, ProblemLog, ready_verdict
    from tracetui.trace.index.changes import TraceChanged
    from tracetui.trace.safe_text import printable
    from tracetui.trace.verdict import OUTCOMES, READY
    from tracetui.trace.verdict_lines import PrintableVerdicts

    counts = dict.fromkeys(OUTCOMES, 0)
    problems = ProblemLog()
    state = {"runs": 0, "ready": True}

    from tracetui.trace.output_stream import write_out

    pending: list[str] = []

    def out_write(text: str, flush: bool = False) -> None:
        """Written in blocks: a verdict a line, hundreds of thousands of them. Straight to the stream, not
        through click.echo, which would search every block for ANSI codes to strip: printable() escaped
        every control character already."""
        pending.append(text)
        if flush or len(pending) >= 1024:
            block = "".join(pending)
            pending.clear()
            write_out(block, flush)  # in pieces a Ctrl-C cannot cut; a closed output ends quietly

    line_of = PrintableVerdicts()

    def kept(v: dict[str, Any]) -> tuple[str, bool, str]:
        """What is held of a verdict until it is printed: its outcome and its printed form."""
        return v["outcome"], v["ready"], json_item(v) if as_json else line_of(v)

    def kept_ready(run_ids: list[str]) -> list[tuple[str, bool, str]]:
        """:func:`kept` of the runs of a chunk whose summaries say they are answer-ready (most runs)."""
        if as_json:
            return [(READY, True, json_item(ready_verdict(run_id))) for run_id in run_ids]
        return [(READY, True, line) for line in line_of.ready_all(run_ids)]

    def on_verdict(v: tuple[str, bool, str]) -> None:
        """Printed as soon as it is known: nothing of a verdict is held once it is written."""
        held.busy = True  # a Ctrl-C now waits until this verdict is whole, counted and written
        outcome, ready, text = v
        counts[outcome] += 1
        if not ready:
            state["ready"] = False
        if as_json:
            out_write((json_open(trace_file) if not state["runs"] else ",\n") + text)
        else:
            pending.append(text)
            pending.append("\n")
            if len(pending) >= 4096:
                out_write("", flush=True)
        state["runs"] += 1
        held.release()

    imported = None
    interrupted = False
    try:
        try:
            with _trace_input(trace_file) as item:
                imported = _spooled_otlp(item)  # OTLP/JSON: streamed, as a file of it is
                if imported is None:
                    checker = Checker(item, on_verdict, problems.append, kept, None if as_json else line_of.vouch,
                                          kept_ready)
                    try:
                        checker.run()
                    finally:
                        checker.close()  # (else the file stays open until a full collection: it is in a cycle)
        finally:
            held.busy = True
            out_write("", flush=True)  # the verdicts decided so far, before any error
            held.release()
    except KeyboardInterrupt:
        interrupted, imported = True, None
    except TraceReadError as exc:  # (no run at all: the lines that are not records say why)
        fail(first_problems(problems) + f"error: {printable(str(exc))}", as_json and state["runs"], str(exc),
             problems)
    except TraceChanged as exc:
        fail(f"error: {printable(str(exc))}: the verdicts above may be wrong; check it again",
             as_json and state["runs"], f"{exc}: the verdicts before it may be wrong; check it again", problems)
    except OSError as exc:
        fail(f"error: {printable(trace_file)}: {exc.strerror or exc}", as_json and state["runs"],
             f"{trace_file}: {exc.strerror or exc}", problems)
    if imported is not None:  # printed as a file of OTLP is (its errors writing are not the input's)
        _check_whole(trace_file, as_json, False, imported)
    held.hold_for_good()  # closing the output: a Ctrl-C now would only cut it short
    if as_json:
        if interrupted and not state["runs"]:
            out_write(json_open(trace_file))
        out_write("\n  ],\n  \"problems\": ", flush=True)
        write_json_list({"line": p.line, "message": p.message} for p in problems)
        out_write(",\n  \"interrupted\": true\n}\n" if interrupted else "\n}\n", flush=True)
    else:
        block: list[str] = []
        for p in problems:
            block.append(f"line {p.line}: {printable(p.message)}\n")
            if len(block) >= 1024:
                click.echo("".join(block), nl=False, err=True)
                block.clear()
        click.echo("".join(block), nl=False, err=True)
        click.echo(f"{state['runs']} run(s): " + ", ".join(f"{counts[outcome]} {outcome}" for outcome in OUTCOMES)
                   + f"; {len(problems)} problem line(s)", err=True)
    if interrupted:
        click.echo(f"interrupted (Ctrl-C): the verdicts above are those of the {state['runs']} run(s) checked "
                   f"before it; the rest of the file was not read", err=True)
        sys.exit(130)
    sys.exit(0 if state["ready"] and not len(problems) else 1)


def _check_whole(trace_file: str, as_json: bool, with_fixes: bool, trace: Any = None,
                 command: tuple[str, ...] = (), query: Any = None) -> None:
    """``check`` over a trace read whole (``trace``, when already read): an OTLP/JSON file (imported runs
    are read whole), or with ``--explain`` (each failing run is re-run, so its records are needed).

    Ctrl-C ends it as it ends the streaming check: the verdicts decided so far are printed whole, the JSON
    document is closed with ``"interrupted": true``, and the exit status is 130."""
    from tracetui.trace.held_interrupt import HeldInterrupt

    with HeldInterrupt() as held:
        _whole_and_print(trace_file, as_json, with_fixes, trace, held, command, query)


def _whole_and_print(trace_file: str, as_json: bool, with_fixes: bool, trace: Any, held: Any,
                     command: tuple[str, ...] = (), query: Any = None) -> None:
    from tracetui.otel.detect import read_any, read_for_check  # a tracetui trace or OTLP/JSON, by content
    from tracetui.trace.output_stream import write_out
    from tracetui.trace.safe_text import printable
    from tracetui.trace.verdict import OUTCOMES

    verdicts: list[dict[str, Any]] = []
    fixes: dict[str, Any] = {}
    problems: list[Any] = []
    stopped = None  # what Ctrl-C cut short, in words
    try:
        try:
            if trace is None:  # (OTLP/JSON streamed for its verdicts, in bounded memory, unless re-run)
                trace = read_any(trace_file, query) if with_fixes else read_for_check(trace_file, query)
        except TraceReadError as exc:
            click.echo(first_problems(exc.problems) + printable(f"error: {exc}"), err=True)
            sys.exit(2)
        except OSError as exc:
            click.echo(printable(f"error: {trace_file}: {exc.strerror or exc}"), err=True)
            sys.exit(2)
        problems = trace.problems
        from tracetui.otel.origin import origin  # an imported run's trace id and service: findable again

        verdicts.extend({**run.verdict(), **origin(run)} for run in trace.runs.values())
        if with_fixes:
            stopped = "proving fixes: the failing runs listed without a fix were not explained"
            _top_fixes(trace, trace_file, as_json, fixes, command)
        stopped = None
    except KeyboardInterrupt:
        stopped = stopped or "reading: the rest of the file was not checked"
    shown = 0
    try:
        for v in verdicts:
            held.busy = True  # a Ctrl-C now waits until this verdict is whole
            if as_json:
                v = {**v, "fix": fixes[v["run_id"]]} if v["run_id"] in fixes else v
                write_out((json_open(trace_file) if not shown else ",\n") + json_item(v))
            else:
                fix = fixes.get(v["run_id"])
                write_out(printable(_verdict_line(v)) + "\n" + (fix + "\n" if fix else ""))
            shown += 1
            held.release()
    except KeyboardInterrupt:
        stopped = stopped or "printing"
    held.hold_for_good()  # closing the output: a Ctrl-C now would only cut it short
    if as_json:
        write_out(("" if shown else json_open(trace_file)) + "\n  ],\n  \"problems\": ")
        write_json_list({"line": p.line, "message": p.message} for p in problems)
        write_out(",\n  \"interrupted\": true\n}\n" if stopped else "\n}\n", flush=True)
    else:
        write_out("", flush=True)
        for p in problems:
            click.echo(f"line {p.line}: {printable(p.message)}", err=True)
        click.echo(f"{shown} run(s): " + ", ".join(
            f"{sum(1 for v in verdicts[:shown] if v['outcome'] == outcome)} {outcome}" for outcome in OUTCOMES)
            + f"; {len(problems)} problem line(s)", err=True)
    if stopped:
        click.echo(f"interrupted (Ctrl-C) while {stopped}; the {shown} verdict(s) printed are whole", err=True)
        sys.exit(130)
    sys.exit(0 if all(v["ready"] for v in verdicts) and not problems else 1)


def _top_fixes(trace, trace_file: str, as_data: bool, out: dict[str, Any], command: tuple[str, ...] = ()) -> None:
    """Each failing run's best proven fix into ``out`` as it is found (kept when Ctrl-C stops the search): a
    line of text, or its data (None when nothing fixes it). A run of the user's own agent is re-run with
    ``command``; a built-in run never is."""
    from tracetui.explain import explain
    from tracetui.explain.report import proof_data, top_fix_line
    from tracetui.replay.agent_replay import is_recorded

    for run_id, run in trace.runs.items():
        if run.verdict()["ready"]:
            continue
        result = explain(run, command=list(command)) if command and is_recorded(run) else explain(run)
        if as_data:
            out[run_id] = proof_data(result.best, trace_file, 1, run_id, result.command) if result.best else None
        else:
            out[run_id] = top_fix_line(result, trace_file)
