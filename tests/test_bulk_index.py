"""The bulk path (a whole chunk linked at once, :mod:`tracetui.trace.index.bulk`) reads as the reader reads.

Well-formed traces are where the bulk path runs, so these tests build clean traces, many
writers interleaved, runs across chunk edges, and lines that only the exact path may judge
(numbers that overflow, nesting at the limit, integers beyond 64 bits, a key given twice),
and hold the index, ``check`` and ``check --json`` to the whole-file reader. A spy makes sure
the bulk path did the work where it should.
"""
from __future__ import annotations

import re
import threading

import numpy as np
import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tracetui.trace.index import bulk
from tracetui.trace.index import validation as validation_mod
from tracetui.trace.index.classify import line_spans

from test_check_stream import reference_check, streamed_check
from test_index import _runs, assert_same, write
from test_same_id_runs import both

BIG = 1 << 20


@pytest.fixture
def bulk_calls(monkeypatch):
    """How often the bulk path linked a chunk (True) or sent it to the per-line path (False)."""
    calls: list[bool] = []
    link = bulk.link_in_bulk

    def spy(*args):
        done = link(*args)
        calls.append(done)
        return done
    monkeypatch.setattr(bulk, "link_in_bulk", spy)
    return calls


def interleave(groups: list[list[bytes]], order: list[int]) -> bytes:
    """Writers' lines, each writer's in its own order, taken as ``order`` says."""
    queues = [list(g) for g in groups]
    out = [queues[k].pop(0) for k in order]
    return b"".join(out)


def same_check(path: str) -> None:
    for as_json in (False, True):
        assert streamed_check(path, as_json) == reference_check(path, as_json)


# -- clean traces: the bulk path links them ------------------------------------------------------
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.function_scoped_fixture])
@given(data=st.data(), chunk=st.sampled_from([700, 4096, BIG]))
def test_clean_interleavings_read_as_the_reader_reads(tmp_path_factory, data, chunk):
    runs = _runs()
    chosen = data.draw(st.lists(st.integers(0, len(runs) - 1), min_size=1, max_size=6, unique=True))
    writers = data.draw(st.lists(st.integers(0, 2), min_size=len(chosen), max_size=len(chosen)))
    groups = [[line for i, w in zip(chosen, writers) if w == k for line in runs[i][1]] for k in range(3)]
    order = data.draw(st.permutations([k for k, g in enumerate(groups) for _ in g]))
    path = write(tmp_path_factory.mktemp("clean"), interleave(groups, order))
    assert_same(path, chunk)
    same_check(path)


def test_a_clean_trace_is_linked_in_bulk(tmp_path, bulk_calls):
    runs = [list(lines) for _, lines in _runs()]
    groups = [[line for run in runs[0::2] for line in run], [line for run in runs[1::2] for line in run]]
    path = write(tmp_path, interleave(groups, alternating(groups)))
    assert_same(path, BIG)
    assert bulk_calls and all(bulk_calls)
    bulk_calls.clear()
    same_check(path)
    assert bulk_calls and all(bulk_calls)


def alternating(groups: list[list[bytes]]) -> list[int]:
    """Writers taking turns, line by line, until each has written all of its lines."""
    left, order = [len(g) for g in groups], []
    while any(left):
        for k in range(len(groups)):
            if left[k]:
                order.append(k)
                left[k] -= 1
    return order


def test_runs_are_listed_in_order_of_their_first_line_whatever_order_they_end_in(tmp_path, bulk_calls):
    (a_id, a), (b_id, b) = _runs()[0], _runs()[1]
    # a opens first; b opens, runs and ends; then a runs and ends: one chunk, b's summary first
    data = a[0] + b"".join(b) + b"".join(a[1:])
    path = write(tmp_path, data)
    assert_same(path, BIG)
    same_check(path)
    out = streamed_check(path, False)[0].splitlines()
    assert [line.split()[1] for line in out] == [a_id, b_id]
    assert all(bulk_calls)


