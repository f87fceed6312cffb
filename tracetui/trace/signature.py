"""A failure's signature: what runs that failed the same way share, with their ids, numbers and names masked.

Failure groups (``check --group``, the explorer's ``g``) and ``share --all-failed`` group runs by it,
so a CI trace of thousands of failures reads as a handful of kinds. The signature is the first
failing lane, the code and the reason, with what differs from run to run replaced by ``#``:

- ids: uuids, long hex ids, tokens of eight letters and digits or more (``tmp8x7qzk2``), and prefixed ids
  holding a digit or six hex letters (``o-7``, ``u-2``, ``call-1-x``, ``req_4f2a9c``, ``req_acafda`` become
  ``o-#``, ``u-#``, ``call-#``, ``req_#``, ``req_#``);
- names: the word after ``tenant``, ``user``, ``account``… (``tenant shop-b`` becomes ``tenant #``),
  e-mail addresses, single-quoted words (``no tool named 'cancel_order'``) and string values of JSON
  arguments (``{"order_id":"#"}``);
- numbers, with their decimals (amounts, attempts, counts).

What tells kinds of failure apart stays: the words, the lane and code, an HTTP status
(``HTTP 503`` is not ``HTTP 400``) and a JSON type named in quotes (``is not of type 'number'``).
"""
from __future__ import annotations

import re
from typing import Any, Mapping

from tracetui.trace.redact import redact_text

#: a reason longer than this is cut before masking: a signature is a heading, not a body
MAX_REASON = 300
#: what a masked part reads as
MASK = "#"

_UUID = re.compile(r"\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b")
_HEX = re.compile(r"\b(?=[0-9a-fA-F]*[0-9])[0-9a-fA-F]{8,}\b")
_EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
#: a name the reason introduces with what it names; the words after which no name follows stay
_NAMED = re.compile(
    r"\b(tenants?|users?|accounts?|customers?|org|orgs|organi[sz]ations?|workspaces?|projects?|teams?|owners?)"
    r"(\s+)(?!(?:and|or|is|are|was|were|not|no|of|the|a|an|to|in|on|for|with|from|by|at|as|id|ids|name|names|"
    r"differ|differs|mismatch|has|have|had|does|do)\b)"
    r"[^\s,;:()\[\]{}'\"]*[^\s,;:()\[\]{}'\".]", re.IGNORECASE)
_NAMING_WORDS = ("tenant", "user", "account", "customer", "org", "workspace", "project", "team", "owner")
#: a single-quoted word or value (not an apostrophe: no letter right outside the quotes)
_QUOTED = re.compile(r"(?<![A-Za-z])'([^'\n]{1,80})'(?![A-Za-z])")
#: JSON Schema's type names: vocabulary of a validation message, not data
_TYPE_WORDS = frozenset(("number", "string", "integer", "boolean", "object", "array", "null"))
#: a JSON string value (after ``:``, ``[`` or ``,`` and before ``,``, ``]`` or ``}``): a key stays
_JSON_VALUE = re.compile(r'([:\[,]\s*)"(?:[^"\\\n]|\\.)*"(?=\s*[,}\]])')
#: a prefixed id holding a digit, or six hex letters or more: its prefix and separator stay (``o-#`` still
#: reads as an order)
_ID = re.compile(r"\b([A-Za-z]+)([-_])(?=[A-Za-z0-9]*\d|[0-9a-f]{6,}(?![A-Za-z0-9]))"
                 r"[A-Za-z0-9]+(?:[-_][A-Za-z0-9]+)*\b")
#: a token of eight letters and digits or more holding both (``tmp8x7qzk2``, ``Ab3xK9qZ``): an id however
#: its digits fall (a number alone inside it would leave its letters, a new group per run)
_TOKEN = re.compile(r"\b(?=[A-Za-z]*\d)(?=\d*[A-Za-z])[A-Za-z0-9]{8,}\b")
#: any number, with its decimals; an HTTP status is not one (it says which kind of failure)
_NUMBER = re.compile(r"(?<![\d.,])(?<!HTTP )\d+(?:[.,]\d+)*")


def _prefixed(match: re.Match[str]) -> str:
    """What introduces the masked part (a prefix and its separator, a word and its space), then ``#``."""
    return match.group(1) + match.group(2) + MASK


def _quoted(match: re.Match[str]) -> str:
    return match.group(0) if match.group(1) in _TYPE_WORDS else f"'{MASK}'"


def masked(reason: str) -> str:
    """``reason`` with its ids, names and numbers replaced by ``#`` (redacted first: a masked key would
    lose the shape the redaction knows it by)."""
    return _masks(redact_text(reason)[:MAX_REASON])


def memo_key(reason: str) -> str:
    """``reason`` masked but not redacted: a key under which to remember its :func:`masked` form, never
    to be shown. Reasons that differ only in what is masked share it (so one redaction serves them all);
    what is shown for any of them is the first one's, redacted then masked, never a later one's text."""
    return _masks(reason[:MAX_REASON])


def _masks(reason: str) -> str:
    # (each pattern only where the text can hold what it masks: a reason is masked per distinct failure)
    if reason.count("-") >= 4:
        reason = _UUID.sub(MASK, reason)
    if "-" in reason or "_" in reason:
        reason = _ID.sub(_prefixed, reason)  # (before a hex id: o-10000000-x is one id)
    reason = _HEX.sub(MASK, reason)
    reason = _TOKEN.sub(MASK, reason)
    if "@" in reason:
        reason = _EMAIL.sub(MASK, reason)
    lowered = reason.lower()
    if any(word in lowered for word in _NAMING_WORDS):
        reason = _NAMED.sub(_prefixed, reason)
    if "'" in reason:
        reason = _QUOTED.sub(_quoted, reason)
    if '"' in reason:
        reason = _JSON_VALUE.sub(lambda m: f'{m.group(1)}"{MASK}"', reason)
    return _NUMBER.sub(MASK, reason)


def failure_signature(first_failure: Mapping[str, Any] | None) -> tuple[str, str, str] | None:
    """(lane, code, masked reason) of a run's first failure; None for a run with no failing boundary."""
    if not first_failure:
        return None
    return signature_of(first_failure.get("lane"), first_failure.get("code"), first_failure.get("reason"))


def signature_of(lane: Any, code: Any, reason: Any) -> tuple[str, str, str]:
    """The signature of a first failure given by its parts (as the trace gave them: any JSON value)."""
    return str(lane or "?"), str(code or "failed"), masked(reason if isinstance(reason, str) else "")


def signature_words(signature: tuple[str, str, str] | None) -> str:
    """The signature as one heading: ``authorization · permission_denied · permission denied: o-# …``."""
    if signature is None:
        return "no failing boundary recorded"
    return " · ".join(part for part in signature if part)
