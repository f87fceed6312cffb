"""Each provider's retry policy, as its SDK has it: long Retry-After, ≤ 0 Retry-After, Gemini's own rules, seeds.

tests/providers/sdk/test_retries.py proves the same against the SDKs themselves;
these tests pin the rules tracetui states in its README, and run the loop end to
end over loopback where the rule changes what a run does.
"""
from __future__ import annotations

import random

import pytest

from tracetui.loop.live import http_inputs, run_http
from tracetui.loop.retry import ANTHROPIC, GEMINI, OPENAI, policy_for
from tracetui.loop.runner import run_inputs
from tracetui.providers.http_transport import HttpTransport

from scripted_server import Reply, ScriptedServer
from wire import OVERLOADED, RATE_LIMITED, base_url, bodies

KEY = "sk-test-retry-0123456789abcdef"


def decide(policy, status=429, headers=None, attempt=1, error=None, seed=0):
    return policy.decide(attempt, status, error, headers or {}, random.Random(seed))


@pytest.mark.parametrize("headers", [{"retry-after": "90"}, {"retry-after-ms": "90000"}])
@pytest.mark.parametrize("policy", [OPENAI, ANTHROPIC])
def test_a_90_second_retry_after_is_waited_in_full(policy, headers):
    decision = decide(policy, headers=headers)
    assert decision.retry and decision.wait_ms == 90_000


def test_beyond_120_seconds_openai_gives_up_and_anthropic_waits():
    openai = decide(OPENAI, headers={"retry-after": "300"})
    assert not openai.retry and "gives up beyond 120 s" in openai.why
    assert not decide(OPENAI, headers={"retry-after": "300", "x-should-retry": "true"}).retry
    assert not decide(OPENAI, headers={"retry-after": "1e999"}).retry  # an overflow is a long wait, not infinity
    anthropic = decide(ANTHROPIC, headers={"retry-after": "300"})
    assert anthropic.retry and anthropic.wait_ms == 300_000
    assert decide(ANTHROPIC, headers={"retry-after": "inf"}).wait_ms == 4_294_967_000  # its sleep's ceiling


@pytest.mark.parametrize("value", ["0", "-1", "-0.5", "nan"])
@pytest.mark.parametrize("policy", [OPENAI, ANTHROPIC])
def test_a_retry_after_of_zero_or_less_means_exponential_backoff(policy, value):
    for name in ("retry-after", "retry-after-ms"):
        decision = decide(policy, headers={name: value}, attempt=2)
        assert decision.retry and decision.source == "exponential backoff" and 750 <= decision.wait_ms <= 1000


def test_the_first_header_that_parses_decides():
    # retry-after-ms parses (as -5): the SDKs do not go on to retry-after; -5 is no wait, so back off
    decision = decide(OPENAI, headers={"retry-after-ms": "-5", "retry-after": "30"})
    assert decision.source == "exponential backoff"
    assert decide(OPENAI, headers={"retry-after-ms": "soon", "retry-after": "30"}).wait_ms == 30_000


@pytest.mark.parametrize("status, retried", [(408, True), (409, True), (429, True), (500, True), (502, True),
                                             (503, True), (529, True), (501, True), (400, False), (404, False)])
def test_the_stainless_sdks_retry_408_409_429_and_every_5xx(status, retried):
    for policy in (OPENAI, ANTHROPIC):
        assert decide(policy, status=status).retry is retried


@pytest.mark.parametrize("status, retried", [(408, True), (429, True), (500, True), (502, True), (503, True),
                                             (504, True), (409, False), (529, False), (501, False), (400, False)])
def test_gemini_retries_only_what_google_genai_does(status, retried):
    assert decide(GEMINI, status=status).retry is retried


def test_gemini_ignores_retry_after_and_x_should_retry():
    assert decide(GEMINI, status=400, headers={"x-should-retry": "true"}).retry is False
    decision = decide(GEMINI, headers={"retry-after": "30", "retry-after-ms": "30000"})
    assert decision.source == "exponential backoff" and 1000 <= decision.wait_ms <= 2000


