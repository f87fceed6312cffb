"""Trace and span ids derived from the run: exporting a run twice gives the same ids (idempotent).

A backend that receives the same span id twice keeps one span, so re-sending a
file never doubles a run. The ids are hashes of the run's listed name (``id#2``
for a repeated id) and a key naming the span within the run.
"""
from __future__ import annotations

import hashlib


def _digest(*parts: str) -> bytes:
    return hashlib.sha256("\x00".join(("tracetui", *parts)).encode()).digest()


def _nonzero(raw: bytes) -> str:
    """All-zero ids are invalid in OpenTelemetry; a hash that gives one (2**-64) is nudged."""
    return raw.hex() if any(raw) else (raw[:-1] + b"\x01").hex()


def trace_id(run_name: str) -> str:
    """32 hex digits."""
    return _nonzero(_digest("trace", run_name)[:16])


def span_id(run_name: str, key: str) -> str:
    """16 hex digits; ``key`` names the span within its run (``root``, ``chat/2``, ``http/7`` …)."""
    return _nonzero(_digest("span", run_name, key)[:8])