@pytest.mark.parametrize("chunk", [300, 2048])
def test_runs_across_chunk_edges_are_chained(tmp_path, bulk_calls, chunk):
    runs = [list(lines) for _, lines in _runs()[:4]]
    data = interleave(runs[:2], alternating(runs[:2])) + interleave(runs[2:], alternating(runs[2:]))
    path = write(tmp_path, data)
    assert_same(path, chunk)
    same_check(path)
    assert any(bulk_calls)


# -- what the bulk path must leave to the exact one ------------------------------------------------
def _event(run_id: str, seq: int, extra: str = "") -> bytes:
    return (b'{"rec":"event","run_id":"%s","seq":%d,"lane":"http","kind":"http.attempt","outcome":"ok"%s}\n'
            % (run_id.encode(), seq, extra.encode()))


def _run_line(run_id: str) -> bytes:
    return (b'{"rec":"run","run_id":"%s","trace_version":1,"producer":"x","inputs":{"source":"scenario",'
            b'"scenario":"single","ablation":"complete"}}\n' % run_id.encode())


def _summary(run_id: str, extra: str = "") -> bytes:
    return (b'{"rec":"summary","run_id":"%s","status":"answer_ready","ready":true,"metrics":{"model_calls":1,'
            b'"tool_calls":0,"recovered":0}%s,"first_failure":null}\n' % (run_id.encode(), extra.encode()))


@pytest.mark.parametrize("extra", [
    ',"x":1e400', ',"x":-2.5E+308', ',"x":1e-400', ',"x":1' + "0" * 400, ',"x":' + "9" * 131,
    ',"x":12345678901234567890123', ',"x":1e99', ',"x":"1e400"',
    ',"deep":' + "[" * 198 + "]" * 198, ',"deep":' + "[" * 199 + "]" * 199, ',"deep":' + "[" * 200 + "]" * 200,
    ',"run_id":"a"', ',"lane":"bogus"',
])
def test_lines_only_the_exact_path_may_judge(tmp_path, extra):
    lines = [_run_line("a"), _event("a", 1), _event("a", 2, extra), _event("a", 3), _summary("a")]
    path = write(tmp_path, b"".join(lines))
    both(path)  # an event line that only looks valid is found when its run loads (by design)
    same_check(path)


@pytest.mark.parametrize("extra, shown", [(',"run_id":"b"', "b  incomplete"), (',"rec":"summary"', "a#2")])
def test_a_key_given_twice_is_read_as_the_reader_reads_it(tmp_path, extra, shown):
    """orjson keeps the last of two keys; the prefix shows the first: ``check`` reads the line exactly."""
    lines = [_run_line("a"), _event("a", 1), _event("a", 2, extra), _event("a", 3), _summary("a")]
    path = write(tmp_path, b"".join(lines))
    same_check(path)
    assert shown in streamed_check(path, False)[0]


@pytest.mark.parametrize("failure", [
    '{"lane":"http","seq":99999999999999999999,"code":"x","reason":"r"}',  # a float to orjson: malformed
    '{"lane":"http","seq":1,"code":"x","reason":"r","decided_at":18446744073709551616}',
    '{"lane":"http","seq":1,"code":"x","reason":"r","extra":[1,2]}',
    '{"lane":"http","seq":1,"code":"x","reason":"r"}',
    '{"lane":["http"],"seq":1,"code":"x","reason":"r"}',
])
@pytest.mark.parametrize("metrics", ['{"model_calls":1}', '{}', 'null', '{"model_calls":123456789012345678901}',
                                     '{"model_calls":2,"new_metric":3}', '[1]', '{"model_calls":-3}',
                                     '{"model_calls":"3"}', '{"model_calls":true}', '{"model_calls":2.0}'])
def test_summaries_of_every_shape_read_as_the_reader_reads(tmp_path, failure, metrics):
    summary = (b'{"rec":"summary","run_id":"a","status":"x","ready":false,"metrics":%s,"first_failure":%s}\n'
               % (metrics.encode(), failure.encode()))
    failed = _event("a", 2).replace(b'"outcome":"ok"', b'"outcome":"failed","code":"boom","summary":"it broke"')
    good = [_run_line("b"), _event("b", 1), _summary("b")]
    path = write(tmp_path, b"".join([_run_line("a"), _event("a", 1), failed, summary] + good))
    both(path)
    same_check(path)


