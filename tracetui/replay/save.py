"""Writing an edited run next to its original, never over it."""
from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Iterable

from tracetui.trace.writer import write_trace

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def edited_path(original: str | None, run_id: str, directory: str | None = None, edited: bool = True) -> Path:
    """A new file name for a run: beside the original, numbered so nothing is overwritten.

    An edited re-run is ``<file>.<run>.edited.jsonl``; a run written as it was recorded
    is ``<file>.<run>.jsonl`` (it is not edited, and its name must not say so).
    """
    stem = Path(original).stem if original else "tracetui-demo"
    folder = Path(directory) if directory else (Path(original).parent if original else Path.cwd())
    safe_id = _UNSAFE.sub("_", run_id).strip("._")[:60] or "run"
    tag = ".edited" if edited else ""
    candidate = folder / f"{stem}.{safe_id}{tag}.jsonl"
    n = 2
    while candidate.exists() or (original and candidate.resolve() == Path(original).resolve()):
        candidate = folder / f"{stem}.{safe_id}{tag}-{n}.jsonl"
        n += 1
    return candidate


def save_records(records: Iterable[dict[str, Any]], original: str | None, run_id: str,
                 directory: str | None = None, edited: bool = True) -> Path:
    path = edited_path(original, run_id, directory, edited)
    if original and path.resolve() == Path(original).resolve():  # pragma: no cover - defensive
        raise ValueError("refusing to overwrite the original trace")
    write_trace(path, records)
    return path
