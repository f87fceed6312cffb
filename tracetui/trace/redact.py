"""Best-effort secret redaction on serialized trace lines.

It works on the JSON text rather than walking objects, so it costs one regex pass
per line. Matching runs on a lowercased copy (same byte offsets, and a
case-sensitive pattern is several times faster than ``re.IGNORECASE``); the
replacements are spliced into the original. Values under credential-like keys
and strings shaped like API keys or bearer tokens become ``<redacted>``; the
marker never quotes any part of the secret. It cannot prove free text is clean.
"""
from __future__ import annotations

import re
from typing import Any

import orjson

MARKER = b"<redacted>"
_CREDENTIAL_KEY = rb'(?:api[_\-]?key|authorization|cookie|password|passwd|secret|token|bearer)[a-z0-9_\-]*|auth'
# a string value under a key that names a credential ("api_key", "x-api-key", "set-cookie", ...)
_KEYED = re.compile(rb'(?:' + _CREDENTIAL_KEY + rb')":"((?:[^"\\]|\\.)*)"')
# an object or list under such a key: rare, handled by walking the parsed line
_KEYED_CONTAINER = re.compile(rb'(?:' + _CREDENTIAL_KEY + rb')":[\[{]')
_KEY_NAME = re.compile(_CREDENTIAL_KEY.decode() + "$")
# a token by its shape, anywhere (two passes beat one alternation of both kinds)
_SHAPED = re.compile(
    rb"b(?:earer|asic)\s+[a-z0-9._~+/=\-]{8,}"
    rb"|sk-(?:ant-|proj-)?[a-z0-9_\-]{16,}"
    rb"|aiza[0-9a-z_\-]{30,}"
    rb"|gh[pousr]_[a-z0-9]{20,}"
    rb"|xox[abprs]-[a-z0-9\-]{10,}"
    rb"|akia[0-9a-z]{16}"
)


def _is_credential(key: str) -> bool:
    low = key.lower()
    return any(_KEY_NAME.match(low, i) for i in range(len(low)))


def _walk(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: MARKER.decode() if _is_credential(k) and isinstance(v, (dict, list)) else _walk(v)
                for k, v in value.items()}
    if isinstance(value, list):
        return [_walk(v) for v in value]
    return value


def _redact_containers(line: bytes) -> bytes:
    """Replace whole objects or lists under credential keys.

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


def redact_line(line: bytes) -> bytes:
    low = line.lower()
    keyed = b'":' in low  # both key patterns need a key's closing quote and colon: without one, skip their scans
    if keyed and _KEYED_CONTAINER.search(low):
        line = _redact_containers(line)
        low = line.lower()
    spans = [m.span(1) for m in _KEYED.finditer(low)] if keyed else []
    spans += [m.span() for m in _SHAPED.finditer(low)]
    if not spans:
        return line
    spans.sort()
    out, last = [], 0
    for start, end in spans:
        if start < last:  # overlapping matches: already covered
            last = max(last, end)
            continue
        out.append(line[last:start])
        out.append(MARKER)
        last = end
    out.append(line[last:])
    return b"".join(out)


def redact_text(text: str) -> str:
    return redact_line(text.encode()).decode()
