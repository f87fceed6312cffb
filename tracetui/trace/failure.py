"""A run's first failing boundary as the run list keeps it: compact, read like the summary's dict.

A huge trace holds one per failed run, and no two need be alike (reasons name
ids and API messages), so a slotted record with its lane and code interned takes
about a third of the memory of the parsed dict. It is a read-only mapping with
the same keys, so it reads (``get``, ``[]``) and compares (``==``) like the dict
a summary line holds.
"""
from __future__ import annotations

import sys
from collections.abc import Mapping
from typing import Any, Iterator, Protocol

from tracetui.trace.format import LANES

_LANES = {lane: lane for lane in LANES}
KEYS = ("lane", "seq", "code", "reason", "decided_at")


class Failure(Mapping[str, Any]):
    """``{"lane", "seq", "code", "reason", "decided_at"}`` plus any other keys the summary gave."""

    __slots__ = ("lane", "seq", "code", "_reason", "decided_at", "extra")

    def __init__(self, lane: str, seq: int, code: str, reason: str | None, decided_at: int,
                 extra: dict[str, Any] | None = None):
        self.lane = _LANES.get(lane, lane)
        self.seq = seq
        self.code = sys.intern(code)  # a few hundred codes across any number of runs
        self._reason = reason
        self.decided_at = decided_at
        self.extra = extra or None

    @property
    def reason(self) -> str:
        return self._reason  # type: ignore[return-value]

    @classmethod
    def of(cls, failure: dict[str, Any] | None) -> "Failure | None":
        """From a checked ``first_failure`` dict (:func:`~tracetui.trace.reader.checked_failure`)."""
        if failure is None:
            return None
        extra = {k: v for k, v in failure.items() if k not in KEYS} if len(failure) > len(KEYS) else None
        return cls(failure["lane"], failure["seq"], failure["code"], failure["reason"], failure["decided_at"], extra)

    def __getitem__(self, key: str) -> Any:
        if key in KEYS:
            return getattr(self, key)
        if self.extra is not None:
            return self.extra[key]
        raise KeyError(key)

    def __iter__(self) -> Iterator[str]:
        yield from KEYS
        if self.extra is not None:
            yield from self.extra

    def __len__(self) -> int:
        return len(KEYS) + (len(self.extra) if self.extra is not None else 0)

    def __repr__(self) -> str:
        return f"Failure({dict(self)!r})"


class ReasonSource(Protocol):
    def failure_reason(self, run_name: str) -> str: ...


class DeferredFailure(Failure):
    """A first failure whose reason stays in the trace file until it is asked for.

    The run list needs only the lane, step and code; the reason is read back from
    the run's summary line when the run is shown (then kept). Used for failures too
    many and too different to share, where every reason would otherwise be held.
    """

    __slots__ = ("_origin", "_run_name")

    def __init__(self, failure: dict[str, Any], origin: ReasonSource, run_name: str):
        extra = {k: v for k, v in failure.items() if k not in KEYS} if len(failure) > len(KEYS) else None
        super().__init__(failure["lane"], failure["seq"], failure["code"], None, failure["decided_at"], extra)
        self._origin = origin
        self._run_name = run_name  # the run list's own string: no memory of its own

    @property
    def reason(self) -> str:
        if self._reason is None:
            self._reason = self._origin.failure_reason(self._run_name)
        return self._reason
