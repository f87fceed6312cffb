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

from tracetui.trace.known_secret import KnownSecret
from tracetui.trace.redact import redact_text
from tracetui.trace.stream_redact import StreamRedactor, redact_events

KEY = "sk-proj-Q7xT2mV9pL4kR8wZ1nB6cY3hJ5fD0gSaT3BlbkFJ"


def texts(size: int) -> dict[str, str]:
    rng = random.Random(1)
    letters = "".join(rng.choice(string.ascii_letters) for _ in range(size))
    return {"letters": f"Answer: {letters} done", "one letter": f"Answer: {'A' * size} done",
            "base64": "Answer: " + base64.b64encode(rng.randbytes(size * 3 // 4)).decode() + " done",
            "long URL": "See https://example.com/" + "/".join(["a1b2"] * (size // 5)) + " now"}


def seconds(fn) -> float:
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


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
    print(f"a {args.size:,}-character token; key of {len(KEY)} characters; best of 3")
    print(f"{'text':<12} {'work':<34} {'key set':>10} {'no key':>10} {'ratio':>7}")
    for name, text in texts(args.size).items():
        rows = [
            ("redacted (scrub + redact_text)", lambda: redact_text(known.redact(text)), lambda: redact_text(text)),
            (f"shown, {args.deltas} deltas", lambda: stream(text, args.deltas, known), lambda: stream(text, args.deltas, None)),
            ("stream events of 137 chars", lambda: redact_events([{"delta": text[i:i + 137]} for i in range(0, len(text), 137)], known),
             lambda: redact_events([{"delta": text[i:i + 137]} for i in range(0, len(text), 137)])),
        ]
        for work, with_key, without in rows:
            a, b = seconds(with_key), seconds(without)
            print(f"{name:<12} {work:<34} {a * 1000:>8.1f}ms {b * 1000:>8.1f}ms {a / b:>6.2f}x")
    # text the display must hold back as it grows (a Cookie line that runs on), beside the same prose alone
    rng = random.Random(2)
    prose = " ".join("".join(rng.choice(string.ascii_lowercase) for _ in range(rng.randint(2, 9)))
                     for _ in range(args.size // 6))
    deltas = args.deltas * 10
    held, plain = seconds(lambda: stream("Cookie: " + prose, deltas, None)), seconds(lambda: stream(prose, deltas, None))
    print(f"\n{'held line':<12} {f'shown, {deltas} deltas':<34} {'Cookie:':>10} {'prose':>10}")
    print(f"{'':<12} {'(held back until the line ends)':<34} {held * 1000:>8.1f}ms {plain * 1000:>8.1f}ms "
          f"{held / plain:>6.2f}x")


if __name__ == "__main__":
    main()
