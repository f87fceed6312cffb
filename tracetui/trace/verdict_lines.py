"""Verdict lines bound for a terminal, a million at a time (``tracetui check``).

Each line is :func:`~tracetui.trace.verdict.verdict_line` made safe by
:func:`~tracetui.trace.safe_text.printable`, the one path every printed byte takes.
Made whole for every run, that path costs more than reading the run: so the part
after the run id, which repeats across runs that failed alike, is made printable once
and remembered, and a plain run id (word characters, nothing a secret begins with)
needs no escaping. :func:`~tracetui.trace.safe_text.printable_joined` says why the two
parts can be made printable apart; a test holds the lines equal to the whole-line path.

Real run ids are each their own (``run-91b72265b1f5``), so looking at them one by one for
what a secret begins with cost more than the rest of the line: :meth:`PrintableVerdicts.vouch`
looks at a chunk's ids at once, joined by line breaks (a needle held by one id is held by
the joined text; one that is found only across a line break sends every id of the batch to
the one-by-one look, which gives the same answer).
"""
from __future__ import annotations

import re
from typing import Any, Mapping

from tracetui.trace.redact import holds_needle
from tracetui.trace.safe_text import printable, printable_joined
from tracetui.trace.verdict import verdict_line_parts

_PLAIN_ID = re.compile(r"[\w.#/@+-]{1,200}", re.ASCII).fullmatch
#: ids looked at together, joined by line breaks: every one plain and nothing a secret begins with
_PLAIN_IDS = re.compile(r"(?:[\w.#/@+-]{1,200}\n)*[\w.#/@+-]{1,200}", re.ASCII).fullmatch
_MAX_REMEMBERED = 4096
#: verdict lines' rests remembered (each holds its failure): enough for the few hundred ways runs fail
#: alike, and a bound on what distinct failures (every one its own) cost while they never repeat
_MAX_RESTS = 1024


class PrintableVerdicts:
    """``printable(verdict_line(run_id, verdict))`` for ``check``'s verdict dicts, remembered by failure."""

    def __init__(self) -> None:
        # (outcome, status, complete, id of the first failure) -> (that failure, icon, printed rest of the line)
        self._rest: dict[tuple, tuple[Any, str, str]] = {}
        # a run id -> plain, and nothing a secret begins with (the id itself: what secrets begin with holds
        # digits, GR1348941 or dop_v1_, so ids told apart only by their digits are not alike)
        self._plain: dict[str, bool] = {}
        self._vouched: frozenset[str] = frozenset()  # the ids of the last batch, all plain (:meth:`vouch`)
        self._ready_rest: tuple[str, str] | None = None  # (icon, printed rest) of an answer-ready run's line

    def vouch(self, run_ids: list[str]) -> None:
        """The run ids whose verdicts come next, looked at together: when every one is plain and their joined
        text holds nothing a secret begins with, :meth:`plain` need not look at each (replaces the last batch)."""
        joined = "\n".join(run_ids)
        plain = (bool(run_ids) and joined.count("\n") == len(run_ids) - 1  # (no id holds a line break itself)
                 and bool(_PLAIN_IDS(joined)) and not holds_needle(joined))
        self._vouched = frozenset(run_ids) if plain else frozenset()

    def plain(self, run_id: str) -> bool:
        if run_id in self._vouched:
            return True
        found = self._plain.get(run_id)
        if found is None:
            if len(self._plain) >= _MAX_REMEMBERED:
                self._plain.clear()
            found = self._plain[run_id] = bool(_PLAIN_ID(run_id)) and not holds_needle(run_id)
        return found

    def ready_all(self, run_ids: list[str]) -> list[str]:
        """The lines of runs whose summaries say they are answer-ready (:func:`~.checking.ready_verdict`): the
        same lines as for those verdicts, their rest made once."""
        from tracetui.trace.checking import ready_verdict

        if self._ready_rest is None:
            icon, rest = verdict_line_parts("", ready_verdict(""))
            self._ready_rest = (icon, printable(rest))
        icon, rest = self._ready_rest
        vouched, plain = self._vouched, self.plain
        return [icon + run_id + rest if run_id in vouched or plain(run_id) else self(ready_verdict(run_id))
                for run_id in run_ids]

    def __call__(self, verdict: Mapping[str, Any]) -> str:
        run_id = verdict["run_id"]
        if not self.plain(run_id):
            return printable_joined(*verdict_line_parts(run_id, verdict))
        failure = verdict.get("first_failure")
        key = (verdict.get("outcome"), verdict.get("status"), verdict.get("complete"), id(failure))
        found = self._rest.get(key)
        if found is None or found[0] is not failure:  # the failure object is kept: its id stays its own
            icon, rest = verdict_line_parts("", verdict)
            if len(self._rest) >= _MAX_RESTS:
                self._rest.clear()
            found = self._rest[key] = (failure, icon, printable(rest))
        return found[1] + run_id + found[2]
