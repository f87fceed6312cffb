"""Best-effort secret redaction: trace lines, terminal text, and the API key a server echoes.

Lines are redacted as JSON text rather than by walking objects, so a line costs a
few regex passes (``tracetui.trace.secret_shapes`` holds the patterns and says
what they catch). Matching runs on a lowercased copy (same byte offsets, and a
case-sensitive pattern is several times faster than ``re.IGNORECASE``); the
replacements are spliced into the original. The marker replaces a whole token
and never quotes any part of the secret. It cannot prove free text is clean.

Text bound for a terminal is redacted as the file would redact it: as a JSON
string (:func:`redact_text`). A key known in advance (the live run's API key) is
caught in every form a server might echo it (:class:`KnownSecret`), also when it
is split across stream events (:func:`redact_events`) or still arriving
(:class:`StreamRedactor`).
"""
from __future__ import annotations

import base64
import json
import re
from typing import Any, Iterable
from urllib.parse import quote, quote_plus

import orjson

from tracetui.trace.secret_shapes import (ALL_NEEDLES, ASCII_ESCAPE, EDIT_OF_CREDENTIAL, ESCAPED_KEYED,
                                          CREDENTIAL_WORD, KEY_NAME, KEYED, SHAPES)

MARKER = b"<redacted>"
_ANY_NEEDLE = re.compile(b"|".join(map(re.escape, ALL_NEEDLES)))
TEXT_MARKER = MARKER.decode()
Span = tuple[int, int]


def is_credential_key(key: str) -> bool:
    """Whether a JSON key names a credential (some tail of it does: ``x-api-key``, ``db_pass``)."""
    return KEY_NAME.search(key.strip().lower().encode()) is not None


def _walk(value: Any) -> Any:
    """Objects and lists under credential keys, and values of edits to credential fields, become the marker."""
    if isinstance(value, dict):
        out = {k: TEXT_MARKER if is_credential_key(k) and isinstance(v, (dict, list)) else _walk(v)
               for k, v in value.items()}
        path = value.get("path")
        if isinstance(out.get("value"), (str, dict, list)) and isinstance(path, str) \
                and is_credential_key(_last_segment(path)):  # as under a credential key: numbers stay
            out["value"] = TEXT_MARKER
        return out
    if isinstance(value, list):
        return [_walk(v) for v in value]
    if isinstance(value, str) and value.lstrip(_TEXT_SPACE)[:1] in ('{', '[', '"'):
        return _redact_json_text(value)
    return value


#: what may come before a JSON text held in a string: white space, a byte order mark
_TEXT_SPACE = " \t\r\n\ufeff"
#: a JSON string, escapes and all: the strings of a JSON text, found in order, never misaligned (outside
#: its strings a JSON text holds no quote)
_JSON_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)
_KEY_COLON = re.compile(r"\s*:\s*")
_JSON_DECODER = json.JSONDecoder()
_MAX_TEXT_DEPTH = 16


def _redact_json_text(text: str, depth: int = 0) -> str:
    """A string holding a JSON text (tool arguments arrive so): every object or list under a credential
    key in it replaced by the marker, at any depth and however its keys are written (escapes, space
    before the colon), and the same in the JSON texts its own strings hold. Only what is replaced
    changes: the rest (numbers, spacing, key order, text that does not parse) stays as written."""
    if depth > _MAX_TEXT_DEPTH:
        return text
    stripped = text.lstrip(_TEXT_SPACE)
    if stripped[:1] == '"':  # a JSON text that is one string (arguments encoded twice)
        try:
            inner = json.loads(stripped)
        except ValueError:
            return text
        if isinstance(inner, str):
            redacted = _redact_json_text(inner, depth + 1)
            if redacted != inner:
                return text[:len(text) - len(stripped)] + json.dumps(redacted, ensure_ascii=False)
        return text
    out: list[str] = []
    last = 0
    for m in _JSON_STRING.finditer(text):
        if m.start() < last:  # inside a value already replaced
            continue
        try:
            decoded = json.loads(m.group())
        except ValueError:
            continue
        colon = _KEY_COLON.match(text, m.end())
        if colon is not None and colon.end() < len(text) and text[colon.end()] in "{[" and is_credential_key(decoded):
            # (a key: its value an object or list under a credential name)
            try:
                _, end = _JSON_DECODER.raw_decode(text, colon.end())
            except ValueError:
                continue
            out += [text[last:colon.end()], TEXT_MARKER.join('""')]
            last = end
        elif colon is None and decoded.lstrip(_TEXT_SPACE)[:1] in ('{', '[', '"'):  # a value: a JSON text in it?
            redacted = _redact_json_text(decoded, depth + 1)
            if redacted != decoded:
                out += [text[last:m.start()], json.dumps(redacted, ensure_ascii=False)]
                last = m.end()
    if not out:
        return text
    out.append(text[last:])
    return "".join(out)


def _last_segment(pointer: str) -> str:
    return pointer.rsplit("/", 1)[-1].replace("~1", "/").replace("~0", "~")


