"""Every vendored gitleaks rule catches its sample in every place a trace or the terminal shows text.

Samples are made from each rule's regex (``gitleaks_samples.py``), so a rule added
by an update is covered without a hand-written one; the hand-written corpus
(``secret_corpus.py``, benign texts included) is in test_secrets.py.
"""
from __future__ import annotations

import re
import subprocess
import sys

import orjson
import pytest

from tracetui.trace import gitleaks_update
from tracetui.trace.gitleaks_rules import RULES, RULES_FILE, RULES_SOURCE, load
from tracetui.trace.gitleaks_update import LEFT_OUT
from tracetui.trace.redact import redact_text
from tracetui.trace.safe_text import printable
from tracetui.trace.stream_redact import StreamRedactor
from tracetui.trace.writer import encode_record

from gitleaks_samples import RULE_IDS, sample


def test_the_vendored_rules_load_with_their_licence():
    header = RULES_SOURCE.read_text(encoding="utf-8")[:3000]
    assert "MIT License" in header and "Copyright (c) 2019 Zachary Rice" in header and "at commit " in header
    rules, _ = load()
    assert len(rules) == len(RULES) > 200
    assert all(rule.pattern is not None for rule in rules)  # every regex compiles on RE2 (linear time)
    assert not LEFT_OUT & {rule.id for rule in RULES}


@pytest.mark.parametrize("rule_id", RULE_IDS)
def test_every_rule_has_a_sample_and_it_is_redacted_everywhere(rule_id):
    made = sample(rule_id)
    assert made is not None, f"no sample could be made from the regex of {rule_id}"
    text, secret = made
    assert secret not in redact_text(text)
    assert secret not in printable(text)
    record = {"rec": "event", "run_id": "r", "summary": text,
              "data": {"message": text, "arguments": orjson.dumps({"note": text}).decode()}}
    line = encode_record(record)
    assert secret.encode() not in line and orjson.loads(line)["rec"] == "event"
    redactor = StreamRedactor()
    shown = "".join(redactor.feed(text[i:i + 5]) for i in range(0, len(text), 5)) + redactor.close()
    assert secret not in shown


def test_the_writers_memo_agrees_with_whole_lines_for_every_rule():
    """A rule's match never crosses a JSON string's end, so a line redacted in parts (run id, rest) is the
    line redacted whole, with a sample as the run id, beside it, or in a header list."""
    from tracetui.trace.redact import redact_line
    from tracetui.trace.writer import encode_records

    for rule_id in RULE_IDS:
        text, secret = sample(rule_id)
        for run_id in (secret, text, f"{secret}\",\"x", "r"):
            records = [{"rec": "run", "run_id": run_id, "inputs": {"note": text, "headers": [["Cookie", secret]]}},
                       {"rec": "event", "run_id": run_id, "seq": 1, "summary": secret, "data": {"k": [text, secret]}},
                       {"rec": "summary", "run_id": run_id, "status": "answer_ready"}]
            whole = b"".join(redact_line(orjson.dumps(r)) + b"\n" for r in records)
            assert encode_records(records) == whole, rule_id
            assert text.encode() not in whole  # (a bare secret of a keyed rule is no finding on its own)


def _run_python(code: str, timeout: float) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=timeout)


@pytest.mark.parametrize("data", [
    {"text": "".join(f"cache_key: user-{i:06d}-profile\n" for i in range(2000))},
    {"text": ("twilio SK" + "3f9a0c2e7b14d6a8f05c9e2b7d1a4c6e ") * 1200},
    {f"k{i}_key": f"user-{i:06d}-profile" for i in range(2000)},
], ids=["key-value lines", "twilio keys", "key-value pairs"])
def test_many_findings_in_one_long_string_cost_linear_work(monkeypatch, data):
    """Each JSON string's bounds, keywords and lines are found once, not around every match (that took 56 s
    for 620 KB). Counted, not timed: the bytes the per-text searches read stay a few times the line's length;
    around every match they were ~2,000 times it here (and grow with the string). The time on the 620 KB
    is a figure of benchmarks/bench_redact.py."""
    import tracetui.trace.gitleaks_rules as gitleaks_rules

    read = []
    quotes, by_regex = gitleaks_rules._unescaped_quotes, gitleaks_rules.Allowlist.by_regex
    words, index = gitleaks_rules._keyword_set()

    class CountedWords:
        def Match(self, text):
            read.append(len(text))
            return words.Match(text)
    monkeypatch.setattr(gitleaks_rules, "_unescaped_quotes", lambda line: read.append(len(line)) or quotes(line))
    monkeypatch.setattr(gitleaks_rules.Allowlist, "by_regex",
                        lambda self, target: read.append(len(target)) or by_regex(self, target))
    monkeypatch.setattr(gitleaks_rules, "_keyword_set", lambda: (CountedWords(), index))
    record = {"rec": "event", "run_id": "r", "data": data}
    encode_record(record)
    assert sum(read) < 16 * len(orjson.dumps(record))


