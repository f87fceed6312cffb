"""The JSONL trace format: record kinds, lanes, outcomes and field order.

One file holds any number of runs, possibly interleaved. Every line is one JSON
object whose first two keys are always ``rec`` and ``run_id`` so that an indexer
can classify a line from its first bytes without parsing the rest.
"""
from __future__ import annotations

TRACE_VERSION = 1

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
