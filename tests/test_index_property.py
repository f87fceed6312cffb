"""Property: any interleaving of runs, and any damage to their lines, is indexed as the whole-file reader reads it
(the runs and verdicts during the scan; everything, problems included, once every run is loaded)."""
from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from test_index import assert_loads_match, damaged_traces, problems_of, reference, scanned, write
from tracetui.trace.index import IndexedSource
from tracetui.trace.reader import TraceReadError


# -- property: any interleaving and any damage reads as the reader reads it ---------------
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=damaged_traces(), chunk=st.sampled_from([7, 200, 1500, 65536]))
def test_property_index_equals_reader(tmp_path_factory, data, chunk):
    path = write(tmp_path_factory.mktemp("prop"), data)
    try:
        trace, want = reference(path)
    except TraceReadError:
        with pytest.raises(TraceReadError):
            IndexedSource([path]).scan_all(chunk)
        return
    src = scanned(path, chunk)
    got = {e.run_id: e for e in src.runs()}
    assert len(got) == len(src.runs())
    # during the scan: same runs and verdicts; problems are the reader's, minus event lines
    # that only look valid (reported when their run loads)
    assert got.keys() == want.keys()
    for rid, entry in got.items():
        w = want[rid]
        assert (entry.status, entry.ready, entry.complete, entry.first_failure) == \
               (w.status, w.ready, w.complete, w.first_failure)
    assert set(problems_of(src.problems())) <= set(problems_of(trace.problems))
    # after loading every run: everything equal
    assert_loads_match(src, trace)
    assert {e.run_id: e for e in src.runs()} == want
    assert problems_of(src.problems()) == problems_of(trace.problems)
