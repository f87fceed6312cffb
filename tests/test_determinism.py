"""Same inputs, same bytes: the sample traces prove it and hypothesis probes seeds."""
from __future__ import annotations

from hypothesis import given, settings, strategies as st

from tracetui.loop.runner import records_of, run_scenario
from tracetui.loop.scenarios import FAULT_CHOICES, SCENARIOS
from tracetui.samples import recipes, regenerate
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
