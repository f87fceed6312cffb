"""Writing an edited run next to its original, never over it."""
from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Iterable

from tracetui.trace.writer import write_trace

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def edited_path(original: str | None, run_id: str, directory: str | None = None) -> Path:
    """A new file name for an edited run: beside the original, numbered so nothing is overwritten."""
    stem = Path(original).stem if original else "tracetui-demo"
    folder = Path(directory) if directory else (Path(original).parent if original else Path.cwd())
    safe_id = _UNSAFE.sub("_", run_id).strip("._")[:60] or "run"
    candidate = folder / f"{stem}.{safe_id}.edited.jsonl"
    n = 2
    while candidate.exists():
        candidate = folder / f"{stem}.{safe_id}.edited-{n}.jsonl"
        n += 1
    return candidate


def save_records(records: Iterable[dict[str, Any]], original: str | None, run_id: str,
                 directory: str | None = None) -> Path:
    path = edited_path(original, run_id, directory)
    if original and path.resolve() == Path(original).resolve():  # pragma: no cover - defensive
        raise ValueError("refusing to overwrite the original trace")
    write_trace(path, records)
    return path
