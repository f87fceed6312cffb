"""An explanation in words (for people) and as data (``--json``), each fix with its replay command."""
from __future__ import annotations

from typing import Any

from tracetui.explain.candidate import SIDES, brief
from tracetui.explain.command import PrintedCommand, printed_command, redacted_note, set_text, value_files_note
from tracetui.explain.kinds import REFUSED_REQUEST, partials_shown
from tracetui.explain.search import FIX, PARTIAL, WHAT_IF, Explanation, Proof
from tracetui.trace.responsibility import GUARD, WORDS as RESPONSIBILITY_WORDS
from tracetui.trace.safe_text import printable
from tracetui.trace.verdict import ICONS


def verdict_brief(verdict: dict[str, Any]) -> str:
    """'✗ permission_denied @ authorization 4' or '✓ answer_ready'."""
    if verdict.get("ready"):
        return f"{ICONS['ready']} answer_ready"
    ff = verdict.get("first_failure") or {}
    where = f" @ {ff.get('lane')} {ff.get('seq')}" if ff else ""
    return f"{ICONS['failed']} {verdict.get('status')}{where}"


def edit_words(proof: Proof, limit: int = 80) -> list[str]:
    """``path = value`` for each edit of a fix."""
    return [f"{e.path} = {brief(e.value, limit)}" for e in proof.edits]


def side_words(proof: Proof) -> str:
    return " + ".join(SIDES.get(s, s) for s in proof.candidate.side.split(" + "))


def proof_data(proof: Proof, file: str | None, rank: int, run_id: str,
               agent_command: list[str] | None = None) -> dict[str, Any]:
    """A proof as ``--json`` gives it; its replay command re-runs ``agent_command`` (by default the command the
    proof's own replay re-ran, for a recorded agent's run)."""
    run = proof.outcome.original
    command = printed_command(file, run_id, run, proof.edits, agent_command or proof.command)
    return {
        "rank": rank,
        "kind": proof.kind,
        "why_not": proof.why_not,
        "edits": [{"path": e.path, "value": e.value, "set": _set_arg(run, e)} for e in proof.edits],
        "words": proof.candidate.words,
        "side": proof.candidate.side,
        "lane": proof.candidate.lane,
        "at_first_failure": proof.at_first_failure,
        "before": proof.outcome.before,
        "after": proof.outcome.after,
        "events_changed": len(proof.outcome.changes),
        "command": command.text,
        "command_why_not": command.why_not,  # why "command" is null
    }


def _set_arg(run: Any, edit: Any) -> str | None:
    """What ``--set`` takes for an edit; None when no argument sets it (a path holding "=" is cut there)."""
    text = set_text(run, edit)
    return None if text is None or "=" in edit.path else f"{edit.path}={text}"


def _within(groups: list[list[Proof]], limit: int) -> tuple[list[list[Proof]], int]:
    """Each group cut to one budget of ``limit`` proofs, spent in order (fixes, then what-ifs, then partials),
    and how many were left out: what ``--limit`` means in text and in JSON alike."""
    room, shown = limit, []
    for proofs in groups:
        shown.append(proofs[:max(room, 0)])
        room -= len(shown[-1])
    return shown, sum(len(g) for g in groups) - sum(len(g) for g in shown)


def as_data(result: Explanation, file: str | None, limit: int) -> dict[str, Any]:
    run_id = result.run.run_id
    (fixes, what_ifs, partials), more = _within([result.fixes, result.what_ifs, shown_partials(result)], limit)
    ranks = iter(range(1, limit + 1))  # one numbering across the three lists, as the text numbers them
    return {
        "file": file,
        "run_id": run_id,
        "before": result.before,
        "reason": result.reason,
        "responsibility": result.responsibility,
        "headline": result.headline,
        "tried": result.tried,
        "refused": result.refused,
        "single_edit_fix": result.single_edit_fix,
        "fixes": [proof_data(p, file, next(ranks), run_id) for p in fixes],
        "what_ifs": [proof_data(p, file, next(ranks), run_id) for p in what_ifs],
        "partials": [proof_data(p, file, next(ranks), run_id) for p in partials],
        "more": more,  # left out by --limit
        **({"reruns": result.reruns, "seconds_per_run": result.seconds_per_run} if result.command else {}),
    }


def reruns_words(result: Explanation | Any) -> str | None:
    """How long proving took, for a run of the user's own agent: "12 re-runs of your command, 0.42 s each"
    (of an :class:`Explanation` or a finished :class:`~tracetui.explain.search.Search`)."""
    if not result.command or not result.reruns:
        return None
    n, each = result.reruns, result.seconds_per_run or 0.0
    if n == 1:
        return f"1 re-run of your command: {each:.2f} s"
    return f"{n} re-runs of your command, {each:.2f} s each (two at a time)"


def shown_partials(result: Explanation) -> list[Proof]:
    """Partials are listed only when no fix is proven, and never when a guard held (nothing needs fixing):
    the rule every surface uses, :func:`tracetui.explain.kinds.partials_shown`."""
    return partials_shown(result.partials, bool(result.fixes), result.guard_held)


