"""Property: the runs read from an OTLP file, and their names, do not depend on the order of its spans — shuffle
the spans, regroup them into other lines, and every run keeps its name (issue 22: a run is found again by
name). Traces share 8 and more hex digits, agents nest, spans hang under missing parents."""
from __future__ import annotations

import random

from hypothesis import HealthCheck, given, settings, strategies as st
from otel_builders import span, traces_data, write

from tracetui.otel.detect import read_any

#: trace ids sharing 8, 12 and 20 leading digits, and one alone
TRACE_IDS = ("4bf92f3577b34da6a3ce929d0e0e4736", "4bf92f3577b34da6b000000000000001",
             "4bf92f35000000000000000000000002", "4bf92f3577b34da6a3ce000000000003",
             "0af7651916cd43dd8448eb211c80319c")

_span = st.fixed_dictionaries({
    "trace": st.sampled_from(TRACE_IDS),
    "parent": st.integers(-2, 30),  # an earlier span of the trace, -1 none (a root), -2 a parent not in the file
    "agent": st.sampled_from([None, "orders", "billing"]),
    "failed": st.booleans(),
})


def _spans(shapes: list[dict]) -> list[dict]:
    made: list[dict] = []
    for n, shape in enumerate(shapes):
        same = [s for s in made if s["traceId"] == shape["trace"]]
        if shape["parent"] == -1 or (shape["parent"] >= 0 and not same):
            parent = ""
        elif shape["parent"] == -2:
            parent = f"{0xdead0000 + n % 3:016x}"  # a few missing parents, shared by some spans
        else:
            parent = same[shape["parent"] % len(same)]["spanId"]
        attrs = ({"gen_ai__operation__name": "invoke_agent", "gen_ai__agent__name": shape["agent"]}
                 if shape["agent"] else {"gen_ai__operation__name": "chat"})
        made.append(span(f"{'invoke_agent' if shape['agent'] else 'chat'} s{n}", f"{n + 1:04x}{n * 7919:012x}",
                         parent, n * 3, n * 3 + 50, trace=shape["trace"], status=2 if shape["failed"] else 0,
                         message="boom" if shape["failed"] else "", **attrs))
    return made


def _runs(path) -> list[tuple]:
    trace = read_any(path)
    return sorted((r.run_id, r.run["otel"]["trace_id"], r.run["otel"]["root_span_id"], r.run["otel"]["spans"],
                   r.verdict()["status"]) for r in trace.runs.values())


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(shapes=st.lists(_span, min_size=1, max_size=24), seed=st.integers(0, 2**32 - 1))
def test_shuffled_spans_give_the_same_runs_and_names(tmp_path, shapes, seed):
    spans = _spans(shapes)
    as_written = _runs(write(tmp_path / "a.jsonl", *(traces_data(s) for s in spans)))
    rng = random.Random(seed)
    shuffled = spans[:]
    rng.shuffle(shuffled)
    cut = sorted(rng.sample(range(1, len(shuffled)), min(3, len(shuffled) - 1))) if len(shuffled) > 1 else []
    lines = [shuffled[a:b] for a, b in zip([0, *cut], [*cut, len(shuffled)])]
    reordered = _runs(write(tmp_path / "b.jsonl", *(traces_data(*line) for line in lines)))
    assert reordered == as_written
    assert len({name for name, *_ in as_written}) == len(as_written)  # every run its own name
    assert sum(n for *_, n, _ in as_written) <= len(spans)  # (the agents' own parents, ended well, are no run)
# Append to tests/otel/test_run_id_order.py once /tmp/coord/r5-importer.patch is applied (fails before it).


def test_a_rootless_tree_and_agents_starting_together_are_named_whatever_the_order(tmp_path):
    cycle = [span("alpha", "00000000000000a1", "00000000000000a2", 0, 5),  # each other's parents: no root
             span("beta", "00000000000000a2", "00000000000000a1", 0, 5)]
    agents = [span("invoke_agent x", "00000000000000c1", "", 0, 9, trace=TRACE_IDS[4],
                   gen_ai__operation__name="invoke_agent", gen_ai__agent__name="xavier"),
              span("invoke_agent y", "00000000000000c2", "00000000000000c1", 0, 5, trace=TRACE_IDS[4],
                   gen_ai__operation__name="invoke_agent", gen_ai__agent__name="yolanda")]  # same start ns
    for group in (cycle, agents):
        forward = _runs(write(tmp_path / "a.jsonl", traces_data(*group)))
        backward = _runs(write(tmp_path / "b.jsonl", traces_data(*reversed(group))))
        assert forward == backward
