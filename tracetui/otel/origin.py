"""Where an imported run came from, for ``check --json`` and ``explain --json``: the full trace id and the
resource's ``service.name``, enough to find the run again in the backend that holds it."""
from __future__ import annotations

from typing import Any

from tracetui.trace.reader import RunData


def origin(run: RunData) -> dict[str, Any]:
    """``{"trace_id": …, "service_name": …}`` for a run imported from OpenTelemetry; ``{}`` for any other run."""
    record = run.run or {}
    otel = record.get("otel") if record.get("source") == "otel" else None
    if not isinstance(otel, dict) or not isinstance(otel.get("trace_id"), str):
        return {}
    service = otel.get("service_name")
    return {"trace_id": otel["trace_id"], "service_name": service if isinstance(service, str) else None}
