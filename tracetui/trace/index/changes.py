"""Noticing that a trace changed on disk while it is open: truncated, replaced, rewritten or grown.

An index is only as good as the bytes it was built from. A log rotated or rewritten
in place, a file replaced by another under the same name, or cut short by a
writer starting over would otherwise make runs load as nothing, or as another
run's lines. :class:`Snapshot` records what was indexed (the file's identity,
size, modification time and a fingerprint of the bytes at its start and at the
end of what was scanned); :meth:`Snapshot.compare` tells how the file differs
now. Reads go through ``pread`` on a descriptor, never through a memory map, so a
file that shrinks under a read can only make the read short, never raise SIGBUS.
"""
from __future__ import annotations

import os
from dataclasses import dataclass

#: bytes compared at the start of the file and before the end of what was indexed
FINGERPRINT_BYTES = 4096

TRUNCATED, REPLACED, REWRITTEN, GREW, REMOVED = "truncated", "replaced", "rewritten", "grew", "removed"
_WORDS = {
    TRUNCATED: "was truncated (it is shorter than when it was indexed)",
    REPLACED: "was replaced by another file",
    REWRITTEN: "was rewritten in place",
    GREW: "has grown: lines were appended",
    REMOVED: "was removed",
}


@dataclass(frozen=True)
class Change:
    """How a trace file differs from what was indexed; ``kind`` is one of the constants above."""

    path: str
    kind: str

    @property
    def appended_only(self) -> bool:
        """Lines were added after what was indexed; everything indexed is still there."""
        return self.kind == GREW

    def describe(self) -> str:
        return f"{self.path} {_WORDS.get(self.kind, self.kind)} since it was opened"


class TraceChanged(Exception):
    """A read found the file no longer holds what was indexed."""

    def __init__(self, change: Change):
        super().__init__(change.describe())
        self.change = change


@dataclass(frozen=True)
class Snapshot:
    """What an index was built from: enough to tell later whether the file still holds it."""

    dev: int
    ino: int
    size: int  # bytes indexed
    file_size: int  # the file's size then (an index under way has not read it all yet)
    mtime_ns: int
    head: bytes
    tail: bytes

    @classmethod
    def take(cls, fd: int, indexed: int, reading: int | None = None) -> "Snapshot":
        """The state of the file open on ``fd`` of which the first ``indexed`` bytes were read, out
        of the ``reading`` bytes the index reads (default: all of it); more than that is growth."""
        st = os.fstat(fd)
        head, tail = _edges(fd, indexed)
        return cls(st.st_dev, st.st_ino, indexed, st.st_size if reading is None else reading, st.st_mtime_ns,
                   head, tail)

    def edges_moved(self, fd: int) -> bool:
        """Whether the first or last bytes of what was indexed are no longer what they were."""
        return _edges(fd, self.size) != (self.head, self.tail)

    def compare(self, path: str, fd: int | None, by_name: bool = True) -> Change | None:
        """How the file differs now, by its name (unless ``by_name`` is false: standard input has
        none) and by the descriptor the index reads. None: unchanged."""
        named = None
        if by_name:
            try:
                named = os.stat(path)
            except FileNotFoundError:
                return Change(path, REMOVED)
            except OSError:
                pass
        if named is not None and (named.st_dev, named.st_ino) != (self.dev, self.ino):
            return Change(path, REPLACED)
        if fd is None:
            return None
        st = os.fstat(fd)
        if st.st_size < self.file_size:
            return Change(path, TRUNCATED)
        if st.st_mtime_ns == self.mtime_ns and st.st_size == self.file_size:
            return None
        head, tail = _edges(fd, self.size)
        if (head, tail) != (self.head, self.tail):
            return Change(path, REWRITTEN)
        if st.st_size == self.file_size:  # written to, not grown: only its middle can have changed, and
            return Change(path, REWRITTEN)  # nothing short of reading it all could say it did not
        return Change(path, GREW)


def _edges(fd: int, end: int) -> tuple[bytes, bytes]:
    """The first and the last FINGERPRINT_BYTES of the first ``end`` bytes."""
    head = os.pread(fd, min(end, FINGERPRINT_BYTES), 0)
    start = max(0, end - FINGERPRINT_BYTES)
    tail = os.pread(fd, end - start, start) if end > FINGERPRINT_BYTES else b""
    return head, tail
