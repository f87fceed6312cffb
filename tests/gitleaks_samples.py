"""A sample secret for every vendored gitleaks rule, made from the rule's own regex.

Each rule's regex is walked (as Python's parser reads it, once RE2's mid-pattern
flags are dropped: a sample of the stricter form matches the original) and a
text is built from it: the fewest repeats that can hold a random-looking secret,
characters drawn from each class with a fixed seed, the first alternative that
is not an anchor. A sample counts only if the rule itself reports it (entropy,
allowlists), trying a few seeds; the tests then require that the secret it
reports never survives redaction. A new rule needs no hand-written sample.
"""
from __future__ import annotations

import random
import re
import string
from functools import lru_cache

try:
    from re import _parser as sre_parse  # Python 3.11+
    from re import _constants as sre
except ImportError:  # pragma: no cover
    import sre_constants as sre  # type: ignore[no-redef]
    import sre_parse  # type: ignore[no-redef]

from tracetui.trace.gitleaks_rules import RULES, Rule, findings

_POOL = string.ascii_letters + string.digits
_EXTRA = " -_./+=:~'`\t"
_SECRET_RUN = 32  # characters drawn for an open-ended repeat


def _python_syntax(pattern: str) -> str:
    pattern = re.sub(r"\(\?-?[imsU]+\)", "", pattern)  # flags in the middle (RE2 allows them; samples need none)
    pattern = re.sub(r"\(\?-?[imsU]+(?:-[imsU]+)?:", "(?:", pattern)
    return pattern.replace(r"\z", r"\Z").replace("[:alnum:]", "a-zA-Z0-9")


def _category_chars(category) -> str:
    return {sre.CATEGORY_DIGIT: string.digits, sre.CATEGORY_WORD: _POOL + "_", sre.CATEGORY_SPACE: " ",
            sre.CATEGORY_NOT_DIGIT: string.ascii_letters, sre.CATEGORY_NOT_WORD: " -",
            sre.CATEGORY_NOT_SPACE: _POOL}.get(category, _POOL)


def _class_chars(items) -> str:
    allowed = ""
    negate = False
    for op, arg in items:
        if op is sre.NEGATE:
            negate = True
        elif op is sre.LITERAL:
            allowed += chr(arg)
        elif op is sre.RANGE:
            allowed += "".join(chr(c) for c in range(arg[0], arg[1] + 1) if c < 128)
        elif op is sre.CATEGORY:
            allowed += _category_chars(arg)
    if negate:
        return "".join(c for c in _POOL + "-_ " if c not in allowed) or "a"
    return allowed


def _pick(chars: str, rng: random.Random) -> str:
    best = [c for c in chars if c in _POOL] or [c for c in chars if c in _EXTRA] or list(chars) or ["a"]
    return rng.choice(best)


def _emit(parsed, rng: random.Random) -> str:
    out = []
    for op, arg in parsed:
        if op is sre.LITERAL:
            out.append(chr(arg))
        elif op is sre.NOT_LITERAL:
            out.append("a" if chr(arg) != "a" else "b")
        elif op is sre.IN:
            out.append(_pick(_class_chars(arg), rng))
        elif op is sre.ANY:
            out.append(_pick(_POOL, rng))
        elif op in (sre.MAX_REPEAT, sre.MIN_REPEAT, getattr(sre, "POSSESSIVE_REPEAT", None)):
            low, high, sub = arg
            count = low if low > 1 or high == low else (min(high, _SECRET_RUN) if low == 1 else 0)
            if low > 1 and high > low and low < 12:
                count = min(high, max(low, 24))  # room for entropy
            out += [_emit(sub, rng) for _ in range(count)]
        elif op is sre.SUBPATTERN:
            out.append(_emit(arg[-1], rng))
        elif op is sre.BRANCH:
            options = arg[1]
            chosen = next((o for o in options if o.data and o.data[0][0] is not sre.AT), options[0])
            out.append(_emit(chosen, rng))
        elif op is sre.CATEGORY:
            out.append(_pick(_category_chars(arg), rng))
        # AT (anchors, \b) and the rest emit nothing
    return "".join(out)


def _reported(rule: Rule, text: str) -> str | None:
    line = text.encode()
    spans = list(findings(rule, line))
    return line[spans[0][0]:spans[0][1]].decode() if spans else None


@lru_cache(maxsize=None)
def sample(rule_id: str) -> tuple[str, str] | None:
    """``(text, secret)``: a text holding a secret ``rule_id`` reports, and that secret; None if none was made."""
    rule = next(r for r in RULES if r.id == rule_id)
    parsed = sre_parse.parse(_python_syntax(rule.pattern.pattern.decode()))
    for seed in range(40):
        made = _emit(parsed, random.Random(f"{rule_id}/{seed}"))
        lead = "" if any(k.decode() in made.lower() for k in rule.keywords) else rule.keywords[0].decode() + " "
        text = f"config {lead}{made} end"  # (gitleaks tries a rule only on a text that holds one of its keywords)
        secret = _reported(rule, text)
        if secret:
            return text, secret
    return None


RULE_IDS = [rule.id for rule in RULES]
