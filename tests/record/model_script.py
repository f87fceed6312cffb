"""Scripted model answers for the test agents: one script per planted failure, in each provider's real wire shape.

A script is the list of :class:`Reply` a :class:`ScriptedServer` gives, one per request, in order: Chat
Completions and Anthropic Messages bodies as those APIs return them, and for a streamed call the same turns
as server-sent events (Chat's bare ``data:`` chunks ending in ``[DONE]``; Anthropic's named events, which its
SDK requires). Each scenario plants one failure on one lane; ``clean`` plants none.
"""
from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "providers"))

from scripted_server import Reply, ScriptedServer  # noqa: E402

AGENTS_DIR = Path(__file__).resolve().parent / "agents"
#: the lane each scenario's planted failure is on (None: the run is clean)
FIRST_FAILING_LANE = {
    "clean": None,
    "denied": "authorization",  # the model asks for o-2, another customer's order
    "unknown_tool": "arguments",  # the model calls track_order, which no request declared
    "bad_arguments": "arguments",  # {"order": "o-1"}: not what read_order's schema takes
    "truncated": "generation",  # the answer stops at the token limit
    "no_tool_call": "answer",  # an answer straight away, which no tool result backs
    "rate_limited": "http",  # 429 on every attempt: the SDK gives up
}
SCENARIOS = tuple(FIRST_FAILING_LANE)
RATE_LIMIT_ATTEMPTS = 3  # the SDKs' default: the first request and 2 retries
CREATED = 1767225600


@dataclass(frozen=True)
class Call:
    name: str
    arguments: dict


@dataclass(frozen=True)
class Text:
    text: str
    truncated: bool = False


TURNS: dict[str, list[Any]] = {
    "clean": [Call("read_order", {"order_id": "o-1"}), Text("Your order o-1 has shipped.")],
    "denied": [Call("read_order", {"order_id": "o-2"}),
               Text("I'm sorry, I could not open that order: permission was denied.")],
    "unknown_tool": [Call("track_order", {"order_id": "o-1"}), Text("I could not look your order up.")],
    "bad_arguments": [Call("read_order", {"order": "o-1"}), Text("I could not look your order up.")],
    "truncated": [Call("read_order", {"order_id": "o-1"}), Text("Your order o-1 has", truncated=True)],
    "no_tool_call": [Text("Your order o-1 is on its way and arrives tomorrow.")],
    "rate_limited": ["429"] * RATE_LIMIT_ATTEMPTS,
}


# -- OpenAI Chat Completions ------------------------------------------------------------------------------
def _chat_body(n: int, turn: Call | Text) -> dict:
    message: dict[str, Any] = {"role": "assistant", "content": None, "refusal": None, "annotations": []}
    if isinstance(turn, Call):
        message["tool_calls"] = [{"id": f"call_{n}", "type": "function",
                                  "function": {"name": turn.name, "arguments": json.dumps(turn.arguments)}}]
        finish = "tool_calls"
    else:
        message["content"] = turn.text
        finish = "length" if turn.truncated else "stop"
    return {"id": f"chatcmpl-{n}", "object": "chat.completion", "created": CREATED, "model": "gpt-4.1-mini-2025-04-14",
            "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": finish}],
            "usage": {"prompt_tokens": 60 + 20 * n, "completion_tokens": 12, "total_tokens": 72 + 20 * n},
            "service_tier": "default", "system_fingerprint": "fp_0a1b2c3d4e"}


def _chat_chunk(n: int, delta: dict, finish: str | None = None) -> dict:
    return {"id": f"chatcmpl-{n}", "object": "chat.completion.chunk", "created": CREATED,
            "model": "gpt-4.1-mini-2025-04-14", "service_tier": "default", "system_fingerprint": "fp_0a1b2c3d4e",
            "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}]}


def _chat_events(n: int, turn: Call | Text) -> list[Any]:
    if isinstance(turn, Call):
        arguments = json.dumps(turn.arguments)
        half = len(arguments) // 2
        head = {"role": "assistant", "content": None, "refusal": None,
                "tool_calls": [{"index": 0, "id": f"call_{n}", "type": "function",
                                "function": {"name": turn.name, "arguments": ""}}]}
        events = [_chat_chunk(n, head)]
        for piece in (arguments[:half], arguments[half:]):
            events.append(_chat_chunk(n, {"tool_calls": [{"index": 0, "function": {"arguments": piece}}]}))
        events.append(_chat_chunk(n, {}, "tool_calls"))
    else:
        words = turn.text.split(" ")
        events = [_chat_chunk(n, {"role": "assistant", "content": "", "refusal": None})]
        events += [_chat_chunk(n, {"content": w if i == 0 else " " + w}) for i, w in enumerate(words)]
        events.append(_chat_chunk(n, {}, "length" if turn.truncated else "stop"))
    return [*events, "[DONE]"]


CHAT_RATE_LIMITED = {"error": {"message": "Rate limit reached for gpt-4.1-mini in organization org-test on requests "
                                          "per min (RPM): Limit 3, Used 3, Requested 1.",
                               "type": "requests", "param": None, "code": "rate_limit_exceeded"}}


# -- Anthropic Messages -----------------------------------------------------------------------------------
def _anthropic_body(n: int, turn: Call | Text) -> dict:
    if isinstance(turn, Call):
        content = [{"type": "tool_use", "id": f"toolu_0{n}", "name": turn.name, "input": turn.arguments}]
        stop = "tool_use"
    else:
        content = [{"type": "text", "text": turn.text}]
        stop = "max_tokens" if turn.truncated else "end_turn"
    return {"id": f"msg_0{n}", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5-20250929",
            "content": content, "stop_reason": stop, "stop_sequence": None,
            "usage": {"input_tokens": 60 + 20 * n, "output_tokens": 12}}


def _anthropic_events(n: int, turn: Call | Text) -> list[dict]:
    body = _anthropic_body(n, turn)
    start = {**body, "content": [], "stop_reason": None, "usage": {"input_tokens": body["usage"]["input_tokens"],
                                                                    "output_tokens": 1}}
    events: list[dict] = [{"type": "message_start", "message": start}]
    block = body["content"][0]
    if block["type"] == "tool_use":
        arguments = json.dumps(block["input"])
        events.append({"type": "content_block_start", "index": 0, "content_block": {**block, "input": {}}})
        half = len(arguments) // 2
        events += [{"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": p}}
                   for p in (arguments[:half], arguments[half:])]
    else:
        events.append({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}})
        words = block["text"].split(" ")
        events += [{"type": "content_block_delta", "index": 0,
                    "delta": {"type": "text_delta", "text": w if i == 0 else " " + w}} for i, w in enumerate(words)]
    events += [{"type": "content_block_stop", "index": 0},
               {"type": "message_delta", "delta": {"stop_reason": body["stop_reason"], "stop_sequence": None},
                "usage": {"output_tokens": 12}},
               {"type": "message_stop"}]
    return events


