"""Writing traces: compact JSONL, redacted, and atomic (never a half file)."""
from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path
from typing import Any, BinaryIO, Iterable

import orjson

from tracetui.trace.redact import redact_line


def encode_record(record: dict[str, Any]) -> bytes:
    return redact_line(orjson.dumps(record)) + b"\n"


def write_records(out: BinaryIO, records: Iterable[dict[str, Any]]) -> int:
    n = 0
    for record in records:
        out.write(encode_record(record))
        n += 1
    return n


class AtomicWriter:
    """Write to a temporary file beside the target, then rename it into place."""

    def __init__(self, path: str | os.PathLike[str]):
        self.path = Path(path)

    def __enter__(self) -> BinaryIO:
        directory = self.path.parent if str(self.path.parent) else Path(".")
        fd, self.tmp = tempfile.mkstemp(prefix=f".{self.path.name}.", suffix=".tmp", dir=directory)
        self.file = os.fdopen(fd, "wb")
        return self.file

    def __exit__(self, exc_type, exc, tb) -> None:
        try:
            self.file.close()
            if exc_type is None:
                os.chmod(self.tmp, 0o644)
                os.replace(self.tmp, self.path)
        finally:
            if os.path.exists(self.tmp):
                os.unlink(self.tmp)


def _is_special(path: Path) -> bool:
    """A device or FIFO (/dev/null, /dev/stdout, a pipe): renaming over it would replace it."""
    try:
        return not stat.S_ISREG(os.stat(path).st_mode) and not stat.S_ISDIR(os.stat(path).st_mode)
    except FileNotFoundError:
        return False


def write_trace(path: str | os.PathLike[str], records: Iterable[dict[str, Any]]) -> int:
    if _is_special(Path(path)):
        with open(path, "wb") as out:
            return write_records(out, records)
    with AtomicWriter(path) as out:
        return write_records(out, records)
