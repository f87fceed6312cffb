"""Writing traces: compact JSONL, redacted, and atomic (never a half file)."""
from __future__ import annotations

import os
import secrets
import stat
import tempfile
from itertools import groupby
from pathlib import Path
from typing import Any, BinaryIO, Callable, Iterable, Sequence

import orjson

from tracetui.trace.format import PREFIX_EVENT, PREFIX_RUN, PREFIX_SUMMARY
from tracetui.trace.output_path import output_target
from tracetui.trace.redact import redact_line

# Memos of redacted bytes, each bounded by entries times size (a redacted copy is at most
# about twice its key), so together they stay within a few tens of MiB.
#: the rest of a line after its run id -> the same bytes redacted
_tails: dict[bytes, bytes] = {}
_MEMO_MAX_ENTRIES = 1024
_MEMO_MAX_LINE = 8192
#: a run's lines without its run id -> the pieces its redacted run id joins into its redacted lines
_runs: dict[tuple[bytes, ...], list[bytes]] = {}
_RUNS_MAX_ENTRIES = 128
_MEMO_MAX_RUN = 1 << 15  # a scenario run is under 8 KiB
_BUFFER_BYTES = 1 << 20  # a trace is written in large blocks, not a system call per run


def encode_records(records: Iterable[dict[str, Any]]) -> bytes:
    """Redacted JSONL lines, one per record; fastest when the records are one run's.

    Redaction costs one regex pass per line, the largest part of writing a trace.
    A line is three parts: its opening keys (``{"rec":"event","run_id":``, one of
    three), the run id (the same for a run's lines) and the rest, which repeats
    byte for byte across runs of one scenario. So the run id is redacted once per
    run and the rest is memoised by its bytes (a whole run's at once, then line by
    line); redaction is a pure function of them. No match crosses a part's edge: a
    match spans an unescaped quote only where a credential key ends at it and ``:``
    follows (here the key is ``run_id``); every other pattern stops at an unescaped
    quote (``tracetui.trace.secret_shapes`` keeps to that), and no lookaround tells a
    part's start from the ``"``, ``:`` or ``,`` before it. Every quote inside the run
    id is escaped, and its closing quote is followed by ``,`` or ``}``. Objects under
    credential keys and edits of credential fields are replaced by parsing one part
    (keys and values together), so they never span an edge either. Any other line is
    redacted whole.
    """
    records = records if isinstance(records, (list, tuple)) else list(records)
    run_id = records[0].get("run_id") if records else None
    lines = _encode_run(records, run_id) if type(run_id) is str else None
    if lines is not None:
        return lines
    if len(records) > 1:  # not one run's records: each line on its own
        return b"".join([encode_records((record,)) for record in records])
    return b"".join([redact_line(orjson.dumps(record)) + b"\n" for record in records])


def encode_record(record: dict[str, Any]) -> bytes:
    """One redacted JSONL line."""
    return encode_records((record,))


def _encode_run(records: Sequence[dict[str, Any]], run_id: str) -> bytes | None:
    """The lines of records that are all one run's, or None when they are not."""
    ident = orjson.dumps(run_id)
    event_head, run_head, summary_head = PREFIX_EVENT + ident, PREFIX_RUN + ident, PREFIX_SUMMARY + ident
    event_end, run_end, summary_end = len(event_head), len(run_head), len(summary_head)
    rest: list[bytes] = []  # each line's opening keys, then the rest of it after the run id
    for record in records:
        raw = orjson.dumps(record)
        if raw.startswith(event_head):
            rest += (PREFIX_EVENT, raw[event_end:])
        elif raw.startswith(run_head):
            rest += (PREFIX_RUN, raw[run_end:])
        elif raw.startswith(summary_head):
            rest += (PREFIX_SUMMARY, raw[summary_end:])
        else:
            return None
    key = tuple(rest)
    pieces = _runs.get(key)
    if pieces is None:
        pieces = [rest[0]]
        for i in range(1, len(rest) - 1, 2):
            pieces.append(_redacted_tail(rest[i]) + b"\n" + rest[i + 1])
        pieces.append(_redacted_tail(rest[-1]) + b"\n")
        if sum(map(len, rest)) <= _MEMO_MAX_RUN:
            _remember(_runs, key, pieces, _RUNS_MAX_ENTRIES)
    return redact_line(ident).join(pieces)


