"""The live key's search on hostile text: a long token with the key set, beside the same run without a key.

Issue 18: one long run of token characters (base64, a long URL, a hash) made the
key's search quadratic: a 40,000-character answer took 30 s with a key set and
0.3 s without; a 50 KB stream shown with ``--show-stream`` did not end in 300 s.
Each figure is printed beside the same work with no key set, as a ratio (near 1:
the key costs little more than the rest of redaction). Prints; asserts nothing.

    python benchmarks/bench_secrets.py [--size N] [--deltas N]
"""
from __future__ import annotations

import argparse
import base64
import random
import string
import time

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import measure  # noqa: E402
from measure import row  # noqa: E402
from tracetui.trace.known_secret import KnownSecret  # noqa: E402
from tracetui.trace.redact import redact_text  # noqa: E402
from tracetui.trace.stream_redact import StreamRedactor, redact_events  # noqa: E402

KEY = "sk-proj-Q7xT2mV9pL4kR8wZ1nB6cY3hJ5fD0gSaT3BlbkFJ"


def texts(size: int) -> dict[str, str]:
    rng = random.Random(1)
    letters = "".join(rng.choice(string.ascii_letters) for _ in range(size))
    return {"letters": f"Answer: {letters} done", "one letter": f"Answer: {'A' * size} done",
            "base64": "Answer: " + base64.b64encode(rng.randbytes(size * 3 // 4)).decode() + " done",
            "long URL": "See https://example.com/" + "/".join(["a1b2"] * (size // 5)) + " now"}


def seconds(fn) -> list[float]:
    times = []
    for _ in range(3):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return times


def stream(text: str, deltas: int, known: KnownSecret | None) -> None:
    size = -(-len(text) // deltas)
    redactor = StreamRedactor(known)
    for i in range(0, len(text), size):
        redactor.feed(text[i:i + size])
    redactor.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size", type=int, default=40_000, help="characters in the long token")
    parser.add_argument("--deltas", type=int, default=300, help="stream deltas the text arrives in")
    args = parser.parse_args()
    known = KnownSecret(KEY)
    measure.header(f"bench_secrets: a {args.size:,}-character token; key of {len(KEY)} characters; "
                   "key set beside no key")
    measure.columns("no key")
    for name, text in texts(args.size).items():
        rows = [
            ("redacted (scrub + redact_text)", lambda: redact_text(known.redact(text)), lambda: redact_text(text)),
            (f"shown, {args.deltas} deltas", lambda: stream(text, args.deltas, known), lambda: stream(text, args.deltas, None)),
            ("stream events of 137 chars", lambda: redact_events([{"delta": text[i:i + 137]} for i in range(0, len(text), 137)], known),
             lambda: redact_events([{"delta": text[i:i + 137]} for i in range(0, len(text), 137)])),
        ]
        for work, with_key, without in rows:
            row(f"{name}: {work}", seconds(with_key), seconds(without), "no key", unit="ms")
    # text the display must hold back as it grows (a Cookie line that runs on), beside the same prose alone
    rng = random.Random(2)
    prose = " ".join("".join(rng.choice(string.ascii_lowercase) for _ in range(rng.randint(2, 9)))
                     for _ in range(args.size // 6))
    deltas = args.deltas * 10
    row(f"held line: 'Cookie: ' + prose, {deltas} deltas", seconds(lambda: stream("Cookie: " + prose, deltas, None)),
        seconds(lambda: stream(prose, deltas, None)), "the prose alone", unit="ms",
        note="(held back until the line ends)")


if __name__ == "__main__":
    main()
