"""Classifying a chunk of trace lines in bulk: where each line is, what kind, and which run.

The writer guarantees each line's opening bytes (:data:`~tracetui.trace.format.PREFIX_EVENT`
…), so a line's kind and run id can be read without parsing it. numpy does that
for a whole chunk at once: line ends, the three prefixes, the run id between its
quotes, the closing brace, and whether consecutive lines share a run id. The
scanner then works per *item*, not per line: a run of consecutive lines of one run
(its run line, its events, its summary), which is usually the whole run.

A line is *fast* when it has a writer's prefix, a plain run id (no escapes, no
control characters, within :data:`ID_WINDOW` bytes), a closing brace, valid UTF-8
and a length within the limit. Anything else is left to the exact per-line path.

In strict mode (``check``, ``replay``) every fast line is also validated as a record
(:func:`validate`), so nothing that only looks like a record is linked to a run.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from tracetui.trace.format import PREFIX_EVENT, PREFIX_RUN, PREFIX_SUMMARY

OTHER, EVENT, RUN, SUMMARY = 0, 1, 2, 3
#: a run id longer than this is read by the per-line path
ID_WINDOW = 48

_PAD = 64  # bytes after the last line that the bulk reads may look at
_HEAD = 32  # bytes compared at each line's start (the longest prefix is 27)
_EVENT_Q, _RUN_Q, _SUMMARY_Q = PREFIX_EVENT + b'"', PREFIX_RUN + b'"', PREFIX_SUMMARY + b'"'
_PREFIX_LEN = np.array([0, len(_EVENT_Q), len(_RUN_Q), len(_SUMMARY_Q)], np.int64)
_ID_COLUMNS = np.arange(ID_WINDOW, dtype=np.int64)
_QUOTE, _BACKSLASH, _BRACE, _CR, _NL = 0x22, 0x5C, 0x7D, 0x0D, 0x0A
#: bytes that end a plain run id (or make it not plain): a quote, a backslash, a control byte
#: the bytes of a 64-bit word (little-endian) that hold the first m bytes, m = 0…8; and where each word starts
_WORD_MASKS = np.array([(1 << (8 * m)) - 1 for m in range(9)], np.uint64)
_WORD_STARTS = np.arange(0, ID_WINDOW, 8, dtype=np.int64)[None, :]


def _all4(eq: Any) -> Any:
    """Rows of an n x 4 bool array that are all true (one compare per row, not a slow short-axis reduce)."""
    return np.ascontiguousarray(eq).view(np.uint32).ravel() == 0x01010101


def _words(prefix: bytes) -> tuple[Any, Any]:
    """A prefix as (pattern, mask) over the first _HEAD bytes, as four 64-bit words."""
    pattern = np.zeros(_HEAD, np.uint8)
    mask = np.zeros(_HEAD, np.uint8)
    pattern[:len(prefix)] = np.frombuffer(prefix, np.uint8)
    mask[:len(prefix)] = 0xFF
    return pattern.view(np.uint64), mask.view(np.uint64)


_PREFIX_WORDS = [(kind, *_words(prefix)) for kind, prefix in ((1, _EVENT_Q), (2, _RUN_Q), (3, _SUMMARY_Q))]


@dataclass
class Chunk:
    """One chunk's lines (as lists, for the scanner's Python loop) and its items."""

    starts: list[int]  # offset of each line in the chunk
    ends: list[int]  # end of each line's content (its ``\\n`` excluded, a ``\\r`` included)
    kinds: list[int]  # EVENT, RUN, SUMMARY for fast lines; OTHER for every other line
    id_start: list[int]  # where a fast line's run id starts (after its opening quote)
    id_end: list[int]  # where it ends (its closing quote)
    item_starts: list[int]  # first line of each item
    item_ends: list[int]  # the line after its last
    item_events: list[int]  # event lines in each item
    n: int  # lines


def line_spans(a: Any, final: bool) -> tuple[Any, Any]:
    """(line starts, line ends) of the whole lines in the byte array ``a``.

    The last piece without a line end counts as a line only when ``final``.
    """
    nl = np.flatnonzero(a == _NL)
    tail = final and (len(a) > (nl[-1] + 1 if len(nl) else 0))
    count = len(nl) + (1 if tail else 0)
    starts = np.empty(count, np.int64)
    ends = np.empty(count, np.int64)
    if count:
        starts[0] = 0
        starts[1:count] = nl + 1 if tail else nl[:-1] + 1
        ends[:len(nl)] = nl
        if tail:
            ends[-1] = len(a)
    return starts, ends


def classify(buf: bytes, limit: int, final: bool, valid: Any = None, size: int | None = None) -> Chunk:
    """Lines, kinds, run ids and items of ``buf[:size]`` (whole lines; see :func:`line_spans`).

    ``valid``, in strict mode, is a callable given (buffer array, starts, ends, fast
    mask, kinds, id starts, id ends) that returns the fast lines known to be records
    (see :class:`Validation`).
    """
    size = len(buf) if size is None else size
    whole = np.frombuffer(buf, np.uint8)
    a = whole[:size]
    starts, ends = line_spans(a, final)
    n = len(starts)
    if n == 0:
        return Chunk([], [], [], [], [], [], [], [], 0)
    if len(whole) < size + _PAD:  # the bulk reads below look a little past the last line
        whole = np.concatenate((a, np.zeros(_PAD, np.uint8)))
    rows = np.lib.stride_tricks.sliding_window_view(whole, _HEAD)
    head = rows[starts].view(np.uint64)  # n x 4 words
    kinds = np.zeros(n, np.int8)
    for kind, pattern, mask in _PREFIX_WORDS:
        kinds[_all4((head & mask) == pattern)] = kind
    length = ends - starts
    # the run id: up to the first quote, backslash or control byte after the prefix
    id_start = starts + _PREFIX_LEN[kinds]
    window = np.lib.stride_tricks.sliding_window_view(whole, ID_WINDOW)[id_start]
    stop = (window < 0x20) | (window == _QUOTE) | (window == _BACKSLASH)
    q = stop.argmax(1)
    at = np.arange(n)
    id_end = id_start + q
    plain = stop[at, q] & (window[at, q] == _QUOTE) & (q > 0) & (id_end < ends)
    # the closing brace, before an optional CR
    end_byte = whole[np.maximum(ends - 1, 0)]
    before = whole[np.maximum(ends - 2, 0)]
    brace = (end_byte == _BRACE) | ((end_byte == _CR) & (before == _BRACE))
    fast = (kinds > 0) & plain & brace & (length <= limit)
    if not buf.isascii():  # the padding past ``size`` may make this cautious, never wrong
        fast &= _utf8_lines(buf, a, starts, ends, fast)
    if valid is not None:
        fast &= valid(a, starts, ends, fast, kinds, id_start, id_end)
    kinds[~fast] = OTHER
    # items: a new one at every line that is not fast, or follows one that is not, has another
    # run id than the line before, is a run line, or follows a summary
    brk = np.ones(n, bool)
    if n > 1:
        words = window.view("<u8") & _WORD_MASKS[np.clip(q[:, None] - _WORD_STARTS, 0, 8)]  # each id, zero-padded
        same_id = q[1:] == q[:-1]
        for k in range(ID_WINDOW // 8):
            same_id &= words[1:, k] == words[:-1, k]
        brk[1:] = ~fast[1:] | ~fast[:-1] | ~same_id | (kinds[1:] == RUN) | (kinds[:-1] == SUMMARY)
    item_starts = np.flatnonzero(brk)
    item_events = np.add.reduceat(kinds == EVENT, item_starts, dtype=np.int32)
    item_ends = np.empty_like(item_starts)
    item_ends[:-1] = item_starts[1:]
    item_ends[-1] = n
    return Chunk(starts.tolist(), ends.tolist(), kinds.tolist(), id_start.tolist(), id_end.tolist(),
                 item_starts.tolist(), item_ends.tolist(), item_events.tolist(), n)


def _utf8_lines(buf: bytes, a: Any, starts: Any, ends: Any, fast: Any) -> Any:
    """Which lines are valid UTF-8 (a chunk that decodes whole is checked in one call)."""
    try:
        (buf if len(buf) == len(a) else a.tobytes()).decode("utf-8")
        return np.ones(len(starts), bool)
    except UnicodeDecodeError:
        pass
    high = _per_line(np.flatnonzero(a >= 0x80), starts) > 0
    ok = np.ones(len(starts), bool)
    for i in np.flatnonzero(high & fast).tolist():
        try:
            buf[starts[i]:ends[i]].decode("utf-8")
        except UnicodeDecodeError:
            ok[i] = False
    return ok


# -- strict mode: every fast line validated as a record -----------------------------------------
def _record_decoder() -> Any:
    from tracetui.trace.index.records import DECODER  # msgspec: imported only when checking strictly

    return DECODER


class Validation:
    """Strict mode for one chunk: which fast lines are records, and each fast event's ``seq``.

    msgspec validates the chunk's lines as JSON (in one call when they all are
    records) and checks each record's fields as :func:`~tracetui.trace.reader.check_record`
    does, without building dicts. Where its reading could differ from orjson's (the
    reader's parser), a line is left to the exact path instead: invalid UTF-8 (msgspec
    does not check it in skipped strings), numbers that overflow a double or an
    integer of 19 digits or more (orjson refuses the first and reads the second as a
    float), more opening brackets than the nesting limit, or a run id given twice.
    """

    def __init__(self, buf: bytes, max_depth: int, size: int | None = None):
        self.buf = buf
        self.size = len(buf) if size is None else size
        self.max_depth = max_depth
        self.seqs: dict[int, Any] = {}  # line -> the seq of a fast event line that is a record

    def seq(self, line: int) -> Any:
        return self.seqs[line]

    def __getstate__(self) -> dict[str, Any]:  # sent back by a worker process: only what the scan needs
        return {"seqs": self.seqs, "buf": b"", "size": self.size, "max_depth": self.max_depth}

    def __call__(self, a: Any, starts: Any, ends: Any, fast: Any, kinds: Any, id_start: Any, id_end: Any) -> Any:
        buf = self.buf
        candidates = fast & ~_risky_lines(a, starts, self.max_depth)
        if not candidates.any():
            return candidates
        decoder = _record_decoder()
        records = _whole_chunk(decoder, buf if self.size == len(buf) else memoryview(buf)[:self.size], a, starts)
        if records is None:  # some line is not a record: each line on its own
            decode = decoder.decode
            records = {}
            starts_, ends_ = starts.tolist(), ends.tolist()
            for i in np.flatnonzero(candidates).tolist():
                try:
                    records[i] = decode(buf[starts_[i]:ends_[i]])
                except Exception:  # noqa: BLE001 - any refusal: the exact path words the problem
                    candidates[i] = False
        # a run id given twice (orjson keeps the last; the prefix shows the first): those lines are compared;
        # counted first over the whole chunk, where every fast line has one in its prefix
        others = sum(buf.count(b'"run_id"', s, e) for s, e in zip(starts[~fast].tolist(), ends[~fast].tolist()))
        if buf.count(b'"run_id"', 0, self.size) == int(fast.sum()) + others:
            twice = np.zeros(len(starts), bool)
        else:
            twice = _per_line(_occurrences(a, b'"run_id"'), starts) > 1
        for i in np.flatnonzero(candidates & twice).tolist():
            if records[i].run_id.encode() != buf[int(id_start[i]):int(id_end[i])]:
                candidates[i] = False
        seqs = self.seqs
        for i in np.flatnonzero(candidates & (kinds == EVENT)).tolist():
            seqs[i] = records[i].seq
        return candidates


def _occurrences(a: Any, word: bytes) -> Any:
    """Where ``word`` (starting with a byte other than its others) occurs in the byte array."""
    first = np.flatnonzero(a[:len(a) - len(word) + 1] == word[0])
    for k in range(1, len(word)):
        first = first[a[first + k] == word[k]]
    return first


def _whole_chunk(decoder: Any, buf: bytes, a: Any, starts: Any) -> Any:
    """Every line's record, by line (None when some line is not a record)."""
    try:
        decoded = decoder.decode_lines(buf)
    except Exception:  # noqa: BLE001
        return None
    filled = a[starts] == 0x7B  # a line that starts with { is not blank; the rest are looked at one by one
    for i in np.flatnonzero(~filled).tolist():
        end = starts[i + 1] if i + 1 < len(starts) else len(a)
        filled[i] = bool(bytes(a[starts[i]:end]).strip(b" \t\r\n"))  # msgspec skips blank lines
    if len(decoded) != int(filled.sum()):
        return None
    position = np.cumsum(filled) - 1
    return _ByLine(decoded, position)


