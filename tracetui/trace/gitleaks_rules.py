"""Token formats from a maintained rule set: gitleaks' rules, vendored as data (``rules/gitleaks.toml``, MIT).

Hand-written shapes (``secret_shapes``) always trail the formats services issue;
gitleaks keeps a rule for each of some two hundred (Twilio, Databricks, Mailgun,
Shopify, DigitalOcean, PyPI, Heroku, Slack webhooks…). Chosen over
detect-secrets' plugins on recall and speed: ``benchmarks/bench_redact.py`` prints
both. The rules are Go RE2 expressions; they run on RE2 here too (google-re2, a
dependency already), so each is linear in the text, and they are tried only on a
text that holds one of their keywords (gitleaks' own prefilter). They are read
from ``rules/gitleaks.json``, the TOML's conversion (``gitleaks_update``, which also
says what is left out): it loads fast and needs no TOML parser.

What is read from each rule, as gitleaks reads it: ``regex``; ``keywords``;
``secretGroup`` (else the first non-empty group, else the whole match) is what is
replaced; ``entropy`` (a lower Shannon entropy is no finding); ``allowlists``
(``regexes`` on the secret, the match or the line, ``stopwords``, ``condition``);
and the global allowlist's ``regexes`` and ``stopwords``.

They run on a JSON line (the trace writer's unit), where a quote of the text is
``\\"`` and an unescaped ``"`` is the line's own structure. A match may have such
a quote as its first or last character (the quotes around a string value), and
may cross one separator of a key and its value or of two strings in a list
(``"mailgun": "key-…"``, ``["X-Mailgun-Key", "key-…"]``: keyed rules read the two
together), never the run id's (the writer redacts the run id apart from its key,
``tracetui.trace.writer``); a match that would cross more is tried again from its
next character. The rules read a view of the line in which ``\\n``/``\\t`` are
white space and ``\\"`` is a quote (``tracetui.trace.redact``), and a token may
also end at punctuation (prose ends a key with ``!`` or ``)``, code seldom does).
A keyword counts in the JSON string that holds the match or in that string's key,
not anywhere in the file; an allowlist's "line" is the source line inside that
string (between ``\\n`` escapes). What the rules ask of a line (its strings'
bounds, keywords, lines, allowlist verdicts) is found once per line
(:class:`TextFacts`), so many findings in one long string stay linear.
"""
from __future__ import annotations

import bisect
import functools
import heapq
import json
import math
import re
from collections import Counter
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Callable, Iterator

import re2

#: the rules as tracetui reads them: converted from ``RULES_SOURCE`` by the update command (``gitleaks_update``);
#: JSON, because it loads in a millisecond on every Python (tomllib is 3.11+, and a TOML parse cost ~40 ms at
#: every start)
RULES_FILE = Path(__file__).with_name("rules") / "gitleaks.json"
#: gitleaks' config as published, with its licence: the source of ``RULES_FILE``
RULES_SOURCE = RULES_FILE.with_suffix(".toml")


@dataclass(frozen=True, eq=False)
class Allowlist:
    target: str  # "secret", "match" or "line"
    regexes: tuple[str, ...]
    stopwords: tuple[bytes, ...]
    all_of: bool  # condition = "AND"

    @cached_property
    def _regex_set(self) -> re2.Set:
        """The regexes as one RE2 set: one pass over a target however many there are."""
        regexes = re2.Set.SearchSet(re2.Options())
        for regex in self.regexes:
            regexes.Add(regex.encode())
        regexes.Compile()
        return regexes

    @cached_property
    def _stopword_set(self) -> re2.Set | None:
        """One RE2 set of the stopwords: a finding costs one pass over its secret, not one per stopword (~1,500)."""
        if not self.stopwords:
            return None
        words = re2.Set.SearchSet(re2.Options())
        for word in self.stopwords:
            words.Add(re2.escape(word))
        words.Compile()
        return words

    def by_regex(self, target: bytes) -> bool:
        return bool(target) and bool(self._regex_set.Match(target))

    def allows(self, secret: bytes, match: bytes, line_matches: Callable[["Allowlist"], bool]) -> bool:
        """``line_matches``: whether this allowlist's regexes match the source line (asked once per line)."""
        if not self.regexes:
            by_regex = False
        elif self.target == "line":
            by_regex = line_matches(self)
        else:
            by_regex = self.by_regex(match if self.target == "match" else secret)
        words = self._stopword_set
        by_word = bool(secret) and words is not None and bool(words.Match(secret.lower()))
        if self.all_of:
            checks = ([by_regex] if self.regexes else []) + ([by_word] if self.stopwords else [])
            return bool(checks) and all(checks)
        return by_regex or by_word


