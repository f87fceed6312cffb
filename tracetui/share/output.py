"""Where a page is written: atomically (:class:`~tracetui.trace.writer.AtomicWriter`), never over the trace
it shows, under a name a shell can pass when none is given."""
from __future__ import annotations

import re
from pathlib import Path
from typing import Sequence

from tracetui.trace.output_path import writes_over
from tracetui.trace.redact import redact_text
from tracetui.trace.writer import AtomicWriter

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def safe_name(text: str) -> str:
    """``text`` as a file name: only letters, digits, ``.``, ``_`` and ``-``, never leading with ``-`` or ``.``."""
    return _UNSAFE.sub("_", redact_text(text)).strip("._-")[:60] or "run"  # (no secret in a file name)


def default_output(trace_file: str, run_ids: Sequence[str], all_failed: bool) -> Path:
    """``<run id>.html`` for one run; ``<trace name>.failed.html`` or ``<trace name>.runs.html`` for several,
    in the current folder."""
    if len(run_ids) == 1 and not all_failed:
        return Path(f"{safe_name(run_ids[0])}.html")
    stem = safe_name(Path(trace_file).stem if trace_file != "-" else "stdin")
    return Path(f"{stem}.{'failed' if all_failed else 'runs'}.html")


class WritesOverInput(ValueError):
    """Refused: the page would replace the trace it shows."""


def write_page(path: str | Path, page: str, trace_file: str | None = None, exclusive: bool = False) -> Path:
    """Write ``page`` to ``path`` atomically; WritesOverInput when that is ``trace_file``; OSError otherwise."""
    if trace_file is not None and writes_over(path, trace_file):
        raise WritesOverInput(f"{path} is the trace this page shows; choose another file")
    with AtomicWriter(path, exclusive) as out:
        out.write(page.encode("utf-8", "backslashreplace"))
    return Path(path)


#: numbered names tried beside the original before giving up
MAX_TRIES = 1000


def write_beside(page: str, original: str | None, run_id: str) -> Path:
    """Write ``page`` to a new file beside ``original`` (the explorer's ``S``): ``STEM.RUN.html``, then
    ``STEM.RUN-2.html``…, each created exclusively (never over anything, nor through a link planted there)."""
    stem = "stdin" if original in (None, "-") else safe_name(Path(original).stem)
    folder = Path.cwd() if original in (None, "-") else Path(original).parent
    base = f"{stem}.{safe_name(run_id)}"
    for n in range(1, MAX_TRIES + 1):
        candidate = folder / (f"{base}.html" if n == 1 else f"{base}-{n}.html")
        try:
            return write_page(candidate, page, original if original not in (None, "-") else None, exclusive=True)
        except (FileExistsError, WritesOverInput):
            continue
    raise FileExistsError(f"no free name for the page of run {run_id!r} in {folder}")
