"""``tracetui diff``: two recorded runs aligned step by step, the first divergence in words, both verdicts."""
from __future__ import annotations

import sys

import click

from tracetui.cli.group import main


@main.command(name="diff", context_settings={"ignore_unknown_options": True, "allow_interspersed_args": True})
@click.argument("runs", nargs=-1, type=click.UNPROCESSED, metavar="A B")
@click.option("--json", "as_json", is_flag=True, help="Print the comparison as JSON.")
def diff_(runs, as_json) -> None:
    """Compare two recorded runs: the steps aligned by turn and lane, where they first part ways, both verdicts.

    \b
    Name each run as FILE:ID or as FILE --run ID (the --run right after its file);
    the two may come from one file or two, from tracetui traces, OTLP/JSON files or a
    backend source (phoenix+http://HOST:PORT/PROJECT:ID), recorded on any provider:
    tracetui diff runs.jsonl:single runs.jsonl:cross_tenant
    tracetui diff runs.jsonl --run refund anthropic.jsonl --run refund
    A file that holds one run needs no id.

    \b
    Steps are matched by turn and lane, not by position: an extra retry in one run is
    one row only that run has (marked *), and the steps after it still line up. The
    first divergence is marked >.
    Exit 0 when both runs reach the same verdict, 1 when their verdicts differ,
    2 when a run cannot be read or named.
    """
    from tracetui.replay.run_diff import diff_runs
    from tracetui.trace.output_stream import write_out
    from tracetui.trace.reader import TraceReadError
    from tracetui.trace.safe_text import printable, printable_json
    from tracetui.triage.diff_text import diff_lines
    from tracetui.triage.run_pair import RunSpecError, load_runs, parse_run_spec, split_specs

    try:
        specs = split_specs(runs)
        unknown = next((text for text, _ in specs if text.startswith("-") and text != "-"
                        and not text.startswith("-:")), None)  # -:ID is standard input's run: said below
        if unknown is not None:
            raise RunSpecError(f"no such option: {unknown}")
        if len(specs) != 2:
            raise RunSpecError(f"diff compares two runs; {len(specs)} given: name each as FILE:ID or FILE --run ID")
        named = [parse_run_spec(text, run) for text, run in specs]
        if any(path == "-" for path, _ in named):
            raise RunSpecError("diff reads two named files: give a file, not - (standard input)")
    except RunSpecError as exc:
        raise click.UsageError(str(exc)) from None
    try:
        loaded = load_runs(named)  # two runs of one file: one reading of it
    except TraceReadError as exc:
        click.echo(printable(f"error: {exc}"), err=True)
        sys.exit(2)
    names = [f"{path}:{run.run_id}" for (path, _), run in zip(named, loaded)]
    result = diff_runs(*loaded)
    if as_json:
        document = result.to_json()
        document["a"]["source"], document["b"]["source"] = named[0][0], named[1][0]
        write_out(printable_json(document) + "\n", flush=True)
    else:  # a reader that stops early (| head) ends the command with 141, never with 1's "verdicts differ"
        write_out("".join(line + "\n" for line in diff_lines(result, *names)), flush=True)
    sys.exit(0 if result.same_verdict else 1)
