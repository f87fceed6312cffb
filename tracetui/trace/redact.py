"""Best-effort secret redaction: trace lines, terminal text, and the API key a server echoes.

Lines are redacted as JSON text rather than by walking objects, so a line costs a
few regex passes (``tracetui.trace.secret_shapes`` holds the patterns and says
what they catch), plus gitleaks' rules for particular services
(``tracetui.trace.gitleaks_rules``); one RE2 set of their literals tells which to
try. Matching runs on a lowercased copy (same byte offsets, and a
case-sensitive pattern is several times faster than ``re.IGNORECASE``; the rules
read the original case); the replacements are spliced into the original. The marker replaces a whole token
and never quotes any part of the secret. It cannot prove free text is clean.

Text bound for a terminal is redacted as the file would redact it: as a JSON
string (:func:`redact_text`). A key known in advance (the live run's API key) is
caught in every form a server might echo it
(:class:`tracetui.trace.known_secret.KnownSecret`), also when it is split across
stream events or still arriving (``tracetui.trace.stream_redact``).
"""
from __future__ import annotations

import json
import re
from typing import Any

import orjson

import re2

from tracetui.trace.gitleaks_rules import RULES, Rule, TextFacts, findings
from tracetui.trace.known_secret import merged
from tracetui.trace.secret_shapes import (ASCII_ESCAPE, EDIT_OF_CREDENTIAL, ESCAPED_KEYED, CREDENTIAL_WORD, KEY_NAME,
                                          HEADER_OF_CREDENTIAL,
                                          KEYED, SHAPES, Shape, may_name_credential)

MARKER = b"<redacted>"
TEXT_MARKER = MARKER.decode()
Span = tuple[int, int]


def _needle_set() -> tuple[re2.Set, list[tuple[tuple[Shape, ...], tuple[Rule, ...]]]]:
    """One RE2 set of every literal a shape or a gitleaks rule needs (one pass over a text finds which it holds),
    and for each literal the shapes and rules it lets through; a shape with no literal gives a regex instead
    (:attr:`~.secret_shapes.Shape.near`)."""
    users: dict[bytes, tuple[list[Shape], list[Rule]]] = {}
    for shape in SHAPES:
        for needle in shape.needles:
            users.setdefault(re2.escape(needle), ([], []))[0].append(shape)
        if shape.near is not None:  # (a regex, not a literal)
            users.setdefault(shape.near, ([], []))[0].append(shape)
    for rule in RULES:
        for keyword in rule.keywords:
            users.setdefault(re2.escape(keyword), ([], []))[1].append(rule)
    needles = re2.Set.SearchSet(re2.Options())
    table = []
    for needle, (shapes, rules) in users.items():
        needles.Add(needle)
        table.append((tuple(shapes), tuple(rules)))
    needles.Compile()
    return needles, table


_NEEDLES, _USERS = _needle_set()
_SHAPE_ORDER = {shape: n for n, shape in enumerate(SHAPES)}


def _triggered(low: bytes) -> tuple[list[Shape], list[Rule]]:
    """The shapes and gitleaks rules whose literals ``low`` holds, in a fixed order."""
    found = _NEEDLES.Match(low)
    if not found:
        return [], []
    shapes: dict[Shape, None] = {}
    rules: dict[Rule, None] = {}
    for n in found:
        shapes.update(dict.fromkeys(_USERS[n][0]))
        rules.update(dict.fromkeys(_USERS[n][1]))
    return sorted(shapes, key=_SHAPE_ORDER.__getitem__), list(rules)


def is_credential_key(key: str) -> bool:
    """Whether a JSON key names a credential (some tail of it does: ``x-api-key``, ``db_pass``)."""
    return KEY_NAME.search(key.strip().lower().encode()) is not None


def _walk(value: Any) -> Any:
    """Objects and lists under credential keys, and values of edits to credential fields, become the marker."""
    if isinstance(value, dict):
        out = {k: TEXT_MARKER if is_credential_key(k) and isinstance(v, (dict, list)) else _walk(v)
               for k, v in value.items()}
        name = value.get("name")
        if isinstance(name, str) and isinstance(out.get("value"), str) and is_credential_key(name):
            out["value"] = TEXT_MARKER  # a HAR-style header: {"name": "X-Api-Token", "value": "…"}
        path = value.get("path")
        if isinstance(out.get("value"), (str, dict, list)) and isinstance(path, str) \
                and is_credential_key(_last_segment(path)):  # as under a credential key: numbers stay
            out["value"] = TEXT_MARKER
        return out
    if isinstance(value, list):
        if value and all(_is_pair(v) for v in value):  # a header list: [["X-Auth-Token", "…"], …]
            return [[v[0], TEXT_MARKER] if is_credential_key(v[0]) else _walk(v) for v in value]
        return [_walk(v) for v in value]
    if isinstance(value, str) and value.lstrip(_TEXT_SPACE)[:1] in ('{', '[', '"'):
        return _redact_json_text(value)
    return value