def _redacted_tail(tail: bytes) -> bytes:
    if len(tail) > _MEMO_MAX_LINE:
        return redact_line(tail)
    redacted = _tails.get(tail)
    if redacted is None:
        redacted = _remember(_tails, tail, redact_line(tail), _MEMO_MAX_ENTRIES)
    return redacted


def _remember(memo: dict[Any, Any], key: Any, value: Any, limit: int) -> Any:
    """Keep ``value`` in a memo of at most ``limit`` entries (a full memo starts over)."""
    if len(memo) >= limit:
        memo.clear()
    memo[key] = value
    return value


def write_runs(out: BinaryIO, runs: Iterable[Iterable[dict[str, Any]]]) -> int:
    """Write run by run: a run's lines are encoded together as the run arrives; returns how many records."""
    n = 0
    for records in runs:
        records = records if isinstance(records, (list, tuple)) else list(records)
        out.write(encode_records(records))
        n += len(records)
    return n


def write_records(out: BinaryIO, records: Iterable[dict[str, Any]]) -> int:
    """Write records as they come, a run (consecutive records with one run id) at a time."""
    return write_runs(out, (list(run) for _, run in groupby(records, key=_run_id)))


def _run_id(record: dict[str, Any]) -> Any:
    return record.get("run_id")


def _new_file_mode() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


class NothingToWrite(ValueError):
    """Refused: there is no record to write (an empty file would look like a success)."""


