"""The first divergence of two aligned runs, in one sentence a person would say.

One kind of sentence per way two runs part: the model called another tool, or the same tool with
other arguments, or its call failed (a failed call is never said to have answered); the HTTP call got another status; the authorization check decided otherwise; a
tool returned something else; the answer differs; one run retried where the other did not; one run
ended earlier. The words are trace text (raw): print them through
:func:`tracetui.trace.safe_text.printable`.
"""
from __future__ import annotations

from typing import Any, Sequence

from tracetui.trace.safe_text import redacted_prefix

#: a :class:`tracetui.replay.run_diff.Step` and ``DiffRow`` (run_diff imports this module: not typed by name here)
Step = DiffRow = Any

#: characters of a value (arguments, an answer) a sentence quotes at most
QUOTED = 72


def brief(text: str | None, limit: int = QUOTED) -> str:
    if text is None:
        return "nothing"
    text = " ".join(text.split())
    return text if len(text) <= limit else redacted_prefix(text, limit - 1) + "…"


def _quoted(text: str | None) -> str:
    return "nothing" if text is None else f"“{brief(text)}”"


def _other(x: object, y: object) -> bool:
    """Whether both steps say a fact and say it differently (a fact one of them does not record is no difference)."""
    return x is not None and y is not None and x != y


def _calls(step: Step) -> str:
    calls = step.facts.calls or ()
    return ", ".join(calls) if calls else "no tool"


def _got(step: Step) -> str:
    f = step.facts
    if f.error:  # a status came, then the body broke off; or no response at all
        return f"HTTP {f.status} but no whole response ({f.error})" if f.status is not None else f"no response ({f.error})"
    return f"HTTP {f.status}" if f.status is not None else (f"{f.outcome}" + (f" ({f.code})" if f.code else ""))


def _did(step: Step) -> str:
    """What a model call did: failed (and why), asked for tools, or answered."""
    f = step.facts
    if f.outcome == "failed":
        return f"model call failed ({f.code or 'no code'})"
    return f"model called {_calls(step)}" if f.calls else "model answered"


def _went(step: Step) -> str:
    f = step.facts
    return "went through" if f.outcome == "ok" else f"{f.outcome} ({f.code or 'no code'})"


def _at(x: Step, y: Step, a: str) -> str:
    return f"at turn {y.turn}" if x.turn == y.turn else f"at turn {y.turn} (turn {x.turn} of {a})"


def _both(row: DiffRow, a: str, b: str) -> str:
    x, y = row.a, row.b
    assert x is not None and y is not None
    fx, fy = x.facts, y.facts
    at = _at(x, y, a)
    if row.lane == "generation":
        failed = "failed" in (fx.outcome, fy.outcome) and (fx.outcome, fx.code) != (fy.outcome, fy.code)
        if failed:  # a call that failed asked for nothing (or for a cut-short part): say that it failed
            return f"run {b}'s {_did(y)} {at} where {a}'s {_did(x)}"
        if fx.calls != fy.calls:
            if fx.calls and fy.calls:
                return f"run {b}'s model called {_calls(y)} {at} where {a} called {_calls(x)}"
            if fy.calls:
                return f"run {b}'s model called {_calls(y)} {at} where {a}'s answered"
            if fx.calls:
                return f"run {b}'s model answered {at} where {a}'s called {_calls(x)}"
        if _other(fx.arguments, fy.arguments) and fx.calls and fx.outcome != "failed":
            return (f"run {b}'s model called {_calls(y)} with {brief(fy.arguments)} {at} where {a} passed "
                    f"{brief(fx.arguments)}")
        if (fx.outcome, fx.code) != (fy.outcome, fy.code):
            return f"run {b}'s model call {at} {_went(y)} where {a}'s {_went(x)}"
        if _other(fx.answer, fy.answer):
            return f"run {b}'s model answered {_quoted(fy.answer)} {at} where {a}'s answered {_quoted(fx.answer)}"
    elif row.lane == "http":
        if _other(fx.status, fy.status) or _other(fx.error, fy.error) or (fx.outcome, fx.code) != (fy.outcome, fy.code):
            return f"run {b}'s HTTP call {at} got {_got(y)} where {a}'s got {_got(x)}"
    elif row.lane == "arguments":
        if _other(fx.tool, fy.tool):
            return f"run {b}'s model called {fy.tool} {at} where {a} called {fx.tool}"
        if _other(fx.arguments, fy.arguments):
            return (f"run {b}'s model called {fy.tool} with {brief(fy.arguments)} {at} where {a} passed "
                    f"{brief(fx.arguments)}")
        if (fx.outcome, fx.code) != (fy.outcome, fy.code):
            return f"run {b}'s arguments for {fy.tool} {_went(y)} {at} where {a}'s {_went(x)}"
    elif row.lane == "authorization":
        if fx.outcome != fy.outcome or fx.code != fy.code:
            what = (fy.tool or "the call") + (f" on {fy.resource}" if fy.resource else "")
            if fy.outcome == "failed" and fx.outcome != "failed":
                return f"run {b}'s authorization denied {what} {at} ({fy.code}) where {a} allowed it"
            if fx.outcome == "failed" and fy.outcome != "failed":
                return f"run {b}'s authorization allowed {what} {at} where {a} denied it ({fx.code})"
            return f"run {b}'s authorization {_went(y)} {at} where {a}'s {_went(x)}"
        if _other(fx.resource, fy.resource) or _other(fx.tool, fy.tool):
            return (f"run {b}'s authorization was about {fy.tool} on {fy.resource} {at} where {a}'s was about "
                    f"{fx.tool} on {fx.resource}")
    elif row.lane == "receipt":
        if (fx.outcome, fx.code) != (fy.outcome, fy.code):
            return f"run {b}'s {fy.tool or 'tool'} {_went(y)} {at} where {a}'s {_went(x)}"
        if _other(fx.result, fy.result) or _other(fx.tool, fy.tool):
            return (f"run {b}'s {fy.tool or 'tool'} returned {brief(fy.result)} {at} where {a}'s returned "
                    f"{brief(fx.result)}")
    elif row.lane == "answer":
        if _other(fx.answer, fy.answer):
            return f"run {b}'s answer {at} was {_quoted(fy.answer)} where {a}'s was {_quoted(fx.answer)}"
        if (fx.outcome, fx.code) != (fy.outcome, fy.code):
            verdict = {"ok": "accepted"}.get(fy.outcome, f"rejected ({fy.code})")
            other = {"ok": "accepted"}.get(fx.outcome, f"rejected ({fx.code})")
            return f"run {b}'s answer {at} was {verdict} where {a}'s was {other}"
    return (f"run {b}'s {row.lane} step {at} says {brief(str(y.event.get('summary')))} where {a}'s says "
            f"{brief(str(x.event.get('summary')))}")


