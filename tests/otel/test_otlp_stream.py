"""OTLP/JSON read as a stream (``check``): the same runs, names, verdicts and problems as reading the file
whole, for any file the release rule accepts (every trace's spans within ``WINDOW_LINES`` lines of each
other); a span that comes later is read apart and said. The window is made small so traces are released
mid-file."""
from __future__ import annotations

import random

import orjson
from hypothesis import HealthCheck, given, settings, strategies as st
from otel_builders import span, traces_data

from tracetui.otel import stream
from tracetui.otel.checked import read_checked
from tracetui.otel.detect import read_any
from tracetui.otel.origin import origin

WINDOW = 3
#: trace ids sharing 8 and 12 leading digits (names lengthen: decided at the end of the file), and one alone
TRACE_IDS = ("4bf92f3577b34da6a3ce929d0e0e4736", "4bf92f3577b34da6b000000000000001",
             "4bf92f35000000000000000000000002", "0af7651916cd43dd8448eb211c80319c",
             "11111111111111111111111111111111", "22222222222222222222222222222222")

_trace = st.fixed_dictionaries({
    "spans": st.integers(1, 6),
    "rootless": st.booleans(),  # its root never exported: held to the end of the file
    "agents": st.integers(0, 2),  # agent spans under the root (two: a run each)
    "failed": st.sets(st.integers(0, 5), max_size=2),
    "start": st.integers(0, 8),  # its first line
})


def _lines(traces: list[dict], seed: int) -> list[list[dict]]:
    rng = random.Random(seed)
    lines: list[list[dict]] = [[] for _ in range(8 + WINDOW + 1)]
    for t, shape in enumerate(traces):
        trace = TRACE_IDS[t]
        made: list[dict] = []
        for n in range(shape["spans"] + shape["agents"]):
            agent = n >= shape["spans"]
            parent = (f"{0xdead:016x}" if shape["rootless"] else "") if n == 0 else made[rng.randrange(
                shape["spans"] if agent else len(made))]["spanId"]
            attrs = ({"gen_ai__operation__name": "invoke_agent", "gen_ai__agent__name": "orders"} if agent
                     else {"gen_ai__operation__name": "chat"})
            failed = n in shape["failed"]
            made.append(span("invoke_agent" if agent else "chat", f"{t + 1:02x}{n + 1:02x}{n * 7919:012x}", parent,
                             n, n + 40, trace=trace, status=2 if failed else 0, message="boom" if failed else "",
                             **attrs))
        rng.shuffle(made)  # spans end in any order: a child before its parent, the root anywhere
        for s in made:  # every span of the trace within WINDOW lines of its first
            lines[shape["start"] + rng.randrange(WINDOW)].append(s)
    return lines


def _written(tmp_path, lines: list[list[dict]], name: str):
    path = tmp_path / name
    path.write_bytes(b"".join(orjson.dumps(traces_data(*spans) if spans else {"resourceSpans": []}) + b"\n"
                              for spans in lines))
    return path


def _whole(path) -> tuple[list, list]:
    trace = read_any(path)
    return ([(name, {**run.verdict(), **origin(run)}) for name, run in trace.runs.items()],
            [(p.line, p.message) for p in trace.problems])


def _streamed(path) -> tuple[list, list]:
    trace = read_checked(path)
    return ([(name, {**run.verdict(), **origin(run)}) for name, run in trace.runs.items()],
            [(p.line, p.message) for p in trace.problems])


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(traces=st.lists(_trace, min_size=1, max_size=len(TRACE_IDS)), seed=st.integers(0, 2**32 - 1))
def test_streaming_gives_the_verdicts_names_and_problems_of_the_whole_read(tmp_path, monkeypatch, traces, seed):
    monkeypatch.setattr(stream, "WINDOW_LINES", WINDOW)
    path = _written(tmp_path, _lines(traces, seed), "spans.jsonl")
    assert _streamed(path) == _whole(path)


def test_traces_are_released_as_the_file_moves_past_them(tmp_path, monkeypatch):
    """A closed trace is released WINDOW lines after its last span, not held to the end of the file."""
    monkeypatch.setattr(stream, "WINDOW_LINES", WINDOW)
    first = span("invoke_agent", "00000000000000a1", "", 0, 9, trace=TRACE_IDS[0],
                 gen_ai__operation__name="invoke_agent")
    rootless = span("chat", "00000000000000b1", "00000000000000ff", 0, 9, trace=TRACE_IDS[3])
    later = [span("chat", f"00000000000000c{n}", "", n, n + 1, trace=TRACE_IDS[4 + n % 2]) for n in range(2)]
    path = _written(tmp_path, [[first, rootless], [], [], [], [later[0]], [], [], [], [later[1]]], "spans.jsonl")
    problems: list = []
    released = []
    for place, spans in stream.traces_of(path, problems):
        released.append((place, spans[0].trace_id))
    assert released == [(0, TRACE_IDS[0]), (2, TRACE_IDS[4]), (1, TRACE_IDS[3]), (3, TRACE_IDS[5])]


def test_a_span_that_comes_after_its_trace_was_released_is_read_apart_and_said(tmp_path, monkeypatch):
    monkeypatch.setattr(stream, "WINDOW_LINES", WINDOW)
    root = span("invoke_agent", "00000000000000a1", "", 0, 9, trace=TRACE_IDS[3],
                gen_ai__operation__name="invoke_agent", gen_ai__agent__name="orders")
    late = span("chat", "00000000000000a2", "00000000000000a1", 1, 2, trace=TRACE_IDS[3], status=2, message="x",
                gen_ai__operation__name="chat")
    path = _written(tmp_path, [[root], [], [], [], [], [late]], "spans.jsonl")
    trace = read_checked(path)
    assert [p.line for p in trace.problems] == [6]
    assert "come more than 3 lines after the rest of it" in trace.problems[0].message
    assert len(trace.runs) == 2  # nothing dropped: the late span is a run of its own


def test_a_single_document_is_read_whole_and_gives_the_same_verdicts(tmp_path):
    spans = [span("invoke_agent", f"00000000000000a{n}", "", n, 9, trace=TRACE_IDS[n],
                  gen_ai__operation__name="invoke_agent", gen_ai__agent__name="orders") for n in range(3)]
    path = tmp_path / "doc.json"
    path.write_bytes(orjson.dumps(traces_data(*spans), option=orjson.OPT_INDENT_2))
    assert _streamed(path) == _whole(path)
    assert len(_streamed(path)[0]) == 3


def test_open_traces_of_big_spans_are_released_once_they_hold_the_byte_budget(tmp_path, monkeypatch):
    """The budget of open traces is in bytes too: a few spans with long messages weigh as many small ones
    (before: 200,000 spans of 2 KB each were held, 686 MB)."""
    monkeypatch.setattr(stream, "MAX_HELD_BYTES", 64 * 1024)
    rootless = [[span("chat", f"{line + 1:08x}{n + 1:08x}", "00000000000000ff", 0, 9, trace=f"{line + 1:016x}{n + 1:016x}",
                      gen_ai__operation__name="chat", gen_ai__input__messages="x" * 2000) for n in range(8)]
                for line in range(20)]
    path = _written(tmp_path, rootless, "spans.jsonl")
    problems: list = []
    released = list(stream.traces_of(path, problems))
    assert len(released) == 160  # nothing dropped
    assert problems and problems[0].line < 20  # released before the end of the file, and said
    assert "more traces were read before the root span or a parent arrived" in problems[0].message
    assert len(problems) < 10  # one problem a round of releases, not one a trace