@dataclass(frozen=True, eq=False)
class Rule:
    id: str
    regex: str  # as the rule set writes it, its token end widened for prose (gitleaks_update.TOKEN_END)
    keywords: tuple[bytes, ...]
    entropy: float
    group: int  # 0: the first non-empty group (or the whole match when there is none)
    allowlists: tuple[Allowlist, ...]

    @cached_property
    def pattern(self) -> re2._Regexp:
        """Compiled when first needed: most runs never hold most rules' keywords (and start-up stays short)."""
        return re2.compile(self.regex.encode())


def _allowlist(table: dict) -> Allowlist:
    return Allowlist(table.get("regexTarget", "secret"), tuple(table.get("regexes", ())),
                     tuple(w.lower().encode() for w in table.get("stopwords", ())), table.get("condition") == "AND")


def load(path: Path = RULES_FILE) -> tuple[tuple[Rule, ...], Allowlist]:
    """The rules of a converted gitleaks config (``gitleaks_update.convert``) and its global allowlist."""
    config = json.loads(path.read_text(encoding="utf-8"))
    rules = tuple(Rule(table["id"], table["regex"], tuple(k.lower().encode() for k in table.get("keywords", ())),
                       float(table.get("entropy", 0)), int(table.get("secretGroup", 0)),
                       tuple(map(_allowlist, table.get("allowlists", ()))))
                  for table in config["rules"])
    return rules, _allowlist(config.get("allowlist", {}))


RULES, GLOBAL_ALLOWLIST = load()


def shannon_entropy(data: bytes) -> float:
    if not data:
        return 0.0
    size = len(data)
    counts = Counter(data).values()
    if size < len(_N_LOG_N):  # (the usual case: a token; the table saves a log per distinct byte)
        return math.log2(size) - sum(map(_N_LOG_N.__getitem__, counts)) / size
    return -sum(n / size * math.log2(n / size) for n in counts)


_N_LOG_N = [0.0] + [n * math.log2(n) for n in range(1, 1024)]


#: a ``\n`` escape or a raw line break (an escape when an odd run of backslashes comes before the n)
_NEWLINE = re.compile(rb'\\+n|\n')


def _unescaped_quotes(line: bytes) -> list[int]:
    """The offsets of the quotes not escaped by a backslash (a JSON text's own), found with C-speed splits."""
    pieces = line.split(b'"')
    out: list[int] = []
    at = -1
    for piece in pieces[:-1]:
        at += len(piece) + 1
        if piece.endswith(b"\\") and (len(piece) - len(piece.rstrip(b"\\"))) % 2 == 1:
            continue
        out.append(at)
    return out


#: what may lie between a key's closing quote and its value's opening quote (``"key": "value"``), or between a
#: header's name and value in a list (``["X-Mailgun-Key", "key-…"]``)
_SEPARATOR = re.compile(rb'"\s*[:,]\s*"')


