"""The JSONL trace format: record kinds, lanes, outcomes and field order.

One file holds any number of runs, possibly interleaved. Every line is one JSON
object whose first two keys are always ``rec`` and ``run_id`` so that an indexer
can classify a line from its first bytes without parsing the rest.
"""
from __future__ import annotations

from typing import Any

#: The format version this tracetui writes and reads. A run line with a newer one still
#: opens, as far as it reads, and is reported as a problem line (:func:`version_problem`).
TRACE_VERSION = 1
#: A UTF-8 byte order mark: accepted (and skipped) at the start of a file.
BOM = b"\xef\xbb\xbf"

#: The six troubleshooting boundaries, in the order a request crosses them.
LANES: tuple[str, ...] = ("http", "generation", "arguments", "authorization", "receipt", "answer")
LANE_TITLES = {
    "http": "HTTP",
    "generation": "generation",
    "arguments": "arguments",
    "authorization": "authorization",
    "receipt": "receipt",
    "answer": "answer",
}

OK = "ok"
RECOVERED = "recovered"
FAILED = "failed"
OUTCOMES: tuple[str, ...] = (OK, RECOVERED, FAILED)
#: How an outcome is drawn in text, by the CLI and the explorer alike.
OUTCOME_ICONS = {OK: "●", RECOVERED: "↺", FAILED: "✗"}

REC_RUN = "run"
REC_EVENT = "event"
REC_SUMMARY = "summary"
RECORD_KINDS: tuple[str, ...] = (REC_RUN, REC_EVENT, REC_SUMMARY)

ANSWER_READY = "answer_ready"
#: The code of the attempt a recorded run makes once its recording has no response left.
CODE_RECORDING_ENDED = "cassette_exhausted"

#: Byte prefixes the writer guarantees; the index classifies lines with them.
PREFIX_RUN = b'{"rec":"run","run_id":'
PREFIX_EVENT = b'{"rec":"event","run_id":'
PREFIX_SUMMARY = b'{"rec":"summary","run_id":'


def version_problem(version: Any) -> str | None:
    """Why a run line's ``trace_version`` may be misread, or None (absent, or a version this reads)."""
    if version is None or (type(version) is int and version <= TRACE_VERSION):
        return None
    from tracetui.trace.safe_text import redacted_prefix  # (only for a version this does not read)

    shown = repr(version) if isinstance(version, str) else redacted_prefix(str(version), 40)
    if type(version) is int:
        return (f"trace_version {shown} is newer than {TRACE_VERSION}, the newest this tracetui reads: the run is "
                f"shown as far as it can be read; upgrade tracetui to read it fully")
    return (f"trace_version {shown} is not a version this tracetui reads (it reads {TRACE_VERSION}): the run is "
            f"shown as far as it can be read")


#: run-line ``source`` values of runs imported from another producer, whose inputs were never recorded, and
#: what each says about re-running (replay refuses them; the explorer greys E, e and i and says this)
NOT_RERUNNABLE = {"otel": "imported from OpenTelemetry: its inputs are not recorded, so it cannot be re-run"}
