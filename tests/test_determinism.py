"""Same inputs, same bytes: the sample traces prove it and hypothesis probes seeds."""
from __future__ import annotations

import copy

import pytest
from hypothesis import given, settings, strategies as st

from tracetui.loop.ablations import ABLATIONS
from tracetui.loop.inputs import build_inputs
from tracetui.loop.runner import records_of, run_inputs, run_scenario
from tracetui.loop.scenarios import FAULT_CHOICES, SCENARIOS
from tracetui.providers import fake
from tracetui.cli import regenerate_samples as regenerate
from tracetui.samples import recipes
from tracetui.trace.writer import encode_record


def trace_bytes(*args, **kwargs) -> bytes:
    return b"".join(encode_record(r) for r in records_of(iter([run_scenario(*args, **kwargs)])))


@settings(max_examples=40, deadline=None)
@given(name=st.sampled_from(sorted(SCENARIOS)), seed=st.integers(0, 2**32),
       faults=st.lists(st.sampled_from(FAULT_CHOICES), max_size=2))
def test_same_inputs_same_bytes(name, seed, faults):
    assert trace_bytes(name, faults=tuple(faults), seed=seed) == trace_bytes(name, faults=tuple(faults), seed=seed)


@settings(max_examples=30, deadline=None)
@given(name=st.sampled_from(sorted(SCENARIOS)), seed=st.integers(1, 2**32))
def test_the_seed_changes_timing_never_the_verdict(name, seed):
    a, b = run_scenario(name), run_scenario(name, seed=seed, run_id=name)
    assert a.summary["status"] == b.summary["status"]
    assert a.summary["first_failure"] == b.summary["first_failure"]
    assert [e["lane"] for e in a.events] == [e["lane"] for e in b.events]


def test_sample_traces_regenerate_byte_identical(root, tmp_path):
    written = regenerate(tmp_path, root / "sample_traces" / "responses")
    committed = sorted(p.name for p in (root / "sample_traces").glob("*.jsonl"))
    assert sorted(written) == committed == sorted(recipes())
    for name in written:
        assert (tmp_path / name).read_bytes() == (root / "sample_traces" / name).read_bytes(), name


def _fresh_replies(monkeypatch, size: int) -> None:
    """Start from an empty reply cache of ``size`` entries (0: the scripted model answers every request)."""
    monkeypatch.setattr(fake, "REPLY_CACHE_SIZE", size)
    monkeypatch.setattr(fake, "_replies", {})


def _every_run() -> list[tuple]:
    runs = [(name, "complete", ()) for name in SCENARIOS]
    runs += [("single", ablation, ()) for ablation in ABLATIONS]
    runs += [("single", "complete", (fault,)) for fault in FAULT_CHOICES]
    return runs


def test_the_reply_cache_never_changes_a_trace(monkeypatch):
    """Cold, then answered from the cache, then with the cache off: the same bytes for every run."""
    _fresh_replies(monkeypatch, 1024)
    cold = [trace_bytes(name, ablation, faults) for name, ablation, faults in _every_run()]
    assert fake._replies, "the first pass fills the cache"
    warm = [trace_bytes(name, ablation, faults) for name, ablation, faults in _every_run()]
    _fresh_replies(monkeypatch, 0)
    off = [trace_bytes(name, ablation, faults) for name, ablation, faults in _every_run()]
    assert not fake._replies
    assert cold == warm == off


def test_a_cached_reply_is_parsed_afresh_for_every_run(monkeypatch):
    """Runs share a reply's bytes, never its objects: changing one run's response body leaves the next alone."""
    _fresh_replies(monkeypatch, 1024)
    first = run_scenario("single")
    first.events[0]["data"]["response"]["body"]["output"].clear()
    assert trace_bytes("single") == b"".join(encode_record(r) for r in run_scenario("single").records)
    assert run_scenario("single").events[0]["data"]["response"]["body"]["output"]


def test_a_full_cache_starts_over_and_stays_bounded(monkeypatch):
    _fresh_replies(monkeypatch, 4)
    expected = {seed: trace_bytes("parallel", seed=seed) for seed in range(6)}
    assert len(fake._replies) <= 4
    assert all(trace_bytes("parallel", seed=seed) == expected[seed] for seed in range(6))


@pytest.mark.parametrize("name", ["refund", "write_timeout", "write_unguarded", "business_rule"])
def test_a_run_never_changes_its_inputs(name):
    """Tool state is copied on write: a refund changes the run's own copy of an order, not the inputs."""
    inputs = build_inputs(name)
    before = copy.deepcopy(inputs)
    first = run_inputs(name, inputs)
    assert inputs == before
    assert run_inputs(name, inputs).records == first.records


def test_a_large_request_is_answered_afresh_not_remembered(monkeypatch):
    _fresh_replies(monkeypatch, 1024)
    inputs = build_inputs("single")
    inputs["user_input"] += " " + "x" * (fake.REPLY_CACHE_MAX_REQUEST + 1)
    result = run_inputs("big", inputs)
    assert result.status == "answer_ready" and not fake._replies
