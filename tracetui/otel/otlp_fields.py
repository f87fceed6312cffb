"""OTLP/JSON's scalar span fields read tolerantly: ids in hex or base64, 64-bit times and enums as text or numbers.

Shared by the tolerant reader (:mod:`tracetui.otel.otlp_read`) and the schema decoder
(:mod:`tracetui.otel.otlp_typed`), which must read every field alike.
"""
from __future__ import annotations

import base64
import binascii
from typing import Any


def hex_id(value: Any, size: int) -> str | None:
    """An id of ``size`` bytes as lowercase hex (None: not one, or all zeros, OTLP's "no id"). Hex is exactly
    ``2 * size`` digits: ``bytes.fromhex`` would also take spaces between them and give a shorter id."""
    if not isinstance(value, str) or not value:
        return None
    if len(value) == size * 2 and value.isascii() and value.isalnum():
        try:
            raw = bytes.fromhex(value)
        except ValueError:
            raw = b""
        if len(raw) == size:
            return raw.hex() if any(raw) else None
    try:
        raw = base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        return None
    return raw.hex() if len(raw) == size and any(raw) else None


def uint64(value: Any) -> int:
    try:
        number = int(value)
    except (TypeError, ValueError):
        return 0
    return number if 0 <= number < 2**64 else 0


def enum_value(value: Any, names: dict[str, int]) -> int:
    if isinstance(value, str):
        return names.get(value, uint64(value))
    return value if type(value) is int else 0
