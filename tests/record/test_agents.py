"""The test agents on their own, with no tracetui in between: each talks to the scripted model server directly.

These are what the end-to-end tests record and replay, so they must first be right on their own: real SDK
calls (streamed too), the tool results they send back (a denial as the tool's answer, ``is_error`` on
Anthropic's), the SDK's own retries of a 429, and the business's acceptance as the exit status.
"""
from __future__ import annotations

import os
import subprocess
from concurrent.futures import ThreadPoolExecutor

import pytest

from model_script import AGENTS, RATE_LIMIT_ATTEMPTS, ScriptedServer, agent_command, agent_env, script

#: the scenarios whose handling differs by agent (the rest are recorded for every lane in test_agents_end_to_end.py)
CASES = [(a, s, False) for a in AGENTS for s in ("clean", "denied", "rate_limited", "bad_arguments")] \
    + [(a, "clean", True) for a in AGENTS]


def _run(case):
    agent, scenario, stream = case
    with ScriptedServer(script(AGENTS[agent][1], scenario, stream)) as server:
        done = subprocess.run(agent_command(agent, stream), env=agent_env(dict(os.environ), server.url),
                              capture_output=True, text=True, timeout=120)
    return done, server.requests


@pytest.fixture(scope="module")
def runs():
    """Every case run once, two at a time (the agents are separate processes; the machine has two cores)."""
    with ThreadPoolExecutor(max_workers=2) as pool:
        return dict(zip(CASES, pool.map(_run, CASES)))


def _id(case):
    return f"{case[0]}-{case[1]}" + ("-stream" if case[2] else "")


@pytest.mark.parametrize("case", CASES, ids=_id)
def test_the_exit_status_is_the_business_acceptance(runs, case):
    done, requests = runs[case]
    assert requests, f"the agent never called the server: {done.stderr[-2000:]}"
    if case[1] == "clean":
        assert done.returncode == 0, done.stderr[-2000:]
        assert "shipped" in done.stdout and "accepted" in done.stderr
    else:
        assert done.returncode == 1, done.stderr[-2000:]
        assert "rejected:" in done.stderr and "Traceback" not in done.stderr


@pytest.mark.parametrize("case", [c for c in CASES if c[2]], ids=_id)
def test_a_streamed_run_asks_for_a_stream(runs, case):
    requests = runs[case][1]
    assert all(r["body"].get("stream") is True for r in requests)


def _tool_results(agent: str, body: dict) -> list[dict]:
    """The tool results in a request: Chat's ``role: tool`` messages, Anthropic's ``tool_result`` blocks."""
    if AGENTS[agent][1] == "anthropic":
        return [b for m in body["messages"] if isinstance(m["content"], list) for b in m["content"]
                if b.get("type") == "tool_result"]
    return [m for m in body["messages"] if m["role"] == "tool"]


@pytest.mark.parametrize("agent", AGENTS)
def test_a_denial_goes_back_to_the_model_as_the_tools_result(runs, agent):
    done, requests = runs[(agent, "denied", False)]
    assert len(requests) == 2
    [result] = _tool_results(agent, requests[1]["body"])
    assert "permission denied" in str(result["content"])
    if AGENTS[agent][1] == "anthropic":
        assert result["is_error"] is True
    assert "no read_order result backs the answer" in done.stderr


@pytest.mark.parametrize("agent", AGENTS)
def test_a_429_is_retried_by_the_sdk_until_it_gives_up(runs, agent):
    done, requests = runs[(agent, "rate_limited", False)]
    assert [r["headers"].get("x-stainless-retry-count") for r in requests] == \
        [str(n) for n in range(RATE_LIMIT_ATTEMPTS)]
    assert len({str(r["body"]) for r in requests}) == 1  # the same request each time
    assert "429" in done.stderr or "RateLimit" in done.stderr


@pytest.mark.parametrize("agent", AGENTS)
def test_arguments_the_schema_refuses_come_back_as_an_error(runs, agent):
    done, requests = runs[(agent, "bad_arguments", False)]
    [result] = _tool_results(agent, requests[1]["body"])
    text = str(result["content"])
    if agent == "pydantic-ai":  # the framework validates the arguments itself and asks the model to retry
        assert "order_id" in text
    else:
        assert text.startswith("Error: read_order takes")


def test_the_agents_declare_the_same_tool_schema(runs):
    schemas = {}
    for agent in AGENTS:
        body = runs[(agent, "clean", False)][1][0]["body"]
        tool = body["tools"][0]
        schemas[agent] = tool.get("input_schema") or tool["function"]["parameters"]
    assert schemas["openai"] == schemas["anthropic"]
    assert schemas["pydantic-ai"]["properties"]["order_id"]["pattern"] == "^o-[0-9]+$"
