"""The ``tracetui`` command line: generate, run, check, replay, open."""
from __future__ import annotations

import os
import signal
import sys
from pathlib import Path
from typing import Any

# numpy is used for bulk byte scans, never for linear algebra; left alone, its BLAS starts a thread per
# core that spins for the first ~50 ms after import, taking a core from the index, the explorer's first
# frame, and the worker process. Set here, for the command, before anything imports numpy; a user's own
# setting wins.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import click  # noqa: E402
import orjson  # noqa: E402

from tracetui import __version__
from tracetui.loop.ablations import ABLATIONS
from tracetui.loop.scenarios import FAULT_CHOICES, PROVIDERS, SCENARIOS
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


def exit_on_signals() -> None:
    """SIGTERM and SIGHUP end tracetui as an error does: ``finally`` blocks run (a named temporary
    file is removed, see tracetui.trace.writer). The explorer closes itself instead (ui.app)."""
    def stop(signum: int, frame: Any) -> None:
        raise SystemExit(128 + signum)

    for name in ("SIGTERM", "SIGHUP"):
        number = getattr(signal, name, None)
        if number is not None:
            try:
                signal.signal(number, stop)
            except ValueError:  # not the main thread (embedded): leave signals alone
                return


class _Commands(click.Group):
    """Ctrl-C ends any command with status 130, as a shell reports a program stopped by it (click's
    own handling says "Aborted!" and exits 1, which a script cannot tell from a failed check)."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except KeyboardInterrupt:
            click.echo("interrupted", err=True)
            sys.exit(130)


@click.group(cls=_Commands, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="tracetui")
def main() -> None:
    """Find where an LLM tool-calling loop went wrong.

    \b
    tracetui generate --all -o runs.jsonl     write traces of the built-in scenarios
    tracetui check runs.jsonl                  verdict per run, headless
    tracetui open runs.jsonl                   explore them (no file: a built-in demo)
    """
    exit_on_signals()


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


def _load_responses(path: str) -> list[Any]:
    raw = Path(path).read_bytes()
    try:
        value = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise click.ClickException(f"{path}: not valid JSON: {exc}") from None
    if isinstance(value, dict) and isinstance(value.get("responses"), list):
        value = value["responses"]
    if not isinstance(value, list):
        raise click.ClickException(f"{path}: expected a JSON list of responses, got a {type(value).__name__}")
    if not value:
        raise click.ClickException(f"{path}: the list of responses is empty")
    from tracetui.trace.limits import MAX_DEPTH, too_deep

    if too_deep(value):
        raise click.ClickException(f"{path}: nests deeper than {MAX_DEPTH} levels; no API response does")
    for i, item in enumerate(value):
        if not isinstance(item, (dict, str)):
            raise click.ClickException(f"{path}: response {i} is a {type(item).__name__}; expected an object")
    return value


@main.command()
@click.option("--responses", "responses_file", type=click.Path(exists=True, dir_okay=False), default=None,
              help="JSON list of raw provider responses, one per model call (a cassette).")
@click.option("--base-url", default=None, metavar="URL",
              help="Run against a real endpoint instead. The API path is appended to it as the provider's SDK does: "
                   "OpenAI-compatible URLs end in their version (https://api.openai.com/v1, "
                   "http://localhost:8000/v1); Anthropic and Gemini take the API root (https://api.anthropic.com).")
@click.option("--provider", default="openai-responses", show_default=True,
              help="API shape: openai-responses, openai-chat, anthropic or gemini.")
@click.option("--model", default=None, help="Model name (required with --base-url).")
@click.option("--stream", is_flag=True, help="With --base-url: ask for server-sent events.")
@click.option("--show-stream/--no-show-stream", default=None,
              help="With --stream: write the model's text to stderr as it arrives (tool arguments never). "
                   "Default: on when stderr is a terminal. The trace is the same either way.")
@click.option("--prompt", default=None, help="The user's question (default: the status of order o-1).")
@click.option("--api-key-env", default=None, metavar="NAME",
              help="Environment variable holding the API key (default: OPENAI_API_KEY, ANTHROPIC_API_KEY "
                   "or GEMINI_API_KEY by provider). The key is never written to the trace.")
@click.option("--timeout-ms", type=click.IntRange(1, 3_600_000), default=None,
              help="With --base-url: timeout of connecting and of each read, as the SDKs apply theirs "
                   "(default 600000, connecting 5000); a stream may run as long as it keeps sending.")
@click.option("--header-timeout-ms", type=click.IntRange(1, 3_600_000), default=None,
              help="With --base-url: the status line and headers must all arrive within this, however slowly "
                   "a server drips them (default: the --timeout-ms).")
@click.option("--max-retries", type=click.IntRange(0, 10), default=None,
              help="With --base-url: retries per model call (default: the provider SDK's, 2; Gemini 0).")
@click.option("--max-response-bytes", type=click.IntRange(1024, None), default=None,
              help="With --base-url: cap on one response's decoded bytes, body or stream, enforced while "
                   "reading (default 4194304). A run also records at most what a replay accepts.")
@click.option("--max-stream-events", type=click.IntRange(1, None), default=None,
              help="With --base-url: cap on one stream's events (default 50000).")
@click.option("--seed", type=click.IntRange(0, 2 ** 63 - 1), default=None,
              help="With --base-url: seed of the retry jitter (default: drawn at random, so concurrent runs do "
                   "not retry in step; it is recorded, so the run replays exactly).")
@click.option("--max-turns", type=click.IntRange(1, 100), default=None, help="Turn budget (default 3).")
@click.option("--max-calls", type=click.IntRange(0, 1000), default=None, help="Tool call budget (default 2).")
@click.option("--run-id", default=None,
              help="Run id in the trace (default: the responses file's name, or http-PROVIDER).")
@click.option("-o", "--output", type=click.Path(dir_okay=False, writable=True), default=None,
              help="Trace file to write (atomically). Default: standard output.")
def run(responses_file, base_url, provider, model, stream, show_stream, prompt, api_key_env, timeout_ms,
        header_timeout_ms, max_retries, max_response_bytes, max_stream_events, seed, max_turns, max_calls, run_id,
        output) -> None:
    """Run the loop over recorded responses (--responses) or a real endpoint (--base-url); write the trace.

    \b
    A live run records every exchange in the trace (inputs.responses), so
    `tracetui replay` re-runs it offline. With --stream at a terminal, the
    model's text is shown on stderr as it arrives (see --show-stream).
    """
    from tracetui.providers.registry import ADAPTERS

    if provider not in ADAPTERS:
        raise click.BadParameter(f"{provider!r}; choose from {', '.join(sorted(ADAPTERS))}", param_hint="--provider")
    if (responses_file is None) == (base_url is None):
        raise click.UsageError("give either --responses FILE or --base-url URL")
    if responses_file is not None and output and writes_over(output, responses_file):
        raise click.UsageError("-o is the responses file itself; write the trace to another file")
    if responses_file is not None:
        live_only = [n for n, v in (("--stream", stream), ("--show-stream", show_stream),
                                    ("--api-key-env", api_key_env), ("--timeout-ms", timeout_ms),
                                    ("--header-timeout-ms", header_timeout_ms), ("--max-retries", max_retries),
                                    ("--max-response-bytes", max_response_bytes),
                                    ("--max-stream-events", max_stream_events), ("--seed", seed is not None),
                                    ("--model", model)) if v]
        if live_only:
            raise click.UsageError(f"{', '.join(live_only)} only apply with --base-url")
        from tracetui.loop.inputs import RECORDED_QUESTION, responses_inputs
        from tracetui.loop.runner import run_inputs

        responses = _load_responses(responses_file)
        inputs = responses_inputs(responses, provider, max_turns, max_calls, user_input=prompt or RECORDED_QUESTION)
        result = run_inputs(run_id or Path(responses_file).stem, inputs)
    else:
        if show_stream and not stream:
            raise click.UsageError("--show-stream needs --stream")
        if show_stream is None:  # watching is for people: on at a terminal, off in pipes and CI logs
            show_stream = stream and sys.stderr.isatty()
        result = _run_live(base_url, provider, model, stream, prompt, api_key_env, timeout_ms, max_retries,
                           max_turns, max_calls, run_id, show_stream=show_stream, seed=seed,
                           header_timeout_ms=header_timeout_ms, max_response_bytes=max_response_bytes,
                           max_stream_events=max_stream_events)
    from tracetui.trace.safe_text import printable
    from tracetui.trace.verdict import decide

    _emit([result.records], output)
    verdict = decide(result.summary, result.events).as_dict(result.summary["run_id"])
    click.echo(printable(_verdict_line(verdict)), err=True)
    from tracetui.loop.live import was_interrupted

    if was_interrupted(result):
        sys.exit(130)  # as a shell reports a run stopped by Ctrl-C; the trace holds what was recorded
    sys.exit(0 if verdict["ready"] else 1)


def _run_live(base_url, provider, model, stream, prompt, api_key_env, timeout_ms, max_retries, max_turns,
              max_calls, run_id, show_stream=False, seed=None, header_timeout_ms=None, max_response_bytes=None,
              max_stream_events=None):
    import os
    from urllib.parse import urlsplit

    from tracetui.providers.gemini import model_problem
    from tracetui.providers.http_transport import KEY_ENV, HttpTransport, is_loopback, url_problem
    from tracetui.trace.safe_text import printable
    from tracetui.providers.response_caps import ResponseCaps
    from tracetui.loop.live import LIVE_CONNECT_TIMEOUT_MS, TextEcho, http_inputs, run_http

    parts = urlsplit(base_url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise click.BadParameter(f"{base_url!r} is not an http(s) URL", param_hint="--base-url")
    if url_problem(base_url):
        raise click.BadParameter(f"{printable(repr(base_url))} is not a URL a request can be sent to: "
                                 f"{printable(url_problem(base_url))}", param_hint="--base-url")
    if parts.username or parts.password or "?" in base_url or "#" in base_url:  # an empty query too
        raise click.BadParameter("no credentials, query or fragment in the URL: the key comes from the "
                                 "environment, and the URL is written to the trace", param_hint="--base-url")
    if not model:
        raise click.UsageError("--base-url needs --model")
    if provider == "gemini" and model_problem(model):
        raise click.BadParameter(model_problem(model), param_hint="--model")
    if provider.startswith("openai") and parts.path in ("", "/"):  # kept as given, as the SDK keeps it
        path = "responses" if provider == "openai-responses" else "chat/completions"
        click.echo(f"note: requests go to {base_url.rstrip('/')}/{path}; an OpenAI-compatible base URL usually "
                   f"ends in its version (…/v1)", err=True)
    env = api_key_env or KEY_ENV[provider]
    key = os.environ.get(env)
    if not key and not is_loopback(base_url):  # a local vLLM, llama.cpp or Ollama server needs no key
        raise click.ClickException(f"{env} is not set: export the API key there, or name another variable "
                                   f"with --api-key-env")
    inputs = http_inputs(provider, model, base_url, prompt=prompt, stream=stream, timeout_ms=timeout_ms,
                         max_retries=max_retries, max_turns=max_turns, max_calls=max_calls, api_key_env=env,
                         seed=seed)
    caps = ResponseCaps(**{k: v for k, v in (("max_response_bytes", max_response_bytes),
                                             ("max_stream_events", max_stream_events)) if v is not None})
    # the echo only reads the stream: the exchanges recorded, hence the trace, do not depend on it
    echo = TextEcho(sys.stderr) if show_stream else None
    transport = HttpTransport(provider, key, trust_env=not is_loopback(base_url), caps=caps,
                              connect_timeout_ms=LIVE_CONNECT_TIMEOUT_MS if timeout_ms is None else None,
                              header_timeout_ms=header_timeout_ms,
                              on_text=echo.text if echo else None, on_stream_end=echo.end if echo else None)
    try:
        return run_http(run_id or f"http-{provider}", inputs, transport)
    finally:
        transport.close()


def _verdict_line(v: dict[str, Any]) -> str:
    from tracetui.trace.verdict import verdict_line

    return verdict_line(v["run_id"], v)


@main.command()
@click.argument("trace_file", type=click.Path())
@click.option("--json", "as_json", is_flag=True, help="Print verdicts as JSON.")
@click.option("--explain", "with_fixes", is_flag=True,
              help="Add each failing run's top fix, proven by replay, with its replay command.")
def check(trace_file, as_json, with_fixes) -> None:
    """Verdict per run, headless. FILE may be - for standard input, or an OTLP/JSON file (told apart by content).

    Exit 0 when every run is answer-ready and every line was read; 1 when any run
    failed or is incomplete, or some lines could not be read (they are listed);
    2 when the file cannot be read at all (or changed while it was read); 130
    when interrupted (Ctrl-C): the verdicts printed are whole, and --json's
    document is closed with "interrupted": true. 141, and no word, when standard
    output is closed early (check FILE | head -1).
    """
    if with_fixes and trace_file == "-":
        raise click.UsageError("--explain re-runs each failing run: give a file, not -")
    if with_fixes or _is_otlp(trace_file):
        _check_whole(trace_file, as_json, with_fixes)
    _check_streaming(trace_file, as_json)


def _is_otlp(trace_file: str) -> bool:
    """Whether a named file is OTLP/JSON (read whole); an unreadable one is reported by the streaming check."""
    if trace_file == "-":
        return False
    from tracetui.otel.detect import is_otlp

    try:
        return is_otlp(trace_file)
    except (TraceReadError, OSError):
        return False


def _check_streaming(trace_file: str, as_json: bool) -> None:
    """``check`` in bounded memory: verdicts printed as the scan decides them (tracetui.trace.checking).

    Ctrl-C ends the scan, never a verdict half printed: what was checked is printed whole, the JSON
    document is closed (with ``"interrupted": true``), and the exit status is 130."""
    from tracetui.trace.held_interrupt import HeldInterrupt

    with HeldInterrupt() as held:
        _scan_and_print(trace_file, as_json, held)


def _scan_and_print(trace_file: str, as_json: bool, held: Any) -> None:
    from tracetui.trace.checking import Checker, ProblemLog
    from tracetui.trace.index.changes import TraceChanged
    from tracetui.trace.safe_text import printable
    from tracetui.trace.verdict import OUTCOMES
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
        return v["outcome"], v["ready"], _json_item(v) if as_json else line_of(v)

    def on_verdict(v: tuple[str, bool, str]) -> None:
        """Printed as soon as it is known: memory stays flat however many runs there are."""
        held.busy = True  # a Ctrl-C now waits until this verdict is whole, counted and written
        outcome, ready, text = v
        counts[outcome] += 1
        if not ready:
            state["ready"] = False
        if as_json:
            out_write((_JSON_OPEN(trace_file) if not state["runs"] else ",\n") + text)
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
                imported = _spooled_otlp(item)  # standard input holding OTLP/JSON: read whole, as a file of it is
                if imported is None:
                    Checker(item, on_verdict, problems.append, kept).run()
        finally:
            held.busy = True
            out_write("", flush=True)  # the verdicts decided so far, before any error
            held.release()
    except KeyboardInterrupt:
        interrupted, imported = True, None
    except TraceReadError as exc:  # (no run at all: the lines that are not records say why)
        _fail(_first_problems(problems) + f"error: {printable(str(exc))}", as_json and state["runs"])
    except TraceChanged as exc:
        _fail(f"error: {printable(str(exc))}: the verdicts above may be wrong; check it again",
              as_json and state["runs"])
    except OSError as exc:
        _fail(f"error: {printable(trace_file)}: {exc.strerror or exc}", as_json and state["runs"])
    if imported is not None:  # printed as a file of OTLP is (its errors writing are not the input's)
        _check_whole(trace_file, as_json, False, imported)
    held.hold_for_good()  # closing the output: a Ctrl-C now would only cut it short
    if as_json:
        if interrupted and not state["runs"]:
            out_write(_JSON_OPEN(trace_file))
        out_write("\n  ],\n  \"problems\": ", flush=True)
        _write_json_list({"line": p.line, "message": p.message} for p in problems)
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




def _check_whole(trace_file: str, as_json: bool, with_fixes: bool, trace: Any = None) -> None:
    """``check`` over a trace read whole (``trace``, when already read): an OTLP/JSON file (imported runs
    are read whole), or with ``--explain`` (each failing run is re-run, so its records are needed).

    Ctrl-C ends it as it ends the streaming check: the verdicts decided so far are printed whole, the JSON
    document is closed with ``"interrupted": true``, and the exit status is 130."""
    from tracetui.trace.held_interrupt import HeldInterrupt

    with HeldInterrupt() as held:
        _whole_and_print(trace_file, as_json, with_fixes, trace, held)


def _whole_and_print(trace_file: str, as_json: bool, with_fixes: bool, trace: Any, held: Any) -> None:
    from tracetui.otel.detect import read_any  # a tracetui trace or OTLP/JSON, told apart by content
    from tracetui.trace.output_stream import write_out
    from tracetui.trace.safe_text import printable
    from tracetui.trace.verdict import OUTCOMES

    verdicts: list[dict[str, Any]] = []
    fixes: dict[str, Any] = {}
    problems: list[Any] = []
    stopped = None  # what Ctrl-C cut short, in words
    try:
        try:
            trace = read_any(trace_file) if trace is None else trace
        except TraceReadError as exc:
            click.echo(_first_problems(exc.problems) + printable(f"error: {exc}"), err=True)
            sys.exit(2)
        except OSError as exc:
            click.echo(printable(f"error: {trace_file}: {exc.strerror or exc}"), err=True)
            sys.exit(2)
        problems = trace.problems
        verdicts.extend(run.verdict() for run in trace.runs.values())
        if with_fixes:
            stopped = "proving fixes: the failing runs listed without a fix were not explained"
            _top_fixes(trace, trace_file, as_json, fixes)
        stopped = None
    except KeyboardInterrupt:
        stopped = stopped or "reading: the rest of the file was not checked"
    shown = 0
    try:
        for v in verdicts:
            held.busy = True  # a Ctrl-C now waits until this verdict is whole
            if as_json:
                v = {**v, "fix": fixes[v["run_id"]]} if v["run_id"] in fixes else v
                write_out((_JSON_OPEN(trace_file) if not shown else ",\n") + _json_item(v))
            else:
                fix = fixes.get(v["run_id"])
                write_out(printable(_verdict_line(v)) + "\n" + (fix + "\n" if fix else ""))
            shown += 1
            held.release()
    except KeyboardInterrupt:
        stopped = stopped or "printing"
    held.hold_for_good()  # closing the output: a Ctrl-C now would only cut it short
    if as_json:
        write_out(("" if shown else _JSON_OPEN(trace_file)) + "\n  ],\n  \"problems\": ")
        _write_json_list({"line": p.line, "message": p.message} for p in problems)
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


def _top_fixes(trace, trace_file: str, as_data: bool, out: dict[str, Any]) -> None:
    """Each failing run's best proven fix into ``out`` as it is found (kept when Ctrl-C stops the search): a
    line of text, or its data (None when nothing fixes it)."""
    from tracetui.explain import explain
    from tracetui.explain.report import proof_data, top_fix_line

    for run_id, run in trace.runs.items():
        if run.verdict()["ready"]:
            continue
        result = explain(run)
        if as_data:
            out[run_id] = proof_data(result.best, trace_file, 1, run_id) if result.best else None
        else:
            out[run_id] = top_fix_line(result, trace_file)


#: problem lines listed before "no runs found"
FIRST_PROBLEMS = 5


def _first_problems(problems: Any) -> str:
    """The first problem lines, one a line (and how many more there are), to print before an error."""
    from itertools import islice

    from tracetui.trace.safe_text import printable

    shown = [f"line {p.line}: {printable(p.message)}\n" for p in islice(iter(problems), FIRST_PROBLEMS)]
    more = len(problems) - len(shown)
    return "".join(shown) + (f"… and {more} more problem line(s)\n" if more > 0 else "")


def _fail(message: str, json_open: Any = False) -> None:
    if json_open:  # keep standard output one JSON document
        click.echo("\n  ]\n}", nl=True)
    click.echo(message, err=True)
    sys.exit(2)


def _JSON_OPEN(trace_file: str) -> str:
    from tracetui.trace.safe_text import printable_json

    return '{\n  "file": ' + printable_json(trace_file, indent=False) + ',\n  "runs": [\n'


def _json_item(value: Any, indent: str = "    ") -> str:
    """``value`` as ``printable_json`` prints it (redacted, controls escaped), inside a list two levels deep."""
    from tracetui.trace.safe_text import printable_json

    text = printable_json(value)
    return indent + text.replace("\n", "\n" + indent)


def _write_json_list(values: Any) -> None:
    """An indented JSON list at the second level, written item by item (never whole in memory)."""
    from tracetui.trace.output_stream import write_out

    first = True
    for value in values:
        write_out(("[\n" if first else ",\n") + _json_item(value))
        first = False
    write_out("[]" if first else "\n  ]")


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


@main.command(name="explain")
@click.argument("trace_file", type=click.Path())
@click.option("--run", "run_id", default=None, help="Id of the failing run to explain (optional when only one failed).")
@click.option("--json", "as_json", is_flag=True, help="Print the fixes as JSON.")
@click.option("--limit", type=click.IntRange(1, 1000), default=5, show_default=True, help="Fixes (then what-ifs) to show at most.")
def explain_(trace_file, run_id, as_json, limit) -> None:
    """Say who is responsible for a failing run, and find the smallest edits that fix it, each proven by replay.

    \b
    Candidate edits come from the run's own evidence (the failing event, its inputs,
    its recorded responses); each is re-run, and only those that change the verdict
    are shown: fixes first (edits in your control: every one of the smallest size,
    grouped by side, then larger ones), then what-ifs (true, but edits of the
    environment or of what a guard protects, each saying why it is not a fix).
    Each comes with the `tracetui replay` command that reproduces it.

    FILE may be a tracetui trace or an OTLP/JSON file (whose imported runs cannot be
    re-run: explain says so). Exit 0 when a fix was proven (or the run is already
    answer-ready), 1 when none was or the run cannot be re-run, 2 when the input
    cannot be read.
    """
    from tracetui.explain import explain
    from tracetui.explain.report import as_data, as_text
    from tracetui.otel.detect import read_any
    from tracetui.trace.safe_text import printable, printable_json

    if trace_file == "-":
        raise click.UsageError("explain prints replay commands that name the trace: give a file, not -")
    try:
        trace = read_any(trace_file)
    except TraceReadError as exc:
        click.echo(printable(f"error: {exc}"), err=True)
        sys.exit(2)
    except OSError as exc:
        click.echo(printable(f"error: {trace_file}: {exc.strerror or exc}"), err=True)
        sys.exit(2)
    if run_id is None:
        failing = [rid for rid, run in trace.runs.items() if not run.verdict()["ready"]]
        if len(failing) != 1:
            listed = ", ".join(failing[:12]) + (" …" if len(failing) > 12 else "")
            click.echo(printable(f"error: {len(failing)} runs failed in {trace_file}; choose one with --run ID"
                                 + (f": {listed}" if failing else "")), err=True)
            sys.exit(2)
        run_id = failing[0]
    run = trace.runs.get(run_id)
    if run is None:
        known = ", ".join(list(trace.runs)[:12]) + (" …" if len(trace.runs) > 12 else "")
        click.echo(printable(f"error: no run {run_id!r} in {trace_file}; runs: {known}"), err=True)
        sys.exit(2)
    result = explain(run)
    if as_json:
        click.echo(printable_json(as_data(result, trace_file, limit)))
    else:
        for line in as_text(result, trace_file, limit):
            click.echo(line)
    sys.exit(0 if result.fixes or result.before.get("ready") else 1)


@main.command()
@click.argument("trace_file", type=click.Path())
@click.option("--run", "run_id", required=True, help="Id of the run to re-run.")
@click.option("--set", "sets", multiple=True, metavar="PATH=VALUE",
              help="Edit one field before re-running: a JSON Pointer into {inputs, responses} and a JSON value "
                   "(a string field takes the text as it is; a text that begins with @ is typed as JSON, "
                   "'\"@…\"'). PATH=@FILE reads the value from FILE. Repeatable.")
@click.option("-o", "--output", type=click.Path(dir_okay=False, writable=True), default=None,
              help="Write the re-run to this file (atomically); the original is never modified.")
@click.option("--json", "as_json", is_flag=True, help="Print the comparison as JSON.")
def replay(trace_file, run_id, sets, output, as_json) -> None:
    """Re-run one recorded run, optionally with edited fields, and compare verdicts.

    \b
    tracetui replay runs.jsonl --run cross_tenant \\
        --set '/responses/0/body/output/0/arguments={"order_id": "o-1"}'
    tracetui replay runs.jsonl --run truncated --set /inputs/budgets/max_output_tokens=500

    FILE may be - for standard input; the run's inputs must be recorded (an OTLP/JSON
    import has none). Exit 0 when the re-run is answer-ready, 1 when it failed, 2 when
    the input cannot be read or the edit cannot be run.
    """
    from tracetui.replay.edit import current_value, parse_value
    from tracetui.replay.pointer import EditError
    from tracetui.otel.detect import read_any
    from tracetui.replay.replay import replay as rerun
    from tracetui.replay.value_file import value_text
    from tracetui.trace.checking import find_run
    from tracetui.trace.index.changes import TraceChanged
    from tracetui.trace.safe_text import printable, printable_json
    from tracetui.trace.writer import encode_record

    try:
        if _is_otlp(trace_file):
            trace = read_any(trace_file)
            run, names, count = trace.runs.get(run_id), list(trace.runs)[:12], len(trace.runs)
        else:
            with _trace_input(trace_file) as item:
                imported = _spooled_otlp(item)
                if imported is not None:  # standard input holding OTLP/JSON: its runs cannot be re-run
                    run, names, count = imported.runs.get(run_id), list(imported.runs)[:12], len(imported.runs)
                else:
                    run, names, count = find_run(item, run_id)  # reads only as far as the run's end
    except (TraceReadError, TraceChanged) as exc:
        click.echo(printable(f"error: {exc}"), err=True)
        sys.exit(2)
    except OSError as exc:
        click.echo(printable(f"error: {trace_file}: {exc.strerror or exc}"), err=True)
        sys.exit(2)
    if run is None:
        known = ", ".join(names) + (" …" if count > 12 else "")
        click.echo(printable(f"error: no run {run_id!r} in {trace_file}; runs: {known}"), err=True)
        sys.exit(2)
    if output and writes_over(output, trace_file):
        click.echo(printable(f"error: -o {output} is the input trace; the original is never modified: "
                             f"choose another file"), err=True)
        sys.exit(2)
    from tracetui.trace.reader import record_warning

    newer = record_warning(run.run) if isinstance(run.run, dict) else None
    if newer:  # as check lists it: the re-run reads the run as this version's format
        click.echo(printable(f"warning: {newer}"), err=True)
    edits = []
    try:
        for item in sets:
            path, sep, text = item.partition("=")
            if not sep or not path:
                raise EditError(f"--set takes PATH=VALUE, a JSON Pointer such as /inputs/budgets/max_turns "
                                f"and a value, got {item!r}")
            current, exists = current_value(run, path)
            edits.append((path, parse_value(current, value_text(text), exists=exists)))  # @FILE: read from FILE
        outcome = rerun(run, edits)
    except EditError as exc:
        message = str(exc)
        said = message if message.startswith("cannot") or not sets else f"cannot edit: {message}"  # no edit: why not
        click.echo(printable(f"error: {said}"), err=True)
        sys.exit(2)
    original = b"".join(encode_record(r) for r in (run.run, *run.events, run.summary) if r is not None)
    identical = original == b"".join(encode_record(r) for r in outcome.records)
    if output:
        _emit([outcome.records], output)
    if as_json:
        payload = {"run_id": run_id, "edits": [{"path": p, "value": v} for p, v in edits],
                   "before": outcome.before, "after": outcome.after, "identical": identical,
                   "changes": [{"seq": c.seq, "verdict_changed": c.verdict_changed,
                                "before": _brief(c.before), "after": _brief(c.after)}
                               for c in outcome.changes]}
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
            click.echo("no event differs; only the " + " and the ".join(parts) + (" differ" if len(parts) > 1
                                                                                   else " differs"))
        else:
            click.echo(f"{len(outcome.changes)} event(s) differ:")
            for c in outcome.changes:
                mark = "*" if c.verdict_changed else " "  # * = the outcome changed, not only the data
                click.echo(f" {mark}{c.seq:>3}  {printable(_event_words(c.before)):<60} → "
                           f"{printable(_event_words(c.after))}")
        if output:
            click.echo(printable(f"wrote the re-run to {output}"), err=True)
    sys.exit(0 if outcome.after["ready"] else 1)


def _brief(event: dict[str, Any] | None) -> dict[str, Any] | None:
    if event is None:
        return None
    return {k: event.get(k) for k in ("lane", "kind", "outcome", "code", "call_id", "summary")}


def _event_words(event: dict[str, Any] | None) -> str:
    if event is None:
        return "(none)"
    from tracetui.trace.format import OUTCOME_ICONS
    from tracetui.trace.safe_text import one_line

    mark = OUTCOME_ICONS.get(event.get("outcome"), "?")
    return one_line(f"{event.get('lane')} {mark} {event.get('summary')}", 60)  # redacted before it is cut


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
    """Regenerate the sample traces (default: ./sample_traces) from their recipes."""
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


@main.command(name="open")
@click.argument("trace_files", nargs=-1, type=click.Path())
@click.option("-f", "--follow", is_flag=True,
              help="Follow the files as they grow, as tail -f does: runs show as a writer appends them (F toggles).")
def open_(trace_files, follow) -> None:
    """Explore traces in the terminal. With no FILE, open a built-in demo of every scenario; - reads standard input.

    A FILE may also be OTLP/JSON (OpenTelemetry GenAI or OpenInference spans), told apart by content.
    """
    from tracetui.ui.app import run_app

    run_app(list(trace_files), follow=follow)


@main.command()
@click.argument("trace_file", type=click.Path())
@click.option("--run", "run_ids", multiple=True, metavar="ID", help="Export only this run (repeatable). Default: all.")
@click.option("-o", "--output", type=click.Path(dir_okay=False, writable=True), default=None,
              help="OTLP/JSON file to write (atomically): one TracesData per line, the collector file-exporter "
                   "format. '-' for standard output.")
@click.option("--endpoint", default=None, metavar="URL",
              help="Send OTLP/HTTP protobuf to a collector instead, e.g. http://127.0.0.1:4318 (/v1/traces is "
                   "added when the URL has no path). Needs: pip install 'tracetui[otel]'.")
@click.option("--header", "headers", multiple=True, metavar="NAME=VALUE",
              help="With --endpoint: an HTTP header (repeatable); also read from OTEL_EXPORTER_OTLP_HEADERS.")
@click.option("--content", is_flag=True,
              help="Include message content (prompts, answers, tool arguments and results). Off by default, as in "
                   "OpenTelemetry; redaction applies either way.")
@click.option("--start", default=None, metavar="TIME",
              help="Where the runs start in time: ISO 8601 or 'now'. Traces hold no wall clock; the default "
                   "(2025-01-01T00:00:00Z) keeps exports byte-identical.")
@click.option("--timeout", "timeout_s", type=click.FloatRange(0.1, 300), default=10.0, show_default=True,
              help="With --endpoint: seconds to wait for each request.")
def export(trace_file, run_ids, output, endpoint, headers, content, start, timeout_s) -> None:
    """Export runs as OpenTelemetry GenAI spans: to an OTLP/JSON file (-o) or a collector (--endpoint).

    \b
    tracetui export runs.jsonl -o spans.jsonl
    tracetui export runs.jsonl --run cross_tenant --content -o spans.jsonl
    tracetui export runs.jsonl --endpoint http://127.0.0.1:6006

    One trace per run; ids derive from the run id, so exporting twice is
    idempotent. Exit 0 on success, 1 when the collector rejected some spans,
    2 when the input cannot be read or the collector refuses (or answers with
    something that is not an OTLP response); runs delivered before a refused
    request are listed.
    """
    from tracetui.otel.export import ExportError, select, send_runs, spans_of_runs, start_ns, write_file
    from tracetui.trace.safe_text import printable

    if (output is None) == (endpoint is None):
        raise click.UsageError("give either -o FILE or --endpoint URL")
    if trace_file == "-":
        raise click.UsageError("export reads the trace whole: give a file, not - (standard input is read by "
                               "check, replay and open)")
    if headers and not endpoint:
        raise click.UsageError("--header only applies with --endpoint")
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
        selection = select(trace_file, run_ids)
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
        report = send_runs(endpoint, runs, pairs, timeout_s)
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


if __name__ == "__main__":  # pragma: no cover
    main()
