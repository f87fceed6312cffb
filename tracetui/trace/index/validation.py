"""Strict mode: every fast line of a chunk validated as a record, in bulk, as the reader would.

msgspec validates the chunk's lines as JSON (in one call when they all are records)
and checks each record's fields as :func:`~tracetui.trace.reader.check_record` does,
without building dicts (:mod:`.records`). Where its reading could differ from
orjson's (the reader's parser), a line is left to the exact per-line path instead:

- a number that may overflow a double (orjson refuses it; msgspec skips it unread): an
  exponent of three digits or more, or a run of digits that holds an aligned 64-byte
  block of them (an integer part that overflows has 210 digits or more);
- nesting deeper than the limit: msgspec counts its nesting against Python's recursion
  limit, which is set for the call so that it refuses exactly what is too deep
  (:func:`decode_within_depth`); where that cannot be arranged (other threads run), the
  opening brackets of each line are counted instead;
- a run id given twice (orjson keeps the last; the prefix shows the first): the
  decoded id is compared with the prefix's;
- a summary with 15 digits or more in a row (msgspec reads an integer beyond 64 bits
  as an int, orjson as a float) is read by orjson, since its fields are read, not skipped;
- invalid UTF-8 is found by the classification (:mod:`.classify`).
"""
from __future__ import annotations

import gc
import sys
import threading
from operator import attrgetter, itemgetter
from typing import Any, Callable

import numpy as np

from tracetui.trace.format import TRACE_VERSION
from tracetui.trace.index.classify import EVENT, RUN, SUMMARY, per_line, scratch, true_offsets

#: an aligned block of this many digits marks a line whose numbers may overflow
_LONG_RUN = 64
#: bytes looked at together for overflowing numbers (a multiple of _LONG_RUN that fits a cache)
_BLOCK = 256 * 1024
_ALL_DIGITS8 = np.frombuffer(b"\x01" * 8, np.uint64)[0]
_SEQ = attrgetter("seq")
_RUN_ID = attrgetter("run_id")
_VERSION = attrgetter("trace_version")


def _decoder() -> Any:
    from tracetui.trace.index.records import DECODER  # msgspec: imported only when checking strictly

    return DECODER


class Validation:
    """Strict mode for one chunk: which fast lines are records, each event's ``seq`` and each summary.

    ``seqs``: per line, the ``seq`` of a fast event line that is a record (0 elsewhere);
    ``summaries``: line -> its decoded summary (:class:`.records.SummaryRecord`).
    """

    def __init__(self, buf: bytes, max_depth: int, size: int | None = None):
        self.buf = buf
        self.size = len(buf) if size is None else size
        self.max_depth = max_depth
        self.seqs: Any = None
        self.summaries: dict[int, Any] = {}
        self.odd_versions: set[int] = set()  # run lines whose trace_version may need a warning

    def seq(self, line: int) -> Any:
        return int(self.seqs[line])

    def __call__(self, chunk: Any, a: Any, fast: Any) -> Any:
        buf, starts, ends, kinds = self.buf, chunk.starts, chunk.ends, chunk.kinds
        self.starts, self.ends = starts, ends
        self.seqs = np.zeros(len(starts), np.int64)
        self.eights = np.zeros(len(starts), bool)
        candidates = fast & ~_overflowing(a, starts, self.eights)
        lines = np.flatnonzero(fast)
        decoder = _decoder()
        records, depth_checked = self._in_one_call(decoder, chunk, fast, lines)
        if records is None:  # some line is not a record (or too deep): each line on its own
            records = [None] * len(lines)
            depth_checked = True
            decode = decoder.decode
            for j, i in enumerate(lines.tolist()):
                if candidates[i]:
                    try:
                        records[j], checked = decode_within_depth(decode, buf[starts[i]:ends[i]], self.max_depth)
                    except Exception:  # noqa: BLE001 - any refusal: the exact path words the problem
                        candidates[i] = False
                    else:
                        depth_checked = depth_checked and checked
        if not depth_checked:
            candidates &= ~(per_line(np.flatnonzero((a | 0x20) == 0x7B), starts) > self.max_depth)  # [ or {
        keys = chunk.keys(lines)
        ok = candidates[lines]
        if not (ok.all() and list(map(str.encode, map(_RUN_ID, records))) == keys):  # a run id given twice
            ok &= np.fromiter((r is not None and r.run_id.encode() == k for r, k in zip(records, keys)),
                              bool, len(keys))
        line_kinds = kinds[lines]
        # what the scan needs: each event's seq, each summary (read by orjson where msgspec may differ)
        events = np.flatnonzero(ok & (line_kinds == EVENT))
        if len(events):
            picked = _picked(records, events)
            self.seqs[lines[events]] = np.fromiter(map(_SEQ, picked), np.int64, len(picked))
        at = np.flatnonzero(ok & (line_kinds == SUMMARY))
        if len(at):
            self._summaries(at, lines[at], records, keys, ok)
        run_lines = np.flatnonzero(ok & (line_kinds == RUN))
        self.odd_versions = {int(lines[j]) for j, version in zip(run_lines.tolist(),
                                                                 map(_VERSION, _picked(records, run_lines)))
                             if version is not None and (type(version) is not int or version > TRACE_VERSION)}
        candidates[lines] = ok
        return candidates

    def _summaries(self, at: Any, lines: Any, records: list[Any], keys: list[bytes], ok: Any) -> None:
        """Keep each summary; one with 15 digits or more in a row (an aligned block of 8 digits, found by
        :func:`_overflowing`) is read by orjson instead."""
        self.summaries.update(zip(lines.tolist(), _picked(records, at)))
        exact = np.flatnonzero(self.eights[lines])
        if len(exact):
            from tracetui.trace.index.layout import summary_of

            buf, summaries = self.buf, self.summaries
            for j, i in zip(at[exact].tolist(), lines[exact].tolist()):
                summaries[i] = summary_of(buf[self.starts[i]:self.ends[i]], keys[j].decode("utf-8", "surrogateescape"))
                ok[j] = summaries[i] is not None

    def _in_one_call(self, decoder: Any, chunk: Any, fast: Any, lines: Any) -> tuple[list[Any] | None, bool]:
        """Every fast line's record in one call (None when some line is not a record, or too deep),
        and whether the depth was checked.

        Only fast lines are decoded: each opens with ``{"rec":`` and ends with ``}``, so no
        value can run on into the next line and a count that matches pairs records with lines.
        """
        buf, starts, ends = self.buf, chunk.starts, chunk.ends
        others = np.flatnonzero(~fast)
        if all(not buf[s:e].strip(b" \t\r") for s, e in zip(starts[others].tolist(), ends[others].tolist())):
            data: Any = buf if self.size == len(buf) else memoryview(buf)[:self.size]
        else:
            data = b"\n".join([buf[s:e] for s, e in zip(starts[lines].tolist(), ends[lines].tolist())])
        try:
            records, checked = decode_within_depth(decoder.decode_lines, data, self.max_depth)
        except Exception:  # noqa: BLE001
            return None, True
        return (records if len(records) == len(lines) else None), checked


