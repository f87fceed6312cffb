"""tracetui's redaction rules versus detect-secrets' plugins: what each catches, what each wrongly flags, how fast.

Both detectors see the same two corpora (tests/secret_corpus.py): secrets in the
forms they travel in, and ordinary trace text that must stay untouched. A secret
counts as caught when removing what the detector reports leaves no piece of it;
a benign text counts as a false positive when anything is reported. Speed is
measured on real trace lines (every scenario, written by the trace writer) and
printed beside the other detector's figure, as a ratio. Prints; asserts nothing.

    pip install detect-secrets   # optional: without it, only tracetui's figures are printed
    python benchmarks/bench_redact.py [--lines N]
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from secret_corpus import BENIGN, instances, pieces  # noqa: E402

from tracetui.loop.runner import records_of, run_scenario  # noqa: E402
from tracetui.loop.scenarios import SCENARIOS  # noqa: E402
from tracetui.trace.redact import redact_line, redact_text  # noqa: E402


def ours(text: str) -> str:
    return redact_text(text)


def detect_secrets_redactor():
    """A redactor built on detect-secrets as its scanner runs (default plugins, limits and filters), or None.

    Every secret value it reports in the text is removed. The text is scanned as a
    file of its own, the way ``detect-secrets scan`` reads one.
    """
    try:
        from detect_secrets import SecretsCollection
        from detect_secrets.settings import default_settings
    except ImportError:
        return None
    folder = Path(tempfile.mkdtemp(prefix="bench_redact."))
    counter = iter(range(1 << 30))

    def redact(text: str) -> str:
        path = folder / f"t{next(counter)}.txt"
        path.write_text(text)
        collection = SecretsCollection()
        with default_settings():
            collection.scan_file(str(path))
        path.unlink()
        found = {secret.secret_value for _, secret in collection if secret.secret_value}
        for value in sorted(found, key=len, reverse=True):
            text = text.replace(value, "<redacted>")
        return text

    return redact


def scores(redact) -> tuple[int, int, list[str]]:
    """(secrets caught, benign texts changed, names of the secrets missed)."""
    missed = []
    for name, text, secret in instances():
        shown = redact(text)
        if any(p in shown for p in pieces(secret)):
            missed.append(name)
    changed = sum(redact(text) != text for text in BENIGN)
    return len(instances()) - len(missed), changed, missed


def trace_lines(count: int) -> list[bytes]:
    records = list(records_of(iter(run_scenario(name) for name in SCENARIOS)))
    lines = [orjson.dumps(r) for r in records]
    return (lines * (count // len(lines) + 1))[:count]


def lines_per_second(fn, lines) -> float:
    start = time.perf_counter()
    for line in lines:
        fn(line)
    return len(lines) / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lines", type=int, default=2000, help="trace lines to time each detector on")
    args = parser.parse_args()
    total, benign = len(instances()), len(BENIGN)
    theirs = detect_secrets_redactor()
    caught, changed, missed = scores(ours)
    print(f"secret corpus ({total} shapes), benign corpus ({benign} texts)")
    print(f"  tracetui rules:  caught {caught}/{total}, false positives {changed}/{benign}"
          + (f"; missed: {', '.join(missed)}" if missed else ""))
    lines = trace_lines(args.lines)
    mean = sum(map(len, lines)) / len(lines)
    own_rate = lines_per_second(redact_line, lines)
    if theirs is None:
        print("  detect-secrets:  not installed (pip install detect-secrets)")
        print(f"speed on {len(lines)} trace lines ({mean:,.0f} bytes each): tracetui {own_rate:,.0f} lines/s")
        return
    their_caught, their_changed, their_missed = scores(theirs)
    print(f"  detect-secrets:  caught {their_caught}/{total}, false positives {their_changed}/{benign}"
          + (f"; missed: {', '.join(their_missed)}" if their_missed else ""))
    sample = lines[: max(1, len(lines) // 10)]  # detect-secrets is slow: a tenth of the lines, as one file
    start = time.perf_counter()
    theirs(b"\n".join(sample).decode())
    their_rate = len(sample) / (time.perf_counter() - start)
    print(f"speed on trace lines ({mean:,.0f} bytes each): tracetui {own_rate:,.0f} lines/s, "
          f"detect-secrets {their_rate:,.0f} lines/s: tracetui is {own_rate / their_rate:,.0f}x as fast")


if __name__ == "__main__":
    main()
