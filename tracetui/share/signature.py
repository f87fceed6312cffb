"""A failure's signature: what runs that failed the same way share, with their ids and numbers masked.

``--all-failed`` groups a file's failing runs by it, so a CI page of 200 failures reads as a
handful of kinds (issue 24 reuses it). The signature is the first failing lane, the code and the
reason, with what differs from run to run (order ids, call ids, amounts, attempts, hex ids)
replaced by ``#``: "permission denied: o-2 belongs to tenant shop-b" and "… o-7 … shop-c"
differ in their ids only, so they share "permission denied: o-# belongs to tenant shop-b".
"""
from __future__ import annotations

import re
from typing import Any, Mapping

from tracetui.trace.redact import redact_text

#: what varies between runs that failed alike: uuids, long hex ids, then any number (with its decimals)
_UUID = re.compile(r"\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b")
_HEX = re.compile(r"\b(?=[0-9a-fA-F]*[0-9])[0-9a-fA-F]{8,}\b")
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
#: a reason longer than this is cut before masking: a signature is a heading, not a body
MAX_REASON = 300


def masked(reason: str) -> str:
    """``reason`` with ids and numbers replaced by ``#`` (redacted first: a masked key would lose its shape)."""
    reason = _UUID.sub("#", redact_text(reason)[:MAX_REASON])
    reason = _HEX.sub("#", reason)
    return _NUMBER.sub("#", reason)


def failure_signature(first_failure: Mapping[str, Any] | None) -> tuple[str, str, str] | None:
    """(lane, code, masked reason) of a run's first failure; None for a run with no failing boundary."""
    if not first_failure:
        return None
    reason = first_failure.get("reason")
    return (str(first_failure.get("lane") or "?"), str(first_failure.get("code") or "failed"),
            masked(reason if isinstance(reason, str) else ""))


def signature_words(signature: tuple[str, str, str] | None) -> str:
    """The signature as one heading: ``authorization · permission_denied · permission denied: o-# …``."""
    if signature is None:
        return "no failing boundary recorded"
    return " · ".join(part for part in signature if part)
