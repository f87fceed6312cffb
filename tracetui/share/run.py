"""One run's section of a page: its title, the banner (verdict, whose failure, reason), the swimlanes,
the proven fixes and every event."""
from __future__ import annotations

from typing import Any, Callable, Mapping

from tracetui.explain import explain
from tracetui.share import budget as limits
from tracetui.share.budget import PageBudget, shown_steps
from tracetui.share.escape import shell_line, text
from tracetui.share.events import events_list, is_deciding
from tracetui.share.fixes import fixes_section, responsibility_words
from tracetui.share.lanes import lanes_table
from tracetui.trace.format import FAILED, LANE_TITLES, RECOVERED
from tracetui.trace.reader import RunData
from tracetui.trace.verdict import ICONS


def _seq_key(event: Mapping[str, Any]) -> int:
    seq = event.get("seq")
    return seq if type(seq) is int else 0


def headline(verdict: Mapping[str, Any], recovered: int, events: int) -> tuple[str, str]:
    """(verdict line, reason line), worded as the explorer's banner words them."""
    ff = verdict.get("first_failure")
    status = verdict.get("status")
    if ff:
        lane = str(ff.get("lane") or "?")
        where = f"{LANE_TITLES.get(lane, lane).upper()} at step {ff.get('seq')}"
        if ff.get("decided_at") is not None and ff.get("decided_at") != ff.get("seq"):
            where += f" (gave up at step {ff.get('decided_at')})"
        line = f"{ICONS[FAILED]} {status} — first failing boundary: {where}"
        if verdict.get("complete") is False:
            line += " · incomplete: no summary line"
        return line, str(ff.get("reason") or "")
    if verdict.get("outcome") == FAILED:
        return (f"{ICONS[FAILED]} {status} — not ready, and no event shows where it failed",
                f"the summary gives status {status!r} but records no failing boundary")
    if verdict.get("complete") is False:
        return f"{ICONS['incomplete']} incomplete — no summary line and no failed event", \
            f"the run stopped after {events} event(s)"
    if recovered:
        return f"{ICONS['recovered']} {status} — ready after {recovered} recovered failure(s) ↺", \
            "every failure was overcome"
    return f"{ICONS['ready']} {status} — every boundary passed", ""


def run_title(run: RunData) -> str:
    inputs = run.inputs if isinstance(run.inputs, dict) else {}
    parts = [f"run {run.run_id}"]
    if isinstance(inputs.get("scenario"), str):
        parts.append(f"scenario {inputs['scenario']}")
    if isinstance(inputs.get("ablation"), str) and inputs["ablation"] != "complete":
        parts.append(inputs["ablation"])
    metrics = (run.summary or {}).get("metrics")
    if isinstance(metrics, dict):
        for key, noun in (("model_calls", "model call"), ("tool_calls", "tool call")):
            n = metrics.get(key)
            if type(n) is int:
                parts.append(f"{n} {noun}" + ("" if n == 1 else "s"))
    return " · ".join(parts)


def left_out_section(prefix: str, run: RunData, file: str) -> str:
    """What stands for a run a full page has no room for: its id and the command that makes its own page."""
    return (f'<section class="run" id="{prefix}"><h2>{text(run_title(run))}</h2><p class="dim">not on this page: '
            f'the page is at its size limit ({limits.MAX_RUNS} runs in full, {limits.PAGE_CHARS // 1_000_000} MB); '
            f'{shell_line("tracetui", "share", file, "--run", run.run_id)} '
            f'makes a page of it alone</p></section>')


def run_section(prefix: str, run: RunData, file: str, prove: Callable[[RunData], Any] = explain,
                budget: PageBudget | None = None) -> str:
    """The section for ``run``; ``prefix`` (the page's own ``r1``, ``r2``…) names its anchors. With a
    ``budget``, a run it has no room left for is only named (and not proved), and its data stops where
    the budget does."""
    if budget is not None and not budget.room_for_a_run():
        return left_out_section(prefix, run, file)
    verdict = run.verdict()
    events = sorted(run.events, key=_seq_key)
    recovered = sum(1 for e in events if e.get("outcome") == RECOVERED)
    line, reason = headline(verdict, recovered, len(events))
    failed = verdict.get("outcome") == FAILED
    tone = "failed" if failed else ("ready" if verdict.get("ready") and not recovered else "warn")
    banner = [f'<div class="banner {tone}"><div class="verdict">{text(line)}</div>']
    whose = verdict.get("responsibility")
    if failed and whose:
        css = whose if whose in ("model", "harness", "environment", "guard") else "other"
        banner.append(f'<div class="whose"><span class="resp {css}">{text(whose)}</span> '
                      f'<span class="dim">— {text(responsibility_words(whose))}</span></div>')
    if reason:
        banner.append(f'<div class="reason">{text(reason)}</div>')
    banner.append("</div>")
    ff = verdict.get("first_failure")
    shown = shown_steps(len(events), [i for i, e in enumerate(events) if is_deciding(e, ff)])
    parts = [f'<section class="run" id="{prefix}"><h2>{text(run_title(run))}</h2>', "".join(banner),
             "<h3>Lanes</h3>", lanes_table(prefix, events, ff, shown)]
    if failed:
        parts.append(fixes_section(run, file, prove))
    count = f"{len(events):,}" if len(shown) == len(events) else f"{len(shown):,} of {len(events):,}"
    parts.append(f"<h3>Events ({count})</h3>")
    if budget is not None:
        budget.take("".join(parts))
    parts += [events_list(prefix, events, ff, shown, budget, file), "</section>"]
    return "".join(parts)