def test_a_repeated_seq_across_chunks_is_found(tmp_path):
    lines = [_run_line("a")] + [_event("a", k) for k in range(1, 40)] + [_event("a", 7)] + [_summary("a")]
    path = write(tmp_path, b"".join(lines))
    from tracetui.trace import checking

    for chunk in (256, 1024, BIG):
        checking.CHUNK_BYTES, saved = chunk, checking.CHUNK_BYTES
        try:
            same_check(path)
        finally:
            checking.CHUNK_BYTES = saved


def test_nesting_is_judged_the_same_when_other_threads_run(tmp_path):
    """The recursion-limit arrangement is only used with no other thread: otherwise brackets are counted."""
    lines = [_run_line("a"), _event("a", 1, ',"deep":' + "[" * 199 + "]" * 199),
             _event("a", 2, ',"deep":' + "[" * 200 + "]" * 200), _summary("a")]
    path = write(tmp_path, b"".join(lines))
    stop = threading.Event()
    other = threading.Thread(target=stop.wait)
    other.start()
    try:
        same_check(path)
    finally:
        stop.set()
        other.join()
    same_check(path)


# -- the numbers check itself ----------------------------------------------------------------------
#: an exponent of three digits ending a mantissa that starts where a JSON value can (a number, not text in a
#: string), or a run of digits that holds an aligned block of 64
_VALUE = rb"(?:^|(?<=[:,\[ \t\r\n]))-?[0-9.]*[0-9][eE][+-]?[0-9]{3}"
_OVERFLOW = re.compile(_VALUE + rb"|[0-9]{127}")
#: what may be flagged besides: a mantissa too long to look back over, an aligned block of 64 digits
_MAY_OVERFLOW = re.compile(_VALUE + rb"|[0-9.]{39}[0-9][eE][+-]?[0-9]{3}|[0-9]{64}")


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.sampled_from([b"x", b"1", b"e", b"E", b"+", b"-", b"\n", b"123", b"1e400", b"2E+308",
                                 b"5e-12", b"9" * 70, b"abc", b"0e0", b":", b",", b"[", b" ", b".", b'"',
                                 b"1" * 30]), min_size=1, max_size=60))
def test_every_number_that_may_overflow_is_found_across_blocks(monkeypatch, parts):
    monkeypatch.setattr(validation_mod, "_BLOCK", 64)
    data = b"".join(parts) + b"\n"
    a = np.frombuffer(data, np.uint8)
    starts, ends = line_spans(a, True)
    found = validation_mod._overflowing(a, starts)
    for i, (s, e) in enumerate(zip(starts.tolist(), ends.tolist())):
        if _OVERFLOW.search(data[s:e]):
            assert found[i], data[s:e]
        if found[i]:  # nothing else: a number's exponent of three digits, or an aligned block of 64 digits
            assert _MAY_OVERFLOW.search(data[s:e]), data[s:e]


@pytest.mark.parametrize("line, flagged", [
    (b'{"rec":"event","run_id":"run-83e60209da6c","x":1}', False),  # a hex id: text in a string
    (b'{"request":"req_9e123_1","at":"2026-12-02"}', False),
    (b'{"x":83e602}', True), (b'{"x":[1, -2.5E+308]}', True), (b'{"x": 1e999}', True),
    (b'{"x":"ratio:1e400"}', True),  # (inside a string, but after a colon: looked at, harmlessly)
])
def test_hex_ids_do_not_look_like_overflowing_numbers(line, flagged):
    """Real traces are full of hex ids (request, call and trace ids): a third of 32-digit ones hold a digit, an
    e and three digits. Each sent its line, and its whole chunk, off the bulk path: check took 2.4 times as long."""
    a = np.frombuffer(line + b"\n", np.uint8)
    starts, _ = line_spans(a, True)
    assert validation_mod._overflowing(a, starts).tolist() == [flagged]


def test_orjson_refuses_what_the_numbers_check_looks_for():
    """The reason for the check: msgspec skips these numbers unread, orjson refuses them."""
    for number in (b"1e400", b"-1E+309", b"1" + b"0" * 400):
        with pytest.raises(orjson.JSONDecodeError):
            orjson.loads(number)