ANTHROPIC_RATE_LIMITED = {"type": "error", "error": {"type": "rate_limit_error", "message": "Number of request "
                          "tokens has exceeded your per-minute rate limit."}, "request_id": "req_011RateLimited"}


def _named_frames(events: list[dict]) -> list[bytes]:
    """Anthropic's SSE: each event named by its type (the SDK reads the name)."""
    return [f"event: {e['type']}\ndata: {json.dumps(e)}\n\n".encode() for e in events]


# -- scripts ----------------------------------------------------------------------------------------------
def script(provider: str, scenario: str, stream: bool = False) -> list[Reply]:
    """The replies for one run of an agent on ``provider`` ("openai-chat" or "anthropic")."""
    replies = []
    for n, turn in enumerate(TURNS[scenario], 1):
        if turn == "429":
            # a short Retry-After keeps the SDK's own backoff (0.5 s, then 1 s) out of the tests
            if provider == "anthropic":
                replies.append(Reply(429, ANTHROPIC_RATE_LIMITED, headers={"retry-after": "0.05",
                                                                           "request-id": f"req_0{n}"}))
            else:
                replies.append(Reply(429, CHAT_RATE_LIMITED, headers={"retry-after": "0.05",
                                                                      "x-request-id": f"req_{n}"}))
        elif provider == "anthropic":
            headers = {"request-id": f"req_0{n}"}
            replies.append(Reply(frames=_named_frames(_anthropic_events(n, turn)), headers=headers) if stream
                           else Reply(body=_anthropic_body(n, turn), headers=headers))
        elif provider == "openai-chat":
            headers = {"x-request-id": f"req_{n}"}
            replies.append(Reply(events=_chat_events(n, turn), headers=headers) if stream
                           else Reply(body=_chat_body(n, turn), headers=headers))
        else:
            raise ValueError(f"no script for provider {provider!r}")
    return replies


# -- the agents -------------------------------------------------------------------------------------------
#: agent name → (its file, the provider whose API it calls)
AGENTS = {
    "openai": ("openai_agent.py", "openai-chat"),
    "anthropic": ("anthropic_agent.py", "anthropic"),
    "pydantic-ai": ("pydantic_ai_agent.py", "openai-chat"),
}
API_KEYS = {"OPENAI_API_KEY": "sk-test-agent-0000000000000000", "ANTHROPIC_API_KEY": "sk-ant-test-agent-000000000000"}


def agent_command(agent: str, stream: bool = False) -> list[str]:
    """The argv that runs one test agent: ``python -I`` (no user site, no PYTHON* variables: a quick start)."""
    return [sys.executable, "-I", str(AGENTS_DIR / AGENTS[agent][0]), *(["--stream"] if stream else [])]


def agent_env(base_env: dict[str, str], root: str | None = None) -> dict[str, str]:
    """The environment for an agent: test keys, no proxies, and (given ``root``) the SDKs pointed at it."""
    env = {k: v for k, v in base_env.items() if not k.lower().endswith("_proxy")}
    env.update(API_KEYS)
    for name in ("OPENAI_BASE_URL", "ANTHROPIC_BASE_URL", "GOOGLE_GEMINI_BASE_URL"):
        env.pop(name, None)
    if root is not None:
        env["OPENAI_BASE_URL"] = root + "/v1"
        env["ANTHROPIC_BASE_URL"] = root
    return env


class _Again(list):
    """A script that starts over once its last reply is taken: a server that answers run after run."""

    def __init__(self, make):
        super().__init__(make())
        self.make = make

    def pop(self, index=-1):
        reply = super().pop(index)
        if not self:
            self.extend(self.make())
        return reply


def serve(provider: str, scenario: str, stream: bool = False) -> None:
    """Serve one scenario on 127.0.0.1 until Ctrl-C, run after run (the README's example runs use this)."""
    import time

    with ScriptedServer([]) as server:
        server.replies = _Again(lambda: script(provider, scenario, stream))
        print(f"scripted {provider} model, scenario {scenario}{' (streamed)' if stream else ''}: {server.url}",
              flush=True)
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            pass


if __name__ == "__main__":  # python tests/record/model_script.py openai-chat denied [--stream]
    serve(sys.argv[1], sys.argv[2], "--stream" in sys.argv[3:])


__all__ = ["AGENTS", "FIRST_FAILING_LANE", "SCENARIOS", "Reply", "ScriptedServer", "agent_command", "agent_env",
           "script"]