def _why_again(step: Step) -> str:
    """What made a run try again, from the step that failed (or was recovered) in its extra attempt or turn."""
    f = step.facts
    if step.lane == "http":
        return f"its HTTP call got {_got(step)}" + (f" ({f.code})" if f.code and f.status is not None else "")
    if step.lane == "arguments":
        return f"its arguments for {f.tool or 'a tool'} were rejected ({f.code}) and the model was asked again"
    if step.lane == "receipt":
        return f"its {f.tool or 'tool'} failed ({f.code}) and the model was asked again"
    return f"its {step.lane} step {f.outcome} ({f.code})"


def _one_side(rows: Sequence[DiffRow], index: int, a: str, b: str) -> str:
    row = rows[index]
    only_b = row.a is None
    here = row.b if only_b else row.a
    assert here is not None
    has, lacks = (b, a) if only_b else (a, b)
    other_left = any((r.a if only_b else r.b) is not None for r in rows[index:])
    if not other_left:
        last = next(((r.a if only_b else r.b) for r in reversed(rows[:index]) if (r.a if only_b else r.b)), None)
        where = f"after turn {last.turn}" if last is not None else "before its first step"
        return (f"run {lacks} ended {where} where {has} went on: {here.lane} at turn {here.turn} "
                f"({brief(str(here.event.get('summary')))})")
    # an extra attempt or turn: the rows only this run has, from here to the next row both have
    extra = []
    for r in rows[index:]:
        if r.a is not None and r.b is not None:
            break
        step = r.b if only_b else r.a
        if step is not None:
            extra.append(step)
    tried = next((s for s in extra if s.facts.outcome in ("recovered", "failed")), None)
    if tried is not None:
        return f"run {has} retried at turn {tried.turn}: {_why_again(tried)}; {lacks} needed no such retry"
    called = next((s for s in extra if s.facts.calls), None)
    if called is not None:
        return f"run {has}'s model called {_calls(called)} at turn {called.turn}, a turn {lacks} did without"
    return (f"only run {has} has a step on the {here.lane} lane at turn {here.turn}: "
            f"{brief(str(here.event.get('summary')))}")


def divergence_words(rows: Sequence[DiffRow], index: int, a: str = "A", b: str = "B") -> str:
    """The sentence for ``rows[index]``, the first row whose two sides do not read the same."""
    row = rows[index]
    if row.a is None or row.b is None:
        return _one_side(rows, index, a, b)
    return _both(row, a, b)
