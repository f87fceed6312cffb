"""The one path trace text takes into the HTML page: redacted, control characters made visible, HTML-escaped.

Trace content is untrusted (a model or a server wrote it), so every string from it passes
:func:`text` (or :func:`json_text` for a JSON value) before it reaches the page, in an
element's content or in a quoted attribute alike. Nothing from a trace ever goes into a
URL, a style or a script: links point only at anchors this package numbers itself.
"""
from __future__ import annotations

import html
import shlex
from typing import Any

import orjson

from tracetui.trace.redact import redact_text, redact_value
from tracetui.trace.safe_text import ONE_LINE_MARGIN, escape_controls, printable, redacted_head

#: the most of one JSON value a page shows (a whole recorded response of a long run can be megabytes)
MAX_JSON_CHARS = 100_000


def text(value: Any, keep_newlines: bool = False) -> str:
    """Any value as page text: redacted and control characters escaped (as the terminal shows it), then
    HTML-escaped with quotes, so it is safe in content and in a double- or single-quoted attribute."""
    return html.escape(printable(value if isinstance(value, str) else str(value), keep_newlines), quote=True)


def clipped_text(value: Any, limit: int) -> str:
    """:func:`text` of at most ``limit`` characters of ``value``, saying how many more there are. Redacted
    before it is cut (a key that begins before the cut is caught whole, not shown in part), reading only
    a margin past the cut (what is never shown is not redacted either)."""
    shown = "" if value is None else value if isinstance(value, str) else str(value)
    if len(shown) <= limit:
        return text(shown)
    redacted = printable(redacted_head(shown, limit))
    return text(redacted[:limit]) + html.escape(f"… ({len(shown) - limit:,} more characters)")


def _bounded(value: Any, room: list[int]) -> Any:
    """A copy of ``value`` holding about ``room[0]`` characters of it (strings cut a margin past what is
    shown): its keys and shape kept, so redaction still sees which key holds what."""
    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            if room[0] <= 0:
                break
            room[0] -= len(str(key)) + 4
            out[key] = _bounded(item, room)
        return out
    if isinstance(value, list):
        items = []
        for item in value:
            if room[0] <= 0:
                break
            items.append(_bounded(item, room))
        return items
    if isinstance(value, str):
        cut = value[:max(0, room[0]) + ONE_LINE_MARGIN]
        room[0] -= len(cut) + 2
        return cut
    room[0] -= 8
    return value


def json_text(value: Any, limit: int = MAX_JSON_CHARS) -> str:
    """A JSON value as the trace writer would hold it (redacted), indented, cut at ``limit``, HTML-escaped.

    A big value is cut before it is redacted (a copy of its first ``limit`` characters or so, keys kept),
    so a page of 16 MB values costs what the page shows, not what the trace holds."""
    option = orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS
    try:
        whole = len(orjson.dumps(value, option=option))
        raw = orjson.dumps(redact_value(_bounded(value, [limit]) if whole > limit else value), option=option).decode()
    except (TypeError, orjson.JSONEncodeError):
        return clipped_text(repr(value), limit)
    if whole > limit:
        raw = raw[:limit] + f"\n… about {whole - limit:,} more characters (tracetui open FILE shows the whole value)"
    return html.escape(escape_controls(raw), quote=True)


def shell_line(*args: str) -> str:
    """A command for the reader to paste, as page text: each argument redacted, then quoted for a POSIX shell
    (trace content such as a run id ``x; curl …|sh`` stays one argument), a file that starts with ``-``
    written ``./-…`` so it is not read as an option."""
    words = [f"./{a}" if n == 2 and a.startswith("-") else a for n, a in enumerate(args)]
    return text(" ".join(shlex.quote(redact_text(w)) for w in words))
