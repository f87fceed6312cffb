"""A run's proven fixes on the page: explain's own proofs (:func:`tracetui.explain.report.as_data`), each with
its replay command, or why a page cannot list any.

A page proves fixes only for a run tracetui can re-run by itself (the built-in loop's). A recording
of the user's own agent is re-run with the user's command, which a page never guesses (and never reads
from the trace); an OpenTelemetry import has no inputs to re-run.
"""
from __future__ import annotations

from typing import Any, Callable, Mapping

from tracetui.explain import explain
from tracetui.explain.candidate import SIDES
from tracetui.explain.report import as_data
from tracetui.replay.agent_replay import is_recorded
from tracetui.share.escape import json_text, shell_line, text
from tracetui.trace.reader import RunData
from tracetui.trace.redact import redact_value
from tracetui.trace.responsibility import WORDS as RESPONSIBILITY_WORDS

#: proposals shown per run (fixes first, then what-ifs, then partials: explain's one ranking)
LIMIT = 10
KIND_WORDS = {"fix": "fix", "what_if": "what if", "partial": "partial"}


def not_rerunnable(run: RunData, file: str) -> str | None:
    """Why a page lists no fix for ``run`` without proving any (page HTML), or None when it can prove them."""
    record = run.run or {}
    if record.get("source") == "otel":
        return ("imported from OpenTelemetry: its inputs are not recorded, so it cannot be re-run and no fix "
                "can be proven")
    if is_recorded(run):
        return (text("a recording of your own agent: its fixes are proven by re-running your command, which "
                     "this page does not know: ")
                + shell_line("tracetui", "explain", file, "--run", run.run_id, "--") + " COMMAND")
    return None


def explain_more_command(file: str, run_id: str, limit: int) -> str:
    """The command that lists every proposal of a run (page HTML, each argument quoted)."""
    return shell_line("tracetui", "explain", file, "--run", run_id, "--limit", str(limit))


def _proposal(item: Mapping[str, Any]) -> str:
    kind = str(item.get("kind"))
    label = KIND_WORDS.get(kind, kind)
    css = kind if kind in KIND_WORDS else "fix"
    where = "at the first failing boundary" if item.get("at_first_failure") else text(item.get("lane") or "the run")
    parts = [f'<li class="proposal {css}"><div class="proposal-head"><span class="kind">{text(label)}</span> '
             f'{text(item.get("words") or "")}</div>',
             f'<div class="dim">{text(_side_words(item.get("side")))} · '
             f'{where}'
             f'</div>']
    if item.get("why_not"):
        parts.append(f'<div class="why-not">not a fix: {text(item["why_not"])}</div>')
    for edit in item.get("edits") or ():
        # redacted with its path, so an edit to a credential field (…/api_key) shows no value
        value = redact_value({"path": edit.get("path"), "value": edit.get("value")}).get("value")
        parts.append(f'<details class="edit"><summary><code>{text(edit.get("path"))}</code></summary>'
                     f'<pre>{json_text(value)}</pre></details>')
    before, after = item.get("before") or {}, item.get("after") or {}
    parts.append(f'<div>{text(_brief(before))} → {text(_brief(after))}</div>')
    if item.get("command"):
        parts.append(f'<pre class="command">{text(item["command"])}</pre>')
        if "=@" in str(item["command"]):
            parts.append('<div class="dim">a long value is read from a file explain wrote on the machine that '
                         'made this page (--set PATH=@FILE); the value is shown in full above</div>')
    else:
        parts.append(f'<div class="dim">no command: {text(item.get("command_why_not") or "")}</div>')
    return "".join(parts) + "</li>"


def _side_words(side: Any) -> str:
    return " + ".join(SIDES.get(s, s) for s in str(side or "").split(" + "))


def _brief(verdict: Mapping[str, Any]) -> str:
    if verdict.get("ready"):
        return "✓ answer_ready"
    ff = verdict.get("first_failure") or {}
    where = f" @ {ff.get('lane')} {ff.get('seq')}" if ff else ""
    return f"✗ {verdict.get('status')}{where}"


def fixes_section(run: RunData, file: str, prove: Callable[[RunData], Any] = explain) -> str:
    """The "proven fixes" block for a failed run."""
    why = not_rerunnable(run, file)
    if why is not None:
        return f'<section class="fixes"><h3>Proven fixes</h3><p class="dim">none listed: {why}</p></section>'
    data = as_data(prove(run), file, LIMIT)
    head = ['<section class="fixes"><h3>Proven fixes</h3>']
    if data.get("reason"):
        return "".join(head) + f'<p class="dim">{text(data["reason"])}</p></section>'
    if data.get("headline"):
        head.append(f'<p class="headline">{text(data["headline"])}</p>')
    proposals = [*data["fixes"], *data["what_ifs"], *data["partials"]]
    tried = f'{data["tried"]} edit{"s" if data["tried"] != 1 else ""} tried by replay'
    n = len(data["fixes"])
    if n:
        head.append(f"<p>{n} proven fix{'es' if n != 1 else ''} ({tried})</p>")
    elif proposals:
        what_ifs, partials = len(data["what_ifs"]), len(data["partials"])
        words = (f"{what_ifs} what-if{'s' if what_ifs != 1 else ''}: true, but not a fix" if what_ifs else
                 f"{partials} partial edit{'s' if partials != 1 else ''}: they get it further")
        head.append(f"<p>no proven fix; {words} ({tried})</p>")
    else:
        head.append(f"<p>no edit tracetui can derive from this run changes its verdict ({tried})</p>")
    head.append("<ol>" + "".join(_proposal(p) for p in proposals) + "</ol>")
    if data.get("more"):
        head.append(f'<p class="dim">… {int(data["more"])} more: '
                    f'{explain_more_command(file, run.run_id, LIMIT + int(data["more"]))}</p>')
    return "".join(head) + "</section>"


def responsibility_words(whose: str | None) -> str:
    return RESPONSIBILITY_WORDS.get(whose or "", "")
