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


class _Inflate:
    """One content-coding undone (gzip or deflate), its output bounded by what is left under the cap."""

    def __init__(self, coding: str):
        self.coding = coding
        self.inflater = zlib.decompressobj(zlib.MAX_WBITS | 16 if coding != "deflate" else zlib.MAX_WBITS)
        self.first = True
        self.out = 0  # bytes this layer produced: capped like the body, so no layer can hold more

    def __call__(self, data: bytes, room: int) -> list[bytes]:
        pieces = []
        while data:
            try:
                piece = self.inflater.decompress(data, room - self.out + 1)
            except zlib.error:
                if self.first and self.coding == "deflate":  # raw deflate, without the zlib header
                    self.inflater = zlib.decompressobj(-zlib.MAX_WBITS)
                    self.first = False
                    continue
                raise
            self.first = False
            self.out += len(piece)
            pieces.append(piece)
            if self.out > room:
                break
            data = self.inflater.unconsumed_tail
        return pieces

    def flush(self) -> bytes:
        return self.inflater.flush()


class DecodedBody:
    """Turns raw response chunks into decoded bytes, counting them against the cap as they come.

    Content-codings are undone as httpx undoes them: gzip (x-gzip) and deflate, in
    the reverse of the order listed, any other coding left as it is.
    """

    def __init__(self, content_encoding: str, cap: int, what: str = "the response"):
        self.cap = cap
        self.what = what
        self.count = 0
        codings = [c.strip().lower() for c in content_encoding.split(",")]
        self.layers = [_Inflate("deflate" if c == "deflate" else "gzip")
                       for c in reversed(codings) if c in ("gzip", "x-gzip", "deflate")]

    @property
    def coding(self) -> bool:
        """Whether any coding is undone (then a content-length says nothing of the decoded size)."""
        return bool(self.layers)

    def feed(self, raw: bytes) -> bytes:
        """The decoded bytes of ``raw``; raises :class:`TooLarge` once more than the cap arrived."""
        pieces = [raw]
        for layer in self.layers:
            pieces = [out for piece in pieces for out in layer(piece, self.cap)]
            if layer.out > self.cap:
                self._count(b"", layer.out)
        return self._count(b"".join(pieces))

    def finish(self) -> bytes:
        """What the layers still hold at the end of the body (nothing, when the input was whole)."""
        data = b""
        for layer in self.layers:
            data = b"".join(layer(data, self.cap)) + layer.flush() if data else layer.flush()
        return self._count(data)

    def _count(self, piece: bytes, at_least: int = 0) -> bytes:
        self.count = max(self.count + len(piece), at_least)
        if self.count > self.cap:
            raise TooLarge(f"{self.what} passed {bytes_words(self.cap)} once decoded (--max-response-bytes); "
                           f"reading stopped there")
        return piece
