"""What each MCP tool answers, as plain data: the same verdicts, fixes and comparisons the CLI's ``--json`` prints.

No logic of its own: verdicts come from the checker (or the OTLP reader), fixes from :func:`tracetui.explain.explain`
and :func:`tracetui.explain.report.as_data`, re-runs from :func:`tracetui.replay.replay.replay` and
:func:`tracetui.replay.comparison.comparison_data`. What is added here is what a server owes a caller it does not
trust: checked paths (:mod:`.paths`), pages and size limits (:mod:`.bounds`), a time limit, and no command run
on the caller's say-so.
"""
from __future__ import annotations

import time
from typing import Any, Callable

from tracetui.mcp.bounds import MAX_BYTES, Page, cursor, echoed, fitted, size
from tracetui.mcp.finding import TimeUp as _TimeUp
from tracetui.mcp.finding import find_run_until
from tracetui.mcp.paths import CheckedFile, Confinement, PathRefused
from tracetui.trace.reader import RunData, TraceReadError

#: room kept in each answer for what surrounds a page (the file, counts, the cursor)
ENVELOPE_BYTES = 4 * 1024
#: the largest OTLP/JSON file the server reads: it is read whole (~5 bytes of memory and ~0.1 s per KB read)
MAX_OTLP_BYTES = 64 * 1024 * 1024


class ToolFailed(Exception):
    """A call that cannot be answered, with the reason in words.

    Its words are the server's advice to the assistant, so they never hold trace content (a run id or a
    recorded command a hostile trace wrote there would read as the server's instruction): they name runs
    by the id the caller gave (cut short), and send the caller to list_runs for the rest."""




def _read_error(exc: BaseException, f: CheckedFile) -> ToolFailed:
    """A reader's error, naming the file as the caller did (not the descriptor it was read through)."""
    message = str(exc).replace(f.path, f.shown)
    if isinstance(exc, OSError):
        message = f"{f.shown}: {exc.strerror or exc}"
    return ToolFailed(message)


def _is_otlp(f: CheckedFile) -> bool:
    from tracetui.otel.detect import is_otlp

    return is_otlp(f.path)


def _otlp(f: CheckedFile) -> Any:
    """The OTLP/JSON file read whole, unless it is too big to be read whole within a call's bounds."""
    import os

    from tracetui.otel.detect import read_any

    size = os.stat(f.path).st_size
    if size > MAX_OTLP_BYTES:
        raise ToolFailed(f"{f.shown} is OTLP/JSON of {size:,} bytes: an OTLP/JSON file is read whole, and this server "
                         f"reads at most {MAX_OTLP_BYTES:,} bytes of it; ask the user to run tracetui check "
                         f"{f.shown} (or import it into a trace) instead")
    return read_any(f.path)


def each_verdict(f: CheckedFile, on_verdict: Callable[[dict[str, Any]], None],
                 on_problem: Callable[[Any], None], deadline: float | None = None) -> None:
    """Every run's verdict, as ``check --json`` lists it, in file order; a trace in bounded memory (the
    streaming checker), an OTLP/JSON file read whole (as check reads it). Past ``deadline`` (a
    ``time.monotonic()``) the scan stops after the chunk it is on (:class:`_TimeUp`): a file of one 2 GB
    line gives no verdict to stop at."""
    from tracetui.trace.index.changes import TraceChanged

    try:
        if _is_otlp(f):
            from tracetui.otel.origin import origin

            trace = _otlp(f)
            for problem in trace.problems:
                on_problem(problem)
            for run in trace.runs.values():
                on_verdict({**run.verdict(), **origin(run)})
        else:
            from tracetui.trace.checking import Checker

            checker = Checker(f.path, on_verdict, on_problem)
            try:
                if deadline is not None:
                    checker.scan = _until(deadline, checker.scan)  # type: ignore[method-assign]
                checker.run()
            finally:
                checker.close()
    except (TraceReadError, TraceChanged, OSError) as exc:
        raise _read_error(exc, f) from None


