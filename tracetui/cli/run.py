"""``tracetui run``: the loop over recorded responses or a real endpoint, written as a trace."""
from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click
import orjson

from tracetui.cli.common import _emit, _verdict_line, writes_over
from tracetui.cli.group import main


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