def _is_pair(value: Any) -> bool:
    return isinstance(value, list) and len(value) == 2 and isinstance(value[0], str) and isinstance(value[1], str)


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
            except ValueError:  # it never closes (a text cut short, for a message): all that follows is its
                end = len(text)
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


def _matches(line: bytes, low: bytes, keyed: list[re.Match[bytes]] | None = None, after: int = 0,
             named: bool | None = None) -> list[Span]:
    """Spans of every secret in a JSON text (``low`` is ``line.lower()``), unsorted, possibly overlapping.

    ``keyed``: the matches of ``KEYED`` in ``low``, when already found. ``after``: gitleaks' findings that end at or
    before this offset may be left out (text already shown). ``named``: :func:`may_name_credential` of ``low``,
    when already known.
    """
    spans: list[Span] = []
    if b'":' in low and (may_name_credential(low) if named is None else named):
        keyed = KEYED.finditer(low) if keyed is None else keyed
        spans += [m.span("s") for m in keyed if m.start("s") >= 0 and not _logprob_token(low, m)]
        if b'\\":' in low:
            spans += [m.span("s") for m in ESCAPED_KEYED.finditer(low)]
    shapes, rules = _triggered(low)  # most texts (a run id, a word) hold no needle at all
    if not shapes and not rules:
        return spans
    view = line
    if b"\\" in low:  # a tab or line break before a token is white space to the shapes, as in the text
        view, low = _spaced(line), _spaced(low)
    for shape in shapes:
        for m in shape.pattern.finditer(low):
            if shape.check is None or shape.check(view[m.start():m.end()]):
                spans.append(m.span("s") if "s" in shape.pattern.groupindex else m.span())
    if rules:
        quoted = _quotes_as_text(view) if b'\\"' in view else view
        facts = TextFacts(line)  # (its strings and lines found once for every rule)
        for rule in rules:
            spans += findings(rule, line, quoted, facts, after)
    return spans


def _logprob_token(low: bytes, m: re.Match[bytes]) -> bool:
    """A model's token in a logprobs entry (``{"token":"Hello","logprob":-0.1}``), not a credential: left to the
    shapes and rules, like any text."""
    return (low.startswith(b'token"', m.start()) and low[m.start() - 1:m.start()] == b'"'
            and low.startswith(b',"logprob":', m.end()))


def _spaced(line: bytes) -> bytes:
    """A JSON text with its ``\\n``, ``\\r`` and ``\\t`` escapes written as the white space they stand for, once
    per byte (same offsets; a JSON text holds no raw control character, so nothing else changes): what comes
    after one starts a word, for a shape's "not after a letter" and a rule's ``\\b`` alike. Without an escaped
    backslash each escape is two bytes, replaced in C (a callback per escape cost most of redacting a
    traceback)."""
    if b"\\\\" not in line:
        return line.replace(b"\\n", b"\n\n").replace(b"\\r", b"\r\r").replace(b"\\t", b"\t\t")
    return _ESCAPED_SPACE.sub(_as_space, line)


def _quotes_as_text(view: bytes) -> bytes:
    """A view in which an escaped quote (a quote of the text, ``\\"``) reads as quotes, as gitleaks' rules expect
    around a value; which quotes are the line's own is told from the line itself (``gitleaks_rules``). The
    backslashes before it read as white space, so a key in JSON text held in a string (``\\\"mailgun\\\": …``)
    is as near its value as gitleaks' rules allow (at most three quote characters around the separator)."""
    if b"\\\\" not in view:  # each escaped quote is two bytes: replaced in C
        return view.replace(b'\\"', b" '")
    return _ESCAPED_QUOTE.sub(lambda m: b" " * (m.end() - m.start() - 1) + b"'", view)


_ESCAPED_QUOTE = re.compile(rb'\\+"')
#: a white space escape, at any depth of escaping (``\\n``, ``\\\\n`` in JSON held in a string)
_ESCAPED_SPACE = re.compile(rb"\\+[nrt]")
_SPACE_OF = {ord("n"): b"\n", ord("r"): b"\r", ord("t"): b"\t"}


def _as_space(m: re.Match[bytes]) -> bytes:
    return _SPACE_OF[m.group()[-1]] * (m.end() - m.start())


