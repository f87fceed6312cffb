"""The built-in provider's server side, per API: read a request, render the scripted model's reply.

The scripted model (:mod:`tracetui.providers.fake_model`) is provider-neutral; each
module here is one API's fake server, the mirror image of that API's adapter: it
reads the request the adapter built back into the neutral transcript, and renders
the model's neutral reply as that API's response body and event stream, shaped as
the official SDK's types say (tests/providers/sdk proves every one validates).

Where an API cannot express what a scenario scripts (Chat Completions has no
reasoning items, Gemini's function calls never arrive as JSON text), its module
says so in :attr:`FakeWire.differences`, and ``tracetui scenarios`` lists it.
"""
from __future__ import annotations

from tracetui.providers.fake_wire.anthropic import AnthropicWire
from tracetui.providers.fake_wire.base import FakeWire
from tracetui.providers.fake_wire.chat import ChatWire
from tracetui.providers.fake_wire.gemini import GeminiWire
from tracetui.providers.fake_wire.responses import ResponsesWire

WIRES: dict[str, FakeWire] = {w.name: w for w in (ResponsesWire(), ChatWire(), AnthropicWire(), GeminiWire())}


def wire_for(provider: str | None) -> FakeWire:
    """The fake server of ``provider`` (the Responses one for a name it does not know)."""
    return WIRES.get(provider or "openai-responses") or WIRES["openai-responses"]
