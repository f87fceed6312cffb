"""Numbers built to slip past the strict scan's bulk path (:mod:`tracetui.trace.index.validation`).

msgspec skips a value it does not need unread, so a number orjson refuses (``1e999``, 400 digits) would
pass; the bulk path therefore leaves every line that may hold one to the exact path. These tests hold
that pre-check to its purpose on generated lines (numbers after every kind of white space, in arrays,
objects and strings, with minus signs, long mantissas and exponents), and ``check`` of such lines to the
whole-file reader; and bound the pre-check's own work on text full of digit-``e``-digit patterns.
"""
from __future__ import annotations

import tracemalloc

import numpy as np
import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tracetui.trace.index import validation
from tracetui.trace.index.classify import line_spans
from tracetui.trace.index.records import DECODER

from test_check_stream import reference_check, streamed_check

_DIGITS = st.text("0123456789", min_size=1, max_size=4) | st.sampled_from(["9" * 40, "1" * 39, "9" * 130, "9" * 310])
_SPACE = st.sampled_from(["", " ", "\t", "\r", " \r\t "])


@st.composite
def numbers(draw) -> str:
    """A JSON number, often one that overflows a double (or nearly), as any writer could spell it."""
    whole = draw(_DIGITS).lstrip("0") or "0"
    text = draw(st.sampled_from(["", "-"])) + whole
    if draw(st.booleans()):
        text += "." + draw(_DIGITS)
    if draw(st.booleans()):
        exponent = draw(st.sampled_from(["999", "308", "309", "400", "0999", "00309", "99", "307", "324", "1"]))
        text += draw(st.sampled_from("eE")) + draw(st.sampled_from(["", "+", "-"])) + exponent
    return text


_STRINGS = st.lists(st.sampled_from(["1e999", "-1E+400", "a1e999", "x-2e400", "83e602", ":1e400", "\\u0031e999",
                                     "\\\"", "\\\\", " ", "req_9e123_1", "9" * 70, "é"]), max_size=4).map(
    lambda parts: '"' + "".join(parts) + '"')


def values(depth: int = 2) -> st.SearchStrategy[str]:
    leaf = numbers() | _STRINGS | st.sampled_from(["true", "null", "-0", "0", "1e99"])
    if depth == 0:
        return leaf
    inner = values(depth - 1)
    spaced = st.tuples(_SPACE, inner, _SPACE).map("".join)
    return leaf | st.lists(spaced, max_size=3).map(lambda xs: "[" + ",".join(xs) + "]") | \
        st.lists(st.tuples(_STRINGS, _SPACE, spaced), max_size=3).map(
            lambda kvs: "{" + ",".join(f"{k}{s}:{v}" for k, s, v in kvs) + "}")


def _event(run_id: str, seq: int, extra: str = "") -> bytes:
    return ('{"rec":"event","run_id":"%s","seq":%d,"lane":"http","kind":"http.attempt","outcome":"ok"%s}\n'
            % (run_id, seq, extra)).encode()


def _flagged(line: bytes) -> bool:
    a = np.frombuffer(line + b"\n", np.uint8)
    starts, _ = line_spans(a, True)
    return bool(validation._overflowing(a, starts)[0])


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(value=values(), space=_SPACE, block=st.sampled_from([64, validation._BLOCK]))
def test_every_line_msgspec_would_pass_and_orjson_refuses_is_left_to_the_exact_path(monkeypatch, value, space,
                                                                                     block):
    monkeypatch.setattr(validation, "_BLOCK", block)  # (64: exponents and mantissas across blocks)
    line = _event("a", 1, f',"x":{space}{value}{space}').rstrip(b"\n")
    try:
        DECODER.decode(line)
    except Exception:  # noqa: BLE001 - msgspec refuses it too: the exact path words the problem
        return
    try:
        orjson.loads(line)
    except orjson.JSONDecodeError:
        assert _flagged(line), line


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.function_scoped_fixture])
@given(extras=st.lists(values(1), min_size=1, max_size=4), where=st.sampled_from(["event", "summary", "run"]))
def test_check_of_lines_with_hostile_numbers_reads_as_the_reader(tmp_path, extras, where):
    summary = ('{"rec":"summary","run_id":"a","status":"answer_ready","ready":true,'
               '"metrics":{"model_calls":1,"tool_calls":0,"recovered":0}%s,"first_failure":null}\n')
    run = '{"rec":"run","run_id":"a","trace_version":1,"producer":"x"%s}\n'
    lines = [(run % "").encode()] + [_event("a", k) for k in range(1, 4)] + [(summary % "").encode()]
    for k, value in enumerate(extras):
        extra = f',"x{k}":{value}'
        if where == "event":
            lines.insert(2 + k, _event("a", 10 + k, extra))
        elif where == "summary":
            lines[-1] = (summary % extra).encode()
        else:
            lines[0] = (run % extra).encode()
    path = tmp_path / "numbers.jsonl"
    path.write_bytes(b"".join(lines) + b"".join(_event("b", k) for k in (1, 2)))
    for as_json in (False, True):
        assert streamed_check(str(path), as_json) == reference_check(str(path), as_json)


@pytest.mark.parametrize("unit", [b"a1e999", b"x9e999e999", b"-" + b"1" * 12 + b"e400"])
def test_the_numbers_check_of_text_full_of_exponents_costs_what_the_text_holds(unit):
    """Ids and blobs full of digit-e-digit patterns, inside strings: each exponent's mantissa is walked back
    only as far as it goes (here ~12 bytes of memory per byte of text). Looking at 40 bytes before every
    exponent took 45 to 150, and made ``check`` of such text 5 times slower than the exact path it spares."""
    line = b'{"rec":"event","x":"' + unit * (validation._BLOCK // len(unit)) + b'"}'
    a = np.frombuffer(line + b"\n", np.uint8)
    starts, _ = line_spans(a, True)
    validation._overflowing(a, starts)  # (its reused arrays made once, before memory is counted)
    tracemalloc.start()
    try:
        flagged = validation._overflowing(a, starts)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert flagged.tolist() == [False]
    assert peak < 16 * len(a), f"{peak / len(a):.0f} bytes per byte of the line"