def test_gemini_backoff_is_tenacitys_exponential_jitter():
    for attempt, low in ((1, 1000), (2, 2000), (3, 4000), (4, 8000), (5, 16000), (6, 32000)):
        wait = decide(GEMINI, status=503, attempt=attempt, seed=attempt).wait_ms
        assert low <= wait <= min(low + 1000, 60_000)
    assert decide(GEMINI, status=503, attempt=40).wait_ms == 60_000


def test_gemini_retries_timeouts_and_failed_connects_not_dropped_connections():
    assert decide(GEMINI, status=None, error="timeout").retry
    assert decide(GEMINI, status=None, error="connect").retry
    assert not decide(GEMINI, status=None, error="connection").retry
    assert decide(OPENAI, status=None, error="connection").retry


def test_the_default_retry_count_is_the_sdks():
    assert [policy_for(p).default_max_retries for p in ("openai-responses", "openai-chat", "anthropic", "gemini")] \
        == [2, 2, 2, 0]
    assert http_inputs("gemini", "m", "http://127.0.0.1:9")["budgets"]["max_retries"] == 0
    assert http_inputs("gemini", "m", "http://127.0.0.1:9", max_retries=3)["budgets"]["max_retries"] == 3
    assert http_inputs("anthropic", "m", "http://127.0.0.1:9")["budgets"]["max_retries"] == 2


def live(provider, replies, **kwargs):
    waits = []
    with ScriptedServer(replies) as server:
        inputs = http_inputs(provider, "m", base_url(provider, server.url), **kwargs)
        result = run_http("r", inputs, HttpTransport(provider, KEY, trust_env=False, sleep=waits.append))
    return result, waits


def test_a_gemini_overload_fails_at_once_by_default_and_is_retried_when_asked():
    status, error = OVERLOADED["gemini"]
    call, answer = bodies("gemini")
    result, waits = live("gemini", [Reply(status, error, {"retry-after": "1"})], seed=0)
    assert result.status == "server_error" and waits == []
    assert "not retried: the retry budget is 0 (max_retries)" in result.summary["first_failure"]["reason"]
    result, waits = live("gemini", [Reply(status, error, {"retry-after": "1"}), Reply(body=call), Reply(body=answer)],
                         seed=0, max_retries=2)
    assert result.status == "answer_ready" and len(waits) == 1 and 1.0 <= waits[0] <= 2.0  # not Retry-After's 1 s


def test_live_runs_draw_their_own_seed_and_record_it():
    seeds = {http_inputs("openai-chat", "m", "http://127.0.0.1:9/v1")["seed"] for _ in range(8)}
    assert len(seeds) > 1  # concurrent runs do not back off in step
    call, answer = bodies("openai-chat")
    status, error = OVERLOADED["openai-chat"]
    result, waits = live("openai-chat", [Reply(status, error), Reply(status, error), Reply(body=call),
                                         Reply(body=answer)])
    assert result.status == "answer_ready" and len(waits) == 2
    again = run_inputs("r", result.run["inputs"])  # the replay draws the same jitter from the recorded seed
    assert again.events == result.events


def test_an_openai_run_told_to_wait_five_minutes_stops_and_says_why():
    result, waits = live("openai-responses", [Reply(429, RATE_LIMITED, {"retry-after": "300"})], seed=0)
    assert waits == [] and result.status == "rate_limited"
    assert "Retry-After asks for 300 s, and the openai SDK gives up beyond 120 s" in \
        result.summary["first_failure"]["reason"]
    call, answer = bodies("anthropic")
    result, waits = live("anthropic", [Reply(429, RATE_LIMITED, {"retry-after": "300"}), Reply(body=call),
                                       Reply(body=answer)], seed=0)
    assert waits == [300.0] and result.status == "answer_ready"