def read_run(f: CheckedFile, run_id: str, deadline: float) -> RunData:
    """One run, read only as far as it goes (a trace) or whole (OTLP/JSON); a clear error when it is not there
    or when the time limit runs out first."""
    from tracetui.trace.index.changes import TraceChanged

    if not isinstance(run_id, str) or not run_id:
        raise ToolFailed("give the id of a run (list_runs lists them)")
    try:
        if _is_otlp(f):
            runs = _otlp(f).runs
            run, count = runs.get(run_id), len(runs)
        else:
            run, count = find_run_until(f.path, run_id, deadline)
    except _TimeUp:
        raise ToolFailed(f"the time limit ran out before run {echoed(run_id)!r} was found in {f.shown}: check "
                         f"its id with list_runs, or ask the user to open the file with tracetui open") from None
    except (TraceReadError, TraceChanged, OSError) as exc:
        raise _read_error(exc, f) from None
    if run is None:  # (the file's run ids are trace content: list_runs hands them out as data)
        held = f" ({count:,} runs)" if count else ""
        raise ToolFailed(f"no run {echoed(run_id)!r} in {f.shown}{held}: list_runs lists the run ids there are")
    return run


def _matches(verdict: dict[str, Any], failed: bool, lane: str | None, text: str | None) -> bool:
    ff = verdict.get("first_failure") or {}
    if failed and verdict.get("ready"):
        return False
    if lane and ff.get("lane") != lane:
        return False
    if text:
        words = " ".join(str(x) for x in (verdict.get("run_id"), verdict.get("status"), ff.get("code"),
                                           ff.get("reason"), verdict.get("responsibility")))
        return text.casefold() in words.casefold()
    return True


def list_runs(where: Confinement, path: str, failed: bool = False, lane: str | None = None, text: str | None = None,
              page: str | None = None, limit: int = 50, seconds: float = 60.0) -> dict[str, Any]:
    """The runs of a file with their verdicts, filtered, a page at a time."""
    from tracetui.trace.format import LANES

    if lane and lane not in LANES:
        raise ToolFailed(f"lane {echoed(lane)!r} is not one of tracetui's lanes: {', '.join(LANES)}")
    start = _start(page)
    shown = Page(start, limit, MAX_BYTES - ENVELOPE_BYTES)
    counts = {"runs_read": 0, "failed": 0, "matching": 0, "problem_lines": 0}
    deadline = time.monotonic() + seconds

    def on_verdict(v: dict[str, Any]) -> None:
        counts["runs_read"] += 1
        counts["failed"] += not v.get("ready")
        if _matches(v, failed, lane, text):
            counts["matching"] += 1
            shown.offer(v)
        if time.monotonic() > deadline:
            raise _TimeUp

    def on_problem(_: Any) -> None:
        counts["problem_lines"] += 1

    with where.opened(path) as f:
        stopped = _scan(f, on_verdict, on_problem, deadline)
        return {"file": f.shown, "filters": {"failed": failed, "lane": lane, "text": echoed(text)}, **counts,
                "runs": shown.items, "next_page": shown.next_page, **_stopped(stopped, seconds)}


