"""Writing a run next to its original, never over it (nor over anything else).

The new name is created exclusively, without following links (see
:class:`~tracetui.trace.writer.AtomicWriter`): a name taken meanwhile, or a symlink
planted at it, moves on to the next number instead of writing through it.
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Iterable, Iterator

from tracetui.trace.writer import NothingToWrite, write_trace
from tracetui.trace.redact import redact_text

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
#: numbered names tried before giving up
MAX_TRIES = 1000


def candidate_paths(original: str | None, run_id: str, directory: str | None = None,
                    edited: bool = True) -> Iterator[Path]:
    """New file names for a run: beside the original, ``STEM.RUN.edited.jsonl``, then ``…edited-2``…

    A run written as it was recorded is ``STEM.RUN.jsonl`` (it is not edited, and its
    name must not say so). A run read from standard input (``-``) is ``stdin.RUN…`` in the
    current folder: a name starting with ``-`` would read as an option to every command.
    """
    stem = "stdin" if original == "-" else Path(original).stem if original else "tracetui-demo"
    folder = Path(directory) if directory else (Path(original).parent if original else Path.cwd())
    safe_id = _UNSAFE.sub("_", redact_text(run_id)).strip("._")[:60] or "run"  # (no secret in a file name)
    tag = ".edited" if edited else ""
    yield folder / f"{stem}.{safe_id}{tag}.jsonl"
    for n in range(2, MAX_TRIES + 1):
        yield folder / f"{stem}.{safe_id}{tag}-{n}.jsonl"


def edited_path(original: str | None, run_id: str, directory: str | None = None, edited: bool = True) -> Path:
    """The first name :func:`save_records` would try that is free now (it may be taken by then)."""
    for candidate in candidate_paths(original, run_id, directory, edited):
        if not candidate.exists() and not candidate.is_symlink() and not _is_original(candidate, original):
            return candidate
    raise FileExistsError(f"no free name for run {run_id!r}")


def save_records(records: Iterable[dict[str, Any]], original: str | None, run_id: str,
                 directory: str | None = None, edited: bool = True) -> Path:
    """Write ``records`` to a new file; returns its name. NothingToWrite when there is no record."""
    records = list(records)
    if not records:
        raise NothingToWrite(f"run {run_id!r} has no records to write: the trace may have changed on disk "
                             f"since it was opened (r reloads it)")
    for candidate in candidate_paths(original, run_id, directory, edited):
        if _is_original(candidate, original):  # a trace named like a run of itself: never over it
            continue
        try:
            write_trace(candidate, records, exclusive=True)
        except FileExistsError:
            continue
        return candidate
    raise FileExistsError(f"no free name for run {run_id!r} beside {original or 'the current folder'}")


def _is_original(candidate: Path, original: str | None) -> bool:
    return bool(original) and candidate.resolve() == Path(original).resolve()