class TextFacts:
    """What the rules ask of one text, found once for all its matches: where its JSON strings start and end, which
    keywords each holds, its source lines (a ``\\n`` inside a string ends one), and each line's allowlist verdicts.

    Asking these of the text around every match was quadratic in the length of one string (20,000 ``key: value``
    lines in one string: a minute)."""

    def __init__(self, line: bytes):
        self.line = line
        self._quotes: list[int] | None = None
        self._breaks: list[tuple[int, int]] | None = None
        #: each string's lowercased text (a short one) or the numbers of the keywords it holds (a long one)
        self._keywords: dict[tuple[int, int], bytes | frozenset[int]] = {}
        self._line_verdicts: dict[tuple[int, int, int], bool] = {}

    @property
    def quotes(self) -> list[int]:
        """The unescaped quotes, in order (found when a rule first matches: most lines give no rule a match)."""
        if self._quotes is None:
            self._quotes = _unescaped_quotes(self.line)
        return self._quotes

    @property
    def breaks(self) -> list[tuple[int, int]]:
        """(start, end) of each line break, in order: unescaped quotes, ``\\n`` escapes, raw line breaks."""
        if self._breaks is None:
            newlines = []
            for m in _NEWLINE.finditer(self.line):
                start, end = m.span()
                if end - start == 1 or (end - 1 - start) % 2 == 1:  # a raw one, or \n (not \\n)
                    newlines.append((end - 2 if end - start > 1 else start, end))
            self._breaks = list(heapq.merge(((q, q + 1) for q in self.quotes), newlines))
        return self._breaks

    def quote_inside(self, start: int, end: int) -> list[int]:
        """The unescaped quotes strictly inside ``[start, end)`` (past its first byte, before its last)."""
        lo = bisect.bisect_right(self.quotes, start)
        hi = bisect.bisect_left(self.quotes, end - 1)
        return self.quotes[lo:hi]

    def string_around(self, start: int, end: int) -> tuple[int, int]:
        """The JSON string(s) holding ``[start, end)``: from the quote at or before ``start`` to the one at or
        after its last byte (the whole text when it has none)."""
        lo = bisect.bisect_right(self.quotes, start) - 1
        hi = bisect.bisect_left(self.quotes, max(start + 1, end - 1))
        if lo >= 2 and self._is_separator(self.quotes[lo - 1], self.quotes[lo]):
            lo -= 2  # a value's key counts as its string: {"sentry": "…"}, ["X-Sentry-Token", "…"]
        return (self.quotes[lo] if lo >= 0 else 0,
                self.quotes[hi] + 1 if hi < len(self.quotes) else len(self.line))

    def _is_separator(self, left: int, right: int) -> bool:
        """Whether the quotes at ``left`` and ``right`` end a key (or a header's name in a list) and open its value
        (not the run id's: the writer redacts the run id apart from its key)."""
        sep = _SEPARATOR.match(self.line, left)
        return sep is not None and sep.end() - 1 == right and self.line[max(0, left - 7):left] != b'"run_id'

    def has_keyword(self, rule: Rule, start: int, end: int) -> bool:
        bounds = self.string_around(start, end)
        found = self._keywords.get(bounds)
        if found is None:
            found = self._keywords[bounds] = self.line[bounds[0]:bounds[1]].lower()
            if len(found) > _SHORT_STRING:  # a long string: which keywords it holds, in one pass
                found = self._keywords[bounds] = frozenset(_keyword_set()[0].Match(found) or ())
        if isinstance(found, bytes):
            return any(k in found for k in rule.keywords)
        index = _keyword_set()[1]
        return any(index[k] in found for k in rule.keywords)

    def source_line(self, start: int, end: int) -> tuple[int, int]:
        """The source line around ``[start, end)``: the text between the line breaks (or quotes) either side."""
        lo = bisect.bisect_right(self.breaks, (start, len(self.line) + 1)) - 1
        while lo >= 0 and self.breaks[lo][1] > start:
            lo -= 1
        hi = bisect.bisect_left(self.breaks, (end, -1))
        return (self.breaks[lo][1] if lo >= 0 else 0, self.breaks[hi][0] if hi < len(self.breaks) else len(self.line))

    def line_matcher(self, start: int, end: int) -> Callable[[Allowlist], bool]:
        bounds = self.source_line(start, end)

        def matches(allowlist: Allowlist) -> bool:
            key = (id(allowlist), *bounds)
            verdict = self._line_verdicts.get(key)
            if verdict is None:
                verdict = self._line_verdicts[key] = allowlist.by_regex(self.line[bounds[0]:bounds[1]])
            return verdict
        return matches