def check_file(where: Confinement, path: str, page: str | None = None, limit: int = 100,
               seconds: float = 60.0) -> dict[str, Any]:
    """``check --json`` of a file: every run's verdict (a page at a time), the lines that are not records, and
    whether the file passes (what check's exit status 0 means)."""
    from tracetui.trace.verdict import OUTCOMES

    start = _start(page)
    shown = Page(start, limit, (MAX_BYTES - ENVELOPE_BYTES) * 3 // 4)
    problems = Page(0, 20, (MAX_BYTES - ENVELOPE_BYTES) // 4)
    counts = dict.fromkeys(OUTCOMES, 0)
    state = {"runs": 0, "ready": True}
    deadline = time.monotonic() + seconds

    def on_verdict(v: dict[str, Any]) -> None:
        state["runs"] += 1
        counts[v["outcome"]] = counts.get(v["outcome"], 0) + 1
        state["ready"] = state["ready"] and bool(v.get("ready"))
        shown.offer(v)
        if time.monotonic() > deadline:
            raise _TimeUp

    def on_problem(p: Any) -> None:
        problems.offer({"line": p.line, "message": p.message})

    with where.opened(path) as f:
        stopped = _scan(f, on_verdict, on_problem, deadline)
        passes = state["ready"] and not problems.seen and not stopped
        return {"file": f.shown, "passes": passes, "runs_checked": state["runs"], "counts": counts,
                "runs": shown.items, "next_page": shown.next_page,
                "problem_lines": problems.seen, "problems": problems.items, **_stopped(stopped, seconds)}


def show_run(where: Confinement, path: str, run_id: str, lane: str | None = None, page: str | None = None,
             limit: int = 50, seconds: float = 60.0) -> dict[str, Any]:
    """One run: its verdict, its lanes at a glance, its run line (on the first page) and its events, a page at a time."""
    from tracetui.otel.origin import origin
    from tracetui.trace.format import LANES, OUTCOMES

    if lane and lane not in LANES:
        raise ToolFailed(f"lane {echoed(lane)!r} is not one of tracetui's lanes: {', '.join(LANES)}")
    start = _start(page)
    with where.opened(path) as f:
        run = read_run(f, run_id, time.monotonic() + seconds)
        verdict = {**run.verdict(), **origin(run)}
        # a list, not an object keyed by lane: redaction takes a key named "authorization" for a header's
        rows = {name: {"lane": name, "events": 0, **dict.fromkeys(OUTCOMES, 0)} for name in LANES}
        for e in run.events:
            row = rows.get(e.get("lane"))
            if row is not None:
                row["events"] += 1
                row[e.get("outcome")] = row.get(e.get("outcome"), 0) + 1
        lanes = list(rows.values())
        head: dict[str, Any] = {"file": f.shown, "run_id": run_id, "verdict": verdict, "lanes": lanes,
                                "events_in_run": len(run.events), "complete": run.complete}
        if start == 0:  # the run line (its inputs) and the summary, once, cut to a quarter of the answer
            head["run"] = fitted(run.run, MAX_BYTES // 4)
            head["summary"] = fitted(run.summary, MAX_BYTES // 8)
        head = fitted(head, MAX_BYTES // 2)  # (a run id of a megabyte is repeated in the verdict)
        events = Page(start, limit, MAX_BYTES - ENVELOPE_BYTES - size(head))
        for e in run.events:
            if not lane or e.get("lane") == lane:
                events.offer(e)
        return {**head, "lane_filter": lane, "events": events.items, "next_page": events.next_page}


def explain_run(where: Confinement, path: str, run_id: str | None = None, limit: int = 5,
                seconds: float = 60.0) -> dict[str, Any]:
    """``explain --json`` of one run: who is responsible, and the smallest edits proven by replay to fix it."""
    from tracetui.explain import explain
    from tracetui.explain.report import as_data
    from tracetui.otel.origin import origin

    deadline = time.monotonic() + seconds
    with where.opened(path) as f:
        run = read_run(f, run_id, deadline) if run_id else _failing_run(f, deadline)
        _refuse_recorded(run, run_id, f, "explain")
        result = explain(run, cancelled=lambda: time.monotonic() > deadline)
        data = {**as_data(result, f.shown, max(1, min(limit, 20))), **origin(run)}
        if time.monotonic() > deadline:
            data["stopped_early"] = (f"the time limit ({seconds:g} s) ran out after {result.tried} edit(s) tried: "
                                     f"what is listed is proven, more may exist; tracetui explain {f.shown} --run "
                                     f"{_named(run_id)} searches them all")
        return fitted(data)


def replay_run(where: Confinement, path: str, run_id: str, edits: list[tuple[str, Any]],
               seconds: float = 60.0) -> dict[str, Any]:
    """``replay --json`` of one run with ``edits`` (JSON Pointer, value) applied: the verdicts before and after."""
    from tracetui.replay.comparison import comparison_data
    from tracetui.replay.edit import current_value, parse_value
    from tracetui.replay.pointer import EditError
    from tracetui.replay.replay import replay

    with where.opened(path) as f:
        run = read_run(f, run_id, time.monotonic() + seconds)
        _refuse_recorded(run, run_id, f, "replay")
        typed = []
        try:
            for pointer, value in edits:
                if not isinstance(pointer, str) or not pointer.startswith("/"):
                    raise EditError(f"an edit's path is a JSON Pointer into {{inputs, responses}}, such as "
                                    f"/inputs/budgets/max_turns, got {pointer!r}")
                if isinstance(value, str):  # typed as --set types its text: "500" for a number field is 500
                    current, exists = current_value(run, pointer)
                    value = parse_value(current, value, exists=exists)
                typed.append((pointer, value))
            outcome = replay(run, typed)
        except EditError as exc:
            message = str(exc)
            raise ToolFailed(message if message.startswith("cannot") or not edits else f"cannot edit: {message}")
        return fitted(comparison_data(run_id, run, outcome))


def diff_runs(where: Confinement, path: str, run_id: str, other_path: str, other_run_id: str,
              page: str | None = None, limit: int = 50, seconds: float = 60.0) -> dict[str, Any]:
    """``diff --json`` of two runs (of one file or two): both verdicts, the first divergence in words, and the
    steps aligned by turn and lane, a page of rows at a time (the first divergence's row number is given)."""
    from tracetui.replay.run_diff import diff_runs as diff_of

    start = _start(page)
    deadline = time.monotonic() + seconds
    with where.opened(path) as f:
        a = read_run(f, run_id, deadline)
        shown_a = f.shown
    with where.opened(other_path) as f:
        b = read_run(f, other_run_id, deadline)
        shown_b = f.shown
    document = diff_of(a, b).to_json()
    rows = document.pop("rows")
    document["a"]["file"], document["b"]["file"] = shown_a, shown_b
    head = fitted({**document, "rows_in_all": len(rows)}, MAX_BYTES // 2)
    shown = Page(start, limit, MAX_BYTES - ENVELOPE_BYTES - size(head))
    for row in rows:
        shown.offer(row)
    return {**head, "rows_from": start, "rows": shown.items, "next_page": shown.next_page}


def _failing_run(f: CheckedFile, deadline: float) -> RunData:
    """The one failing run of a file, as explain picks it when no run is named."""
    failing: list[str] = []

    def on_verdict(v: dict[str, Any]) -> None:
        if not v.get("ready"):
            failing.append(v["run_id"])

    if _scan(f, on_verdict, lambda _: None, deadline):
        raise ToolFailed(f"the time limit ran out before every run of {f.shown} was read; give run_id "
                         f"(list_runs with failed=true lists failing runs a page at a time)")
    if len(failing) != 1:  # (their ids are trace content: list_runs hands them out as data)
        raise ToolFailed(f"{len(failing)} runs failed in {f.shown}; choose one with run_id"
                         + (" (list_runs with failed=true lists them)" if failing else ""))
    return read_run(f, failing[0], deadline)


def _refuse_recorded(run: RunData, run_id: str | None, f: CheckedFile, verb: str) -> None:
    """A recording of the user's own agent is re-run by running the user's command: never one an assistant
    names (that would be running code the assistant chose, with the user's rights), and not one fixed in the
    server's config either: the user's agent runs its real tools, and the edits (the model's answers it acts
    on) would be the assistant's. Said in words, with the command line the user can run themselves, naming the
    run as the caller did: the command the trace says it was recorded with is trace content, never advice."""
    from tracetui.replay.agent_replay import is_recorded

    if is_recorded(run):
        raise ToolFailed(f"run {_named(run_id)} is a recording of the user's own agent (tracetui record): it is "
                         f"re-run by running the user's own command, and this server never runs a command on an "
                         f"assistant's word. Ask the user to run: tracetui {verb} {f.shown} --run {_named(run_id)} "
                         f"-- COMMAND (their agent's own command); show_run reads the recording itself")


def _named(run_id: str | None) -> str:
    """The run as the caller named it (cut short), or a placeholder when the server picked it from the trace."""
    return echoed(run_id) if run_id else "RUN_ID"


def _until(deadline: float, scan: Callable[..., Any]) -> Callable[..., Any]:
    """``scan`` (a checker's, yielding after each chunk) that stops with :class:`_TimeUp` past ``deadline``."""
    def timed(chunk_bytes: int | None = None) -> Any:
        steps = scan(chunk_bytes)
        try:
            for step in steps:
                if time.monotonic() > deadline:
                    raise _TimeUp
                yield step
        finally:
            steps.close()  # (the scan's own clean-up runs now, not when the generator is collected)
    return timed


def _scan(f: CheckedFile, on_verdict: Callable[[dict[str, Any]], None], on_problem: Callable[[Any], None],
          deadline: float) -> bool:
    """Scan the file's verdicts; True when the time limit stopped the scan."""
    try:
        each_verdict(f, on_verdict, on_problem, deadline)
    except _TimeUp:
        return True
    return False


def _stopped(stopped: bool, seconds: float) -> dict[str, Any]:
    if not stopped:
        return {}
    return {"stopped_early": f"the time limit ({seconds:g} s) ran out: only the runs counted here were read; "
                             f"tracetui check reads the whole file"}


def _start(page: str | None) -> int:
    try:
        return cursor(page)
    except ValueError as exc:
        raise ToolFailed(str(exc)) from None


__all__ = ["PathRefused", "ToolFailed", "check_file", "diff_runs", "explain_run", "list_runs", "replay_run",
           "show_run"]
