"""Classifying a chunk of trace lines in bulk: where each line is, what kind, and which run.

The writer guarantees each line's opening bytes (:data:`~tracetui.trace.format.PREFIX_EVENT`
…), so a line's kind and run id can be read without parsing it. numpy does that
for a whole chunk at once: line ends, the three prefixes, the run id between its
quotes, the closing brace, and whether consecutive lines share a run id. The
scanner then works per *item*, not per line: a run of consecutive lines of one run
(its run line, its events, its summary), which is usually the whole run.

A line is *fast* when it has a writer's prefix, a plain run id (no escapes, no
control characters, within :data:`ID_WINDOW` bytes), a closing brace, valid UTF-8
and a length within the limit. Anything else is left to the exact per-line path;
a line of white space only is *blank* (readers skip it).

In strict mode (``check``, ``replay``) every fast line is also validated as a record
(:mod:`.validation`), so nothing that only looks like a record is linked to a run.
"""
from __future__ import annotations

import threading
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
_QUOTE, _BACKSLASH, _BRACE, _CR, _NL = 0x22, 0x5C, 0x7D, 0x0D, 0x0A
#: the bytes of a 64-bit word (little-endian) that hold the first m bytes, m = 0…8; and where each word starts
_WORD_MASKS = np.array([(1 << (8 * m)) - 1 for m in range(9)], np.uint64)
_WORD_STARTS = np.arange(0, ID_WINDOW, 8, dtype=np.int64)[None, :]
#: the byte that tells the three prefixes apart: {"rec":"r… / e… / s…
_KIND_AT = 8
_KIND_OF_BYTE = np.zeros(256, np.int8)
_KIND_OF_BYTE[ord("e")], _KIND_OF_BYTE[ord("r")], _KIND_OF_BYTE[ord("s")] = EVENT, RUN, SUMMARY


def _words(prefix: bytes) -> tuple[Any, Any]:
    """A prefix as (pattern, mask) over the first _HEAD bytes, as four 64-bit words."""
    pattern = np.zeros(_HEAD, np.uint8)
    mask = np.zeros(_HEAD, np.uint8)
    pattern[:len(prefix)] = np.frombuffer(prefix, np.uint8)
    mask[:len(prefix)] = 0xFF
    return pattern.view(np.uint64), mask.view(np.uint64)


#: per kind (indexed by kind): the prefix's words and mask
_PATTERNS = np.stack([np.zeros(4, np.uint64)] + [_words(p)[0] for p in (_EVENT_Q, _RUN_Q, _SUMMARY_Q)])
_MASKS = np.stack([np.zeros(4, np.uint64)] + [_words(p)[1] for p in (_EVENT_Q, _RUN_Q, _SUMMARY_Q)])


class Chunk:
    """One chunk's lines and items, as numpy arrays (and as lists for the per-line path, made on demand).

    ``starts``/``ends``: each line's offset in the chunk and the end of its content (its
    ``\\n`` excluded, a ``\\r`` included); ``kinds``: EVENT, RUN, SUMMARY for fast lines,
    OTHER for every other line; ``id_start``/``id_end``: a fast line's run id (between its
    quotes); ``blank``: lines of white space only. Items (consecutive fast lines of one run
    id: a new one at every run line and after every summary): ``item_starts``/``item_ends``
    (line numbers in the chunk), ``item_events`` (event lines in each), ``words`` (each
    line's run id, zero-padded, as 64-bit words).
    """

    __slots__ = ("n", "starts", "ends", "kinds", "id_start", "id_end", "blank", "item_starts", "item_ends",
                 "item_events", "words", "_lists")

    def __init__(self, n: int, starts: Any, ends: Any, kinds: Any, id_start: Any, id_end: Any, blank: Any,
                 item_starts: Any, item_ends: Any, item_events: Any, words: Any):
        self.n = n
        self.starts, self.ends, self.kinds, self.id_start, self.id_end = starts, ends, kinds, id_start, id_end
        self.blank = blank
        self.item_starts, self.item_ends, self.item_events, self.words = item_starts, item_ends, item_events, words
        self._lists: Any = None

    def lists(self) -> tuple[list[int], ...]:
        """(starts, ends, kinds, id_start, id_end) as lists: for the per-line path."""
        if self._lists is None:
            self._lists = tuple(x.tolist() for x in (self.starts, self.ends, self.kinds, self.id_start, self.id_end))
        return self._lists

    def keys(self, lines: Any = None) -> list[bytes]:
        """The run ids (bytes between the quotes) of ``lines`` (default: every line); meaningless where not fast."""
        words = self.words if lines is None else self.words[lines]
        return np.ascontiguousarray(words).view(f"S{ID_WINDOW}").ravel().tolist()

    def __getstate__(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in self.__slots__ if k != "_lists"}

    def __setstate__(self, state: dict[str, Any]) -> None:
        for k, v in state.items():
            setattr(self, k, v)
        self._lists = None


