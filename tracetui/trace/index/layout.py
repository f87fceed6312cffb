"""The writer's layout of run and summary lines, as the index reads them without the reader.

A ``run`` line gives its scenario, ablation and trace version through a regex over the
writer's layout, matched from the quote that closes its run id (run lines can be
megabytes of recorded responses: any other layout is parsed whole instead). A
``summary`` line is parsed by orjson, as the reader parses it, and checked to be a
summary of the run its prefix names.
"""
from __future__ import annotations

import re
from typing import Any

import orjson

from tracetui.trace import limits
from tracetui.trace.format import TRACE_VERSION

CURRENT_VERSION = str(TRACE_VERSION).encode()

_STR = rb'"[^"\\\x00-\x1f]*"'
#: the writer's run line, from the quote that closes the run id: (version, scenario, ablation)
RUN_LAYOUT = re.compile(
    rb'","trace_version":(-?\d{1,18}),"producer":' + _STR + rb',"inputs":\{"source":' + _STR
    + rb',"scenario":(?:"([^"\\\x00-\x1f]*)"|null),"ablation":(?:"([^"\\\x00-\x1f]*)"|null)[,}]').match


def summary_of(raw: bytes, key: str) -> dict[str, Any] | None:
    """A summary line parsed when it is a summary of run ``key`` (the run id its prefix gives), or None
    to leave it to the slow path (which words the problem)."""
    try:
        obj = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return None
    if (type(obj) is dict and obj.get("rec") == "summary" and type(obj.get("run_id")) is str
            and obj["run_id"] == key and not (limits.may_be_too_deep(raw) and limits.too_deep(obj))):
        return obj
    return None
