"""Caps on what one live run reads and records, enforced while reading.

A server decides how much it sends; a run must not. Three caps, each with words
for the trace when it is reached:

- decoded bytes of one response (a body, or a stream), counted after the
  content-encoding is undone: gzip and deflate are inflated here with a bounded
  output per step, so a small compressed body that inflates to gigabytes never
  holds more than the cap in memory;
- events of one stream;
- the recorded exchanges of the whole run, as JSON: a trace whose run line grows
  past what a replay accepts would no longer replay, so an attempt that would take
  the run past it is recorded without its body instead.

Reaching a cap ends the attempt as ``response_too_large`` with the reason as its
error body; nothing past the cap is read.
"""
from __future__ import annotations

import zlib
from dataclasses import dataclass

#: defaults: a long streamed answer is a few hundred KiB of events, a reasoning model's a few MiB
MAX_RESPONSE_BYTES = 4 * 1024 * 1024
MAX_STREAM_EVENTS = 50_000


@dataclass(frozen=True, slots=True)
class ResponseCaps:
    max_response_bytes: int = MAX_RESPONSE_BYTES
    max_stream_events: int = MAX_STREAM_EVENTS
    #: recorded exchanges of the whole run, as JSON bytes; None: no run-wide cap
    max_recorded_bytes: int | None = None


class TooLarge(Exception):
    """A cap was reached; the message says which, in words a trace records."""


def bytes_words(n: int) -> str:
    return f"{n:,} bytes" + (f" ({n / (1 << 20):g} MiB)" if n >= 1 << 20 and n % (1 << 16) == 0 else "")


class DecodedBody:
    """Turns raw response chunks into decoded bytes, counting them against the cap as they come."""

    def __init__(self, content_encoding: str, cap: int, what: str = "the response"):
        self.cap = cap
        self.what = what
        self.count = 0
        # "gzip, gzip" would be two layers; one is all any API sends, and more than one is refused below
        codings = [c.strip().lower() for c in content_encoding.split(",") if c.strip()]
        codings = [c for c in codings if c != "identity"]
        self.coding = codings[0] if len(codings) == 1 else ("" if not codings else "layered")
        self._inflater: zlib._Decompress | None = None  # type: ignore[name-defined]
        self._first = True
        if self.coding in ("gzip", "x-gzip"):
            self._inflater = zlib.decompressobj(zlib.MAX_WBITS | 16)
        elif self.coding == "deflate":
            self._inflater = zlib.decompressobj()
        elif self.coding:  # br, zstd, layered: never asked for (accept-encoding says gzip, deflate)
            raise TooLarge(f"{what} came in content-encoding {content_encoding[:40]!r}, which was not asked "
                           f"for and cannot be read within the caps")

    def feed(self, raw: bytes) -> bytes:
        """The decoded bytes of ``raw``; raises :class:`TooLarge` once more than the cap arrived."""
        if self._inflater is None:
            return self._count(raw)
        out = []
        data = raw
        while data:
            try:
                piece = self._inflater.decompress(data, self.cap - self.count + 1)
            except zlib.error:
                if self._first and self.coding == "deflate":  # raw deflate without the zlib header
                    self._inflater = zlib.decompressobj(-zlib.MAX_WBITS)
                    self._first = False
                    continue
                raise
            self._first = False
            out.append(self._count(piece))
            data = self._inflater.unconsumed_tail
        return b"".join(out)

    def finish(self) -> bytes:
        """What the inflater still holds at the end of the body (nothing, when the input was whole)."""
        return self._count(self._inflater.flush()) if self._inflater is not None else b""

    def _count(self, piece: bytes) -> bytes:
        self.count += len(piece)
        if self.count > self.cap:
            raise TooLarge(f"{self.what} passed {bytes_words(self.cap)} once decoded (--max-response-bytes); "
                           f"reading stopped there")
        return piece
