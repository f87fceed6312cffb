"""A secret known in advance (the live run's API key), found in every form a server may echo it.

The search is a literal one, linear in the text: each form of the key is looked
for with ``str.find`` on an ASCII-lowercased copy (same offsets), never with a
regex that has unbounded classes around the key (such a pattern rescans a long
run of token characters from every position: quadratic in the length of one
base64 text, URL or hash). A base64 form is a part of a longer base64 text (a
``Basic`` credential): the marker takes that whole text, found by one forward
and one backward run from the hit, and a hit inside a text already taken is
skipped, so every character is looked at a bounded number of times.

A key echoed with a space or a line break in it, or cut short, leaves pieces
that are not the key: every run of :attr:`KnownSecret.MIN_FRAGMENT` or more of
the key's characters is caught too. It is found through the key's aligned
windows of :attr:`KnownSecret.WINDOW` characters (any run that long holds one),
then grown as far as text and key agree.
"""
from __future__ import annotations

import base64
import re
from typing import Any
from urllib.parse import quote, quote_plus

TEXT_MARKER = "<redacted>"
Span = tuple[int, int]

_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")
#: what a base64 text (standard or URL-safe) is made of, before and after a form of the key in it
_BASE64_AFTER = re.compile(r"[A-Za-z0-9+/_=-]*")
_BASE64_BEFORE = re.compile(r"[A-Za-z0-9+/_-]*")  # matched on the reversed text


def fold(text: str) -> str:
    """``text`` with ASCII letters in lower case, every offset kept (``str.lower`` may lengthen ``İ``)."""
    return text.lower() if text.isascii() else text.translate(_ASCII_LOWER)


def merged(spans: list[Span]) -> list[Span]:
    out: list[Span] = []
    for start, end in sorted(spans):
        if end <= start:
            continue
        if out and start <= out[-1][1]:
            if end > out[-1][1]:
                out[-1] = (out[-1][0], end)
            continue
        out.append((start, end))
    return out


def _finds(text: str, needle: str) -> list[int]:
    """Every offset of ``needle`` in ``text``, overlapping ones included."""
    out = []
    at = text.find(needle)
    while at >= 0:
        out.append(at)
        at = text.find(needle, at + 1)
    return out


