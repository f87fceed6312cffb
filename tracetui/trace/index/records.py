"""The fields a trace record is checked by, as msgspec types: strict scans validate lines with them.

A line decodes as one of these exactly when :func:`~tracetui.trace.reader.check_record`
would accept it (given the cautions in :mod:`~tracetui.trace.index.validation`),
without building the record's dict: everything else in the line is validated as JSON
and skipped. A summary also keeps the fields its verdict and its run-list row are
made from (:class:`SummaryFields`), read like the summary's dict (``get``).

``seq`` is bounded to what orjson reads as an int (and numpy holds): a larger one goes
to the exact path. None of these types is tracked by the cyclic garbage collector.
"""
from __future__ import annotations

from typing import Annotated, Any, Literal, Union

import msgspec

from tracetui.trace.format import LANES, OUTCOMES

RunId = Annotated[str, msgspec.Meta(min_length=1)]
Lane = Literal[LANES]  # type: ignore[valid-type]
Outcome = Literal[OUTCOMES]  # type: ignore[valid-type]
Seq = Annotated[int, msgspec.Meta(ge=-(2 ** 63), le=2 ** 63 - 1)]


class RunRecord(msgspec.Struct, tag_field="rec", tag="run", gc=False):
    run_id: RunId
    trace_version: Any = None


class EventRecord(msgspec.Struct, tag_field="rec", tag="event", gc=False):
    run_id: RunId
    seq: Seq
    lane: Lane
    outcome: Outcome


class SummaryRecord(msgspec.Struct, tag_field="rec", tag="summary", gc=False):
    """A summary line: its verdict's fields as the line gives them (None when absent)."""

    run_id: RunId
    status: Any = None
    metrics: Any = None
    first_failure: Any = None

    def get(self, key: str, default: Any = None) -> Any:
        return getattr(self, key, default)


class SummaryFields(msgspec.Struct, gc=False):
    """The fields of a summary line the index reads (its ``rec`` and ``run_id`` checked by the caller)."""

    rec: Any = None
    run_id: Any = None
    status: Any = None
    metrics: Any = None
    first_failure: Any = None

    def get(self, key: str, default: Any = None) -> Any:
        return getattr(self, key, default)


UNSET = msgspec.UNSET


class Metrics(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    """A summary's ``metrics`` as the writer writes them (another key: read as a dict instead); a
    metric the line does not give is UNSET."""

    iterations: Any = UNSET
    model_calls: Any = UNSET
    http_attempts: Any = UNSET
    tool_calls: Any = UNSET
    input_units: Any = UNSET
    events: Any = UNSET
    recovered: Any = UNSET


class FirstFailure(msgspec.Struct, forbid_unknown_fields=True, frozen=True, gc=False):
    """A summary's ``first_failure`` with the usual five keys at most (others: read as a dict instead);
    hashable when its values are, so that runs that failed alike share one row failure."""

    lane: Any = None
    seq: Any = None
    code: Any = None
    reason: Any = None
    decided_at: Any = None


class SummaryRead(msgspec.Struct, gc=False):
    """:class:`SummaryFields` with its metrics and first failure as structs: the common summary, read faster."""

    rec: Any = None
    run_id: Any = None
    status: Any = None
    metrics: Union[Metrics, None] = None
    first_failure: Union[FirstFailure, None] = None


DECODER = msgspec.json.Decoder(Union[RunRecord, EventRecord, SummaryRecord])
SUMMARY_DECODER = msgspec.json.Decoder(SummaryFields)
SUMMARY_READ_DECODER = msgspec.json.Decoder(SummaryRead)
#: decodes the nesting probes of :func:`~tracetui.trace.index.validation.decode_within_depth`
PROBE = msgspec.json.Decoder(Any)
