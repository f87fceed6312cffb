"""Secrets in streamed text: split across stream events, or shown while it still arrives.

Consecutive stream events carry one text in pieces; a secret may be cut across
them (:func:`redact_events`). The ``--show-stream`` display shows text while it
arrives, holding back what may still turn out to be a secret
(:class:`StreamRedactor`). Both also take the live run's key
(:class:`~tracetui.trace.known_secret.KnownSecret`).

The display's cost is linear in the streamed text: a token still arriving (a long
base64 text, URL or hash, held back whole) is not scanned again for each delta
that only makes it longer; it is scanned once it ends (a delta with a separator or
white space), when the stream ends, or when more than ``MAX_HELD`` is held. Other
long held text (a ``Cookie:`` line that runs on) is scanned again each time it has
grown by a quarter, so the scans add up to a few times its length.
"""
from __future__ import annotations

import re
from typing import Any

from tracetui.trace.known_secret import KnownSecret, Span, merged
from tracetui.trace.redact import TEXT_MARKER, text_spans


def redact_events(events: list[Any], known: KnownSecret | None = None) -> list[Any]:
    """Stream events with secrets redacted also where they are split across events.

    Consecutive events carry one text in pieces at the same place (``delta``,
    ``choices/0/delta/content``…); the pieces of each place are read as one text,
    and a secret found across pieces is replaced in every piece it touches (the
    marker in the first). A secret that one piece shows on its own is left to
    the trace writer, except the known one, which is replaced everywhere.
    """
    leaves: dict[tuple[Any, ...], list[tuple[Any, Any]]] = {}
    copied = [_copy_noting_strings(event, (), leaves) for event in events]
    for places in leaves.values():
        if len(places) > 1:
            _redact_across(places, known)
    return copied if known is None else known.scrub(copied)


def _copy_noting_strings(value: Any, path: tuple[Any, ...], leaves: dict[tuple[Any, ...], list[tuple[Any, Any]]]) -> Any:
    """A copy of a JSON value; each string in it noted under its place (its path, list indices included)."""
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for k, v in value.items():
            out[k] = _copy_noting_strings(v, (*path, k), leaves)
            if isinstance(out[k], str):
                leaves.setdefault((*path, k), []).append((out, k))
        return out
    if isinstance(value, list):
        items = [_copy_noting_strings(v, (*path, i), leaves) for i, v in enumerate(value)]
        for i, item in enumerate(items):
            if isinstance(item, str):
                leaves.setdefault((*path, i), []).append((items, i))
        return items
    return value


def _redact_across(places: list[tuple[Any, Any]], known: KnownSecret | None) -> None:
    texts = [parent[key] for parent, key in places]
    joined = "".join(texts)
    spans = text_spans(joined) + (known.spans(joined) if known is not None else [])
    bounds = [0]
    for text in texts:
        bounds.append(bounds[-1] + len(text))
    edits: dict[int, list[tuple[int, int, str]]] = {}
    own: dict[int, list[Span]] = {}  # each piece's own secrets, which the writer finds without help
    for start, end in merged(spans):
        touched = [i for i in range(len(texts)) if bounds[i] < end and start < bounds[i + 1]]
        if len(touched) == 1:  # within one piece, yet maybe found only with the text before it ("…_access_key = ")
            i = touched[0]
            if i not in own:
                own[i] = text_spans(texts[i]) + (known.spans(texts[i]) if known is not None else [])
            if any(s <= start - bounds[i] and end - bounds[i] <= e for s, e in own[i]):
                continue
        for n, i in enumerate(touched):
            cut = (max(start, bounds[i]) - bounds[i], min(end, bounds[i + 1]) - bounds[i])
            edits.setdefault(i, []).append((*cut, TEXT_MARKER if n == 0 else ""))
    for i, cuts in edits.items():
        text = texts[i]
        for start, end, put in sorted(cuts, reverse=True):
            text = text[:start] + put + text[end:]
        parent, key = places[i]
        parent[key] = text