class _ByLine:
    """Records decoded for the non-blank lines, looked up by line number in the chunk."""

    def __init__(self, decoded: list[Any], position: Any):
        self.decoded, self.position = decoded, position.tolist()

    def __getitem__(self, line: int) -> Any:
        return self.decoded[self.position[line]]


#: a line with this many digits in a row, aligned, is read exactly: any run of 19 digits holds such a block
_DIGIT_BLOCK = 8
_ALL_DIGITS = np.frombuffer(b"\x01" * _DIGIT_BLOCK, np.uint64)[0]


def _risky_lines(a: Any, starts: Any, max_depth: int) -> Any:
    """Lines whose numbers or nesting msgspec and orjson may read differently (see Validation).

    orjson refuses a number that overflows a double, which msgspec reads as infinity (one
    with an exponent of three or more digits, or an integer part of 210 or more digits),
    and reads an integer beyond 64 bits (20 digits) as a float: lines with an exponent of
    three digits or 15 digits in a row (which hold an aligned block of 8) are read exactly.
    """
    n = len(a)
    risky = np.zeros(len(starts), bool)
    digit = (a - 0x30) < 10  # uint8 wraps: one compare
    after = np.flatnonzero(digit[:-1] & ((a[1:] | 0x20) == 0x65)) + 1  # an e or E after a digit
    if len(after):
        p = after + 1
        p += np.isin(a[np.minimum(p, n - 1)], (0x2B, 0x2D))  # a sign
        three = digit[np.minimum(p, n - 1)] & digit[np.minimum(p + 1, n - 1)] & digit[np.minimum(p + 2, n - 1)]
        risky[np.searchsorted(starts, after[three & (p + 2 < n)], side="right") - 1] = True
    blocks = np.flatnonzero(digit[:n - n % _DIGIT_BLOCK].view(np.uint64) == _ALL_DIGITS) * _DIGIT_BLOCK
    if len(blocks):
        risky[np.searchsorted(starts, blocks, side="right") - 1] = True
    return risky | (_per_line(np.flatnonzero((a | 0x20) == 0x7B), starts) > max_depth)  # [ or {


def _per_line(positions: Any, starts: Any) -> Any:
    """How many of the (sorted) byte positions fall in each line."""
    edges = np.searchsorted(positions, starts)
    return np.diff(edges, append=len(positions))
