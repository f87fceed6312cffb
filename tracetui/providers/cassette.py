"""Recorded exchanges played back in order: offline replay of a real run."""
from __future__ import annotations

from typing import Any

from tracetui.providers.base import CASSETTE_EXHAUSTED, Exchange, HttpRequest


class CassetteTransport:
    def __init__(self, recorded: list[Any]):
        self.exchanges = [Exchange.from_record(r) for r in recorded]
        self.position = 0

    def send(self, request: HttpRequest) -> Exchange:
        if self.position >= len(self.exchanges):
            self.position += 1
            return Exchange(None, {}, None, 0, error=CASSETTE_EXHAUSTED)
        exchange = self.exchanges[self.position]
        self.position += 1
        return exchange
