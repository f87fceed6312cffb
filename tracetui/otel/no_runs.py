"""The error of an OTLP/JSON file that gave no run (read whole, streamed, or opened): why, in words."""
from __future__ import annotations

from tracetui.trace.reader import Problem, TraceReadError


def no_runs_error(problems: list[Problem], label: str) -> TraceReadError:
    """The reason, not a count: the first problem (check lists the first few before this)."""
    if not problems:
        detail = "an OTLP/JSON file with no span in it"
    else:
        more = f"; {len(problems) - 1} more problem(s)" if len(problems) > 1 else ""
        detail = f"an OTLP/JSON file; line {problems[0].line}: {problems[0].message}{more}"
    return TraceReadError(f"{label}: no runs found ({detail})", problems)
