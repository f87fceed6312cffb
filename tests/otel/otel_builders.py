"""Small builders of OTLP/JSON for hand-made foreign traces (only what each test needs to state)."""
from __future__ import annotations

import itertools
from typing import Any

import orjson

from tracetui.otel.spans import key_values

TRACE = "0af7651916cd43dd8448eb211c80319c"
_ids = itertools.count(1)


def span(name: str, span_id: str | None = None, parent: str = "", start: int = 0, end: int | None = None,
         kind: int = 1, status: int = 0, message: str = "", events: list[dict] | None = None,
         trace: str = TRACE, **attributes: Any) -> dict[str, Any]:
    """One span; attributes are given with ``__`` for ``.`` (``gen_ai__operation__name="chat"``)."""
    out = {"traceId": trace, "spanId": span_id or f"{next(_ids):016x}", "name": name, "kind": kind,
           "startTimeUnixNano": str(1_700_000_000_000_000_000 + start * 1_000_000),
           "endTimeUnixNano": str(1_700_000_000_000_000_000 + (end if end is not None else start + 1) * 1_000_000),
           "attributes": key_values({k.replace("__", "."): v for k, v in attributes.items()}),
           "status": {"code": status, **({"message": message} if message else {})}}
    if parent:
        out["parentSpanId"] = parent
    if events:
        out["events"] = events
    return out


def exception(kind: str, message: str) -> dict[str, Any]:
    return {"timeUnixNano": "1700000000000000000", "name": "exception",
            "attributes": key_values({"exception.type": kind, "exception.message": message})}


def traces_data(*spans: dict[str, Any], scope: str = "test") -> dict[str, Any]:
    return {"resourceSpans": [{"resource": {"attributes": key_values({"service.name": "shop-agent"})},
                               "scopeSpans": [{"scope": {"name": scope}, "spans": list(spans)}]}]}


def write(path, *docs: dict[str, Any]) -> str:
    path.write_bytes(b"".join(orjson.dumps(doc) + b"\n" for doc in docs))
    return str(path)
