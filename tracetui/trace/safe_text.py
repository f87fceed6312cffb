"""Making untrusted trace text safe to put on a terminal: the one path every printed byte takes.

Trace content comes from models and servers. First, every secret the trace file
would redact is redacted here too (``tracetui.trace.redact``), so a file written
by another tool shows no more than one written by tracetui. Then control
characters (ESC, BEL, CR, the C1 range, bidi overrides) are replaced by visible
escapes such as ``\\x1b`` so that no escape sequence, hyperlink (OSC 8) or
carriage-return overwrite ever reaches the terminal. Rich and Textual markup is a
separate concern: the UI renders strings as ``rich.text.Text`` objects (or with
``markup=False``), never parses them as markup.
"""
from __future__ import annotations

import re
from typing import IO, Any

import orjson

from tracetui.trace.redact import holds_needle, redact_text, redact_value

_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
#: what JSON text from orjson may still hold raw: DEL, the C1 range and bidi controls
_UNSAFE_IN_JSON = re.compile("[\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def printable(text: str, keep_newlines: bool = False) -> str:
    """Text bound for a terminal: secrets redacted, every control character a visible escape.

    Tabs become spaces; newlines stay only if asked.
    """
    text = _UNSAFE.sub(_escape, redact_text(text))
    if not keep_newlines:
        text = text.replace("\n", "\\n")
    return text.replace("\t", "    ")


def escape_controls(text: str) -> str:
    """One line of text already redacted whole (a piece of a redacted value): only its control characters
    made visible escapes, as :func:`printable` does. Redacting each piece again would cost as much as
    redacting the whole, once per piece."""
    return _UNSAFE.sub(_escape, text).replace("\t", "    ")


def has_control(text: str) -> bool:
    """Whether text holds a character a terminal acts on (ESC, CR, C1, bidi controls; tabs and newlines aside)."""
    return _UNSAFE.search(text) is not None


#: characters of a text read before it is cut to a width: redaction reads every character it is given (a
#: second for a 15 MB string), and a secret that starts within the width yet is longer than this is longer
#: than any shape listed (a private key block is about 3 KB)
ONE_LINE_MARGIN = 4096


#: printable() of the second part of joined texts (a verdict line after its run id), by the text
_JOINED: dict[str, str] = {}
_JOINED_MAX_ENTRIES, _JOINED_MAX_TEXT = 4096, 4096


def printable_joined(first: str, second: str) -> str:
    """``printable(first + second)``, faster when ``second`` repeats (a million verdict lines name a few
    hundred failures): the two parts are made printable apart when no secret can cross between them,
    and ``second`` is remembered. None can when ``first`` holds nothing a secret's shape begins with
    (every shape that may span white space begins with such a word: ``bearer``, ``password``, ``key``…)
    and ``second`` starts with two white space characters (which break a key block's header)."""
    if (not second[:2].isspace() or len(second) < 2 or len(second) > _JOINED_MAX_TEXT
            or "\\" in first or holds_needle(first)):
        return printable(first + second)
    shown = _JOINED.get(second)
    if shown is None:
        if len(_JOINED) >= _JOINED_MAX_ENTRIES:
            _JOINED.clear()
        shown = _JOINED[second] = printable(second)
    # no needle, no ":" and no backslash (so no escape hiding one): redaction leaves ``first`` as it is
    return escape_controls(first).replace("\n", "\\n") + shown


def redacted_head(text: str, width: int) -> str:
    """A start of ``redact_text(text)`` whose first ``width`` characters are right (or fewer, all right).

    The text is redacted a window at a time, the window doubled until what follows the first ``width``
    characters of its redaction is a margin long: a secret that begins before the cut then ends inside the
    window, even where earlier secrets shrank to the marker and brought later text forward. Past four times
    the first window (a text of long secrets), only the part before the last margin is given: only a secret
    the window's end cut can have lost its shape, and it begins within a margin of that end. What is never
    shown is not redacted either (a second for a 15 MB string)."""
    first = window = width + ONE_LINE_MARGIN
    while True:
        shown = redact_text(text[:window])
        if window >= len(text) or len(shown) >= width + ONE_LINE_MARGIN:
            return shown
        if window >= 4 * first:
            return shown[:max(0, len(shown) - ONE_LINE_MARGIN)]
        window *= 2


def redacted_prefix(text: str, width: int) -> str:
    """The first ``width`` characters of ``text`` redacted, for a text cut short in a message: a secret cut
    first has lost its shape (``sk-proj-A1b2…``) and passes every later redaction, though its start shows."""
    return redacted_head(text, width)[:width]


def cut_text(text: str, limit: int) -> str:
    """``text`` in at most ``limit`` characters, ``…`` ending a cut: redacted before it is cut (and before any
    ``repr`` of it, whose escapes would hide a keyed secret), the same text where there is nothing to redact."""
    if len(text) <= limit:
        return redact_text(text)
    return redacted_prefix(text, limit - 1) + "…"


def one_line(text: str, width: int | None = None) -> str:
    if width is not None and len(text) > width + ONE_LINE_MARGIN:
        text = redacted_head(text, width)  # (what is never shown is not redacted either)
    text = printable(text)
    if width is not None and len(text) > width:
        return text[: max(0, width - 1)] + "…"
    return text


def printable_json(value: Any, indent: bool = True) -> str:
    """A JSON document bound for a terminal: redacted like a trace line, and still valid JSON.

    Control characters inside strings are JSON escapes (``\\u009b``), which a
    terminal shows as text.
    """
    redacted = redact_value(value)
    try:
        text = orjson.dumps(redacted, option=orjson.OPT_INDENT_2 if indent else 0).decode()
    except orjson.JSONEncodeError:  # a lone surrogate (a file name that is not UTF-8): escaped, the same layout
        import json

        text = json.dumps(redacted, indent=2 if indent else None, separators=None if indent else (",", ":"))
    return json_for_terminal(text)


def json_for_terminal(text: str) -> str:
    """JSON text (from orjson) with what it leaves raw and a terminal acts on written as JSON escapes: the same JSON."""
    return _UNSAFE_IN_JSON.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


#: the UTF-8 bytes of what orjson leaves raw in JSON text and a terminal acts on: DEL, C1, bidi controls
_UNSAFE_JSON_BYTES = re.compile(rb"\x7f|\xc2[\x80-\x9f]|\xe2\x80[\xaa-\xae]|\xe2\x81[\xa6-\xa9]")


class TerminalJsonLines:
    """JSON lines (a trace, OTLP/JSON) bound for a terminal: the same JSON values, with DEL, C1 and bidi
    controls in strings written as JSON escapes (``\\u009b``), which a terminal shows as text.

    Wraps a binary stream that is written whole lines at a time.
    """

    def __init__(self, out: IO[bytes]) -> None:
        self.out = out

    def write(self, data: bytes) -> int:
        self.out.write(_UNSAFE_JSON_BYTES.sub(lambda m: b"\\u%04x" % ord(m.group().decode()), data))
        return len(data)

    def flush(self) -> None:
        self.out.flush()


def json_lines_out(stream: IO[str]) -> IO[bytes]:
    """Where to write JSON lines for a text stream such as ``sys.stdout``: its bytes, made safe when it is a terminal
    (a pipe or a file gets the bytes the trace file would hold)."""
    out = stream.buffer  # type: ignore[attr-defined]
    return TerminalJsonLines(out) if stream.isatty() else out  # type: ignore[return-value]
