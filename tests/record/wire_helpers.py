"""Shared by the endpoint tests (proxy, replay server, child, record CLI): the scripted server on the path,
a loopback-only guard, and small wire shapes."""
from __future__ import annotations

import socket
import sys
from pathlib import Path


sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "providers"))

from scripted_server import Reply, ScriptedServer  # noqa: E402,F401

KEY = "sk-test-abcdefghijklmnopqrstuvwxyz0123"  # a credential the agent sends: must reach upstream, never a trace


from loopback import loopback_only  # noqa: E402,F401  (autouse where imported: nothing leaves this machine)


def chat_body(text: str = "hi", finish: str = "stop") -> dict:
    return {"id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "gpt-x",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": finish}],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}


def chat_chunks(pieces: list[str]) -> list:
    def chunk(delta, finish=None):
        return {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "gpt-x",
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
    return [chunk({"role": "assistant", "content": ""}), *(chunk({"content": p}) for p in pieces),
            chunk({}, "stop"), "[DONE]"]


def anthropic_events(text: str) -> list[dict]:
    return [
        {"type": "message_start", "message": {"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-x",
                                              "content": [], "stop_reason": None, "stop_sequence": None,
                                              "usage": {"input_tokens": 1, "output_tokens": 0}}},
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": text}},
        {"type": "content_block_stop", "index": 0},
        {"type": "message_delta", "delta": {"stop_reason": "end_turn", "stop_sequence": None},
         "usage": {"output_tokens": 1}},
        {"type": "message_stop"},
    ]


def named_frames(events: list[dict]) -> list[bytes]:
    """Anthropic's framing: its SDK reads the event's type from the ``event:`` line."""
    import json

    return [f"event: {e['type']}\ndata: {json.dumps(e)}\n\n".encode() for e in events]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]