@pytest.mark.parametrize("chunk", [7, 40, 200])
def test_lines_cut_anywhere_in_their_prefix_are_read_within_the_buffer(tmp_path, chunk):
    """A line that stops inside a prefix, at the end of a chunk or of the file, is only a problem line."""
    line = _event("abc", 1)
    data = b"".join(line[:k] + b"\n" for k in range(1, 40)) + _run_line("abc") + line + _summary("abc")
    for tail in (b"", line[:20], line[:30]):
        path = write(tmp_path, data + tail)
        assert_same(path, chunk)
        same_check(path)


def test_a_step_of_tiny_lines_classifies_a_bounded_number_of_them(tmp_path, monkeypatch):
    """4 MiB of newlines is 4 M lines: a step takes at most MAX_LINES_PER_STEP of them (the bulk arrays cost
    hundreds of bytes a line), and the file still reads as the reader reads it."""
    from tracetui.trace.index import steps
    from tracetui.trace.index.lines import FileLines
    from tracetui.loop.runner import run_scenario

    monkeypatch.setattr(steps, "MAX_LINES_PER_STEP", 1000)
    records = run_scenario("cross_tenant").records
    head = b"".join(orjson.dumps(r) + b"\n" for r in records[:3])
    tail = b"".join(orjson.dumps(r) + b"\n" for r in records[3:])
    path = tmp_path / "tiny.jsonl"
    path.write_bytes(head + b"\n" * 5000 + b"x\n" * 2500 + b" \r\n" * 10 + tail)
    lines = FileLines(0, str(path), path.stat().st_size)
    lines.open()
    try:
        prepared = steps.prepare(lines, True, 0, path.stat().st_size, 1 << 22, True)
    finally:
        lines.close()
    assert prepared.chunk.n <= 1000 and prepared.end < path.stat().st_size
    both(str(path), 1 << 22)  # runs, verdicts and problem lines equal the reader's
    assert streamed_check(str(path), False) == reference_check(str(path), False)


# -- what the chunk alone decides is remembered between chunks (items.py) ------------------------------
def test_run_lines_alike_for_their_first_bytes_keep_their_own_fields(tmp_path, bulk_calls):
    """Run lines are remembered by their first bytes only when the writer's layout ends within them:
    a long producer pushes the scenario past them, and each run keeps its own."""
    def run_line(run_id: str, scenario: str) -> bytes:
        return (b'{"rec":"run","run_id":"%s","trace_version":1,"producer":"%s","inputs":{"source":"scenario",'
                b'"scenario":"%s","ablation":"complete"}}\n' % (run_id.encode(), b"p" * 300, scenario.encode()))
    lines = []
    for k, scenario in enumerate(["single", "parallel", "single", "cross_tenant"] * 3):
        lines += [run_line(f"r{k}", scenario), _event(f"r{k}", 1), _summary(f"r{k}")]
    path = write(tmp_path, b"".join(lines))
    src = assert_same(path, 700)
    assert [e.scenario for e in src.runs()][:4] == ["single", "parallel", "single", "cross_tenant"]
    assert all(bulk_calls)


def test_summaries_alike_after_their_run_id_are_read_once_and_share_a_shape(tmp_path, bulk_calls):
    """Summaries that differ only in their run id give rows that share everything else; one that names
    a run id again (the last one counts) is never taken for another's."""
    lines = []
    for k in range(12):
        lines += [_run_line(f"r{k}"), _event(f"r{k}", 1), _summary(f"r{k}")]
    x = [_run_line("x"), _event("x", 1), _summary("x", ',"run_id":"x"')]
    y = [_run_line("y"), _event("y", 1), _summary("y", ',"run_id":"x"')]  # the same bytes after its run id
    path = write(tmp_path, b"".join(lines[:3] + x + lines[3:24] + y + lines[24:]))  # (x and y chunks apart)
    src = assert_same(path, 700)
    same_check(path)
    rows = [e for e in src.runs() if e.run_id.startswith("r")]
    assert len(rows) == 12 and len({id(e.shape) for e in rows}) == 1  # twelve rows, one shape
    assert rows[0].shape == rows[11].shape and rows[0] != rows[11]

