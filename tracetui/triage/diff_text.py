"""``tracetui diff``'s text: both verdicts, the first divergence, then the aligned steps side by side.

Every piece of trace text goes through :func:`~tracetui.trace.safe_text.one_line` (redacted, control
characters made visible, cut to its column), so a hostile trace prints literally and a line never
wraps into the next. Rows: ``>`` marks the first divergence, ``*`` any other step that differs.
"""
from __future__ import annotations

from typing import Any, Iterator

from tracetui.replay.run_diff import DiffRow, RunDiff, Step
from tracetui.trace.format import OUTCOME_ICONS
from tracetui.trace.safe_text import one_line, printable
from tracetui.trace.verdict import verdict_line_parts

#: the width of each run's column of steps
SIDE = 44


def _side(step: Step | None) -> str:
    if step is None:
        return "·".ljust(SIDE)
    icon = OUTCOME_ICONS.get(step.facts.outcome, "?")
    return f"{icon} {one_line(str(step.event.get('summary') or step.event.get('kind')), SIDE - 2)}".ljust(SIDE)


def _turn(row: DiffRow) -> str:
    turns = [s.turn for s in (row.a, row.b) if s is not None]
    return str(turns[0]) if len(set(turns)) == 1 else f"{turns[0]}/{turns[1]}"


def diff_lines(diff: RunDiff, a_name: str, b_name: str) -> Iterator[str]:
    """The lines ``tracetui diff`` prints (each already safe for a terminal)."""
    names = [printable(a_name), printable(b_name)]
    width = max(len(n) for n in names)
    for label, name, verdict in zip((diff.a_label, diff.b_label), names, diff.verdicts):
        yield f"{printable(label)}  {name.ljust(width)}  {one_line(_verdict(verdict), 160)}"
    yield "same verdict" if diff.same_verdict else "verdicts differ"
    if diff.first_divergence is None:
        yield f"no step differs ({len(diff.rows)} aligned)"
        return
    where = ""
    if diff.first_index is not None:
        row = diff.rows[diff.first_index]
        where = " (" + ", ".join(f"{printable(label)} step {step.seq}" for label, step in
                                 ((diff.a_label, row.a), (diff.b_label, row.b)) if step is not None) + ")"
    yield f"first divergence{where}: {printable(diff.first_divergence)}"
    yield f"{diff.differing} of {len(diff.rows)} aligned step(s) differ"
    yield ""
    yield f"  turn  {'lane'.ljust(13)} {printable(diff.a_label)[:SIDE].ljust(SIDE)}  {printable(diff.b_label)[:SIDE]}"
    for i, row in enumerate(diff.rows):
        mark = ">" if i == diff.first_index else " " if row.same else "*"
        yield f"{mark} {_turn(row).ljust(5)} {row.lane.ljust(13)} {_side(row.a)}  {_side(row.b)}".rstrip()


def _verdict(verdict: dict[str, Any]) -> str:
    icon, rest = verdict_line_parts("", verdict)
    return f"{icon.strip()} {rest.strip()}"
