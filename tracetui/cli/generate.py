"""``tracetui generate``, ``scenarios``, ``schema`` and ``samples``: the built-in scenarios and what is made from them."""
from __future__ import annotations

import os
from pathlib import Path

import click
import orjson

from tracetui.cli.common import _emit
from tracetui.cli.group import main
from tracetui.loop.ablations import ABLATIONS
from tracetui.loop.scenarios import FAULT_CHOICES, PROVIDERS, SCENARIOS


@main.command()
@click.option("--scenario", "scenarios", multiple=True, type=click.Choice(list(SCENARIOS)),
              help="Scenario to run (repeatable). Default: single.")
@click.option("--all", "all_scenarios", is_flag=True, help="Run every scenario.")
@click.option("--ablation", type=click.Choice(list(ABLATIONS)), default=None,
              help="Damage the context the model is sent in one way.")
@click.option("--all-ablations", is_flag=True, help="Run each scenario under every ablation.")
@click.option("--fault", "faults", multiple=True, type=click.Choice(list(FAULT_CHOICES)),
              help="Inject one failing HTTP attempt on the first model call (repeatable, in order).")
@click.option("--transient-failures", type=click.IntRange(0, 50), default=0, show_default=True,
              help="Inject N transient 503s on the first model call.")
@click.option("--seed", type=click.IntRange(0), default=0, show_default=True,
              help="Seed for logical latencies and backoff jitter.")
@click.option("--provider", type=click.Choice(list(PROVIDERS)), default="openai-responses", show_default=True,
              help="The API whose wire shape the built-in provider speaks (see `tracetui scenarios` for where "
                   "an API cannot express a scenario).")
@click.option("-o", "--output", type=click.Path(dir_okay=False, writable=True), default=None,
              help="Trace file to write (atomically). Default: standard output.")
def generate(scenarios, all_scenarios, ablation, all_ablations, faults, transient_failures, seed, provider,
             output) -> None:
    """Run built-in scenarios through the loop and write their JSONL traces."""
    from tracetui.loop.runner import run_scenario

    if all_scenarios and scenarios:
        raise click.UsageError("use --scenario or --all, not both")
    if ablation and all_ablations:
        raise click.UsageError("use --ablation or --all-ablations, not both")
    names = list(SCENARIOS) if all_scenarios else list(scenarios or ["single"])
    ablations = list(ABLATIONS) if all_ablations else [ablation or "complete"]
    tally = {"runs": 0, "failed": 0}

    def results():
        """Runs are written as they finish: memory stays flat however many are generated."""
        for name in names:
            for abl in ablations:
                result = run_scenario(name, abl, tuple(faults), transient_failures, seed, provider=provider)
                tally["runs"] += 1
                tally["failed"] += result.status != "answer_ready"
                yield result

    _emit((result.records for result in results()), output)
    where = f" to {output}" if output not in (None, "-") else ""
    click.echo(f"wrote {tally['runs']} run(s), {tally['failed']} failed{where}", err=True)


@main.command()
def scenarios() -> None:
    """List the built-in scenarios, ablations and faults."""
    width = max(len(n) for n in SCENARIOS)
    click.echo("scenarios (tracetui generate --scenario NAME):")
    for sc in SCENARIOS.values():
        click.echo(f"  {sc.name:<{width}}  {sc.expect:<24} {sc.about}")
    click.echo("\nablations (--ablation NAME, or --all-ablations):")
    for name, (_, about) in ABLATIONS.items():
        click.echo(f"  {name:<{width}}  {about}")
    click.echo("\nfaults (--fault KIND, repeatable):")
    for name, about in (("429", "rate limited, with Retry-After"), ("5xx", "503 server overloaded"),
                        ("timeout", "no response before the timeout"),
                        ("html", "200 whose body is an HTML error page"),
                        ("vendor", "200 whose body is another vendor's JSON")):
        click.echo(f"  {name:<{width}}  {about}")
    from tracetui.providers.fake_wire import WIRES

    click.echo("\nproviders (--provider NAME): each scenario in each API's wire shape, with the same verdict "
               "except where an API cannot express it:")
    for provider, wire in WIRES.items():
        rows = [(name, status, why) for name, (status, why) in wire.differences.items()]
        rows += [(f"fault {name}", status, why) for name, (status, why) in wire.fault_differences.items()]
        click.echo(f"  {provider}" + ("  (the scenarios are written for it)" if not rows else ""))
        for name, status, why in rows:
            click.echo(f"    {name:<{width}}  {status:<22} {why}")


@main.command()
def schema() -> None:
    """Print the JSON Schema of a trace line."""
    from tracetui.trace.schema import SCHEMA

    click.echo(orjson.dumps(SCHEMA, option=orjson.OPT_INDENT_2).decode())


@main.command()
@click.argument("directory", type=click.Path(file_okay=False), default="sample_traces")
def samples(directory) -> None:
    """Regenerate the sample traces (default: ./sample_traces) from their recipes, and the recordings made from
    the built-in provider (responses/anthropic_normal.json) first: traces are made from them."""
    from tracetui.samples import RECORDINGS, recording
    from tracetui.trace.writer import AtomicWriter

    (Path(directory) / "responses").mkdir(parents=True, exist_ok=True)
    for name in RECORDINGS:
        with AtomicWriter(Path(directory) / "responses" / name) as out:
            out.write(recording(name))
        click.echo(f"wrote {Path(directory) / 'responses' / name}", err=True)
    for name in regenerate_samples(directory):
        click.echo(f"wrote {Path(directory) / name}", err=True)


def regenerate_samples(directory: str | os.PathLike[str], responses_dir: Path | None = None) -> list[str]:
    """Run every sample recipe (a plain CLI invocation) into ``directory``; returns the file names written."""
    from tracetui.samples import RESPONSES_DIR, recipes

    Path(directory).mkdir(parents=True, exist_ok=True)
    written = []
    for name, argv in recipes(responses_dir or RESPONSES_DIR).items():
        argv = [arg.replace("{samples}", str(directory)) for arg in argv]  # a sample made from another
        try:
            main.main(args=[*argv, "-o", str(Path(directory) / name)], prog_name="tracetui", standalone_mode=False)
        except SystemExit as exc:  # `run` exits 1 for a failed run: still a sample
            if exc.code not in (0, 1, None):
                raise
        written.append(name)
    return written

