"""``tracetui replay``: re-run one recorded run, optionally edited, and compare verdicts."""
from __future__ import annotations

import sys
from typing import Any

import click

from tracetui.cli.common import _emit, _is_otlp, _trace_input, _verdict_line, writes_over
from tracetui.cli.group import main
from tracetui.trace.reader import TraceReadError


@main.command()
@click.argument("trace_file", type=click.Path())
@click.option("--run", "run_id", default=None, help="Id of the run to re-run (optional when the file holds one run).")
@click.option("--set", "sets", multiple=True, metavar="PATH=VALUE",
              help="Edit one field before re-running: a JSON Pointer into {inputs, responses} and a JSON value "
                   "(a string field takes the text as it is; a text that begins with @ is typed as JSON, "
                   "'\"@…\"'). PATH=@FILE reads the value from FILE. Repeatable.")
@click.option("-o", "--output", type=click.Path(dir_okay=False, writable=True), default=None,
              help="Write the re-run to this file (atomically); the original is never modified.")
@click.option("--json", "as_json", is_flag=True, help="Print the comparison as JSON.")
@click.argument("command", nargs=-1, type=click.UNPROCESSED, metavar="[-- COMMAND [ARG]...]")
def replay(trace_file, run_id, sets, output, as_json, command) -> None:
    """Re-run one recorded run, optionally with edited fields, and compare verdicts.

    \b
    tracetui replay runs.jsonl --run cross_tenant \\
        --set '/responses/0/body/output/0/arguments={"order_id": "o-1"}'
    tracetui replay runs.jsonl --run truncated --set /inputs/budgets/max_output_tokens=500
    tracetui replay agent.jsonl --run support -- python agent.py

    FILE may be - for standard input; the run's inputs must be recorded (an OTLP/JSON
    import has none). A run of your own agent (tracetui record) is re-run by running
    your COMMAND, given after --, against its recorded responses (never the network);
    the agent's own output goes to standard error. The command is never read from the
    trace. Exit 0 when the re-run is answer-ready, 1 when it failed, 2 when the input
    cannot be read or the edit cannot be run, 130 when Ctrl-C stopped the re-run.
    """
    from tracetui.replay.edit import current_value, parse_value
    from tracetui.replay.pointer import EditError
    from tracetui.replay.replay import replay as rerun
    from tracetui.replay.value_file import value_text
    from tracetui.trace.index.changes import TraceChanged
    from tracetui.trace.safe_text import printable, printable_json
    from tracetui.trace.writer import encode_record

    try:
        run, names, count, run_id = _lookup(trace_file, run_id)
    except (TraceReadError, TraceChanged) as exc:
        click.echo(printable(f"error: {exc}"), err=True)
        sys.exit(2)
    except OSError as exc:
        click.echo(printable(f"error: {trace_file}: {exc.strerror or exc}"), err=True)
        sys.exit(2)
    if run is None:
        known = ", ".join(names) + (" …" if count > 12 else "")
        missing = f"no run {run_id!r} in {trace_file}" if run_id is not None else \
            f"{count} runs in {trace_file}; choose one with --run ID"
        click.echo(printable(f"error: {missing}; runs: {known}"), err=True)
        sys.exit(2)
    if output and writes_over(output, trace_file):
        click.echo(printable(f"error: -o {output} is the input trace; the original is never modified: "
                             f"choose another file"), err=True)
        sys.exit(2)
    from tracetui.trace.reader import record_warning

    newer = record_warning(run.run) if isinstance(run.run, dict) else None
    if newer:  # as check lists it: the re-run reads the run as this version's format
        click.echo(printable(f"warning: {newer}"), err=True)
    from tracetui.replay.agent_replay import edit_problem, is_recorded, needs_command
    from tracetui.replay.edit import exchanges_of

    recorded = is_recorded(run)
    if recorded and not command:  # the command is the user's to give: a trace never supplies it
        click.echo(printable(f"error: {needs_command(run, 'replay', trace_file)}"), err=True)
        sys.exit(2)
    unwritable = _unwritable(output) if recorded and output and output != "-" else None
    if unwritable:  # said before your agent runs (its tools too), not after, with the re-run lost
        click.echo(printable(f"error: cannot write {output}: {unwritable}"), err=True)
        sys.exit(2)
    edits = []
    try:
        for item in sets:
            path, sep, text = item.partition("=")
            if not sep or not path:
                raise EditError(f"--set takes PATH=VALUE, a JSON Pointer such as /inputs/budgets/max_turns "
                                f"and a value, got {item!r}")
            refused = edit_problem(path, len(exchanges_of(run))) if recorded else None  # before "no field here": none is editable there
            if refused:
                raise EditError(refused)
            current, exists = current_value(run, path)
            edits.append((path, parse_value(current, value_text(text), exists=exists)))  # @FILE: read from FILE
        outcome = rerun(run, edits, command, output=2) if command else rerun(run, edits)  # the agent's output: stderr
    except KeyboardInterrupt:  # the agent was stopped (Ctrl-C, SIGTERM): its run is no re-run to compare
        click.echo("stopped with Ctrl-C: the re-run did not finish, so nothing was compared"
                   + (" or written" if output else ""), err=True)
        sys.exit(130)
    except EditError as exc:
        message = str(exc)
        said = message if message.startswith("cannot") or not sets else f"cannot edit: {message}"  # no edit: why not
        click.echo(printable(f"error: {said}"), err=True)
        sys.exit(2)
    from tracetui.replay.comparison import comparison_data, reproduces_exactly

    identical = reproduces_exactly(run, outcome)
    if output:
        _emit([outcome.records], output)
    if as_json:
        payload = comparison_data(run_id, run, outcome)  # (the MCP server returns the same)
        click.echo(printable_json(payload))
    else:
        click.echo("before  " + printable(_verdict_line(outcome.before)))
        click.echo("after   " + printable(_verdict_line(outcome.after)))
        if identical:
            click.echo("the re-run reproduces the original byte for byte")
        elif not outcome.changes:  # say what does differ, not "0 event(s) differ:" and nothing
            parts = [name for name, a, b in (("run line (its inputs, trace version or producer)", run.run,
                                              outcome.replayed.run),
                                             ("summary", run.summary, outcome.replayed.summary))
                     if a is None or b is None or encode_record(a) != encode_record(b)]
            if not parts:  # a re-run of your agent: its requests were compared with the recording's, and matched
                click.echo("the re-run reproduces the original: the same events, and every request as recorded")
            else:
                click.echo("no event differs; only the " + " and the ".join(parts) + (" differ" if len(parts) > 1
                                                                                       else " differs"))
        else:
            from tracetui.replay.comparison import data_changed

            click.echo(_changes_heading(sum(c.verdict_changed for c in outcome.changes), len(outcome.changes)))
            for c in outcome.changes:
                if c.verdict_changed:  # * = what the event says changed (its outcome or words), as in the compare view
                    after = "→ " + printable(_event_words(c.after))
                else:  # the row reads the same on both sides: say what does differ, not the same words twice
                    after = "= the same; its data differs: " + printable(", ".join(data_changed(c)) or "data")
                click.echo(f" {'*' if c.verdict_changed else ' '}{c.seq:>3}  "
                           f"{printable(_event_words(c.before)):<60} {after}")
        if output:
            click.echo(printable(f"wrote the re-run to {output}"), err=True)
    sys.exit(0 if outcome.after["ready"] else 1)


