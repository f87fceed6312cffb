"""Redaction rule sets compared: what each catches, what each wrongly flags, how fast.

Three detectors: tracetui's own shapes alone (as before issue 18), tracetui's
shapes with gitleaks' rules (vendored, run on RE2: the choice), and
detect-secrets' plugins (default settings, as its scanner runs). They see the
same corpora: the hand-written one (tests/secret_corpus.py: secrets in the forms
they travel in, and ordinary trace text that must stay untouched) and one sample
per gitleaks rule (tests/gitleaks_samples.py, made from the rules' regexes, so it
favours gitleaks: read it as coverage of the formats gitleaks lists). A secret
counts as caught when removing what the detector reports leaves no piece of it;
a benign text counts as a false positive when anything is reported. Speed is
measured on real trace lines (every scenario, written by the trace writer) and
printed beside the shapes-only figure, as a ratio. Prints; asserts nothing.

The choice, from this script's figures (2 shared cores, December 2026): gitleaks'
rules. With them tracetui caught 58/58 of the hand-written corpus (shapes alone:
49/58) and 214/214 rule samples (shapes alone: 21/214) with 0/74 false
positives, at 0.88x the shapes-only speed (7,900 against 9,000 lines/s);
detect-secrets caught 22/58 and 28/214 with 1/74 false positive, at 0.05x
(460 lines/s).
The detect-secrets figures need ``pip install detect-secrets`` (not a dependency:
they are printed only where it is installed).
Updating the rules is one command (``python -m tracetui.trace.gitleaks_update NEW.toml COMMIT``).

Key/value-dense text is timed too (many findings in one JSON string: 20,000
``cache_key: user-…`` lines, 1.4 MB of ``{"…_key": "user-…"}`` pairs), beside the
shapes-only time of the same text, which is what tracetui did before gitleaks' rules.

    pip install detect-secrets   # optional: without it, only tracetui's figures are printed
    python benchmarks/bench_redact.py [--lines N]
"""
from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from secret_corpus import BENIGN, instances, pieces  # noqa: E402
from gitleaks_samples import RULE_IDS, sample  # noqa: E402

import measure  # noqa: E402
from measure import row  # noqa: E402
import tracetui.trace.redact as redact  # noqa: E402
from tracetui.loop.runner import records_of, run_scenario  # noqa: E402
from tracetui.loop.scenarios import SCENARIOS  # noqa: E402
from tracetui.trace.redact import redact_line, redact_text  # noqa: E402

_WITH_RULES = redact._triggered


def _shapes_only(low: bytes):
    return _WITH_RULES(low)[0], []


def ours(text: str) -> str:
    return redact_text(text)


def shapes_only(function):
    """``function`` run with tracetui's own shapes alone (gitleaks' rules switched off)."""
    def run(*args):
        redact._triggered = _shapes_only
        try:
            return function(*args)
        finally:
            redact._triggered = _WITH_RULES
    return run


def rule_samples() -> list[tuple[str, str, str]]:
    return [(rule_id, *made) for rule_id in RULE_IDS if (made := sample(rule_id)) is not None]


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


def scores(redact, corpus=None) -> tuple[int, int, list[str]]:
    """(secrets caught, benign texts changed, names of the secrets missed)."""
    corpus = instances() if corpus is None else corpus
    missed = []
    for name, text, secret in corpus:
        shown = redact(text)
        if any(p in shown for p in pieces(secret)):
            missed.append(name)
    changed = sum(redact(text) != text for text in BENIGN)
    return len(corpus) - len(missed), changed, missed


def trace_lines(count: int) -> list[bytes]:
    records = list(records_of(iter(run_scenario(name) for name in SCENARIOS)))
    lines = [orjson.dumps(r) for r in records]
    return (lines * (count // len(lines) + 1))[:count]


def lines_per_second(fn, lines) -> float:
    start = time.perf_counter()
    for line in lines:
        fn(line)
    return len(lines) / (time.perf_counter() - start)


def dense_texts() -> list[tuple[str, bytes]]:
    """Text with a finding candidate on every line or pair, as one trace line each."""
    lines = "".join(f"cache_key: user-{i:06d}-profile\n" for i in range(20000))
    pairs = {f"field{i:06d}_key": f"user-{i:06d}-profile-{i * 7919 % 10007:05d}" for i in range(32000)}
    twilio = "twilio SK3f9a0c2e7b14d6a8f05c9e2b7d1a4c6e " * 12000
    record = {"rec": "event", "run_id": "r"}
    return [(f"{len(lines) // 1000} KB of key: value lines", orjson.dumps({**record, "data": {"text": lines}})),
            (f"{len(orjson.dumps(pairs)) / 1e6:.1f} MB of key/value pairs", orjson.dumps({**record, "data": pairs})),
            (f"{len(twilio) // 1000} KB of Twilio-like keys", orjson.dumps({**record, "data": {"text": twilio}}))]


def seconds(fn, arg) -> float:
    start = time.perf_counter()
    fn(arg)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lines", type=int, default=2000, help="trace lines to time each detector on")
    args = parser.parse_args()
    total, benign, samples = len(instances()), len(BENIGN), rule_samples()
    theirs = detect_secrets_redactor()
    detectors = [("tracetui shapes only", shapes_only(ours)), ("tracetui + gitleaks", ours)]
    if theirs is not None:
        detectors.append(("detect-secrets", theirs))
    print(f"hand-written corpus: {total} secrets, {benign} benign texts; {len(samples)} gitleaks rule samples")
    for name, detector in detectors:
        caught, changed, missed = scores(detector)
        rule_caught, _, _ = scores(detector, samples)
        print(f"  {name:<21} caught {caught}/{total}, rule samples {rule_caught}/{len(samples)}, "
              f"false positives {changed}/{benign}" + (f"; missed: {', '.join(missed)}" if missed else ""))
    if theirs is None:
        print("  detect-secrets:       not installed (pip install detect-secrets)")
    lines = trace_lines(args.lines)
    mean = sum(map(len, lines)) / len(lines)
    measure.header("bench_redact: speed; tracetui + gitleaks beside tracetui's shapes alone (before gitleaks' rules)")
    measure.columns("shapes only")
    base = [seconds(lambda ls: [shapes_only(redact_line)(x) for x in ls], lines) for _ in range(3)]
    rules = [seconds(lambda ls: [redact_line(x) for x in ls], lines) for _ in range(3)]
    row(f"{len(lines)} trace lines ({mean:,.0f} B each), no memo", rules, base, "shapes only",
        note=f"({len(lines) / statistics.median(rules):,.0f} lines/s at the median)")
    for name, line in dense_texts():
        row(name, [seconds(redact_line, line) for _ in range(3)],
            [seconds(shapes_only(redact_line), line) for _ in range(3)], "shapes only", note="(one trace line)")
    if theirs is not None:
        sample_lines = lines[: max(1, len(lines) // 10)]  # detect-secrets is slow: a tenth of the lines, as one file
        start = time.perf_counter()
        theirs(b"\n".join(sample_lines).decode())
        their_rate = len(sample_lines) / (time.perf_counter() - start)
        their = len(sample_lines) / their_rate
        row(f"detect-secrets, {len(sample_lines)} lines (1 sample)", [their] * 3,
            [statistics.median(base) * len(sample_lines) / len(lines)] * 3, "shapes only (scaled)")


if __name__ == "__main__":
    main()
