"""Verdicts handed on in the order their runs first appear, whatever order they are decided in (``check``).

A run is decided when its summary is read, so a run without one holds back every verdict after it until
the end of the file: those waiting are held up to a bound, then spilled to an unnamed temporary file, so
``check`` of any file holds at most that many (plus one chunk's verdicts, handed on together).
"""
from __future__ import annotations

from typing import Any, Callable, Iterator


class InOrder:
    """Hands verdicts on in run order as they are decided, holding those that wait for an earlier run.

    A run without a summary near the start of a file is decided only at its end, so every later
    verdict waits for it: beyond MAX_WAITING of them, those waiting are written, in run order, to an
    unnamed temporary file, and the undecided runs before them are noted as gaps, filled at the end.
    """

    MAX_WAITING = 20_000  # a verdict's printed form is ~200 bytes held: 4 MB waiting, at most (100,000 cost 80 MB of peak)

    def __init__(self, hand_on: Callable[[Any], None]):
        self.hand_on = hand_on
        self.handed = 0  # runs before it were handed on as they were decided
        self.next = 0  # runs before it are handed on, spilled or gaps
        self.waiting: dict[int, Any] = {}  # decided, r >= next
        self.gaps: dict[int, Any] = {}  # undecided when spilled past: their verdict once decided (None until)
        self.spilled: Any = None  # pickled (run, verdict), in run order

    def decided(self, r: int, kept: Any) -> None:
        if r in self.gaps:
            self.gaps[r] = kept
            return
        if self.spilled is None and r == self.next:
            self.hand_on(kept)
            self.next += 1
            while self.next in self.waiting:
                self.hand_on(self.waiting.pop(self.next))
                self.next += 1
            self.handed = self.next
            return
        self.waiting[r] = kept
        if len(self.waiting) > self.MAX_WAITING:
            self._spill()

    def decided_all(self, rs: list[int], kept: list[Any]) -> None:
        """:meth:`decided` for each of ``rs`` in turn; once verdicts are spilled (every later one waits), the
        chunk's are held together."""
        if self.spilled is not None and self.gaps.keys().isdisjoint(rs):
            self.waiting.update(zip(rs, kept))
            if len(self.waiting) > self.MAX_WAITING:
                self._spill()
            return
        decided = self.decided
        for r, one in zip(rs, kept):
            decided(r, one)

    def _spill(self) -> None:
        """Write the waiting verdicts, in run order, as one batch."""
        import pickle
        import tempfile

        if self.spilled is None:
            self.spilled = tempfile.TemporaryFile()
        batch = []
        for r in sorted(self.waiting):
            for gap in range(self.next, r):
                self.gaps[gap] = None
            batch.append((r, self.waiting[r]))
            self.next = r + 1
        pickle.dump(batch, self.spilled, protocol=pickle.HIGHEST_PROTOCOL)
        self.waiting.clear()

    def finish(self, runs: int, decide: Callable[[int], Any]) -> None:
        """Hand on every run not yet handed on, deciding those without a verdict with ``decide``."""
        spilled = self.spilled
        pending = iter(())
        if spilled is not None:
            spilled.flush()
            spilled.seek(0)
            pending = _spilled(spilled)
        upcoming = next(pending, None)
        for r in range(self.handed, runs):
            if r in self.gaps:
                kept = self.gaps.pop(r)
            elif upcoming is not None and upcoming[0] == r:
                kept = upcoming[1]
                upcoming = next(pending, None)
            else:
                kept = self.waiting.pop(r, None)
            self.hand_on(decide(r) if kept is None else kept)
        self.close()

    def close(self) -> None:
        """Let the spilled verdicts' file go (it is unnamed: closing it deletes it)."""
        if self.spilled is not None:
            self.spilled.close()


def _spilled(spilled: Any) -> Iterator[tuple[int, Any]]:
    """The spilled (run, verdict) pairs, batch after batch."""
    import pickle

    while True:
        try:
            yield from pickle.load(spilled)
        except EOFError:
            return