_SCRATCH = threading.local()


def scratch(slot: int, n: int, dtype: Any) -> Any:
    """A work array of ``n`` elements, reused from chunk to chunk (per thread and ``slot``): a fresh
    array of a chunk's size costs page faults each time, as much as the work done in it."""
    arrays = _SCRATCH.__dict__.setdefault("arrays", {})
    found = arrays.get(slot)
    if found is None or found.dtype != dtype or len(found) < n:
        found = arrays[slot] = np.empty(max(n, 1 << 20), dtype)
    return found[:n]


def line_ends(buf: bytes, n: int) -> Any:
    """Where the line ends (``\\n``) are in ``buf[:n]``: found once a step, by :mod:`.steps`, which
    bounds the lines of a step with them, and handed on to :func:`classify`."""
    return _newlines(np.frombuffer(buf, np.uint8, n))


#: bytes looked at together for line ends: the work array stays a megabyte whatever the step's size
_NEWLINE_BLOCK = 1 << 20


def _newlines(a: Any) -> Any:
    """Where the ``\n`` bytes of the byte array ``a`` are."""
    n = len(a)
    if n <= _NEWLINE_BLOCK:
        return true_offsets(np.equal(a, _NL, out=scratch(0, n, np.bool_)))
    return np.concatenate([
        true_offsets(np.equal(a[at:at + _NEWLINE_BLOCK], _NL, out=scratch(0, min(_NEWLINE_BLOCK, n - at), np.bool_)))
        + at for at in range(0, n, _NEWLINE_BLOCK)])


_EIGHT = np.arange(8, dtype=np.int64)


def true_offsets(mask: Any) -> Any:
    """``np.flatnonzero(mask)`` of a bool array whose true bytes are sparse (line ends, rare patterns): its
    64-bit words are looked at first and only those holding a true byte are expanded, which costs a
    fraction of looking at every byte."""
    words = len(mask) - len(mask) % 8
    held = np.flatnonzero(mask[:words].view(np.uint64) != 0)  # (numpy finds bools faster than other words)
    found = (held[:, None] * 8 + _EIGHT).ravel()
    found = found[mask[found]]
    if words < len(mask):
        found = np.concatenate([found, np.flatnonzero(mask[words:]) + words])
    return found


def line_spans(a: Any, final: bool, nl: Any = None) -> tuple[Any, Any]:
    """(line starts, line ends) of the whole lines in the byte array ``a``, whose line ends are
    ``nl`` when already found.

    The last piece without a line end counts as a line only when ``final``.
    """
    if nl is None:
        nl = _newlines(a)
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


