"""A candidate fix: one edit (or two) to a run's inputs or responses, with what it claims in words."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import orjson

from tracetui.replay.pointer import format_pointer
from tracetui.trace.safe_text import redacted_prefix

#: Which side of the run an edit changes, as a bug report would say it.
SIDES = {
    "model": "the model's output",
    "caller": "the caller (principal)",
    "data": "the tool data",
    "tools": "the tool definitions",
    "budget": "a loop budget",
    "setting": "a loop setting",
    "provider": "the provider's answer",
    "context": "what the model is sent",
    "recording": "the recording",
}
#: How big a change is, for ranking: one value, an object or list, a whole response rewritten.
VALUE, OBJECT, RESPONSE = 1, 2, 3


@dataclass(frozen=True)
class Edit:
    path: str
    value: Any

    @property
    def key(self) -> bytes:
        return self.path.encode() + b"=" + orjson.dumps(self.value, option=orjson.OPT_SORT_KEYS)


@dataclass(frozen=True)
class Candidate:
    """An edit to try. Nothing here is a fix until :mod:`tracetui.explain.search` has replayed it."""

    edits: tuple[Edit, ...]
    words: str  # what the fix says, in a bug report's words: "max_output_tokens 64 is enough"
    side: str  # a key of SIDES
    lane: str | None  # the boundary the edit acts on
    cost: int = VALUE
    #: candidates of one group are a ladder (a budget raised step by step): the first that fixes ends it
    group: str | None = None

    @property
    def key(self) -> bytes:
        return b"&".join(e.key for e in self.edits)

    def then(self, other: "Candidate") -> "Candidate":
        """This edit followed by ``other``: a pair."""
        return Candidate(self.edits + other.edits, joined(self.words, other.words),
                         self.side if other.side == self.side else f"{self.side} + {other.side}",
                         self.lane, self.cost + other.cost)


def joined(first: str, second: str) -> str:
    """Two claims as one sentence, without saying the same subject twice:
    "the model should have called X, then answered Y"."""
    for marker in ("should have ", "would have ", "should "):
        at, again = first.find(marker), second.find(marker)
        if at >= 0 and again >= 0 and first[:at] == second[:again]:
            return f"{first}, then {second[again + len(marker):]}"
    return f"{first}, and {second}"


def one(path_parts: list[Any], value: Any, words: str, side: str, lane: str | None, cost: int = VALUE,
        group: str | None = None) -> Candidate:
    return Candidate((Edit(format_pointer(path_parts), value),), words, side, lane, cost, group)


def brief(value: Any, limit: int = 60) -> str:
    """A value in a sentence: text as it is, anything else as compact JSON, cut short."""
    text = value if isinstance(value, str) else orjson.dumps(value).decode()
    return text if len(text) <= limit else redacted_prefix(text, limit - 1) + "…"  # (a cut secret passes redaction)
