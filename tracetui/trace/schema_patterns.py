"""JSON Schema ``pattern`` on RE2, read as ECMA-262 reads it, paid for from the check's step budget.

Python's ``re`` backtracks: ``^(a+)+$`` over 47 characters runs for ever while holding
the GIL. RE2's time is linear in the text, but not free: compiling a big pattern and
running a big program over a long text both take time, so both are charged to the
running check's :class:`~tracetui.trace.schema_budget.Budget` (a compile once per
check, a search by program size times text length), and RE2 may use at most
:data:`MAX_MEM` bytes for one pattern. A pattern RE2 refuses (lookaround and
backreferences, which only a backtracking engine has; a pattern too large) is run
by nothing else: :class:`PatternUndecided`, with RE2's reason in words.

Read as ECMA-262: ``$`` is the end of the text; ``\\d`` and ``\\w`` are ASCII (RE2's
too); ``\\s``, ``\\S`` and ``.`` are given to RE2 as ECMA's classes (Unicode spaces and
line terminators, which RE2's own lack); ``\\uXXXX`` is a code point, and a surrogate
pair ``\\uD83D\\uDE00`` the one code point it encodes; ``{n,m}`` beyond RE2's limit of
1,000 is rewritten as repeats of at most 1,000, which match exactly the same texts.
"""
from __future__ import annotations

import re
from typing import Any

import re2

from tracetui.trace.schema_budget import PatternUndecided, SchemaUnusable, charge, current
from tracetui.trace.safe_text import redacted_prefix

SHOWN_CHARS = 80  # of a pattern or reference quoted in a message
MAX_MEM = 2 << 20  # bytes RE2 may use for one pattern (its program and its search cache): ^.{1,4096}$ fits
SEARCH_COST = 1000  # a step per this many (program instructions × bytes of text) searched
GLOBAL_PROGRAM = 2000  # programs up to this many instructions are kept across checks (they are cheap to hold)

_OPTIONS = re2.Options()
_OPTIONS.log_errors = False  # RE2 would print every pattern it refuses on standard error
_OPTIONS.never_capture = True  # a match or not is all JSON Schema asks
_OPTIONS.max_mem = MAX_MEM

# ECMA-262's white space and line terminators (\s), and what its '.' does not match
_SPACES = r"\t\n\x{0B}\f\r \x{A0}\x{1680}\x{2000}-\x{200A}\x{2028}\x{2029}\x{202F}\x{205F}\x{3000}\x{FEFF}"
_NOT_DOT = r"\n\r\x{2028}\x{2029}"
# one token at a time (linear): an escape, a class, a counted repeat, or one character
_TOKEN = re.compile(r"\\u([dD][89abAB][0-9a-fA-F]{2})\\u([dD][c-fC-F][0-9a-fA-F]{2})|\\u([0-9a-fA-F]{4})|"
                    r"\\([sS])|\\.|\[(?:\\.|[^\]\\])*\]|\{(\d+)(,(\d*))?\}|.", re.S)
_REPEAT_LIMIT = 1000


def shown(text: str) -> str:
    return repr(text if len(text) <= SHOWN_CHARS else redacted_prefix(text, SHOWN_CHARS) + "…")


def _class_body(text: str) -> str:
    """An ECMA class's inside with \\s, \\S and \\uXXXX as RE2 reads them."""
    def one(m: re.Match[str]) -> str:
        if m[1]:
            return _pair(m[1], m[2])
        if m[3]:
            return f"\\x{{{m[3]}}}"
        if m[4] == "s":
            return _SPACES
        return m[0]  # \S inside a class has no RE2 spelling of the same size: kept (RE2's own \S)
    return re.sub(r"\\u([dD][89abAB][0-9a-fA-F]{2})\\u([dD][c-fC-F][0-9a-fA-F]{2})|\\u([0-9a-fA-F]{4})|\\([sS])|\\.",
                  one, text, flags=re.S)


def _pair(high: str, low: str) -> str:
    return f"\\x{{{0x10000 + ((int(high, 16) - 0xD800) << 10) + (int(low, 16) - 0xDC00):X}}}"


def translate(pattern: str) -> str:
    """``pattern`` (ECMA-262) as RE2 syntax that matches the same texts."""
    out: list[str] = []
    atom = 0  # where in ``out`` the last atom starts (what a repeat applies to)
    opened: list[int] = []
    for m in _TOKEN.finditer(pattern):
        token = m[0]
        if m[1]:
            piece = _pair(m[1], m[2])
        elif m[3]:
            piece = f"\\x{{{m[3]}}}"
        elif m[4]:
            piece = f"[{_SPACES}]" if m[4] == "s" else f"[^{_SPACES}]"
        elif m[5] is not None:
            low, high = int(m[5]), (int(m[7]) if m[7] else None) if m[6] else int(m[5])
            if max(low, high or 0) > _REPEAT_LIMIT and atom < len(out) and (high is None or high >= low):
                unit = "(?:" + "".join(out[atom:]) + ")"
                del out[atom:]
                out.append(_long_repeat(unit, low, high))
                continue
            piece = token
        elif token.startswith("["):
            piece = "[" + _class_body(token[1:-1]) + "]"
        elif token == ".":
            piece = f"[^{_NOT_DOT}]"
        elif token == "(":
            opened.append(len(out))
            out.append(token)
            continue
        elif token == ")":
            atom = opened.pop() if opened else len(out)
            out.append(token)
            continue
        else:
            piece = token
        if token not in ("*", "+", "?", "|", "^", "$") and m[5] is None:
            atom = len(out)
        out.append(piece)
    return "".join(out)