def _streamed_choice(source: Any, run_id: str | None) -> tuple[Any, list[str], int, str | None]:
    """:func:`_lookup` of OTLP/JSON, read as ``open`` reads it (:mod:`tracetui.otel.stream_source`: each run
    on disk once converted, so memory holds the rows and the one run chosen, whatever the input's size)."""
    try:
        for _ in source.scan():
            pass
        entries = list(source.runs())
        name = run_id if run_id is not None else (entries[0].run_id if len(entries) == 1 else None)
        entry = next((e for e in entries if e.run_id == name), None)
        return (source.load(entry) if entry is not None else None), [e.run_id for e in entries[:12]], \
            len(entries), name
    finally:
        source.close()


#: a run name looked for only to learn a file's run names (no trace names a run so)
_NO_RUN = "\x00(tracetui: the names of the runs)"


def _lookup(trace_file: str, run_id: str | None) -> tuple[Any, list[str], int, str | None]:
    """The run named ``run_id`` (or the file's only run, when ``run_id`` is None), the first run names, how
    many runs there are and the run's name. A tracetui trace is read only as far as the run's end."""
    from tracetui.otel.detect import read_any
    from tracetui.trace.checking import find_run

    def chosen(runs: Any) -> tuple[Any, list[str], int, str | None]:
        name = run_id if run_id is not None else (next(iter(runs)) if len(runs) == 1 else None)
        return runs.get(name) if name is not None else None, list(runs)[:12], len(runs), name

    if _is_otlp(trace_file):
        from tracetui.otel.backend import is_backend_source

        if is_backend_source(trace_file):
            return chosen(read_any(trace_file).runs)
        from tracetui.otel.stream_source import StreamedOtlpSource

        return _streamed_choice(StreamedOtlpSource(trace_file), run_id)
    with _trace_input(trace_file) as item:
        from tracetui.otel.detect import spooled_source

        streamed = None if isinstance(item, str) else spooled_source(item)  # (a file's name: a tracetui trace)
        if streamed is not None:  # standard input holding OTLP/JSON: its runs cannot be re-run
            return _streamed_choice(streamed, run_id)
        if run_id is None:  # a file of one run needs no --run: learn its names first
            found, names, count = find_run(item, _NO_RUN)
            if found is not None or count != 1:
                return None, names, count, None
            run_id = names[0]
        run, names, count = find_run(item, run_id)  # reads only as far as the run's end
        return run, names, count, run_id


def _changes_heading(said: int, changed: int) -> str:
    """How many events differ in what they say (marked *), and how many read the same with other data."""
    quiet = changed - said
    if not quiet:
        return f"{said} event(s) differ:"
    if not said:
        return f"{quiet} event(s) read the same but carry other data:"
    return f"{said} event(s) differ (*), and {quiet} more read the same but carry other data:"


def _unwritable(output: str) -> str | None:
    """Why the re-run could not be written to ``output`` (a folder missing or not writable, a folder or a
    pipe in its place), or None."""
    from tracetui.triage.junit import output_problem  # the same rules as check's --junit report

    return output_problem(output, ())


def _event_words(event: dict[str, Any] | None) -> str:
    if event is None:
        return "(none)"
    from tracetui.trace.format import OUTCOME_ICONS
    from tracetui.trace.safe_text import one_line

    mark = OUTCOME_ICONS.get(event.get("outcome"), "?")
    return one_line(f"{event.get('lane')} {mark} {event.get('summary')}", 60)  # redacted before it is cut