#: what ends a token (white space, a quote, a backslash, a separator): the token still arriving at the end of
#: streamed text starts after the last of these, found by one greedy run back from the end (a search for
#: ``[^…]*\Z`` would try each position in turn: quadratic in the length of a long token)
_BOUNDARY = re.compile(r"[\s\"'`\\<>,;()\[\]{}|]")
_UP_TO_LAST_BOUNDARY = re.compile(r"(?s).*" + _BOUNDARY.pattern)
#: words after which the next token is a credential's value
_LEAD_IN = re.compile(r"(?i)(?:bearer|basic|token|key|secret|password|passwd|pass|pwd|passphrase|cookie|"
                      r"authorization)\W{0,3}\Z")


class StreamRedactor:
    """Redacts text shown while it streams, holding back whatever may still turn out to be a secret.

    Feed it each delta; it returns what can be shown now: the text so far,
    redacted as the file would redact it, less a held tail (a token still
    arriving that looks like a key, a match that may grow, the start of the known
    secret). ``close`` returns the rest. The held tail is short for prose, so the
    text still appears as it arrives.
    """

    CONTEXT = 1024  # text already shown, kept so a secret after "Bearer " or "password: " is recognised
    MAX_HELD = 1 << 16  # past this, show what there is rather than wait for the end of the stream
    LARGE_HELD = 1 << 12  # held text this long (a Cookie line that runs on) is scanned again only as it grows

    def __init__(self, known: KnownSecret | None = None):
        self.known = known
        self.context = ""
        self.pending = ""
        self._parts: list[str] = []  # deltas not yet added to ``pending``
        self._parts_size = 0
        self._token_held = False  # the held tail is a token that looks like a key, still arriving
        self._marked_to_start = False  # what was shown ends with a marker whose secret goes on

    def feed(self, delta: str) -> str:
        held = len(self.pending) + self._parts_size + len(delta)
        if held <= self.MAX_HELD and (
                (self._token_held and not _BOUNDARY.search(delta))  # the held token only grows: it is scanned when it ends
                or self.LARGE_HELD < held < len(self.pending) * 5 // 4):  # much held: scanned again as it grows by a quarter
            self._parts.append(delta)
            self._parts_size += len(delta)
            return ""
        self.pending += "".join(self._parts) + delta
        self._parts, self._parts_size = [], 0
        return self._emit(final=False)

    def close(self) -> str:
        self.pending += "".join(self._parts)
        self._parts, self._parts_size = [], 0
        return self._emit(final=True)

    def _emit(self, final: bool) -> str:
        text = self.context + self.pending
        start = len(self.context)
        # (what was shown is context only: secrets that end inside it are not looked for again)
        spans = merged(text_spans(text, start) + (self.known.spans(text) if self.known is not None else []))
        self._token_held = False
        cut = len(text) if final or len(self.pending) > self.MAX_HELD else max(start, self._safe_cut(text, spans))
        out, pos = [], start
        for s, e in spans:
            if e <= pos or s >= cut or pos >= cut:
                continue
            # (a secret the last marker shown already stood for goes on: no second marker for it)
            out += (text[pos:max(s, pos)], "" if s < start and self._marked_to_start else TEXT_MARKER)
            pos = min(e, cut)
        out.append(text[pos:cut])
        if cut > start:
            self._marked_to_start = pos == cut and any(s < cut < e for s, e in spans)
        self.context, self.pending = text[:cut][-self.CONTEXT:], text[cut:]
        return "".join(out)

    def _safe_cut(self, text: str, spans: list[Span]) -> int:
        cut = len(text)
        last = _UP_TO_LAST_BOUNDARY.match(text)
        token = 0 if last is None else last.end()
        tail = text[token:]
        if tail and (not tail.isalpha() or len(tail) >= 16 or _LEAD_IN.search(text, max(0, token - 40), token)):
            cut = token
            self._token_held = True  # (a longer token is held as well: any delta without a boundary keeps it so)
        if self.known is not None:
            cut = min(cut, len(text) - self.known.partial_at_end(text))
        changed = True
        while changed:  # a match that reaches the end may grow; one across the cut must not be split
            changed = False
            for s, e in spans:
                if s < cut and (e >= len(text) or cut < e):
                    cut, changed = s, True
        return cut
