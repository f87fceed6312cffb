"""A run's first failing boundary as the run list keeps it: compact, read like the summary's dict.

A huge trace holds one per failed run, and no two need be alike (reasons name
ids and API messages), so a slotted record with its lane and code interned takes
about a third of the memory of the parsed dict. It is a mapping with the same
keys, so it reads (``get``, ``[]``) and compares (``==``) like the dict a summary
line holds. Values are kept as the trace gave them: a verdict derived from events
may carry any JSON value (trace content is untrusted).
"""
from __future__ import annotations

import sys
import weakref
from collections.abc import Mapping
from typing import Any, Iterator, Protocol

from tracetui.trace.format import LANES

_LANES = {lane: lane for lane in LANES}
KEYS = ("lane", "seq", "code", "reason", "decided_at")


def _interned(value: Any) -> Any:
    """One string per lane and per code across any number of runs; other values as they are."""
    if type(value) is not str:
        return value
    return _LANES.get(value) or sys.intern(value)


def _extra(failure: Mapping[str, Any]) -> dict[str, Any] | None:
    """The keys beyond the usual five, which a summary may carry."""
    return {k: v for k, v in failure.items() if k not in KEYS} if len(failure) > len(KEYS) else None


class Failure(Mapping[str, Any]):
    """``{"lane", "seq", "code", "reason", "decided_at"}`` plus any other keys the summary gave."""

    __slots__ = ("lane", "seq", "code", "_reason", "decided_at", "extra")

    def __init__(self, lane: Any, seq: Any, code: Any, reason: Any, decided_at: Any,
                 extra: dict[str, Any] | None = None):
        self.lane = _interned(lane)
        self.seq = seq
        self.code = _interned(code)
        self._reason = reason
        self.decided_at = decided_at
        self.extra = extra or None

    @property
    def reason(self) -> Any:
        return self._reason

    def reason_unkept(self) -> Any:
        """The reason, read back if it must be but not kept: grouping reads every failed run's once."""
        return self._reason

    @classmethod
    def of(cls, failure: Mapping[str, Any] | None) -> "Failure | None":
        """From a verdict's ``first_failure`` (checked, or derived from events), keys as they are."""
        if failure is None:
            return None
        get = failure.get
        return cls(get("lane"), get("seq"), get("code"), get("reason"), get("decided_at"), _extra(failure))

    def get(self, key: Any, default: Any = None) -> Any:  # no KeyError round trip: the run list asks often
        if key in KEYS:
            return getattr(self, key)
        return self.extra.get(key, default) if self.extra is not None else default

    def __getitem__(self, key: Any) -> Any:
        if key in KEYS:
            return getattr(self, key)
        if self.extra is not None:
            return self.extra[key]
        raise KeyError(key)

    def __contains__(self, key: Any) -> bool:
        return key in KEYS or (self.extra is not None and key in self.extra)

    def __iter__(self) -> Iterator[str]:
        yield from KEYS
        if self.extra is not None:
            yield from self.extra

    def __len__(self) -> int:
        return len(KEYS) + (len(self.extra) if self.extra is not None else 0)

    def __reduce__(self) -> tuple[Any, ...]:
        """Copies and pickles are plain failures, with the reason read (never a second file handle)."""
        return Failure, (self.lane, self.seq, self.code, self.reason, self.decided_at, self.extra)

    def __repr__(self) -> str:
        return f"Failure({dict(self)!r})"


class ReasonSource(Protocol):
    def failure_reason(self, run_name: str) -> str: ...


class DeferredFailure(Failure):
    """A first failure whose reason stays in the trace file until it is asked for.

    The run list needs only the lane, step and code; the reason is read back from
    the run's summary line when the run is shown, then kept. Used for failures too
    many and too different to share, where every reason would otherwise be held.
    """

    __slots__ = ("_origin", "_run_name")

    def __init__(self, failure: Mapping[str, Any], origin: ReasonSource, run_name: str):
        get = failure.get
        super().__init__(get("lane"), get("seq"), get("code"), None, get("decided_at"), _extra(failure))
        # weakly: run-list rows are not tracked by the garbage collector, so a strong reference from
        # one to the file's index (which leads back to the rows) would keep the whole index alive
        self._origin = weakref.ref(origin)
        self._run_name = run_name  # the run list's own string: no memory of its own

    @property
    def reason(self) -> Any:
        if self._reason is None:
            origin = self._origin()
            if origin is None:
                return "(the reason could not be read back: the trace was closed)"
            self._reason = origin.failure_reason(self._run_name)
        return self._reason

    def reason_unkept(self) -> Any:
        if self._reason is not None:
            return self._reason
        origin = self._origin()
        return origin.failure_reason(self._run_name) if origin is not None else self.reason