def _block(proof: Proof, n: int, file: str | None, run_id: str) -> list[str]:
    c = proof.candidate
    where = "at the first failing boundary" if proof.at_first_failure else f"on {c.lane or 'the run'}"
    label = {FIX: "", WHAT_IF: "what if: ", PARTIAL: "partial: "}.get(proof.kind, "")
    lines = [f"{n:>2}. {label}{c.words}", f"    {side_words(proof)} · {where}"]
    if proof.why_not:
        lines.append(f"    not a fix: {proof.why_not}")
    lines += [f"    {w}" for w in edit_words(proof)]
    lines.append(f"    {verdict_brief(proof.outcome.before)}  →  {verdict_brief(proof.outcome.after)}")
    after = proof.outcome.after
    if (proof.kind == PARTIAL and after.get("responsibility") == GUARD
            and (after.get("first_failure") or {}).get("code") in REFUSED_REQUEST):
        lines.append("    then a guard refuses what the user asked for: the run ends where it should")
    command = printed_command(file, run_id, proof.outcome.original, proof.edits, proof.command)
    return [printable(line) for line in lines] + _command_lines(command, "    ")


def _command_lines(command: PrintedCommand, indent: str) -> list[str]:
    """The command as it is (already redacted and checked to print unchanged: a printable() pass over the
    quoted line is what let trace content out of its quotes), its notes, or why there is none."""
    if command.text is None:
        return [printable(f"{indent}no command: {command.why_not}")]
    notes = [n for n in (value_files_note(command.text), redacted_note(command)) if n]
    return [indent + command.text] + [printable(indent + n) for n in notes]


def as_text(result: Explanation, file: str | None, limit: int) -> list[str]:
    """The report ``tracetui explain`` prints: the verdict and who is responsible, what a guard that held means,
    then each proven fix, best first, then the what-ifs (or the partials when nothing gets the run through)."""
    run_id = result.run.run_id
    lines = [printable(f"{verdict_brief(result.before)}  run {run_id}")]
    ff = result.before.get("first_failure") or {}
    if ff.get("reason"):
        lines.append(printable(f"   {ff['reason']}"))
    if result.responsibility:
        words = RESPONSIBILITY_WORDS.get(result.responsibility, "")
        lines.append(f"   responsibility: {result.responsibility} ({words})")
    if result.reason:
        return lines + [printable(result.reason)]
    if result.headline:
        lines += ["", printable(result.headline)]
    tried = f"{result.tried} edit{'s' if result.tried != 1 else ''} tried by replay"
    partials = shown_partials(result)
    sections: list[tuple[str, list[Proof]]] = []
    if result.fixes:
        n = len(result.fixes)
        head = f"{n} proven fix{'es' if n != 1 else ''} ({tried})"
        if not result.single_edit_fix:
            head = (f"no single edit makes it answer-ready; {n} pair{'s' if n != 1 else ''} of edits "
                    f"do{'' if n != 1 else 'es'} ({tried})")
        sections.append((head, result.fixes))
    if result.what_ifs:
        n = len(result.what_ifs)
        head = f"{n} what-if{'s' if n != 1 else ''}: true, but not a fix"
        sections.append((head if result.fixes else f"no proven fix; {head} ({tried})", result.what_ifs))
    if partials:
        head = "these get it further (partial)"
        sections.append((head if result.what_ifs else f"no edit makes it answer-ready ({tried}); {head}", partials))
    if not sections:
        timing = reruns_words(result)
        return lines + ["", f"no edit tracetui can derive from this run changes its verdict ({tried})"] + (
            ["", timing] if timing else [])
    groups, more = _within([proofs for _, proofs in sections], limit)
    n = 0
    for (head, _), shown in zip(sections, groups):
        if not shown:
            continue
        lines += ["", head + ":"]
        for proof in shown:
            n += 1
            lines += [""] + _block(proof, n, file, run_id)
    if more > 0:
        lines += ["", f"… {more} more (--limit {limit + more} to see them)"]
    timing = reruns_words(result)
    return lines + (["", timing] if timing else [])


def top_fix_line(result: Explanation, file: str | None) -> str:
    """One line for ``check --explain``: the best proven fix and its command, or why there is none."""
    best = result.best  # a fix, never a what-if
    if best is None:
        if result.reason:
            return printable(f"    no fix: {result.reason}")
        if result.headline:
            return printable(f"    no fix: {result.headline}")
        partials = shown_partials(result)
        partial = f"; best partial: {partials[0].candidate.words}" if partials else ""
        what_if = f"; {len(result.what_ifs)} what-if(s), none a fix" if result.what_ifs else ""
        return printable(f"    no proven fix ({result.tried} edits tried){what_if}{partial}")
    command = printed_command(file, result.run.run_id, best.outcome.original, best.edits, best.command)
    pair = " (2 edits)" if len(best.edits) > 1 else ""
    return "\n".join([printable(f"    fix{pair}: {best.candidate.words}")] + _command_lines(command, "      "))