class KnownSecret:
    """One secret known in advance, in every form a server may echo it.

    The key as it is, in any (ASCII) letter case, URL-encoded (also every byte), ``\\u``-escaped, as hex, and as
    base64 (standard or URL-safe, alone or inside a longer base64 text such as a
    ``Basic`` credential, at each of its three alignments); and any run of
    :attr:`MIN_FRAGMENT` or more of its characters (a key echoed with a space in
    it, or cut).
    """

    MIN_VARIANT = 12  # shorter forms could match by chance
    MIN_FRAGMENT = 16  # a run of the key this long is the key's (by chance: one in 36**16 or so)
    WINDOW = MIN_FRAGMENT // 2  # a run of MIN_FRAGMENT characters holds one whole aligned window this long
    MIN_HELD_RUN = 4  # a stream's tail that is a run of the key this long is held back: it may grow into a fragment

    def __init__(self, secret: str):
        raw = secret.encode("utf-8", "surrogatepass")  # (a lone surrogate in a key read from a broken file)
        plain = {secret, quote(raw, safe=""), quote_plus(raw), raw.hex(), secret.replace("/", "\\/")}
        plain |= {"".join(f"%{b:02x}" for b in raw),  # every byte percent-encoded, and every character \u-escaped
                  "".join(f"\\u{ord(c):04x}" for c in secret)}
        encoded: set[str] = set()
        for shift in range(3):
            text = base64.b64encode(b"\0" * shift + raw).decode()
            core = text[4 if shift else 0:4 * ((shift + len(raw)) // 3)]  # the characters that depend on it alone
            encoded.update((core, core.translate(str.maketrans("+/", "-_"))))
        encoded = {v for v in encoded if len(v) >= self.MIN_VARIANT}
        self.variants = sorted({v for v in plain | encoded if len(v) >= self.MIN_VARIANT}, key=len, reverse=True)
        self._folded = sorted({fold(v) for v in self.variants}, key=len, reverse=True)
        self._plain = sorted({fold(v) for v in plain if len(v) >= self.MIN_VARIANT} - {fold(v) for v in encoded})
        self._encoded = sorted({fold(v) for v in encoded})
        self._key = fold(secret)
        size = self.WINDOW
        self._windows: dict[str, list[int]] = {}
        if len(self._key) > self.MIN_FRAGMENT:
            for i in range(0, len(self._key) - size + 1, size):
                self._windows.setdefault(self._key[i:i + size], []).append(i)

    def spans(self, text: str) -> list[Span]:
        """Where the secret is in ``text``, in any form or as a fragment: merged, in order."""
        if len(text) < self.MIN_VARIANT:
            return []
        low = fold(text)
        spans = [(at, at + len(v)) for v in self._plain for at in _finds(low, v)]
        spans += self._fragments(low)
        hits = sorted((at, at + len(v)) for v in self._encoded for at in _finds(low, v))
        if hits:
            reversed_text = text[::-1]
            taken = -1  # the end of the last base64 text taken whole
            for start, end in hits:
                if start < taken:
                    continue
                start -= _BASE64_BEFORE.match(reversed_text, len(text) - start).end() - (len(text) - start)
                taken = _BASE64_AFTER.match(text, end).end()
                spans.append((start, taken))
        return merged(spans)

    def _fragments(self, low: str) -> list[Span]:
        """Runs of MIN_FRAGMENT or more of the key's characters, each grown to the longest run text and key share."""
        out: list[Span] = []
        key = self._key
        for window, offsets in self._windows.items():
            found = _finds(low, window)
            for offset in offsets if found else ():
                reach = -1
                for at in found:
                    if at < reach:  # inside a run already grown from this window
                        continue
                    back = 0
                    while back < min(at, offset) and low[at - back - 1] == key[offset - back - 1]:
                        back += 1
                    ahead = len(window)
                    while offset + ahead < len(key) and at + ahead < len(low) and low[at + ahead] == key[offset + ahead]:
                        ahead += 1
                    if back + ahead >= self.MIN_FRAGMENT:
                        out.append((at - back, at + ahead))
                    reach = at + ahead
        return out

    def redact(self, text: str) -> str:
        spans = self.spans(text)
        if not spans:
            return text
        out, last = [], 0
        for start, end in spans:
            out += (text[last:start], TEXT_MARKER)
            last = end
        out.append(text[last:])
        return "".join(out)

    def scrub(self, value: Any) -> Any:
        """A JSON value with the secret replaced in every string, object keys included."""
        if isinstance(value, str):
            return self.redact(value)
        if isinstance(value, dict):
            return {self.redact(k) if isinstance(k, str) else k: self.scrub(v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [self.scrub(v) for v in value]
        return value

    def partial_at_end(self, text: str) -> int:
        """How many characters at the end of ``text`` could be the start of the secret, in some form
        (or of a fragment of it: the longest tail that is a run of the key's characters)."""
        longest = max(map(len, self._folded), default=0)
        tail = fold(text[-longest:])
        best = 0
        for variant in self._folded:
            first = variant[0]
            at = tail.find(first, max(0, len(tail) - len(variant) + 1))
            while 0 <= at < len(tail) - best:
                if variant.startswith(tail[at:]):
                    best = len(tail) - at
                    break
                at = tail.find(first, at + 1)
        if self._windows:  # the longest tail found somewhere in the key (a tail of it is too: bisect)
            low, high = 0, min(len(tail), len(self._key) - 1)
            while low < high:
                size = (low + high + 1) // 2
                if tail[-size:] in self._key:
                    low = size
                else:
                    high = size - 1
            if low >= self.MIN_HELD_RUN:  # shorter runs of the key are everywhere in prose, and say nothing
                best = max(best, low)
        return best