def _spans(line: bytes, low: bytes, keyed: list[re.Match[bytes]] | None = None, after: int = 0,
           named: bool | None = None) -> list[Span]:
    """Like :func:`_matches`, also through ``\\u0073``-style escapes written out as text, and through percent-encoded
    separators (``password%3D…`` in a URL held in another's query)."""
    spans = _matches(line, low, keyed, after, named)
    if b"u00" in low and ASCII_ESCAPE.search(low):
        decoded, offsets = _decode_ascii_escapes(line, low)
        spans += [(offsets[s], offsets[e]) for s, e in _matches(decoded, decoded.lower())]
    if b"%3d" in low or b"%3a" in low:  # the same length, so the same offsets
        spans += _matches(_percent_separators(line), _percent_separators(low), None, after)
    return spans


def _percent_separators(text: bytes) -> bytes:
    """``text`` with ``%3D`` and ``%3A`` (``=`` and ``:`` percent-encoded) read as the separator and two spaces."""
    for encoded, plain in ((b"%3d", b"=  "), (b"%3D", b"=  "), (b"%3a", b":  "), (b"%3A", b":  ")):
        text = text.replace(encoded, plain)
    return text


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


def redact_line(line: bytes) -> bytes:
    """A JSON line (or a part of one, see ``tracetui.trace.writer``) with every secret replaced by the marker."""
    low = line.lower()
    named = may_name_credential(low)  # (most lines name no credential: none of the key patterns is tried on them)
    keyed = list(KEYED.finditer(low)) if named and b'":' in low else []
    if named and (any(m.start("c") >= 0 for m in keyed) or (b'"path":' in low and EDIT_OF_CREDENTIAL.search(low))
            or ((b'[["' in low or b'"name":' in low) and HEADER_OF_CREDENTIAL.search(low))
            or (b'\\"' in low and (b"\\u00" in low or CREDENTIAL_WORD.search(low.replace(b"\\", b""))))):
        # (the last: a JSON text inside a string that may hold a credential key, its escapes aside)
        line = _redact_structure(line)
        low = line.lower()
        keyed = list(KEYED.finditer(low))
        named = may_name_credential(low)
    spans = merged(_spans(line, low, keyed, named=named))
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
    """Whether ``text`` holds a needle of a secret's shape (what it begins with, or a part every match holds) or a ``:``/``=`` a keyed value follows."""
    low = text.lower().encode("utf-8", "surrogatepass")
    return b":" in low or bool(_NEEDLES.Match(low))


def redact_text(text: str) -> str:
    """Text with every secret the trace file would redact in it replaced (it is redacted as a JSON string)."""
    encoded = _as_json(text)
    redacted = redact_line(encoded)
    return text if redacted is encoded else _loads(redacted)


def _loads(data: bytes) -> Any:
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:  # a lone surrogate, escaped by _as_json: json reads it back
        return json.loads(data)


def redact_value(value: Any) -> Any:
    """A JSON value as the trace file would hold it: redacted (for JSON printed on a terminal)."""
    try:
        encoded = orjson.dumps(value)
    except orjson.JSONEncodeError:  # a lone surrogate (an undecodable file name): escaped instead
        encoded = json.dumps(value, separators=(",", ":")).encode()
    return _loads(redact_line(encoded))


def redact_field(key: str, value: Any) -> Any:
    """A value as the trace file would hold it under ``key``: what a credential key holds becomes the marker.

    For a value shown apart from its key (a tree row, an editor), where text alone cannot tell.
    """
    return redact_value({key: value})[key] if is_credential_key(key) else value


def text_spans(text: str, after: int = 0) -> list[Span]:
    """Where the secrets in ``text`` are, as character offsets, merged and in order.

    ``after``: a character offset; secrets that end at or before it may be left out (text already shown).
    """
    encoded = _as_json(text)
    after_byte = len(_as_json(text[:after])) - 1 if after > 0 else 0
    spans = merged(_spans(encoded, encoded.lower(), after=after_byte))
    if not spans:
        return []
    if len(encoded) == len(text) + 2:  # nothing escaped, nothing beyond ASCII: a byte is a character
        return [(max(s - 1, 0), min(e - 1, len(text))) for s, e in spans]
    offsets = _char_offsets(encoded, sorted({edge for span in spans for edge in span}))
    return [(offsets[s], offsets[e]) for s, e in spans]


def _char_offsets(encoded: bytes, edges: list[int]) -> dict[int, int]:
    """The character offset in the decoded string of each byte offset (ascending) in its JSON encoding.

    Each edge is reached by decoding only the bytes since the one before, so the
    whole costs one pass over the text however many secrets it holds.
    """
    out: dict[int, int] = {}
    done_bytes, done_chars = 1, 0  # just after the opening quote
    for edge in edges:
        for cut in range(max(edge, 1), done_bytes - 1, -1):  # an edge inside an escape: the escape's start
            try:
                done_chars += len(_loads(b'"' + encoded[done_bytes:cut] + b'"'))
            except ValueError:  # (orjson's error is one too) an edge inside an escape
                continue
            done_bytes = cut
            break
        out[edge] = done_chars
    return out