#: a string this long or shorter is searched for a rule's keywords directly; a longer one once for all keywords
_SHORT_STRING = 4096


@functools.cache
def _keyword_set() -> tuple[re2.Set, dict[bytes, int]]:
    """One RE2 set of every rule's keywords, and each keyword's number in it (built when first needed)."""
    index: dict[bytes, int] = {}
    for rule in RULES:
        for keyword in rule.keywords:
            index.setdefault(keyword, len(index))
    words = re2.Set.SearchSet(re2.Options())
    for keyword in index:
        words.Add(re2.escape(keyword))
    words.Compile()
    return words, index



def _crosses_structure(text: TextFacts, start: int, end: int) -> bool:
    """Whether the match ``[start, end)`` holds an unescaped quote other than its first or last byte, or the one
    separator of a key and its value (``"mailgun": "key-…"``: gitleaks' keyed rules read a key and its value
    together). The run id's key is not crossed: the writer redacts the run id apart from its key."""
    inside = text.quote_inside(start, end)
    if not inside:
        return False
    if len(inside) != 2:
        return True
    sep = _SEPARATOR.match(text.line, inside[0])
    return sep is None or sep.end() - 1 != inside[1] or text.line[max(0, inside[0] - 7):inside[0]] == b'"run_id'


def _whole_escapes(line: bytes, start: int, end: int) -> tuple[int, int]:
    """A span of a JSON text that neither cuts an escape (``\\n``, ``\\u00e9``) nor takes an unescaped quote,
    so the marker put in its place leaves valid JSON: an escape cut at the start is taken whole, one cut at
    the end is left out."""
    slashes = 0
    while start - slashes > 0 and line[start - slashes - 1] == 0x5C:
        slashes += 1
    if slashes % 2:
        start -= 1
    if start < end and line[start] == 0x22:
        start += 1
    if b"\\" not in line[start:end]:
        return start, end - 1 if end > start and line[end - 1] == 0x22 else end
    at = start
    while at < end:
        if line[at] == 0x5C:
            size = 6 if line[at + 1:at + 2] == b"u" else 2
            if at + size > end:
                return start, at
            at += size
        elif line[at] == 0x22:  # (only the last byte can be one: a match crosses no string's end)
            return start, at
        else:
            at += 1
    return start, end


def findings(rule: Rule, line: bytes, view: bytes | None = None, text: TextFacts | None = None,
             after: int = 0) -> Iterator[tuple[int, int]]:
    """The spans of the secrets ``rule`` finds in a JSON line (or any text), as gitleaks would report them.

    ``view``: the line as the rule is to read it (its escapes of white space written as white space, same offsets).
    ``text``: what is known of the line (pass the same one to every rule run on it). ``after``: a match that ends
    at or before it is not reported (text already shown: not judged again for every delta of a stream).
    """
    view = line if view is None else view
    text = TextFacts(line) if text is None else text
    pos = 0
    while pos <= len(line):
        m = rule.pattern.search(view, pos)
        if m is None:
            return
        start, end = m.span()
        if _crosses_structure(text, start, end):
            pos = start + 1
            continue
        pos = end if end > start else end + 1
        if end <= after:
            continue
        span = m.span(rule.group) if rule.group else next(
            (m.span(i) for i in range(1, len(m.groups()) + 1) if m.span(i)[1] > m.span(i)[0]), (start, end))
        span = _whole_escapes(line, *span)
        secret = line[span[0]:span[1]]
        if not secret or (rule.entropy and shannon_entropy(secret) <= rule.entropy):
            continue
        if not text.has_keyword(rule, start, end):
            continue
        match = line[start:end]
        matcher = text.line_matcher(start, end)
        if GLOBAL_ALLOWLIST.allows(secret, match, matcher) or any(a.allows(secret, match, matcher)
                                                                   for a in rule.allowlists):
            continue
        yield span