def classify(buf: bytes, limit: int, final: bool, valid: Any = None, size: int | None = None,
             newlines: Any = None) -> Chunk:
    """Lines, kinds, run ids and items of ``buf[:size]`` (whole lines; see :func:`line_spans`);
    ``newlines``: its line ends, when already found (:func:`line_ends`).

    ``valid``, in strict mode, is a callable given (the chunk so far, the buffer array, the
    fast lines) that returns the fast lines known to be records (see :mod:`.validation`).
    """
    size = len(buf) if size is None else size
    whole = np.frombuffer(buf, np.uint8)
    a = whole[:size]
    starts, ends = line_spans(a, final, newlines)
    n = len(starts)
    if len(whole) < size + _PAD:  # the bulk reads below look a little past the last line
        whole = np.concatenate((a, np.zeros(_PAD, np.uint8)))
    # the kind: the byte that tells the prefixes apart, then the whole prefix compared as four words
    kinds = _KIND_OF_BYTE[whole[starts + _KIND_AT]]
    head = np.lib.stride_tricks.sliding_window_view(whole, _HEAD)[starts].view(np.uint64)  # n x 4 words
    prefixed = ((head & _MASKS[kinds]) == _PATTERNS[kinds]).view(np.uint32).ravel() == 0x01010101
    kinds[~prefixed] = OTHER  # (the bulk reads below stay within the padding only for prefixed lines)
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
    blank = _blank_lines(buf, whole, starts, ends, fast)
    words = window.view("<u8") & _WORD_MASKS[np.clip(q[:, None] - _WORD_STARTS, 0, 8)]  # each id, zero-padded
    chunk = Chunk(n, starts, ends, kinds, id_start, id_end, blank, None, None, None, words)
    if valid is not None and fast.any():
        fast &= valid(chunk, a, fast)
    kinds[~fast] = OTHER
    # items: a new one at every line that is not fast, or follows one that is not, has another
    # run id than the line before, is a run line, or follows a summary
    brk = np.ones(n, bool)
    if n > 1:
        same_id = q[1:] == q[:-1]
        for k in range(ID_WINDOW // 8):
            same_id &= words[1:, k] == words[:-1, k]
        brk[1:] = ~fast[1:] | ~fast[:-1] | ~same_id | (kinds[1:] == RUN) | (kinds[:-1] == SUMMARY)
    item_starts = np.flatnonzero(brk)
    item_ends = np.empty_like(item_starts)
    if n:
        item_ends[:-1] = item_starts[1:]
        item_ends[-1] = n
    chunk.item_starts, chunk.item_ends = item_starts, item_ends
    chunk.item_events = (np.add.reduceat(kinds == EVENT, item_starts, dtype=np.int64) if n
                         else np.zeros(0, np.int64))
    return chunk


def _blank_lines(buf: bytes, whole: Any, starts: Any, ends: Any, fast: Any) -> Any:
    """Lines of white space only (empty, or spaces, tabs and CRs): readers skip them."""
    blank = ends == starts
    first = whole[starts]
    maybe = ~fast & ~blank & ((first == 0x20) | (first == 0x09) | (first == _CR) | (first == 0x0C)
                              | (first == 0x0B))
    for i in np.flatnonzero(maybe).tolist():
        blank[i] = not buf[int(starts[i]):int(ends[i])].strip()
    return blank


#: bytes of whole lines decoded together when checking UTF-8: the text made is thrown away, and a step's
#: worth of it would cost up to four times the step (a string of 4-byte characters)
_UTF8_BLOCK = 1 << 18


def _utf8_lines(buf: bytes, a: Any, starts: Any, ends: Any, fast: Any) -> Any:
    """Which lines are valid UTF-8: checked a block of whole lines at a time (line ends are ASCII, so a
    character never spans two blocks), and line by line in a block that does not decode."""
    ok = np.ones(len(starts), bool)
    view = memoryview(buf)
    n = len(starts)
    i = 0
    while i < n:
        j = max(i + 1, int(np.searchsorted(starts, starts[i] + _UTF8_BLOCK)))
        try:
            str(view[int(starts[i]):int(starts[j]) if j < n else len(a)], "utf-8")
        except UnicodeDecodeError:
            for k in range(i, j):
                if fast[k]:
                    try:
                        str(view[int(starts[k]):int(ends[k])], "utf-8")
                    except UnicodeDecodeError:
                        ok[k] = False
        i = j
    return ok


def per_line(positions: Any, starts: Any) -> Any:
    """How many of the (sorted) byte positions fall in each line."""
    edges = np.searchsorted(positions, starts)
    return np.diff(edges, append=len(positions))
