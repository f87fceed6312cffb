"""IndexedSource must see exactly what the whole-file reader sees: same runs, verdicts and problems.

Every test builds a trace, reads it with :func:`reader.read_trace` (the reference) and
with the index, and compares real values. Small chunk sizes force lines and runs
across chunk boundaries.
"""
from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

import orjson
import pytest
from hypothesis import strategies as st

from tracetui.trace import index as index_mod
from tracetui.trace import limits
from tracetui.trace import reader as reader_mod
from tracetui.trace.index import IndexedSource
from tracetui.trace.reader import Problem, TraceReadError, read_trace
from tracetui.trace.source import entry_from_run
from tracetui.trace.writer import encode_record

CHUNKS = (1, 97, 4096, index_mod.DEFAULT_CHUNK_BYTES)


@lru_cache(maxsize=None)
def _runs() -> tuple[tuple[str, tuple[bytes, ...]], ...]:
    """Real runs of the loop, each as its encoded lines: ready, failing, recovered, streamed."""
    from tracetui.loop.runner import run_scenario
    from tracetui.loop.scenarios import SCENARIOS

    results = [run_scenario(name) for name in SCENARIOS]
    results.append(run_scenario("single", "drop_assistant_call"))
    results.append(run_scenario("single", faults=("429",)))
    results.append(run_scenario("single", transient_failures=2))
    return tuple((r.run["run_id"], tuple(encode_record(rec) for rec in r.records)) for r in results)


def runs_by_status() -> tuple[list, list]:
    ready = [r for r in _runs() if b'"ready":true' in r[1][-1]]
    failed = [r for r in _runs() if b'"ready":false' in r[1][-1]]
    return ready, failed


def write(tmp_path: Path, data: bytes, name: str = "t.jsonl") -> str:
    path = tmp_path / name
    path.write_bytes(data)
    return str(path)


def all_lines() -> bytes:
    return b"".join(line for _, lines in _runs() for line in lines)


def scanned(path: str, chunk: int = index_mod.DEFAULT_CHUNK_BYTES) -> IndexedSource:
    return IndexedSource([path]).scan_all(chunk)


def problems_of(items) -> list[tuple[int, str]]:
    return [(p.line, p.message) for p in items]


def reference(path: str):
    trace = read_trace(path)
    return trace, {rid: entry_from_run(data) for rid, data in trace.runs.items()}


def assert_loads_match(src: IndexedSource, trace) -> None:
    for entry in src.runs():
        data = src.load(entry)
        want = trace.runs[entry.run_id]
        assert data.run_id == want.run_id
        assert data.run == want.run
        assert data.summary == want.summary
        assert data.events == sorted(want.events, key=lambda e: e["seq"])
        assert data.first_line == want.first_line


def assert_same(path: str, chunk: int = index_mod.DEFAULT_CHUNK_BYTES) -> IndexedSource:
    """Scan, then compare entries, problems and every loaded run with the reader's."""
    trace, want = reference(path)
    src = scanned(path, chunk)
    got = {e.run_id: e for e in src.runs()}
    assert len(got) == len(src.runs()), "a run was published twice"
    assert got == want
    assert problems_of(src.problems()) == problems_of(trace.problems)
    assert all(p.path == path for p in src.problems())
    assert_loads_match(src, trace)
    assert {e.run_id: e for e in src.runs()} == want  # loading changed nothing
    return src


# -- well-formed traces ----------------------------------------------------------------------
@pytest.mark.parametrize("chunk", CHUNKS)
def test_generated_trace_matches_reader(tmp_path, chunk):
    src = assert_same(write(tmp_path, all_lines()), chunk)
    assert len(src.runs()) == len(_runs())
    assert src.problems() == []
    ready, failed = runs_by_status()
    assert sum(e.ready for e in src.runs()) == len(ready) > 0
    assert sum(not e.ready for e in src.runs()) == len(failed) > 0
    assert all(e.complete for e in src.runs())
    assert any(e.recovered for e in src.runs())


def test_cli_generated_trace_matches_reader(tmp_path):
    from click.testing import CliRunner

    from tracetui.cli import main

    path = str(tmp_path / "all.jsonl")
    result = CliRunner().invoke(main, ["generate", "--all", "--all-ablations", "-o", path])
    assert result.exit_code == 0, result.output
    src = assert_same(path, 65536)
    assert len(src.runs()) == 150
    assert {e.ablation for e in src.runs()} >= {"complete", "drop_assistant_call", "sliding_window"}


