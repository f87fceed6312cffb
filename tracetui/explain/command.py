"""The ``tracetui replay … --set PATH=VALUE`` command that reproduces a fix, ready to paste.

A value is written the way ``replay --set`` reads it back (text fields as typed, the
rest as JSON), and checked by reading it back: an edit that cannot be typed on a
command line is never offered as a fix.
"""
from __future__ import annotations

import shlex
from typing import Any, Iterable

import orjson

from tracetui.explain.candidate import Edit
from tracetui.replay.edit import current_value, parse_value
from tracetui.replay.pointer import EditError
from tracetui.trace.reader import RunData


def _same(a: Any, b: Any) -> bool:
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return a == b


def set_text(run: RunData, edit: Edit) -> str | None:
    """What follows ``PATH=`` so that ``replay --set`` reads back exactly ``edit.value``; None when nothing does."""
    try:
        current, exists = current_value(run, edit.path)
    except EditError:
        return None
    texts = [edit.value] if exists and isinstance(current, str) and isinstance(edit.value, str) else []
    try:
        texts.append(orjson.dumps(edit.value).decode())
    except (TypeError, orjson.JSONEncodeError):
        return None
    for text in texts:
        try:
            if _same(parse_value(current, text, exists=exists), edit.value):
                return text
        except EditError:
            continue
    return None


def replay_command(file: str | None, run_id: str, run: RunData, edits: Iterable[Edit]) -> str | None:
    """The shell command that re-runs ``run`` with ``edits``, every argument quoted for a POSIX shell."""
    if file and file.startswith("-"):  # as typed it would be read as options
        file = f"./{file}"
    args = ["tracetui", "replay", file or "FILE", "--run", run_id]
    for edit in edits:
        text = set_text(run, edit)
        if text is None:
            return None
        args += ["--set", f"{edit.path}={text}"]
    return " ".join(shlex.quote(a) for a in args)
