"""Run a loop from a run's inputs: the one entry point for generate, run and replay."""
from __future__ import annotations

from typing import Any, Iterator
from urllib.parse import urlsplit

from tracetui.loop.loop import AgentLoop, RunResult
from tracetui.loop.inputs import build_inputs, run_id_for
from tracetui.providers.base import Transport
from tracetui.providers.cassette import CassetteTransport
from tracetui.providers.fake import FakeProvider
from tracetui.providers.override import OverrideTransport
from tracetui.providers.registry import get_adapter


def transport_for(inputs: dict[str, Any]) -> Transport:
    """The offline transport a run's inputs call for; replays never touch the network."""
    if inputs.get("source") in ("responses", "http"):
        transport: Transport = CassetteTransport(inputs.get("responses") or [])
    else:
        transport = FakeProvider(inputs)
    if inputs.get("response_overrides"):
        transport = OverrideTransport(transport, inputs["response_overrides"])
    return transport


#: where the offline transports answer: a base URL whose path is each provider's default (``/v1`` for openai)
FAKE_ROOT = "fake://provider"


def offline_base_url(adapter) -> str:
    """The base URL an offline run records: the fake root, with the provider's default base path."""
    return FAKE_ROOT + urlsplit(adapter.default_base_url).path


def run_inputs(run_id: str, inputs: dict[str, Any], transport: Transport | None = None,
               base_url: str | None = None) -> RunResult:
    adapter = get_adapter(inputs.get("provider") or "openai-responses")
    loop = AgentLoop(run_id, inputs, transport or transport_for(inputs), adapter,
                     base_url or inputs.get("base_url") or offline_base_url(adapter))
    return loop.run()


def run_scenario(scenario: str, ablation: str = "complete", faults=(), transient_failures: int = 0,
                 seed: int = 0, run_id: str | None = None, provider: str = "openai-responses") -> RunResult:
    inputs = build_inputs(scenario, ablation, faults, transient_failures, seed, provider)
    return run_inputs(run_id or run_id_for(scenario, ablation, faults, transient_failures, seed), inputs)


def records_of(results: Iterator[RunResult]) -> Iterator[dict[str, Any]]:
    for result in results:
        yield result.run
        yield from result.events
        yield result.summary
