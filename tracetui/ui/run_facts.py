"""Small facts about a loaded run the main screen shows beside its verdict (pure: no Textual)."""
from __future__ import annotations

from typing import Any, Sequence

from tracetui.trace.format import NOT_RERUNNABLE
from tracetui.trace.reader import RunData
from tracetui.trace.source import RunEntry

def rerun_refusal(run: RunData) -> str | None:
    """Why E, e and i are not offered for ``run`` (an imported one, whose inputs were never recorded), or
    None. (A tracetui run missing its run line keeps them: pressing one says what is missing.)"""
    source = run.run.get("source") if run.run else None
    return NOT_RERUNNABLE.get(source) if isinstance(source, str) else None



def calls_words(entry: RunEntry, events: Sequence[dict[str, Any]]) -> str:
    """"2 model calls · 1 tool call" from the summary; without one (a cut run) the model calls are counted
    from the events, and the tool calls, which only the summary counts, are said to be unknown."""
    if entry.complete:
        return f"{_count(entry.model_calls, 'model call')} · {_count(entry.tool_calls, 'tool call')}"
    made = sum(1 for e in events if e.get("lane") == "generation")
    return f"{_count(made, 'model call')} · tool calls ? (no summary)"


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" + ("" if n == 1 else "s")