def test_the_stream_display_judges_each_finding_a_bounded_number_of_times(monkeypatch):
    """Text already shown is context only: findings inside it are not judged again for every delta."""
    import tracetui.trace.gitleaks_rules as gitleaks_rules

    judged = []
    entropy = gitleaks_rules.shannon_entropy
    monkeypatch.setattr(gitleaks_rules, "shannon_entropy", lambda data: judged.append(1) or entropy(data))
    lines = 300
    text = "".join(f"cache_key: user-{i:06d}-profile\n" for i in range(lines))
    redactor = StreamRedactor()
    shown = "".join(redactor.feed(text[i:i + 4]) for i in range(0, len(text), 4)) + redactor.close()
    assert shown == text
    assert len(judged) < 12 * lines  # (each line was judged ~250 times, once per delta while in the context)


def test_the_rules_load_without_tomllib():
    """Python 3.10 has no tomllib: the rules are read from their JSON conversion."""
    code = "import sys; sys.modules['tomllib'] = None; import tracetui.trace.redact; print('ok')"
    assert _run_python(code, timeout=60).stdout == "ok\n"


def test_the_json_rules_are_the_conversion_of_the_vendored_toml():
    pytest.importorskip("tomllib")
    converted, widened = gitleaks_update.convert(RULES_SOURCE.read_text(encoding="utf-8"))
    assert gitleaks_update.dumps(converted) == RULES_FILE.read_text(encoding="utf-8")
    assert widened > 100
    assert not any("paths" in a for rule in converted["rules"] for a in rule.get("allowlists", ()))


def test_an_update_with_a_bad_rule_changes_nothing(tmp_path, monkeypatch):
    pytest.importorskip("tomllib")
    rules, source = tmp_path / "gitleaks.json", tmp_path / "gitleaks.toml"
    rules.write_text("old json"), source.write_text(RULES_SOURCE.read_text(encoding="utf-8"))
    monkeypatch.setattr(gitleaks_update, "RULES_FILE", rules)
    monkeypatch.setattr(gitleaks_update, "RULES_SOURCE", source)
    bad = tmp_path / "new.toml"
    bad.write_text(RULES_SOURCE.read_text(encoding="utf-8").replace("regex = '''(?:ghu|ghs)_", "regex = '''(?<=x)", 1))
    assert gitleaks_update.main([str(bad), "abc"]) == 1
    assert rules.read_text() == "old json" and source.read_text() == RULES_SOURCE.read_text(encoding="utf-8")
    good = tmp_path / "good.toml"
    good.write_text(RULES_SOURCE.read_text(encoding="utf-8").split(gitleaks_update.HEADER_END, 1)[1])
    assert gitleaks_update.main([str(good), "abc123"]) == 0
    assert rules.read_text() == RULES_FILE.read_text(encoding="utf-8")
    assert "at commit abc123." in source.read_text() and "MIT License" in source.read_text()
    assert sorted(tmp_path.iterdir()) == sorted([rules, source, bad, good])  # no temporary file left


_KEY_BEFORE = re.compile(r"([\w.-]+)[\s'\"]{0,3}(?:=|>|:{1,3}=|\|\||:|=>|\?=|,)[\x60'\"\s=]{0,5}$")


def _contexts(keyword: str, secret: str) -> dict[str, dict]:
    """The places a keyed secret sits in a trace: a JSON key's value, tool arguments holding JSON text that holds
    JSON text, a header list, a HAR-style header object."""
    pair = {keyword: secret}
    return {"pair": {"data": pair},
            "arguments in arguments": {"data": {"arguments": orjson.dumps({"a": orjson.dumps(pair).decode()}).decode()}},
            "header list": {"data": {"headers": [[f"X-{keyword}-Key", secret]]}},
            "arguments header list": {"data": {"arguments": orjson.dumps({"h": [[keyword, secret]]}).decode()}}}


@pytest.mark.parametrize("rule_id", RULE_IDS)
def test_every_rule_catches_its_secret_under_its_keyword_as_a_key(rule_id):
    rule = next(r for r in RULES if r.id == rule_id)
    text, secret = sample(rule_id)
    named = _KEY_BEFORE.search(text[:text.index(secret)])  # the sample's own key ("config snykkey=…")
    if not named and not any(k.decode() in secret.lower() for k in rule.keywords):
        pytest.skip("the sample's secret lacks its rule's keyword (drawn for a `.` of the regex); a real one has it")
    leaks = []
    for keyword in [named.group(1)] if named else [k.decode() for k in rule.keywords]:
        for place, fields in _contexts(keyword, secret).items():
            line = encode_record({"rec": "event", "run_id": "r", **fields})
            if secret.encode() in line:
                leaks.append((keyword, place))
    assert not leaks
