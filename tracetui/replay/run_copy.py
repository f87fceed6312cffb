"""A file for a printed command to name when the run has none of its own (standard input, the demo).

``cat runs.jsonl | tracetui open -`` reads a pipe: a command that names ``./-`` cannot
be run later, and the pipe is gone anyway. So a command that re-runs or explains such
a run names a copy of it instead, written as ``w`` writes a run (its records,
redacted) into this user's private folder under the temporary folder (the one
``explain`` writes long values to: ``$TMPDIR/tracetui-UID/``, mode 0700, so no one else
can plant a run there). The name holds a hash of the content: copying the same run
again writes nothing new, and two copies never race for one name; it is written
atomically.
"""
from __future__ import annotations

import hashlib
import re
from pathlib import Path

from tracetui.replay.value_file import write_private_once
from tracetui.trace.reader import RunData
from tracetui.trace.redact import redact_text
from tracetui.trace.writer import NothingToWrite, encode_records

STDIN = "-"
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def has_own_file(original: str | None) -> bool:
    """Whether a command can name ``original`` itself (not standard input, not the built-in demo)."""
    return bool(original) and original != STDIN


def write_run_copy(run: RunData) -> Path:
    """``run``'s records in a file of the private folder (:func:`~tracetui.replay.value_file.write_private_once`) named after their hash; OSError or NothingToWrite
    (both with a sentence to show) when it cannot be written."""
    records = [r for r in (run.run, *run.events, run.summary) if r is not None]
    if not records:
        raise NothingToWrite(f"run {run.run_id!r} has no records to copy")
    data = encode_records(records)
    # the name is shown in listings and toasts: a run id that looks like a secret is named as the file holds it
    safe_id = _UNSAFE.sub("_", redact_text(run.run_id)).strip("._")[:60] or "run"
    return write_private_once(f"run-{safe_id}.{hashlib.sha256(data).hexdigest()[:16]}.jsonl", data)


def command_file(original: str | None, run: RunData) -> str:
    """The trace file a printed command for ``run`` names: ``original`` when it is a file, else a copy of the run
    (:func:`write_run_copy`; its errors propagate)."""
    if has_own_file(original):
        return str(original)
    return str(write_run_copy(run))
