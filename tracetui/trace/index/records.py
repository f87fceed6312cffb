"""The fields a trace record is checked by, as msgspec types: strict scans validate lines with them.

A line decodes as one of these exactly when :func:`~tracetui.trace.reader.check_record`
would accept it (given the cautions in :class:`~tracetui.trace.index.classify.Validation`),
without building the record's dict: everything else in the line is validated as JSON
and skipped.
"""
from __future__ import annotations

from typing import Annotated, Literal, Union

import msgspec

from tracetui.trace.format import LANES, OUTCOMES

RunId = Annotated[str, msgspec.Meta(min_length=1)]
Lane = Literal[LANES]  # type: ignore[valid-type]
Outcome = Literal[OUTCOMES]  # type: ignore[valid-type]


class RunRecord(msgspec.Struct, tag_field="rec", tag="run"):
    run_id: RunId


class EventRecord(msgspec.Struct, tag_field="rec", tag="event"):
    run_id: RunId
    seq: int
    lane: Lane
    outcome: Outcome


class SummaryRecord(msgspec.Struct, tag_field="rec", tag="summary"):
    run_id: RunId


DECODER = msgspec.json.Decoder(Union[RunRecord, EventRecord, SummaryRecord])
