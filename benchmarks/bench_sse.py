"""Server-sent event parsing: tracetui's parser beside httpx-sse's decoder, on the same bytes.

Prints the time each parser takes (min and median of ``--repeat`` ≥ 3) and the ratio
tracetui / httpx-sse, measured in the same run (machines are shared and noisy: compare
the ratio, not the absolute figures):

- a typical stream: 20,000 small JSON events, read in 4 KiB chunks;
- one long line (20 MiB of data in a single event), read in 64 KiB chunks: the
  parser this one replaced took 1.5 s here and grew quadratically with the line;
- the same typical stream with lone-CR line ends, which the spec allows.

httpx-sse is measured through its line and event decoders (``_decoders``), fed the
same decoded text chunks, with its events turned into the same records tracetui
keeps (``data`` as JSON when it is an object). The old hand-written parser is
measured too, on a quarter-size and a full-size long line, as the "before" figure.

    python benchmarks/bench_sse.py [--repeat N] [--long-mib N]
"""
from __future__ import annotations

import argparse
import codecs
import time
from typing import Any, Callable

import orjson

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import measure as measure_  # noqa: E402
from measure import row  # noqa: E402
from tracetui.providers.sse import SSEParser, to_event  # noqa: E402


class OldParser:
    """The parser this module replaced (main before issue 10): rescans and re-slices its buffer per chunk."""

    def __init__(self) -> None:
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._buffer = ""
        self._data: list[str] = []

    def feed(self, chunk: bytes) -> list[dict[str, Any]]:
        self._buffer += self._decoder.decode(chunk)
        events: list[dict[str, Any]] = []
        while True:
            cut = self._buffer.find("\n")
            if cut < 0:
                return events
            line, self._buffer = self._buffer[:cut].rstrip("\r"), self._buffer[cut + 1:]
            if not line:
                if self._data:
                    events.append(to_event("\n".join(self._data)))
                    self._data = []
            elif line.startswith("data:"):
                value = line[5:]
                self._data.append(value[1:] if value.startswith(" ") else value)

    def close(self) -> list[dict[str, Any]]:
        return self.feed(b"\n\n")


class HttpxSseParser:
    """httpx-sse's SSELineDecoder + SSEDecoder over the same incremental UTF-8 text."""

    def __init__(self) -> None:
        from httpx_sse._decoders import SSEDecoder, SSELineDecoder

        self._text = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._lines = SSELineDecoder()
        self._events = SSEDecoder()

    def _decode(self, lines: list[str]) -> list[dict[str, Any]]:
        out = []
        for line in lines:
            sse = self._events.decode(line)
            if sse is not None and sse.data:  # an event with data (httpx-sse also yields id/retry-only ones)
                out.append(to_event(sse.data))
        return out

    def feed(self, chunk: bytes) -> list[dict[str, Any]]:
        text = self._text.decode(chunk)
        return self._decode(self._lines.decode(text)) if text else []

    def close(self) -> list[dict[str, Any]]:
        return self._decode(self._lines.flush())


def typical_stream(events: int, line_end: str = "\n") -> bytes:
    out = []
    for n in range(events):
        data = orjson.dumps({"type": "response.output_text.delta", "sequence_number": n, "item_id": "msg_1",
                             "output_index": 0, "content_index": 0, "delta": "word ", "logprobs": []}).decode()
        out.append(f"event: response.output_text.delta{line_end}data: {data}{line_end}{line_end}")
    return "".join(out).encode()


def long_line(mib: int) -> bytes:
    return b'data: {"delta": "' + b"x" * (mib << 20) + b'"}\n\n'


def chunks(raw: bytes, size: int) -> list[bytes]:
    return [raw[i:i + size] for i in range(0, len(raw), size)]


def measure(make: Callable[[], Any], pieces: list[bytes], repeat: int) -> tuple[list[float], int]:
    """(seconds of each of ``repeat`` parses of ``pieces``, events)."""
    times = []
    count = 0
    for _ in range(repeat):
        parser = make()
        start = time.perf_counter()
        count = 0
        for piece in pieces:
            count += len(parser.feed(piece))
        count += len(parser.close())
        times.append(time.perf_counter() - start)
    return times, count


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--long-mib", type=int, default=20)
    args = parser.parse_args()
    cases = [
        ("typical stream, 20,000 events, 4 KiB chunks", chunks(typical_stream(20_000), 4096)),
        (f"one {args.long_mib} MiB line, 64 KiB chunks", chunks(long_line(args.long_mib), 65536)),
        ("typical stream with lone-CR line ends", chunks(typical_stream(20_000, "\r"), 4096)),
    ]
    measure_.header("bench_sse: server-sent event parsing, tracetui's parser beside httpx-sse's on the same bytes")
    measure_.columns("httpx-sse")
    repeat = max(3, args.repeat)
    for name, pieces in cases:
        ours, n_ours = measure(SSEParser, pieces, repeat)
        theirs, n_theirs = measure(HttpxSseParser, pieces, repeat)
        mb = sum(map(len, pieces)) / 1e6
        row(name, ours, theirs, "httpx-sse", unit="ms",
            note=f"({mb / min(ours):.0f} MB/s best; events {n_ours} / {n_theirs})")
    for mib in (max(1, args.long_mib // 4), args.long_mib):
        pieces = chunks(long_line(mib), 65536)
        old, _ = measure(OldParser, pieces, 1)
        new, _ = measure(SSEParser, pieces, 3)
        row(f"one {mib} MiB line: now, beside the replaced parser", new, old, "replaced parser (1 sample)", unit="ms",
            note="(the old one is quadratic: the gap widens with the line)")
    cr, n_cr = measure(OldParser, chunks(typical_stream(2000, "\r"), 4096), 1)
    print(f"   before, lone-CR line ends: {n_cr} of 2000 events found")


if __name__ == "__main__":
    main()
