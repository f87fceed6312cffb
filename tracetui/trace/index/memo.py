"""What was read from pieces of trace lines, remembered by their bytes: runs of a trace mostly begin
and end alike, so most run lines and summaries are read once (:mod:`.items`).

Tables of pure functions of the bytes, so one serves every scan of a process; bounded (a few
megabytes at the most), and emptied when a scan ends (:func:`forget`).
"""
from __future__ import annotations

from typing import Any


class Memo:
    """What was read from a piece of a line, by its bytes: at most ``entries`` pieces of at most
    ``key_bytes`` each (a few megabytes at the most); emptied when full, since a trace's later runs
    may look otherwise. Pure functions of the bytes, so one table serves every scan of a process."""

    def __init__(self, entries: int, key_bytes: int):
        self.entries, self.key_bytes = entries, key_bytes
        self.table: dict[bytes, Any] = {}

    def remember(self, key: bytes, value: Any) -> None:
        if len(key) > self.key_bytes:
            return
        if len(self.table) >= self.entries:
            self.table.clear()
        self.table[key] = value


#: a summary line's bytes after its run id -> its row fields: runs of a trace mostly end alike, so most
#: summaries are neither decoded nor judged again (the project's own summaries are about 500 bytes)
SUMMARY_TAILS = Memo(4096, 1024)
#: a run line's first bytes after its run id -> (version, scenario, ablation) read from them by the
#: writer's layout, when the layout ends within them: run lines of a trace mostly begin alike
RUN_HEADS = Memo(4096, 192)


def forget() -> None:
    """Empty the tables (a scan ended: the next file may look otherwise)."""
    SUMMARY_TAILS.table.clear()
    RUN_HEADS.table.clear()