def test_load_returns_exactly_the_runs_records(tmp_path):
    from tracetui.loop.runner import run_scenario

    results = [run_scenario("parallel"), run_scenario("single", faults=("5xx",)), run_scenario("text")]
    lines = [[encode_record(rec) for rec in r.records] for r in results]
    interleaved = [line for group in zip(*[ls[:3] for ls in lines]) for line in group]
    interleaved += [line for ls in lines for line in ls[3:]]
    src = scanned(write(tmp_path, b"".join(interleaved)), 128)
    by_id = {e.run_id: e for e in src.runs()}
    for result in results:
        data = src.load(by_id[result.run["run_id"]])
        want = orjson.loads(orjson.dumps(result.records))  # the records as written (redacted is a no-op here)
        assert data.run == want[0]
        assert data.events == want[1:-1]
        assert data.summary == want[-1]
        assert [e["seq"] for e in data.events] == list(range(1, len(data.events) + 1))


def test_interleaved_runs(tmp_path):
    runs = [list(lines) for _, lines in _runs()[:6]]
    out, k = [], 0
    while any(runs):
        run = runs[k % len(runs)]
        if run:
            out.append(run.pop(0))
        k += 1
    src = assert_same(write(tmp_path, b"".join(out)), 512)
    assert len(src.runs()) == 6


def test_events_sorted_by_seq_even_when_written_out_of_order(tmp_path):
    run_id, lines = next(r for r in _runs() if len(r[1]) > 5)
    shuffled = [lines[0], *reversed(lines[1:-1]), lines[-1]]
    path = write(tmp_path, b"".join(shuffled))
    src = scanned(path)
    data = src.load(src.runs()[0])
    assert [e["seq"] for e in data.events] == sorted(e["seq"] for e in read_trace(path).runs[run_id].events)
    assert src.runs()[0] == entry_from_run(read_trace(path).runs[run_id])


def test_non_ascii_text_stays_on_the_fast_path(tmp_path):
    run_id, lines = _runs()[1]
    patched = [line.replace(b'"summary":"', '"summary":"é — ✓ '.encode(), 1) for line in lines]
    assert any(b"\xc3\xa9" in line for line in patched)
    assert_same(write(tmp_path, b"".join(patched)), 300)


def test_other_key_order_and_spacing_is_read_through_the_slow_path(tmp_path):
    run_id, lines = _runs()[2]
    records = [orjson.loads(line) for line in lines]
    rewritten = [orjson.dumps(dict(reversed(list(r.items()))), option=orjson.OPT_INDENT_2).replace(b"\n", b" ")
                 + b"\n" for r in records]
    assert not rewritten[0].startswith(b'{"rec"')
    src = assert_same(write(tmp_path, b"".join(rewritten)), 4096)
    assert src.runs()[0].events == len(records) - 2


# -- damaged traces --------------------------------------------------------------------------
def test_malformed_lines_become_problems_and_good_runs_open(tmp_path):
    good = all_lines()
    bad = [
        b"not json at all\n",
        b'{"rec":"event","run_id":"single","seq":\n',  # cut mid-line by a crashed writer
        b"[1, 2, 3]\n",
        b'{"rec":"bogus","run_id":"x"}\n',
        b'{"rec":"summary","run_id":""}\n',
        b'{"rec":"event","run_id":7,"seq":1}\n',
        b'{"rec":"run","run_id":"q","trace_version":1,"producer":"x","inputs":{"source":"scenario",\n',
        b'{"rec":"summary","run_id":"single","status":"answer_ready",}\n',
    ]
    lines = good.splitlines(keepends=True)
    mixed = []
    for n, line in enumerate(lines):
        mixed.append(line)
        if n % 7 == 3 and bad:
            mixed.append(bad.pop())
    mixed += bad
    path = write(tmp_path, b"".join(mixed))
    src = assert_same(path, 1000)
    assert len(src.problems()) == 8
    assert len(src.runs()) == len(_runs())
    assert src.problems()[0].message


