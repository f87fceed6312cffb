"""``tracetui export``: runs of a trace (tracetui's or OTLP/JSON) to an OTLP/JSON file or a collector."""
from __future__ import annotations

import os
import stat
import sys
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Iterable, Mapping, Sequence

from tracetui.otel.detect import read_any
from tracetui.otel.export_json import traces_line
from tracetui.otel.export_map import DEFAULT_START_NS, run_spans
from tracetui.otel.spans import Span
from tracetui.trace.reader import RunData, TraceFile
from tracetui.trace.safe_text import json_lines_out
from tracetui.trace.writer import AtomicWriter


class ExportError(Exception):
    pass


#: the start times ``--start`` accepts: after it, a run's own clock still fits a signed 64-bit nanosecond count
EARLIEST, LATEST = datetime(1970, 1, 1, tzinfo=timezone.utc), datetime(2100, 1, 1, tzinfo=timezone.utc)


@dataclass
class Selection:
    trace: TraceFile
    runs: list[RunData]


def select(path: str, run_ids: Sequence[str] = (), query: object = None) -> Selection:
    """The runs to export: all of the file's (or those a backend ``query`` chooses), or those named (raises
    :class:`ExportError` for an unknown id)."""
    trace = read_any(path, query)
    if not run_ids:
        return Selection(trace, list(trace.runs.values()))
    missing = [r for r in run_ids if r not in trace.runs]
    if missing:
        known = ", ".join(list(trace.runs)[:12]) + (" …" if len(trace.runs) > 12 else "")
        raise ExportError(f"no run {missing[0]!r} in {path}; runs: {known}")
    return Selection(trace, [trace.runs[r] for r in run_ids])


def start_ns(value: str | None) -> int:
    """``--start``: an ISO 8601 time, ``now``, or (default) the fixed start that keeps exports byte-identical."""
    if value is None:
        return DEFAULT_START_NS
    if value == "now":
        return int(datetime.now(timezone.utc).timestamp()) * 1_000_000_000
    try:
        when = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise ExportError(f"--start {value!r} is not an ISO 8601 time (e.g. 2026-03-01T12:00:00Z) or 'now'") from None
    if when.tzinfo is None:
        when = when.replace(tzinfo=timezone.utc)
    if not EARLIEST <= when < LATEST:  # OTLP times are unsigned nanoseconds; backends read them as int64
        raise ExportError(f"--start {value!r} is outside {EARLIEST.year}–{LATEST.year - 1}, the times OTLP holds")
    return int(when.timestamp() * 1_000_000) * 1000


def spans_of_runs(runs: Iterable[RunData], content: bool, start: int) -> Iterable[list[Span]]:
    for run in runs:
        yield run_spans(run, content=content, start_ns=start)


def write_file(output: str, runs: Iterable[list[Span]]) -> int:
    """One ``TracesData`` line per run, atomically (or to stdout for ``-``); returns the number of spans."""
    count = 0

    def write(out) -> None:
        nonlocal count
        for spans in runs:
            out.write(traces_line(spans))
            count += len(spans)

    if output == "-":
        out = json_lines_out(sys.stdout)
        write(out)
        out.flush()
        return count
    path = Path(output)
    if path.exists() and not stat.S_ISREG(os.stat(path).st_mode):  # /dev/stdout, a pipe
        with open(path, "wb") as out:
            write(out)
        return count
    with AtomicWriter(path) as out:
        write(out)
    return count


def send_runs(endpoint: str, runs: Iterable[list[Span]], headers: Mapping[str, str], timeout_s: float,
              protocol: str = "http/protobuf", compression: str | None = None, as_is: bool = False):
    from tracetui.otel.send import send

    return send(endpoint, runs, headers=headers, timeout_s=timeout_s, protocol=protocol, compression=compression,
                as_is=as_is)


def _ids(runs: Sequence[RunData], most: int = 12) -> str:
    shown = ", ".join(r.run_id for r in runs[:most])
    return shown + (f" … ({len(runs) - most} more)" if len(runs) > most else "")


def delivery_words(runs: Sequence[RunData], delivered, refused_runs: int) -> list[str]:
    """After a refused request: which runs the collector took before it (whole requests: a run is never
    split) and which it did not, so a user knows what to send again; nothing when none was taken."""
    if delivered is None or not delivered.requests:
        return []
    taken, refused, rest = (runs[:delivered.runs], runs[delivered.runs:delivered.runs + refused_runs],
                            runs[delivered.runs + refused_runs:])
    rejected = f", of which the collector rejected {delivered.rejected} span(s)" if delivered.rejected else ""
    lines = [f"delivered: {len(taken)} of {len(runs)} run(s) in {delivered.requests} request(s), "
             f"{delivered.spans} span(s){rejected}: {_ids(taken)}",
             f"not delivered: request {delivered.requests + 1} was refused: {len(refused)} run(s): {_ids(refused)}"]
    if rest:
        lines.append(f"not sent: {len(rest)} run(s) after it: {_ids(rest)}")
    return lines
