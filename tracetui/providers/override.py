"""Replace chosen exchanges of a run with edited ones; the rest come from the base.

The base transport is still asked for every exchange, so a scripted provider's
own counters stay where they would have been; its answer is simply not used.
"""
from __future__ import annotations

from typing import Any

from tracetui.providers.base import Exchange, HttpRequest, Transport


class OverrideTransport:
    def __init__(self, base: Transport, overrides: dict[str, Any]):
        self.base = base
        self.overrides = {int(k): Exchange.from_record(v) for k, v in overrides.items()}
        self.position = 0

    def send(self, request: HttpRequest) -> Exchange:
        k = self.position
        self.position += 1
        original = self.base.send(request)
        return self.overrides.get(k, original)
