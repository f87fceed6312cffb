"""An explanation in words (for people) and as data (``--json``), each fix with its replay command."""
from __future__ import annotations

from typing import Any

from tracetui.explain.candidate import SIDES, brief
from tracetui.explain.command import replay_command, set_text
from tracetui.explain.search import FIX, Explanation, Proof
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


def proof_data(proof: Proof, file: str | None, rank: int, run_id: str) -> dict[str, Any]:
    run = proof.outcome.original
    return {
        "rank": rank,
        "kind": proof.kind,
        "edits": [{"path": e.path, "value": e.value, "set": f"{e.path}={set_text(run, e)}"} for e in proof.edits],
        "words": proof.candidate.words,
        "side": proof.candidate.side,
        "lane": proof.candidate.lane,
        "at_first_failure": proof.at_first_failure,
        "before": proof.outcome.before,
        "after": proof.outcome.after,
        "events_changed": len(proof.outcome.changes),
        "command": replay_command(file, run_id, run, proof.edits),
    }


def as_data(result: Explanation, file: str | None, limit: int) -> dict[str, Any]:
    run_id = result.run.run_id
    return {
        "file": file,
        "run_id": run_id,
        "before": result.before,
        "reason": result.reason,
        "tried": result.tried,
        "refused": result.refused,
        "single_edit_fix": result.single_edit_fix,
        "fixes": [proof_data(p, file, i + 1, run_id) for i, p in enumerate(result.fixes[:limit])],
        "partials": [] if result.fixes else [proof_data(p, file, i + 1, run_id)
                                             for i, p in enumerate(result.partials[:limit])],
    }


def _block(proof: Proof, n: int, file: str | None, run_id: str) -> list[str]:
    c = proof.candidate
    where = "at the first failing boundary" if proof.at_first_failure else f"on {c.lane or 'the run'}"
    label = "partial: " if proof.kind != FIX else ""
    lines = [f"{n:>2}. {label}{c.words}", f"    {side_words(proof)} · {where}"]
    lines += [f"    {w}" for w in edit_words(proof)]
    lines.append(f"    {verdict_brief(proof.outcome.before)}  →  {verdict_brief(proof.outcome.after)}")
    command = replay_command(file, run_id, proof.outcome.original, proof.edits)
    if command:
        lines.append(f"    {command}")
    return [printable(line) for line in lines]


def as_text(result: Explanation, file: str | None, limit: int) -> list[str]:
    """The report ``tracetui explain`` prints: the verdict, then each proven fix, best first."""
    run_id = result.run.run_id
    lines = [printable(f"{verdict_brief(result.before)}  run {run_id}")]
    ff = result.before.get("first_failure") or {}
    if ff.get("reason"):
        lines.append(printable(f"   {ff['reason']}"))
    if result.reason:
        return lines + [printable(result.reason)]
    tried = f"{result.tried} edit{'s' if result.tried != 1 else ''} tried by replay"
    if result.fixes:
        n = len(result.fixes)
        head = f"{n} proven fix{'es' if n != 1 else ''} ({tried})"
        if not result.single_edit_fix:
            head = f"no single edit makes it answer-ready; {n} pair{'s' if n != 1 else ''} of edits do{'' if n != 1 else 'es'} ({tried})"
        lines += ["", head + ":"]
        shown = result.fixes[:limit]
    elif result.partials:
        lines += ["", f"no edit makes it answer-ready ({tried}); these get it further (partial):"]
        shown = result.partials[:limit]
    else:
        return lines + ["", f"no edit tracetui can derive from this run changes its verdict ({tried})"]
    for n, proof in enumerate(shown, 1):
        lines += [""] + _block(proof, n, file, run_id)
    more = len(result.fixes or result.partials) - len(shown)
    if more > 0:
        lines += ["", f"… {more} more (--limit {limit + more} to see them)"]
    return lines


def top_fix_line(result: Explanation, file: str | None) -> str:
    """One line for ``check --explain``: the best proven fix and its command, or why there is none."""
    best = result.best
    if best is None:
        if result.reason:
            return printable(f"    no fix: {result.reason}")
        partial = f"; best partial: {result.partials[0].candidate.words}" if result.partials else ""
        return printable(f"    no proven fix ({result.tried} edits tried){partial}")
    command = replay_command(file, result.run.run_id, best.outcome.original, best.edits)
    pair = " (2 edits)" if len(best.edits) > 1 else ""
    return printable(f"    fix{pair}: {best.candidate.words}") + "\n" + printable(f"      {command}")
