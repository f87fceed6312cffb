"""The index of a page of several runs: a link to each run's section, grouped by failure signature for
``--all-failed`` (the biggest group first), so a CI page of many failures reads as a few kinds."""
from __future__ import annotations

from typing import Sequence

from tracetui.share.escape import text
from tracetui.trace.signature import failure_signature, signature_words
from tracetui.trace.reader import RunData


def grouped_runs(runs: Sequence[RunData]) -> list[tuple[str, list[RunData]]]:
    """(signature heading, its runs in file order), the most runs first, then in order of first appearance."""
    groups: dict[str, list[RunData]] = {}
    for run in runs:
        verdict = run.verdict()
        key = signature_words(failure_signature(verdict.get("first_failure"))) if not verdict.get("ready") \
            else "answer-ready"
        groups.setdefault(key, []).append(run)
    order = {key: i for i, key in enumerate(groups)}
    return sorted(groups.items(), key=lambda item: (-len(item[1]), order[item[0]]))


def _link(prefix: str, run: RunData) -> str:
    verdict = run.verdict()
    ff = verdict.get("first_failure") or {}
    where = f" — {ff.get('lane')}@{ff.get('seq')}" if ff else ""
    return (f'<li><a href="#{prefix}">{text(run.run_id)}</a> '
            f'<span class="dim">{text(str(verdict.get("status")) + where)}</span></li>')


def index_block(sections: Sequence[tuple[str, RunData]], groups: Sequence[tuple[str, list[RunData]]] | None) -> str:
    """The list of links at the top of the page; ``groups`` (from :func:`grouped_runs`) heads them by signature."""
    prefix_of = {id(run): prefix for prefix, run in sections}
    if groups is None:
        return ('<nav class="index"><h2>Runs</h2><ul>'
                + "".join(_link(prefix, run) for prefix, run in sections) + "</ul></nav>")
    n = len(sections)
    out = [f'<nav class="index"><h2>{n} run{"s" if n != 1 else ""}, {len(groups)} failure '
           f'signature{"s" if len(groups) != 1 else ""}</h2>']
    for heading, runs in groups:
        out.append(f'<h3 class="signature">{len(runs)} × {text(heading)}</h3><ul>'
                   + "".join(_link(prefix_of[id(run)], run) for run in runs) + "</ul>")
    return "".join(out) + "</nav>"
