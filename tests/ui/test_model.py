"""The presentation rules the screens rely on (no Textual needed)."""
from __future__ import annotations

from tracetui.trace.format import LANES
from tracetui.ui.model import RunQuery, call_ids_of, cell_label, headline, lane_counts, partners, run_icon


def test_identity_query_is_a_range_without_copying(demo):
    view = RunQuery().apply(demo.runs())
    assert isinstance(view, range) and len(view) == len(demo.runs())


def test_status_lane_and_text_filters(demo):
    runs = demo.runs()
    failed = [runs[i] for i in RunQuery(status="failed").apply(runs)]
    assert failed and all(e.first_failure for e in failed)
    ready = [runs[i] for i in RunQuery(status="ready").apply(runs)]
    assert ready and all(e.ready for e in ready)
    assert len(failed) + len(ready) == len(runs)
    auth = [runs[i].run_id for i in RunQuery(lane="authorization").apply(runs)]
    assert auth == ["cross_tenant"]
    assert [runs[i].run_id for i in RunQuery(text="CROSS").apply(runs)] == ["cross_tenant"]


def test_sorts(demo):
    runs = demo.runs()
    by_id = [runs[i].run_id for i in RunQuery(sort="id").apply(runs)]
    assert by_id == sorted(by_id)
    by_status = [runs[i] for i in RunQuery(sort="status").apply(runs)]
    assert [e.ready for e in by_status] == sorted(e.ready for e in by_status)
    by_lane = [runs[i].failing_lane for i in RunQuery(sort="lane").apply(runs)]
    order = [LANES.index(lane) if lane else len(LANES) for lane in by_lane]
    assert order == sorted(order)


def test_query_cycles_wrap():
    q = RunQuery()
    for _ in range(4):
        q = q.cycled("status")
    assert q.status == "all"
    assert RunQuery().cycled("lane").lane == LANES[0]


def test_lane_counts_match_entries(demo):
    counts = lane_counts(demo.runs())
    assert sum(counts.values()) == sum(1 for e in demo.runs() if e.first_failure)
    assert counts["authorization"] == 1


def test_icons(demo):
    by_id = {e.run_id: e for e in demo.runs()}
    assert run_icon(by_id["text"]) == "✓"
    assert run_icon(by_id["single-fault-429"]) == "!"
    assert run_icon(by_id["cross_tenant"]) == "✗"


def test_cell_labels_and_partners(demo):
    entry = next(e for e in demo.runs() if e.run_id == "cross_tenant")
    events = demo.load(entry).events
    assert [cell_label(e) for e in events] == ["200", "calls", "valid", "denied"]
    assert call_ids_of(events[1]) == ["call-1"]  # the model's response asked for call-1
    (cid, group), = partners(events, events[2])
    assert cid == "call-1" and [e["seq"] for e in group] == [2, 3, 4]


def test_headline_words_the_core_verdict(demo):
    entry = next(e for e in demo.runs() if e.run_id == "repair_exhausted")
    line, reason = headline(entry)
    assert "ARGUMENTS at step 3 (gave up at step 9)" in line
    assert reason == entry.first_failure["reason"]


def test_partners_index_a_run_once_and_grow_with_it(demo, monkeypatch):
    """A move along a run asks for the selected event's partners: the run's call ids are read once (not once
    per event per move), and a live run's new events are found too."""
    from tracetui.ui import model

    entry = next(e for e in demo.runs() if e.run_id == "cross_tenant")
    events = list(demo.load(entry).events) * 50  # ~200 events, call-1's steps among them 50 times over
    reads = [0]
    real = model.call_ids_of
    monkeypatch.setattr(model, "call_ids_of", lambda e: reads.__setitem__(0, reads[0] + 1) or real(e))
    groups = [partners(events, e) for e in events]
    assert reads[0] <= 2 * len(events)  # each event read once for the index, once as the one selected
    (cid, group), = groups[2]
    assert cid == "call-1" and [e["seq"] for e in group] == [2, 3, 4] * 50
    assert groups == [[(c, [x for x in events if c in real(x)]) for c in real(e)] for e in events]
    events.append({**events[2], "seq": 99})  # a live run grew: the new step is call-1's too
    (_, group), = partners(events, events[2])
    assert group[-1]["seq"] == 99
    other = list(events)  # another run (list) is indexed on its own
    (_, group), = partners(other[:4], other[2])
    assert [e["seq"] for e in group] == [2, 3, 4]
