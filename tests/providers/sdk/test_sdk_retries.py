"""Proof (d): the same scripted error sequences, served to each SDK and to tracetui: the same attempts and waits.

Nothing really sleeps: each SDK's sleep is replaced by a recorder (openai and
anthropic ``_base_client.time``, tenacity's ``nap.time`` for google-genai), as is
tracetui's transport sleep, and both sides draw the same jitter (each SDK's
``random`` and tracetui's RNG return one fixed number), so the waits compare to the
millisecond. Long waits (90 s, 300 s) are compared, never slept.

google-genai retries only when given retry options: the default client (no retry)
is compared with tracetui's default (``max_retries`` 0), and a client with
``HttpRetryOptions(attempts=N + 1)`` with ``--max-retries N``.
"""
from __future__ import annotations

import random
import time
import types
from typing import Any

import pytest

import tracetui.loop.loop as loop_module
from tracetui.loop.live import http_inputs, run_http
from tracetui.providers.http_transport import HttpTransport

from scripted_server import Reply, ScriptedServer
from sdk_types import PROVIDERS
from wire import OVERLOADED, RATE_LIMITED, base_url, bodies

KEY = "sk-test-sdk-retries-0123456789abcdef"
JITTER = 0.37  # what every random draw returns, on both sides
TIMEOUT_S = 0.25


def error(provider: str, status: int) -> Any:
    return OVERLOADED[provider][1] if status >= 500 else RATE_LIMITED


def sequence(provider: str, steps: list[Any]) -> list[Reply]:
    """Replies from a script: an int is that status with the API's error body, a (status, headers) pair adds
    headers, ``"drop"`` hangs up, ``"slow"`` answers after the timeout, ``"ok"`` is the answer."""
    replies = []
    for step in steps:
        if step == "ok":
            replies.append(Reply(body=bodies(provider)[1]))
        elif step == "drop":
            replies.append(Reply(drop=True))
        elif step == "slow":
            replies.append(Reply(body=bodies(provider)[1], delay=TIMEOUT_S * 3))
        else:
            status, headers = step if isinstance(step, tuple) else (step, {})
            replies.append(Reply(status, error(provider, status), headers))
    return replies


class Recorder:
    def __init__(self):
        self.waits: list[float] = []

    def __call__(self, seconds: float) -> None:
        self.waits.append(round(seconds, 3))


def tracetui_attempts(provider, steps, max_retries, monkeypatch) -> tuple[int, list[float]]:
    class Fixed(random.Random):
        def random(self):
            return JITTER

    monkeypatch.setattr(loop_module.random, "Random", Fixed)
    sleep = Recorder()
    with ScriptedServer(sequence(provider, steps)) as server:
        inputs = http_inputs(provider, "m", base_url(provider, server.url), max_retries=max_retries, seed=0,
                             timeout_ms=int(TIMEOUT_S * 1000))
        run_http("r", inputs, HttpTransport(provider, KEY, trust_env=False, sleep=sleep))
        first_call = [r for r in server.requests]
    return len(first_call), sleep.waits


def sdk_attempts(provider, steps, max_retries, monkeypatch) -> tuple[int, list[float]]:
    sleep = Recorder()
    fake_time = types.SimpleNamespace(**{**{k: getattr(time, k) for k in dir(time) if not k.startswith("_")},
                                         "sleep": sleep})
    with ScriptedServer(sequence(provider, steps)) as server:
        try:
            if provider.startswith("openai"):
                import openai
                import openai._base_client as base

                monkeypatch.setattr(base, "time", fake_time)
                monkeypatch.setattr(base, "random", lambda: JITTER)
                client = openai.OpenAI(api_key=KEY, base_url=base_url(provider, server.url), timeout=TIMEOUT_S,
                                       max_retries=2 if max_retries is None else max_retries)
                if provider == "openai-responses":
                    client.responses.create(model="m", input="hi")
                else:
                    client.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}])
            elif provider == "anthropic":
                import anthropic
                import anthropic._base_client as base

                monkeypatch.setattr(base, "time", fake_time)
                monkeypatch.setattr(base, "random", lambda: JITTER)
                client = anthropic.Anthropic(api_key=KEY, base_url=server.url, timeout=TIMEOUT_S,
                                             max_retries=2 if max_retries is None else max_retries)
                client.messages.create(model="m", max_tokens=16, messages=[{"role": "user", "content": "hi"}])
            else:
                import tenacity.nap
                import tenacity.wait
                from google import genai
                from google.genai import types as gt

                monkeypatch.setattr(tenacity.nap, "time", fake_time)
                monkeypatch.setattr(tenacity.wait, "random", types.SimpleNamespace(
                    uniform=lambda a, b: a + (b - a) * JITTER))
                retry = None if not max_retries else gt.HttpRetryOptions(attempts=max_retries + 1)
                client = genai.Client(api_key=KEY, http_options=gt.HttpOptions(
                    base_url=server.url, api_version="v1beta", timeout=int(TIMEOUT_S * 1000), retry_options=retry))
                client.models.generate_content(model="m", contents="hi")
        except Exception:  # noqa: BLE001 - the SDK gave up: what is compared is how often it tried, and waited
            pass
        return len(server.requests), sleep.waits


CASES = {
    "429 retry-after 90": [(429, {"retry-after": "90"}), "ok"],
    "429 retry-after-ms 90000": [(429, {"retry-after-ms": "90000"}), "ok"],
    "429 retry-after 300": [(429, {"retry-after": "300"}), "ok"],
    "429 retry-after 0": [(429, {"retry-after": "0"}), "ok"],
    "429 retry-after -3": [(429, {"retry-after": "-3"}), "ok"],
    "429 retry-after as a date, no Date to measure against": [(429, {"retry-after": "soon"}), "ok"],
    "529": [529, "ok"],
    "500 500 ok": [500, 500, "ok"],
    "500 until retries run out": [500, 500, 500, "ok"],
    "408": [408, "ok"],
    "409": [409, "ok"],
    "502 503 504": [502, 503, 504],
    "400 x-should-retry true": [(400, {"x-should-retry": "true"}), "ok"],
    "503 x-should-retry false": [(503, {"x-should-retry": "false"}), "ok"],
    "a dropped connection": ["drop", "ok"],
    "a timeout": ["slow", "ok"],
}


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("provider", PROVIDERS)
def test_the_sdk_and_tracetui_try_as_often_and_wait_as_long(provider, case, monkeypatch):
    max_retries = 2 if provider == "gemini" else None  # google-genai: with retry options; the others: defaults
    steps = CASES[case]
    ours = tracetui_attempts(provider, steps, max_retries, monkeypatch)
    theirs = sdk_attempts(provider, steps, max_retries, monkeypatch)
    assert same(ours, theirs), f"tracetui {ours}, SDK {theirs}"


def same(ours: tuple[int, list[float]], theirs: tuple[int, list[float]]) -> bool:
    """Equal attempts, and waits equal to the millisecond: a trace's clock counts whole milliseconds."""
    return ours[0] == theirs[0] and len(ours[1]) == len(theirs[1]) and all(
        abs(a - b) < 0.0015 for a, b in zip(ours[1], theirs[1]))


@pytest.mark.parametrize("case", ["529", "500 500 ok", "a timeout", "429 retry-after 90"])
def test_google_genai_by_default_retries_nothing_and_neither_does_tracetui(case, monkeypatch):
    steps = CASES[case]
    ours = tracetui_attempts("gemini", steps, None, monkeypatch)
    theirs = sdk_attempts("gemini", steps, 0, monkeypatch)
    assert ours == theirs == (1, [])