def _long_repeat(unit: str, low: int, high: int | None) -> str:
    """``unit{low,high}`` as repeats of at most 1,000: ``x{n}`` is ``x{1000}x{n-1000}`` and ``x{0,a+b}`` is
    ``x{0,a}x{0,b}``, the same texts either way."""
    parts = []
    for count in _chunks(low):
        parts.append(f"{unit}{{{count}}}")
    if high is None:
        parts.append(f"{unit}*")
    else:
        parts.extend(f"{unit}{{0,{count}}}" for count in _chunks(high - low))
    return "(?:" + "".join(parts) + ")"


def _chunks(n: int) -> list[int]:
    return [_REPEAT_LIMIT] * (n // _REPEAT_LIMIT) + ([n % _REPEAT_LIMIT] if n % _REPEAT_LIMIT else [])


def _refusal(pattern: str, reason: str) -> SchemaUnusable:
    """RE2's refusal of ``pattern`` in words; a pattern no engine reads is said to be broken."""
    said = shown(pattern)
    if reason.startswith(("invalid perl operator: (?=", "invalid perl operator: (?!", "invalid perl operator: (?<")):
        return PatternUndecided(f"pattern {said} not checked: tracetui does not run lookahead or "
                                f"lookbehind (they can take unbounded time)")
    if re.match(r"invalid escape sequence: \\[1-9k]", reason):
        return PatternUndecided(f"pattern {said} not checked: tracetui does not run a backreference "
                                f"(it can take unbounded time)")
    if reason.startswith("pattern too large"):
        return PatternUndecided(f"pattern {said} not checked: it is too large to run (over {MAX_MEM // 1024:,} KB "
                                f"once compiled)")
    try:
        re.compile(pattern)  # compiling never backtracks; only matching does
    except (re.error, RecursionError, OverflowError) as exc:
        return SchemaUnusable(f"pattern is not a regular expression ({exc}): {said}")
    return PatternUndecided(f"pattern {said} not checked: its engine (RE2) does not read it: {reason}")


#: programs (and refusals) kept across checks, by pattern: only small ones, so what is kept stays small
_KEPT: dict[str, Any] = {}
KEPT_PATTERNS = 1024


def _compile(pattern: str) -> Any:
    """RE2's program for ``pattern``, or the exception that says why there is none."""
    try:
        return re2.compile(translate(pattern).encode(), _OPTIONS)
    except re2.error as exc:
        reason = exc.args[0].decode(errors="replace") if exc.args and isinstance(exc.args[0], bytes) else str(exc)
        return _refusal(pattern, reason)
    except (UnicodeError, IndexError, ValueError) as exc:
        return _refusal(pattern, str(exc))


def compiled(pattern: str) -> Any:
    """RE2's program for ``pattern``, charged to the running check the first time the check uses it (whether
    or not an earlier check compiled it: the charge never depends on what ran before)."""
    budget = current()
    if budget is not None and pattern in budget.compiled:
        return budget.compiled[pattern]
    charge(1 + len(pattern) // 8)  # reading it: what a refused pattern costs too
    program = _KEPT.get(pattern)
    if program is None:
        program = _compile(pattern)
        if isinstance(program, Exception) or program.programsize <= GLOBAL_PROGRAM:
            if len(_KEPT) >= KEPT_PATTERNS:
                del _KEPT[next(iter(_KEPT))]  # the oldest
            _KEPT[pattern] = program
    if isinstance(program, Exception):
        raise type(program)(str(program))  # a new one each time: a kept one's traceback would grow
    charge(program.programsize)  # compiling takes about as long per instruction as a step
    if budget is not None:
        budget.compiled[pattern] = program
    return program


def search(pattern: Any, text: str) -> bool:
    """Whether ``pattern`` matches somewhere in ``text``, as JSON Schema's ``pattern`` asks."""
    if not isinstance(pattern, str):
        raise SchemaUnusable(f"a pattern must be text, not {type(pattern).__name__}")
    program = compiled(pattern)
    try:
        data = text.encode()
    except UnicodeError:  # a lone surrogate: not text RE2 can read
        raise PatternUndecided(f"pattern {shown(pattern)} not checked: the text it applies to is not valid "
                               f"Unicode") from None
    charge(1 + len(data) * program.programsize // SEARCH_COST)
    return program.search(data) is not None
