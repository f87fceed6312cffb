"""Writing traces: compact JSONL, redacted, and atomic (never a half file)."""
from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path
from typing import Any, BinaryIO, Iterable

import re

import orjson

from tracetui.trace.redact import redact_line

#: The line's opening keys up to the run id's opening quote (group 1), then the run id string.
#: The string is matched "unrolled" (runs of plain bytes between escapes): no alternation per byte.
_HEAD = re.compile(rb'(\{"rec":"[a-z]+","run_id":")[^"\\]*(?:\\.[^"\\]*)*"')
_MEMO_MAX_ENTRIES = 4096
_MEMO_MAX_LINE = 8192
_memo: dict[bytes, bytes] = {}


def encode_record(record: dict[str, Any]) -> bytes:
    """One redacted JSONL line.

    Redaction costs one regex pass per line, the largest part of writing a trace.
    Lines of runs of the same scenario repeat byte for byte after the run id, a
    line's opening keys are one of a few, and a run's lines share its id, so the
    three parts are memoised by their bytes. Redaction is a pure function of them,
    and no match can cross either quote of the run id: a match spans a quote only
    where a credential key ends at it and ``:`` follows, and here the key is
    ``run_id``, the run id's own quotes are escaped (no key ends in a backslash)
    and its closing quote is followed by ``,`` or ``}``.
    """
    raw = orjson.dumps(record)
    head = _HEAD.match(raw)
    if head is None or len(raw) > _MEMO_MAX_LINE:
        return redact_line(raw) + b"\n"
    split, end = head.end(1), head.end()
    return _redacted(raw[:split]) + _redacted(raw[split:end]) + _redacted(raw[end:]) + b"\n"


def _redacted(part: bytes) -> bytes:
    redacted = _memo.get(part)
    if redacted is None:
        redacted = redact_line(part)
        if len(_memo) >= _MEMO_MAX_ENTRIES:
            _memo.clear()
        _memo[part] = redacted
    return redacted


def write_records(out: BinaryIO, records: Iterable[dict[str, Any]]) -> int:
    n = 0
    for record in records:
        out.write(encode_record(record))
        n += 1
    return n


def _new_file_mode() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


class AtomicWriter:
    """Write to a temporary file beside the target, then rename it into place.

    A symlink is followed (the file it points to is replaced, not the link), and
    an existing file keeps its permissions; a new one gets the usual umask ones.
    """

    def __init__(self, path: str | os.PathLike[str]):
        self.path = Path(os.path.realpath(path))

    def __enter__(self) -> BinaryIO:
        directory = self.path.parent if str(self.path.parent) else Path(".")
        fd, self.tmp = tempfile.mkstemp(prefix=f".{self.path.name}.", suffix=".tmp", dir=directory)
        self.file = os.fdopen(fd, "wb")
        return self.file

    def __exit__(self, exc_type, exc, tb) -> None:
        try:
            self.file.close()
            if exc_type is None:
                try:
                    mode = stat.S_IMODE(os.stat(self.path).st_mode)
                except FileNotFoundError:
                    mode = _new_file_mode()
                os.chmod(self.tmp, mode)
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


def same_file(a: str | os.PathLike[str], b: str | os.PathLike[str]) -> bool:
    """Whether two paths name one file (through links too); False when either does not exist."""
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def write_trace(path: str | os.PathLike[str], records: Iterable[dict[str, Any]]) -> int:
    if _is_special(Path(path)):
        with open(path, "wb") as out:
            return write_records(out, records)
    with AtomicWriter(path) as out:
        return write_records(out, records)