def _redact_structure(line: bytes) -> bytes:
    """Replace whole objects or lists under credential keys, and edited credential values.

    ``line`` may be a line's tail after its run id (``,"k":…}``): the keys it
    holds, read as an object of their own (``{"k":…}``), so no placeholder key can
    collide with a real one.
    """
    tail = line.startswith(b",")
    try:
        parsed = orjson.loads(b"{" + line[1:] if tail else line)
    except orjson.JSONDecodeError:
        return line
    out = orjson.dumps(_walk(parsed))
    return b"," + out[1:] if tail else out


def _matches(line: bytes, low: bytes, keyed: list[re.Match[bytes]] | None = None) -> list[Span]:
    """Spans of every secret in a JSON text (``low`` is ``line.lower()``), unsorted, possibly overlapping.

    ``keyed``: the matches of ``KEYED`` in ``low``, when already found.
    """
    spans: list[Span] = []
    if b'":' in low:
        keyed = KEYED.finditer(low) if keyed is None else keyed
        spans += [m.span("s") for m in keyed if m.start("s") >= 0]
        if b'\\":' in low:
            spans += [m.span("s") for m in ESCAPED_KEYED.finditer(low)]
    if _ANY_NEEDLE.search(low) is None:  # most short texts (a run id, a word) hold no needle at all
        return spans
    present = {needle for needle in ALL_NEEDLES if needle in low}
    for shape in SHAPES:
        if not present.isdisjoint(shape.needles):
            for m in shape.pattern.finditer(low):
                if shape.check is None or shape.check(line[m.start():m.end()]):
                    spans.append(m.span("s") if "s" in shape.pattern.groupindex else m.span())
    return spans


def _spans(line: bytes, low: bytes, keyed: list[re.Match[bytes]] | None = None) -> list[Span]:
    """Like :func:`_matches`, also through ``\\u0073``-style escapes written out as text."""
    spans = _matches(line, low, keyed)
    if b"u00" in low and ASCII_ESCAPE.search(low):
        decoded, offsets = _decode_ascii_escapes(line, low)
        spans += [(offsets[s], offsets[e]) for s, e in _matches(decoded, decoded.lower())]
    return spans


def _decode_ascii_escapes(line: bytes, low: bytes) -> tuple[bytes, list[int]]:
    """``line`` with escapes of printable ASCII decoded, and each decoded byte's offset in ``line`` (plus its end)."""
    pieces: list[bytes] = []
    offsets: list[int] = []
    last = 0
    for m in ASCII_ESCAPE.finditer(low):
        char = bytes((int(m.group(1), 16),))
        if char in b'"\\':  # a quote or backslash would change the JSON structure: left as written
            continue
        pieces.append(line[last:m.start()])
        offsets.extend(range(last, m.start()))
        pieces.append(char)
        offsets.append(m.start())
        last = m.end()
    pieces.append(line[last:])
    offsets.extend(range(last, len(line) + 1))
    return b"".join(pieces), offsets


def _merged(spans: Iterable[Span]) -> list[Span]:
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


def redact_line(line: bytes) -> bytes:
    """A JSON line (or a part of one, see ``tracetui.trace.writer``) with every secret replaced by the marker."""
    low = line.lower()
    keyed = list(KEYED.finditer(low)) if b'":' in low else []
    if (any(m.start("c") >= 0 for m in keyed) or (b'"path":' in low and EDIT_OF_CREDENTIAL.search(low))
            or (b'\\"' in low and (b"\\u00" in low or CREDENTIAL_WORD.search(low.replace(b"\\", b""))))):
        # (the last: a JSON text inside a string that may hold a credential key, its escapes aside)
        line = _redact_structure(line)
        low = line.lower()
        keyed = list(KEYED.finditer(low))
    spans = _merged(_spans(line, low, keyed))
    if not spans:
        return line
    out, last = [], 0
    for start, end in spans:
        out.append(line[last:start])
        out.append(MARKER)
        last = end
    out.append(line[last:])
    return b"".join(out)


def _as_json(text: str) -> bytes:
    try:
        return orjson.dumps(text)
    except orjson.JSONEncodeError:  # a lone surrogate (an undecodable file name): escaped instead
        return json.dumps(text).encode()


def holds_needle(text: str) -> bool:
    """Whether ``text`` holds anything a secret's shape begins with (or a ``:``/``=`` a keyed value follows)."""
    low = text.lower().encode("utf-8", "surrogatepass")
    return _ANY_NEEDLE.search(low) is not None or b":" in low


def redact_text(text: str) -> str:
    """Text with every secret the trace file would redact in it replaced (it is redacted as a JSON string)."""
    encoded = _as_json(text)
    redacted = redact_line(encoded)
    return text if redacted is encoded else orjson.loads(redacted)


def redact_value(value: Any) -> Any:
    """A JSON value as the trace file would hold it: redacted (for JSON printed on a terminal)."""
    return orjson.loads(redact_line(orjson.dumps(value)))


def redact_field(key: str, value: Any) -> Any:
    """A value as the trace file would hold it under ``key``: what a credential key holds becomes the marker.

    For a value shown apart from its key (a tree row, an editor), where text alone cannot tell.
    """
    return redact_value({key: value})[key] if is_credential_key(key) else value


