"""``open`` of OTLP/JSON: a run shown while the scan gives the runs their final names (on the UI thread, while
the scan runs on its worker) never leaves another run's records under a name. Two exported runs share a run
id: the one released first is listed as ``text`` until the file is read, then the one first in the file is."""
from __future__ import annotations

import copy

import orjson
from otlp_open_files import SAMPLE

from tracetui.otel.detect import open_any, read_any
from tracetui.otel.stream import WINDOW_LINES
from tracetui.trace.source import RunEntry

FIRST, SECOND = "1" * 32, "2" * 32


def _with_trace(doc: dict, trace: str, keep=lambda span: True) -> bytes:
    doc = copy.deepcopy(doc)
    for resource in doc["resourceSpans"]:
        for scope in resource["scopeSpans"]:
            scope["spans"] = [dict(s, traceId=trace) for s in scope["spans"] if keep(s)]
    return orjson.dumps(doc)


def _swapping_names(path):
    """FIRST's spans on line 1 but its root past the window (released last); SECOND whole on line 2."""
    lines = SAMPLE.read_bytes().splitlines()
    doc = orjson.loads(lines[0])
    is_root = lambda span: not span.get("parentSpanId")  # noqa: E731
    path.write_bytes(b"\n".join([_with_trace(doc, FIRST, lambda s: not is_root(s)), _with_trace(doc, SECOND),
                                 *lines[1:WINDOW_LINES + 3], _with_trace(doc, FIRST, is_root)]) + b"\n")
    return path


def _trace_of(run) -> str:
    return run.run["otel"]["trace_id"]


def test_a_run_loaded_while_the_names_change_is_not_cached_under_its_old_name(tmp_path):
    path = _swapping_names(tmp_path / "spans.jsonl")
    whole = read_any(path)
    assert _trace_of(whole.runs["text"]) == FIRST and _trace_of(whole.runs["text#2"]) == SECOND
    source = open_any([str(path)])
    scan = source.scan()
    try:
        while len(source.runs()) < len(whole.runs):  # every run listed, under its provisional name
            next(scan)
        shape = next(e.shape for e in source.runs() if e.run_id == "text")
        spool_load = source._runs.load

        def renamed_meanwhile(*args):
            run = spool_load(*args)
            next(scan)  # the scan, on its worker, reaches the end of the file and renames
            return run

        source._runs.load = renamed_meanwhile
        provisional = source.load(RunEntry("text", shape))
        source._runs.load = spool_load
        assert _trace_of(provisional) == SECOND  # what the row meant when it was shown
        assert source.done and [e.run_id for e in source.runs()] == list(whole.runs)
        for entry in source.runs():
            assert _trace_of(source.load(entry)) == _trace_of(whole.runs[entry.run_id]), entry.run_id
    finally:
        source.close()
