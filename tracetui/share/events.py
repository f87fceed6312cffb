"""Every event of a run, each a collapsible ``<details>``: its fields and summary in the heading, its data
and the rest of its record inside (redacted, as the trace file holds them), the first failure open.

A page lists at most :data:`tracetui.share.budget.MAX_EVENTS` events of a run and stops showing data when
the page's budget is spent; each cut is said where it is, with the command that shows the rest."""
from __future__ import annotations

from typing import Any, Mapping, Sequence

from tracetui.share.budget import PageBudget, gaps
from tracetui.share.escape import clipped_text, json_text, shell_line, text
from tracetui.share.lanes import event_anchor
from tracetui.trace.format import FAILED, OUTCOME_ICONS

#: the most of one summary shown in an event's heading (the whole record is inside)
MAX_SUMMARY_CHARS = 2_000


def is_deciding(event: Mapping[str, Any], first_failure: Mapping[str, Any] | None) -> bool:
    ff = first_failure or {}
    return bool(ff) and event.get("lane") == ff.get("lane") and event.get("seq") == ff.get("seq")


def event_item(prefix: str, index: int, event: Mapping[str, Any], deciding: bool,
               budget: PageBudget | None = None) -> str:
    outcome = str(event.get("outcome"))
    fields = [("step", event.get("seq")), ("lane", event.get("lane")), ("kind", event.get("kind")),
              ("outcome", outcome), ("code", event.get("code")), ("call_id", event.get("call_id")),
              ("turn", event.get("turn")), ("t_ms", event.get("t_ms"))]
    shown = "".join(f'<span class="field"><span class="dim">{name}</span> {clipped_text(value, 200)}</span>'
                    for name, value in fields if value is not None)
    icon = OUTCOME_ICONS.get(outcome, "?")
    cls = "event deciding-event" if deciding else ("event failed" if outcome == FAILED else "event")
    mark = '<span class="ff-badge">◀ first failing boundary</span>' if deciding else ""
    summary = clipped_text(event.get("summary"), MAX_SUMMARY_CHARS)
    if budget is not None and budget.spent and not deciding:
        inside = ('<p class="dim">data not shown: the page is at its size limit '
                  '(tracetui open FILE shows it)</p>')
    else:
        rest = {k: v for k, v in event.items() if k != "data"}  # the data is shown just above it
        inside = (f'<h4>data</h4><pre>{json_text(event.get("data"))}</pre>'
                  f'<h4>rest of the record</h4><pre class="dim">{json_text(rest)}</pre>')
    item = (f'<details class="{cls}" id="{event_anchor(prefix, index)}"{" open" if deciding else ""}>'
            f'<summary><span class="icon {outcome if outcome in OUTCOME_ICONS else "other"}">{text(icon)}</span> '
            f'{shown} {mark}'
            f'<div class="summary-text">{summary}</div></summary>{inside}</details>')
    return budget.take(item) if budget is not None else item


def _gap(first: int, count: int, file: str) -> str:
    return (f'<p class="dim gap">… {count:,} events not on this page (numbers {first + 1:,} to '
            f'{first + count:,} of the run): {shell_line("tracetui", "open", file)} shows them</p>')


def events_list(prefix: str, events: Sequence[Mapping[str, Any]], first_failure: Mapping[str, Any] | None,
                shown: Sequence[int] | None = None, budget: PageBudget | None = None, file: str = "FILE") -> str:
    """The run's events in step order, the deciding one open; only the indexes in ``shown`` when given."""
    shown = list(range(len(events))) if shown is None else list(shown)
    cuts = {pos: (first, count) for pos, first, count in gaps(shown)}
    items = []
    for pos, i in enumerate(shown):
        if pos in cuts:
            items.append(_gap(*cuts[pos], file))
        items.append(event_item(prefix, i, events[i], is_deciding(events[i], first_failure), budget))
    if shown and shown[-1] < len(events) - 1:
        items.append(_gap(shown[-1] + 1, len(events) - 1 - shown[-1], file))
    return '<div class="events">' + "".join(items) + "</div>" if items else ""