def text_spans(text: str) -> list[Span]:
    """Where the secrets in ``text`` are, as character offsets, merged and in order."""
    encoded = _as_json(text)
    spans = _merged(_spans(encoded, encoded.lower()))
    return [(_char_offset(encoded, s), _char_offset(encoded, e)) for s, e in spans]


def _char_offset(encoded: bytes, offset: int) -> int:
    """The character offset in the decoded string of a byte offset in its JSON encoding."""
    for cut in range(max(offset, 1), 0, -1):  # a span edge inside an escape: the escape's start
        try:
            return len(orjson.loads(encoded[:cut] + b'"'))
        except orjson.JSONDecodeError:
            continue
    return 0


class KnownSecret:
    """One secret known in advance, in every form a server may echo it.

    The key as it is, in any letter case, URL-encoded, as hex, and as base64
    (standard or URL-safe, alone or inside a longer base64 text such as a
    ``Basic`` credential, at each of its three alignments).
    """

    MIN_VARIANT = 12  # shorter forms could match by chance

    def __init__(self, secret: str):
        raw = secret.encode()
        plain = {secret, quote(secret, safe=""), quote_plus(secret), raw.hex(), secret.replace("/", "\\/")}
        encoded: set[str] = set()
        for shift in range(3):
            text = base64.b64encode(b"\0" * shift + raw).decode()
            core = text[4 if shift else 0:4 * ((shift + len(raw)) // 3)]  # the characters that depend on it alone
            encoded.update((core, core.translate(str.maketrans("+/", "-_"))))
        encoded = {v for v in encoded if len(v) >= self.MIN_VARIANT}
        self.variants = sorted({v for v in plain | encoded if len(v) >= self.MIN_VARIANT}, key=len, reverse=True)
        self._folded = [v.lower() for v in self.variants]
        # an encoded form is one part of a longer base64 text: the marker takes the whole of that text
        forms = [f"[A-Za-z0-9+/_-]*{re.escape(v)}[A-Za-z0-9+/_=-]*" for v in sorted(encoded, key=len, reverse=True)]
        forms += [re.escape(v) for v in sorted(plain - encoded, key=len, reverse=True) if len(v) >= self.MIN_VARIANT]
        self._pattern = re.compile("|".join(forms), re.IGNORECASE)

    def spans(self, text: str) -> list[Span]:
        return [m.span() for m in self._pattern.finditer(text)]

    def redact(self, text: str) -> str:
        return self._pattern.sub(TEXT_MARKER, text)

    def scrub(self, value: Any) -> Any:
        """A JSON value with the secret replaced in every string, object keys included."""
        if isinstance(value, str):
            return self.redact(value)
        if isinstance(value, dict):
            return {self.redact(k): self.scrub(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self.scrub(v) for v in value]
        return value

    def partial_at_end(self, text: str) -> int:
        """How many characters at the end of ``text`` could be the start of the secret, in some form."""
        tail = text[-max(map(len, self.variants), default=0):].lower()
        best = 0
        for variant in self._folded:
            for size in range(min(len(variant) - 1, len(tail)), best, -1):
                if tail.endswith(variant[:size]):
                    best = size
                    break
        return best


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
    for start, end in _merged(spans):
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


#: a token still arriving at the end of streamed text
_TRAILING_TOKEN = re.compile(r"[^\s\"'`\\<>,;()\[\]{}|]*\Z")
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

    def __init__(self, known: KnownSecret | None = None):
        self.known = known
        self.context = ""
        self.pending = ""

    def feed(self, delta: str) -> str:
        self.pending += delta
        return self._emit(final=False)

    def close(self) -> str:
        return self._emit(final=True)

    def _emit(self, final: bool) -> str:
        text = self.context + self.pending
        start = len(self.context)
        spans = _merged(text_spans(text) + (self.known.spans(text) if self.known is not None else []))
        cut = len(text) if final or len(self.pending) > self.MAX_HELD else max(start, self._safe_cut(text, spans))
        out, pos = [], start
        for s, e in spans:
            if e <= pos or s >= cut:
                continue
            out += (text[pos:max(s, pos)], TEXT_MARKER)
            pos = min(e, cut)
        out.append(text[pos:cut])
        self.context, self.pending = text[:cut][-self.CONTEXT:], text[cut:]
        return "".join(out)

    def _safe_cut(self, text: str, spans: list[Span]) -> int:
        cut = len(text)
        token = _TRAILING_TOKEN.search(text).start()
        tail = text[token:]
        if tail and (not tail.isalpha() or len(tail) >= 16 or _LEAD_IN.search(text, max(0, token - 40), token)):
            cut = token
        if self.known is not None:
            cut = min(cut, len(text) - self.known.partial_at_end(text))
        changed = True
        while changed:  # a match that reaches the end may grow; one across the cut must not be split
            changed = False
            for s, e in spans:
                if s < cut and (e >= len(text) or cut < e):
                    cut, changed = s, True
        return cut
