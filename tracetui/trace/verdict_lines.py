"""Verdict lines bound for a terminal, a million at a time (``tracetui check``).

Each line is :func:`~tracetui.trace.verdict.verdict_line` made safe by
:func:`~tracetui.trace.safe_text.printable`, the one path every printed byte takes.
Made whole for every run, that path costs more than reading the run: so the part
after the run id, which repeats across runs that failed alike, is made printable once
and remembered, and a plain run id (word characters, nothing a secret begins with)
needs no escaping. :func:`~tracetui.trace.safe_text.printable_joined` says why the two
parts can be made printable apart; a test holds the lines equal to the whole-line path.
"""
from __future__ import annotations

import re
from typing import Any, Mapping

from tracetui.trace.redact import holds_needle
from tracetui.trace.safe_text import printable, printable_joined
from tracetui.trace.verdict import verdict_line_parts

_PLAIN_ID = re.compile(r"[\w.#/@+-]{1,200}", re.ASCII).fullmatch
_MAX_REMEMBERED = 4096
#: every digit as 0: no shape a secret begins with holds a digit, so an id and its digits-as-0 form
#: hold the same ones, and ids numbered alike (run-1, run-2 …) are looked at once
_DIGITS_AS_ZERO = str.maketrans("123456789", "000000000")


class PrintableVerdicts:
    """``printable(verdict_line(run_id, verdict))`` for ``check``'s verdict dicts, remembered by failure."""

    def __init__(self) -> None:
        # (outcome, status, complete, id of the first failure) -> (that failure, icon, printed rest of the line)
        self._rest: dict[tuple, tuple[Any, str, str]] = {}
        self._plain: dict[str, bool] = {}  # a run id's digits-as-0 form -> plain, and nothing a secret begins with

    def plain(self, run_id: str) -> bool:
        shape = run_id.translate(_DIGITS_AS_ZERO)
        found = self._plain.get(shape)
        if found is None:
            if len(self._plain) >= _MAX_REMEMBERED:
                self._plain.clear()
            found = self._plain[shape] = bool(_PLAIN_ID(shape)) and not holds_needle(shape)
        return found

    def __call__(self, verdict: Mapping[str, Any]) -> str:
        run_id = verdict["run_id"]
        if not self.plain(run_id):
            return printable_joined(*verdict_line_parts(run_id, verdict))
        failure = verdict.get("first_failure")
        key = (verdict.get("outcome"), verdict.get("status"), verdict.get("complete"), id(failure))
        found = self._rest.get(key)
        if found is None or found[0] is not failure:  # the failure object is kept: its id stays its own
            icon, rest = verdict_line_parts("", verdict)
            if len(self._rest) >= _MAX_REMEMBERED:
                self._rest.clear()
            found = self._rest[key] = (failure, icon, printable(rest))
        return found[1] + run_id + found[2]