def test_cut_event_lines_inside_a_run_are_reported_by_the_scan_itself(tmp_path):
    run_id, lines = next(r for r in _runs() if len(r[1]) > 6)
    lines = list(lines)
    lines[2] = lines[2][:len(lines[2]) // 2] + b"\n"  # keeps its prefix and run id
    lines[4] = lines[4][:-3] + b"\n"
    path = write(tmp_path, b"".join(lines))
    trace, want = reference(path)
    src = scanned(path, 256)
    assert problems_of(src.problems()) == problems_of(trace.problems)  # before any load
    assert [p.line for p in src.problems()] == [3, 5]
    assert src.runs()[0] == want[run_id]
    assert src.runs()[0].events == len(lines) - 4


def test_truncated_last_line_without_newline(tmp_path):
    data = all_lines()
    cut = data[:-40]  # the last summary line loses its end, and the file its last newline
    assert not cut.endswith(b"\n")
    path = write(tmp_path, cut)
    src = assert_same(path, 777)
    last_id = _runs()[-1][0]
    entry = next(e for e in src.runs() if e.run_id == last_id)
    assert not entry.complete
    assert src.problems() == [Problem(cut.count(b"\n") + 1, src.problems()[0].message, path)]
    assert "malformed JSON" in src.problems()[0].message


def test_last_line_without_newline_but_whole(tmp_path):
    src = assert_same(write(tmp_path, all_lines().rstrip(b"\n")), 1500)
    assert all(e.complete for e in src.runs())


def test_non_utf8_bytes(tmp_path):
    run_id, lines = _runs()[3]
    lines = list(lines)
    lines[2] = lines[2].replace(b'"summary":"', b'"summary":"\xff\xfe', 1)
    lines[-1] = lines[-1].replace(b'"status":"', b'"status":"\xc3', 1)
    path = write(tmp_path, b"".join(lines))
    src = assert_same(path, 333)
    assert problems_of(src.problems()) == [(3, src.problems()[0].message), (len(lines), src.problems()[1].message)]
    assert all("UTF-8" in p.message for p in src.problems())
    assert not src.runs()[0].complete


def test_oversized_line_is_reported_without_breaking_its_neighbours(tmp_path):
    limit = limits.MAX_LINE_BYTES
    huge = b'{"rec":"event","run_id":"single","seq":99,"pad":"' + b"x" * (limit + 10) + b'"}\n'
    lines = list(all_lines().splitlines(keepends=True))
    lines.insert(5, huge)
    path = write(tmp_path, b"".join(lines))
    src = assert_same(path)
    assert problems_of(src.problems()) == [(6, f"line is {len(huge) - 1} bytes, over the {limit}-byte limit")]


def test_line_limit_applies_to_every_kind_of_line(tmp_path, monkeypatch):
    monkeypatch.setattr(limits, "MAX_LINE_BYTES", 1200)
    src = assert_same(write(tmp_path, all_lines()), 4096)
    assert src.problems()  # run lines are ~1.8 kB
    assert any(not e.complete or e.scenario is None for e in src.runs())


def test_blank_lines_and_whitespace_lines(tmp_path):
    lines = all_lines().splitlines(keepends=True)
    out = [b"\n", b"   \n"]
    for n, line in enumerate(lines):
        out.append(line)
        if n % 3 == 0:
            out.append(b"\n" if n % 2 else b" \t \r\n")
    out.append(b"\n\n")
    src = assert_same(write(tmp_path, b"".join(out)), 2000)
    assert src.problems() == []


@pytest.mark.parametrize("chunk", (64, 4096))
def test_crlf_line_ends(tmp_path, chunk):
    src = assert_same(write(tmp_path, all_lines().replace(b"\n", b"\r\n")), chunk)
    assert src.problems() == []
    assert len(src.runs()) == len(_runs())


def test_run_without_summary_is_incomplete_with_a_verdict_from_its_events(tmp_path):
    ready, failed = runs_by_status()
    f_id, f_lines = failed[0]
    r_id, r_lines = ready[0]
    data = b"".join(f_lines[:-1]) + b"".join(r_lines[:-1]) + b"".join(failed[1][1])
    path = write(tmp_path, data)
    src = assert_same(path, 256)
    by_id = {e.run_id: e for e in src.runs()}
    assert not by_id[f_id].complete and not by_id[r_id].complete and by_id[failed[1][0]].complete
    want_failure = orjson.loads(f_lines[-1])["first_failure"]
    assert by_id[f_id].first_failure == want_failure  # the shared rule re-derives the writer's verdict
    assert by_id[f_id].status == want_failure["code"]
    assert by_id[r_id].status == "incomplete" and by_id[r_id].first_failure is None
    # complete runs first (in the order they finished), then incomplete ones in file order
    assert [e.run_id for e in src.runs()] == [failed[1][0], f_id, r_id]


def test_event_lines_that_only_look_valid_are_reported_when_their_run_loads(tmp_path):
    run_id, lines = _runs()[1]
    lines = list(lines)
    lines[2] = lines[2].replace(b'"lane":"', b'"lane":"x', 1)  # good prefix and brace, unknown lane
    path = write(tmp_path, b"".join(lines))
    trace, want = reference(path)
    src = scanned(path)
    assert src.problems() == []  # event lines are not parsed during the scan
    assert [e.run_id for e in src.runs()] == [run_id]
    assert src.runs()[0].status == want[run_id].status
    before = src.runs()
    src.load(src.runs()[0])
    lane = orjson.loads(_runs()[1][1][2])["lane"]
    assert problems_of(src.problems()) == problems_of(trace.problems) == [(3, f"event has unknown lane 'x{lane}'")]
    assert src.runs() is not before  # a new list tells the UI that a row changed
    assert src.runs()[0] == want[run_id]


# -- unreadable inputs -----------------------------------------------------------------------
def test_empty_file(tmp_path):
    path = write(tmp_path, b"")
    with pytest.raises(TraceReadError, match="no runs found .it is empty"):
        IndexedSource([path])
    with pytest.raises(TraceReadError, match="it is empty"):
        read_trace(path)


def test_directory(tmp_path):
    with pytest.raises(TraceReadError, match="is a directory"):
        IndexedSource([str(tmp_path)])


def test_missing_file(tmp_path):
    with pytest.raises(TraceReadError, match="no such file"):
        IndexedSource([str(tmp_path / "nope.jsonl")])
    with pytest.raises(TraceReadError):
        IndexedSource([])


def test_file_without_records(tmp_path):
    path = write(tmp_path, b"hello\n\n{}\n")
    src = IndexedSource([path])
    with pytest.raises(TraceReadError, match="no line is a trace record"):
        src.scan_all()
    assert problems_of(src.problems()) == problems_of(read_trace_problems(path))
    assert [p.line for p in src.problems()] == [1, 3]
    assert src.problems()[1].message == "unknown record kind None"


def read_trace_problems(path: str) -> list[Problem]:
    problems = []
    for number, raw in reader_mod.iter_lines(path):
        _, problem = reader_mod.parse_line(raw)
        if problem:
            problems.append(Problem(number, problem, path))
    return problems


# -- damaged traces (the property tests': tests/test_index_property.py, test_check_stream.py) ----------
def with_run_id(line: bytes, run_id: str) -> bytes:
    return re.sub(rb'"run_id":"[^"]*"', b'"run_id":' + orjson.dumps(run_id), line, count=1)


@st.composite
def damaged_traces(draw):
    runs = _runs()
    # runs may repeat (the same run appended again) and may be written under a shared id, one of
    # them looking like the name a repeated id is listed under
    chosen = draw(st.lists(st.integers(0, len(runs) - 1), min_size=1, max_size=5))
    shared = draw(st.lists(st.sampled_from([None, "r", "r#2"]), min_size=len(chosen), max_size=len(chosen)))
    # each run goes to one of a few writers, which append their runs back to back and interleave
    writer = draw(st.lists(st.integers(0, 2), min_size=len(chosen), max_size=len(chosen)))
    queues = [[], [], []]
    for i, same, w in zip(chosen, shared, writer):
        queues[w] += [with_run_id(line, same) if same else line for line in runs[i][1]]
    order = draw(st.permutations([k for k, q in enumerate(queues) for _ in q]))
    lines = [queues[k].pop(0) for k in order]  # each writer keeps its own line order
    out = []
    for line in lines:
        action = draw(st.sampled_from(["keep"] * 6 + ["cut", "drop", "crlf", "blank", "garble"]))
        if action == "cut":
            out.append(line[:draw(st.integers(0, len(line) - 1))] + b"\n")
        elif action == "drop":
            continue
        elif action == "crlf":
            out.append(line[:-1] + b"\r\n")
        elif action == "blank":
            out += [b"\n", line]
        elif action == "garble":
            at = draw(st.integers(0, len(line) - 2))
            out.append(line[:at] + draw(st.sampled_from([b"\xff", b"}", b'"', b"\\", b"\x00"])) + line[at + 1:])
        else:
            out.append(line)
    data = b"".join(out)
    if data and draw(st.booleans()):
        data = data[:-draw(st.integers(1, min(len(data), 60)))]  # a crash cut the file's end
    return data
