"""Proof (a) and the first half of (b): everything tracetui writes or sends has the official SDK's shape.

Every body and stream event the built-in provider produces, in each of the four wire
shapes, over the whole matrix (scenarios × ablations, faults, transient failures,
streams), validates against its SDK's own type; so does every fixture, every
recorded response under sample_traces/responses, every exchange in the sample
traces, and every request the loop sends. The only exchanges left out are the
deliberately foreign ones (an HTML page, another vendor's JSON, no response at all).
"""
from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Any

import orjson
import pytest

from tracetui.loop.ablations import ABLATIONS
from tracetui.loop.inputs import build_inputs
from tracetui.loop.runner import run_inputs
from tracetui.loop.scenarios import FAULT_CHOICES, SCENARIOS
from tracetui.providers.fake import FakeProvider

from sdk_types import PROVIDERS, validate_body, validate_error, validate_event, validate_request
from wire import bodies, streams

ROOT = Path(__file__).resolve().parents[3]
FIXTURES = ROOT / "tests" / "providers" / "fixtures"
FOREIGN_FAULTS = {"html", "vendor", "timeout"}


class Capture:
    """The fake provider, keeping every request and the exchange it answered with."""

    def __init__(self, inputs: dict[str, Any]):
        self.inner = FakeProvider(inputs)
        self.faults = list(inputs["faults"]) + ["5xx"] * inputs["transient_failures"]
        self.seen: list[tuple[Any, Any, str | None]] = []

    def send(self, request):
        exchange = self.inner.send(request)
        fault = self.faults[request.attempt - 1] if request.call_index == 0 and request.attempt <= len(self.faults) \
            else None
        self.seen.append((request, exchange, fault))
        return exchange


def matrix():
    for name in SCENARIOS:
        for ablation in ABLATIONS:
            yield name, ablation, (), 0
        for fault in FAULT_CHOICES:
            yield name, "complete", (fault,), 0
    yield "single", "complete", (), 3
    yield "single", "complete", ("429", "timeout", "5xx"), 0


@lru_cache(maxsize=None)
def fake_wire(provider: str) -> tuple[list[tuple[int, bytes, str | None]], list[bytes]]:
    """Every distinct (status, exchange record, fault) and request body the matrix produces in ``provider``'s shape."""
    exchanges: dict[bytes, tuple[int, bytes, str | None]] = {}
    requests: set[bytes] = set()
    for name, ablation, faults, transient in matrix():
        inputs = build_inputs(name, ablation, faults, transient, 0, provider)
        capture = Capture(inputs)
        run_inputs(f"{name}-{ablation}", inputs, capture)
        for request, exchange, fault in capture.seen:
            requests.add(orjson.dumps(request.body))
            record = orjson.dumps(exchange.to_record())
            exchanges.setdefault(record + (fault or "").encode(), (exchange.status, record, fault))
    return list(exchanges.values()), sorted(requests)


def check_exchange(provider: str, record: dict[str, Any]) -> str:
    """Validate one recorded exchange; returns what it was (body, events, error, none)."""
    if record.get("events") is not None:
        for event in record["events"]:
            validate_event(provider, event)
        return "events"
    body = record.get("body")
    if record.get("status") == 200:
        validate_body(provider, body)
        return "body"
    if record.get("status") is not None:
        validate_error(provider, record["status"], body)
        return "error"
    return "none"


@pytest.mark.parametrize("provider", PROVIDERS)
def test_every_fake_body_and_event_validates_against_the_sdk(provider):
    exchanges, _ = fake_wire(provider)
    kinds: dict[str, int] = {}
    for status, raw, fault in exchanges:
        if fault in FOREIGN_FAULTS:
            continue
        kind = check_exchange(provider, orjson.loads(raw))
        kinds[kind] = kinds.get(kind, 0) + 1
    assert kinds.get("body", 0) >= 20 and kinds.get("events", 0) >= 4 and kinds.get("error", 0) >= 3, kinds


@pytest.mark.parametrize("provider", PROVIDERS)
def test_every_request_the_loop_sends_validates_against_the_sdk_params(provider):
    _, requests = fake_wire(provider)
    assert len(requests) >= 50
    for raw in requests:
        validate_request(provider, orjson.loads(raw))


def fixture_responses():
    for path in sorted(FIXTURES.glob("*.json")):
        provider = path.stem.split("_", 1)[0]
        for n, response in enumerate(json.loads(path.read_text())):
            yield pytest.param(provider, response, id=f"{path.stem}[{n}]")


#: fixtures that are not the API's shape on purpose: what a broken proxy or server sends, to show it is caught
DELIBERATELY_INVALID = {"gemini_malformed_under_stop[0]": "functionCall args as text under finishReason STOP"}


@pytest.mark.parametrize("provider, response", list(fixture_responses()))
def test_every_fixture_validates_against_the_sdk(request, provider, response):
    recorded = isinstance(response, dict) and "status" in response and not isinstance(response["status"], str) \
        and ("body" in response or "events" in response)
    record = response if recorded else {"status": 200, "body": response}
    if request.node.callspec.id in DELIBERATELY_INVALID:
        with pytest.raises(ValueError):  # pydantic's ValidationError: the exception is real, not a blind spot
            check_exchange(provider, record)
        return
    check_exchange(provider, record)


def test_the_live_test_shapes_validate_against_the_sdk():
    for provider in PROVIDERS:
        for body in bodies(provider):
            validate_body(provider, body)
        for stream in streams(provider):
            for event in stream:
                validate_event(provider, {"data": event} if isinstance(event, str) else event)


@pytest.mark.parametrize("path", sorted((ROOT / "sample_traces" / "responses").glob("*.json")), ids=lambda p: p.stem)
def test_every_recorded_sample_response_validates_against_the_sdk(path):
    from tracetui.samples import RECORDINGS  # a recording in another API's shape says which

    provider = RECORDINGS[path.name][1] if path.name in RECORDINGS else "openai-responses"
    for response in json.loads(path.read_text()):
        recorded = "body" in response and not isinstance(response["status"], str)
        check_exchange(provider, response if recorded else {"status": 200, "body": response})


@pytest.mark.parametrize("path", sorted(p for p in (ROOT / "sample_traces").glob("*.jsonl") if not p.name.startswith("otel-")), ids=lambda p: p.stem)
def test_every_exchange_in_the_sample_traces_validates_against_the_sdk(path):
    providers: dict[str, str] = {}
    checked = 0
    for line in path.read_bytes().splitlines():
        record = orjson.loads(line)
        if record["rec"] == "run":
            providers[record["run_id"]] = record["inputs"]["provider"]
        elif record["rec"] == "event" and record["lane"] == "http" and record["code"] != "unexpected_body":
            check_exchange(providers[record["run_id"]], record["data"]["response"])
            checked += 1
    assert checked or path.stem in ("fault-html", "fault-vendor")  # their one exchange is foreign on purpose