def _overflowing(a: Any, starts: Any, eights: Any = None) -> Any:
    """Lines that may hold a number orjson refuses as overflowing a double: an exponent of three
    digits or more (an ``e`` or ``E`` after a digit, then a sign or not, then three digits) that may end
    a number's mantissa (:func:`_after_a_value_start`), or an aligned block of 64 digits. Worked out in
    blocks that stay in the processor's cache, in reused arrays (:func:`.classify.scratch`).

    The exponents are found a block at a time (:func:`.classify.true_offsets`: most words of the mask
    hold none) and looked at further all at once, per chunk. ``eights``, when given, is set for every
    line that holds an aligned block of 8 digits (any 15 digits in a row hold one)."""
    n = len(a)
    overflowing = np.zeros(len(starts), bool)
    hits, exps, words = [], [], []
    for start in range(0, n, _BLOCK):
        block = a[start:min(n, start + _BLOCK + 1)]  # 1 more: the e after a digit at its end
        m = len(block)
        if m < 2:
            break
        digit = np.less(np.subtract(block, 0x30, out=scratch(1, m, np.uint8)), 10, out=scratch(2, m, np.bool_))
        letter = np.equal(np.bitwise_or(block, 0x20, out=scratch(1, m, np.uint8)), 0x65, out=scratch(3, m, np.bool_))
        looked = min(m - 1, _BLOCK)
        after_digit = np.logical_and(digit[:looked], letter[1:looked + 1], out=scratch(4, looked, np.bool_))
        exps.append(true_offsets(after_digit) + (start + 1))
        whole = min(m, _BLOCK) - min(m, _BLOCK) % 8  # (the block's 8-byte words: aligned, as _BLOCK is)
        if whole:
            all8 = np.equal(digit[:whole].view(np.uint64), _ALL_DIGITS8, out=scratch(5, whole // 8, np.bool_))
            runs = whole // 8 - (whole // 8) % (_LONG_RUN // 8)
            blocks = np.flatnonzero(all8[:runs].view(np.uint64) == _ALL_DIGITS8)  # 8 words of 8 digits, aligned
            hits.append(blocks * _LONG_RUN + start)
            if eights is not None:
                words.append(true_offsets(all8) * 8 + start)
    exp = np.concatenate(exps) if exps else np.zeros(0, np.int64)
    if len(exp):  # rare (an id such as req-83e602 holds one): all of them looked at together
        first = exp + 1
        first += np.isin(a[np.minimum(first, n - 1)], _SIGNS) & (first < n)  # after a sign
        three = (first + 2 < n) & _is_digit(a, first) & _is_digit(a, first + 1) & _is_digit(a, first + 2)
        hits.append(_after_a_value_start(a, exp[three]))
    if hits:
        _mark(overflowing, starts, np.concatenate(hits))
    if words:
        _mark(eights, starts, np.concatenate(words))
    return overflowing


_SIGNS = np.frombuffer(b"+-", np.uint8)


def _is_digit(a: Any, at: Any) -> Any:
    return np.subtract(a[np.minimum(at, len(a) - 1)], 0x30, dtype=np.uint8) < 10


#: bytes a JSON number may follow (or the start of the text): a number elsewhere is inside a string
_VALUE_START = np.zeros(256, bool)
_VALUE_START[list(b":,[ \t\r\n")] = True
#: mantissa bytes looked at before an exponent; one longer is kept as a possible number
_MANTISSA = 40


def _after_a_value_start(a: Any, at: Any) -> Any:
    """Of the exponents' ``e`` at offsets ``at`` of ``a``, those whose mantissa (digits and dots, then a
    minus or not) starts where a JSON value can: at the start, or after ``:`` ``,`` ``[`` or white space.
    Others are inside strings, as the ``3e602`` of a hex id ``req-83e602…`` is: read by msgspec exactly as
    by orjson. (Before, every such id sent its line, and its chunk, off the bulk path.)

    Mantissas are walked back a byte at a time, each only while it goes on: they do not overlap, so
    the work is bounded by the bytes they hold, not by ``_MANTISSA`` per exponent (a string of
    ``a1e999a1e999…`` looked at 40 bytes an exponent made check of it 5 times slower than the exact path)."""
    if not len(at):
        return at
    edge = at - 2  # per exponent: the byte before its mantissa, once found (the byte before the e is a digit)
    going = np.arange(len(at))  # exponents whose mantissa may go on further back
    for _ in range(_MANTISSA - 1):
        where = edge[going]
        byte = a[np.maximum(where, 0)]
        more = (where >= 0) & ((np.subtract(byte, 0x30, dtype=np.uint8) < 10) | (byte == 0x2E))
        going = going[more]
        if not len(going):
            break
        edge[going] -= 1
    long = np.zeros(len(at), bool)
    long[going] = True  # a mantissa longer than looked at: kept
    before = np.where(edge >= 0, a[np.maximum(edge, 0)], 0x2C)  # before the start: as a comma
    ahead = np.where(edge >= 1, a[np.maximum(edge - 1, 0)], 0x2C)  # before a minus
    keep = long | _VALUE_START[before] | ((before == 0x2D) & _VALUE_START[ahead])
    return at[keep]


def _picked(records: list[Any], at: Any) -> Any:
    """``[records[j] for j in at]``, made in C."""
    if len(at) < 2:
        return [records[int(j)] for j in at]
    return itemgetter(*at.tolist())(records)


def _mark(lines: Any, starts: Any, positions: Any) -> None:
    if len(positions):
        lines[np.searchsorted(starts, positions, side="right") - 1] = True


# -- nesting: msgspec counts it against Python's recursion limit ----------------------------------
_HEADROOM: dict[int, int] = {}  # max_depth -> recursion levels above the caller that let msgspec read exactly it


def _frame_depth() -> int:
    frame, depth = sys._getframe(1), 0
    while frame is not None:
        depth += 1
        frame = frame.f_back
    return depth


def _nested(depth: int) -> bytes:
    """A JSON object whose arrays and objects nest ``depth`` levels deep."""
    return b'{"x":' + b"[" * (depth - 1) + b"]" * (depth - 1) + b"}"


def decode_within_depth(decode: Callable[[Any], Any], data: Any, max_depth: int) -> tuple[Any, bool]:
    """``(decode(data), True)`` where nesting deeper than ``max_depth`` raises RecursionError.

    Where that cannot be arranged, ``(decode(data), False)``: other threads run (the limit
    is the interpreter's), or this Python or msgspec does not count nesting against it.
    A probe one level too deep checks the arrangement each time.
    """
    headroom = _HEADROOM.get(max_depth)
    if headroom is None:
        headroom = _HEADROOM[max_depth] = _calibrate(max_depth)
    if headroom < 0 or threading.active_count() > 1:
        return decode(data), False
    from tracetui.trace.index.records import PROBE

    probe = _nested(max_depth + 1)
    collecting = gc.isenabled()
    gc.disable()  # no finalizer may run with the limit lowered
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(_frame_depth() + headroom)
    try:
        try:
            PROBE.decode(probe)
        except RecursionError:
            return decode(data), True
    finally:
        sys.setrecursionlimit(old)
        if collecting:
            gc.enable()
    return decode(data), False  # pragma: no cover - the arrangement did not hold here


def _calibrate(max_depth: int) -> int:
    """The recursion headroom at which msgspec reads ``max_depth`` levels and refuses one more (-1: none)."""
    from tracetui.trace.index.records import PROBE

    if threading.active_count() > 1:
        return -1
    collecting = gc.isenabled()
    gc.disable()  # no finalizer may run with the limit lowered
    old = sys.getrecursionlimit()
    try:
        for headroom in range(max_depth - 8, max_depth + 24):
            sys.setrecursionlimit(_frame_depth() + headroom)
            try:
                PROBE.decode(_nested(max_depth))
            except RecursionError:
                continue
            try:
                PROBE.decode(_nested(max_depth + 1))
            except RecursionError:
                return headroom
            return -1
    finally:
        sys.setrecursionlimit(old)
        if collecting:
            gc.enable()
    return -1
