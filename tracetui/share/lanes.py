"""The six swimlanes as an HTML table: one column per step, one row per boundary, the first failure marked.

The same grid the explorer draws (:mod:`tracetui.ui.widgets.swimlanes`), in HTML: a cell per
event on its lane, ``·`` where the step is on another lane, the deciding cell marked ``◀`` and
its lane ``▶``, "not reached" after a lane no event crossed. Each cell links to its event below
(an anchor this package numbers; nothing from the trace is ever part of a link).
"""
from __future__ import annotations

from typing import Any, Mapping, Sequence

from tracetui.share.budget import gaps
from tracetui.share.escape import text
from tracetui.trace.format import FAILED, LANE_TITLES, LANES, OK, OUTCOME_ICONS

#: what a passed check says in its cell, per lane (the explorer's words)
OK_WORDS = {"arguments": "valid", "authorization": "allowed", "receipt": "receipt", "answer": "verified"}


def cell_word(event: Mapping[str, Any]) -> str:
    """A cell's word: the HTTP status, the failure code, the generation's kind, or what a passed check says."""
    lane, outcome, code = event.get("lane"), event.get("outcome"), event.get("code")
    data = event.get("data") if isinstance(event.get("data"), dict) else {}
    response = data.get("response") if isinstance(data.get("response"), dict) else {}
    if outcome != OK and isinstance(code, str) and code:
        if lane != "http" or not isinstance(response.get("status"), int) or code in ("unexpected_body",
                                                                                     "stream_interrupted"):
            return code
    if lane == "http" and isinstance(response.get("status"), int):
        return str(response["status"])
    if lane == "generation":
        kind = data.get("kind")
        return {"tool_calls": "calls"}.get(kind, kind) if isinstance(kind, str) and kind else "ok"
    if event.get("kind") == "receipt.lookup":
        return "lookup"
    return OK_WORDS.get(str(lane), "ok")


def event_anchor(prefix: str, index: int) -> str:
    """The id of a run's ``index``-th event on the page (made of the page's own numbers only)."""
    return f"{prefix}-e{int(index)}"


def lanes_table(prefix: str, events: Sequence[Mapping[str, Any]], first_failure: Mapping[str, Any] | None,
                shown: Sequence[int] | None = None) -> str:
    """The grid for one run's ``events`` (in step order); ``prefix`` names the run on the page. Only the
    steps at the indexes in ``shown`` when given, a ``…`` column where some are left out."""
    if not events:
        return '<p class="dim">this run has no events</p>'
    ff = first_failure or {}
    ff_lane, ff_seq, decided = ff.get("lane"), ff.get("seq"), ff.get("decided_at")
    shown = list(range(len(events))) if shown is None else list(shown)
    cuts = {pos for pos, _, _ in gaps(shown)}
    head = ['<th class="lane-name">step</th>']
    for pos, i in enumerate(shown):
        event = events[i]
        if pos in cuts:
            head.append('<th class="gap dim" title="steps not on this page">…</th>')
        seq = event.get("seq")
        mark = " ▼" if seq == ff_seq and ff_seq is not None else ""
        head.append(f'<th class="{"ff-step" if mark else "step"}">{text(seq)}{mark}</th>')
    rows = ["<tr>" + "".join(head) + "</tr>"]
    for lane in LANES:
        reached = any(e.get("lane") == lane for e in events)
        failing = lane == ff_lane
        name = ("▶ " if failing else "") + LANE_TITLES.get(lane, lane)
        cls = "lane-name ff-lane" if failing else ("lane-name" if reached else "lane-name dim")
        cells = [f'<th class="{cls}" scope="row">{text(name)}</th>']
        for pos, i in enumerate(shown):
            event = events[i]
            if pos in cuts:
                cells.append('<td class="off gap">…</td>')
            if event.get("lane") != lane:
                cells.append('<td class="off">·</td>')
                continue
            outcome = event.get("outcome")
            deciding = failing and event.get("seq") == ff_seq
            label = f"{OUTCOME_ICONS.get(outcome, '?')} {cell_word(event)}" + (" ◀" if deciding else "")
            cls = "deciding" if deciding else {OK: "ok", FAILED: "failed"}.get(str(outcome), "recovered")
            if not deciding and outcome == FAILED and event.get("seq") == decided:
                cls += " gave-up"
            marker = ' data-first-failure="true" title="first failing boundary"' if deciding else ""
            cells.append(f'<td class="{cls}"{marker}><a href="#{event_anchor(prefix, i)}">{text(label)}</a></td>')
        tail = "◀ first failure" if failing else ("" if reached else "─ not reached")
        cells.append(f'<td class="tail{" ff-tail" if failing else " dim"}">{tail}</td>')
        rows.append(f'<tr class="lane{" ff-row" if failing else ""}">' + "".join(cells) + "</tr>")
    return '<div class="lanes-scroll"><table class="lanes">' + "".join(rows) + "</table></div>"
