"""Best-effort secret redaction on serialized trace lines.

It works on the JSON text (one regex pass per line, in C) rather than walking
objects, so it costs little on the hot path. Values under credential-like keys and
strings shaped like API keys or bearer tokens become ``<redacted>``; the marker
never quotes any part of the secret. It cannot prove free text is clean.
"""
from __future__ import annotations

import re

MARKER = b"<redacted>"
_KEY = (rb"[A-Za-z0-9_\-]*(?:api[_\-]?key|authorization|cookie|password|passwd|secret|"
        rb"access[_\-]?token|refresh[_\-]?token|id[_\-]?token|session[_\-]?token|bearer|auth[_\-]?token)"
        rb"[A-Za-z0-9_\-]*|token")
_KEYED_STRING = re.compile(rb'"(' + _KEY + rb')":"(?:[^"\\]|\\.)*"', re.IGNORECASE)
_PATTERNS = re.compile(
    rb"(?:Bearer|Basic)\s+[A-Za-z0-9._~+/=\-]{8,}"
    rb"|sk-(?:ant-|proj-)?[A-Za-z0-9_\-]{16,}"
    rb"|AIza[0-9A-Za-z_\-]{30,}"
    rb"|gh[pousr]_[A-Za-z0-9]{20,}"
    rb"|xox[abprs]-[A-Za-z0-9\-]{10,}"
    rb"|AKIA[0-9A-Z]{16}"
)


def redact_line(line: bytes) -> bytes:
    if b'"' not in line:
        return line
    line = _KEYED_STRING.sub(lambda m: b'"' + m.group(1) + b'":"' + MARKER + b'"', line)
    return _PATTERNS.sub(MARKER, line)


def redact_text(text: str) -> str:
    return _PATTERNS.sub(MARKER, text.encode()).decode()