class AtomicWriter:
    """Write to an unnamed temporary file beside the target, then give it the target's name.

    Without ``exclusive`` (``-o``), the file at ``path`` is replaced: a symlink is
    followed (the file it points to is replaced, not the link), the name is found as
    the kernel finds it (:func:`~tracetui.trace.output_path.output_target`: OSError for a
    folder it cannot reach, never ``nosuchdir/..`` read as text) and an existing file
    keeps its permission bits, never a setuid, setgid or sticky bit; a new one gets
    the usual umask ones. With ``exclusive`` (``w`` in the explorer), ``path`` is
    created and must not exist, not even as a dangling symlink, which is never
    followed: FileExistsError then, and nothing is written anywhere.

    The temporary file has no name until it is complete (``O_TMPFILE``), so nothing
    is left behind whatever ends the process. Where the file system cannot do that,
    a named ``.NAME.*.tmp`` is used and removed on every exit path (``tracetui``
    turns SIGTERM and SIGHUP into a normal exit, so this runs for them too).
    """

    def __init__(self, path: str | os.PathLike[str], exclusive: bool = False):
        self.exclusive = exclusive
        self.path = Path(path) if exclusive else output_target(path)
        self.tmp: str | None = None

    def __enter__(self) -> BinaryIO:
        directory = str(self.path.parent) if str(self.path.parent) else "."
        try:
            fd = os.open(directory, os.O_TMPFILE | os.O_RDWR | os.O_CLOEXEC, 0o600)
        except (AttributeError, OSError):  # no O_TMPFILE here: a named temporary file
            fd, self.tmp = tempfile.mkstemp(prefix=f".{self.path.name}.", suffix=".tmp", dir=directory)
        self.fd = fd
        self.file = os.fdopen(fd, "wb", buffering=_BUFFER_BYTES)
        return self.file

    def __exit__(self, exc_type, exc, tb) -> None:
        try:
            if exc_type is None:
                self.file.flush()
                os.fchmod(self.fd, self._mode())
                if self.exclusive:
                    self._create()
                else:
                    self._replace()
        finally:
            self.file.close()
            if self.tmp is not None and os.path.lexists(self.tmp):
                os.unlink(self.tmp)

    def _mode(self) -> int:
        if self.exclusive:
            return _new_file_mode()
        try:
            return stat.S_IMODE(os.stat(self.path).st_mode) & 0o777  # never setuid, setgid or sticky
        except FileNotFoundError:
            return _new_file_mode()

    def _link(self, name: str) -> None:
        """Give the written file the (free) ``name`` in the target's folder; link() never follows ``name``.
        OSError (FileExistsError when taken) when it cannot."""
        if self.tmp is not None:
            os.link(self.tmp, name)
            return
        folder = os.open(str(self.path.parent) or ".", os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
        try:  # linkat(AT_SYMLINK_FOLLOW) names an O_TMPFILE file through /proc
            os.link(f"/proc/self/fd/{self.fd}", os.path.basename(name), dst_dir_fd=folder, follow_symlinks=True)
        finally:
            os.close(folder)

    def _create(self) -> None:
        """Give the complete file its new name, which must be free."""
        try:
            self._link(str(self.path))
            return
        except FileExistsError:
            raise
        except OSError:  # no hard links here (or no /proc): create the name exclusively and copy
            pass
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
        out = os.open(self.path, flags, self._mode())
        try:
            self._copy_to(out)
        except BaseException:
            os.close(out)
            os.unlink(self.path)
            raise
        os.close(out)

    def _replace(self) -> None:
        if self.tmp is None:
            for _ in range(100):  # the unnamed file needs a name to be renamed over the target
                name = str(self.path.parent / f".{self.path.name}.{secrets.token_hex(4)}.tmp")
                try:
                    self._link(name)
                except FileExistsError:
                    continue
                except OSError:  # it cannot be named here: copy it to a named one
                    fd, name = tempfile.mkstemp(prefix=f".{self.path.name}.", suffix=".tmp", dir=self.path.parent)
                    try:
                        os.fchmod(fd, self._mode())
                        self._copy_to(fd)
                    finally:
                        os.close(fd)
                self.tmp = name
                break
        try:
            os.replace(self.tmp, self.path)  # type: ignore[arg-type]
        finally:
            if self.tmp is not None and os.path.lexists(self.tmp):
                os.unlink(self.tmp)
            self.tmp = None

    def _copy_to(self, out: int) -> None:
        offset, size = 0, os.fstat(self.fd).st_size
        while offset < size:
            data = os.pread(self.fd, min(_BUFFER_BYTES, size - offset), offset)
            if not data:
                break
            os.write(out, data)
            offset += len(data)


def _is_special(path: Path) -> bool:
    """A device or FIFO (/dev/null, /dev/stdout, a pipe): renaming over it would replace it."""
    try:
        return not stat.S_ISREG(os.stat(path).st_mode) and not stat.S_ISDIR(os.stat(path).st_mode)
    except FileNotFoundError:
        return False


def write_trace(path: str | os.PathLike[str], records: Iterable[dict[str, Any]], exclusive: bool = False) -> int:
    """Write a whole trace file atomically; returns how many records. ``exclusive``: see AtomicWriter."""
    return _write_file(path, lambda out: write_records(out, records), exclusive)


def write_trace_runs(path: str | os.PathLike[str], runs: Iterable[Iterable[dict[str, Any]]]) -> int:
    """Like :func:`write_trace`, run by run (see :func:`write_runs`)."""
    return _write_file(path, lambda out: write_runs(out, runs))


def _write_file(path: str | os.PathLike[str], write: Callable[[BinaryIO], int], exclusive: bool = False) -> int:
    if not exclusive and _is_special(Path(path)):
        with open(path, "wb", buffering=_BUFFER_BYTES) as out:
            return write(out)
    with AtomicWriter(path, exclusive) as out:
        count = write(out)
        if not count:
            raise NothingToWrite(f"{path}: nothing to write (no record)")
        return count
