"""A bound on how much work one schema check may do, counted in steps, never in seconds.

A schema of a few kilobytes can make jsonschema's work exponential without any
pattern: forty ``$defs`` that each ``allOf`` the next one twice are 2**40 keyword
checks. So every check that :mod:`tracetui.trace.tool_schema` makes runs against a
:class:`Budget`: each keyword jsonschema applies and each type test it makes is a
step, a keyword is also charged one step per entry of its value (``enum`` of a
million values, ``required`` of a million names), and RE2 is charged for compiling
a pattern and for the text it reads (:mod:`tracetui.trace.schema_patterns`). Past
:data:`STEP_BUDGET` steps the check stops with :class:`TooManySteps`: no verdict.

A step count depends on the schema and the value only, not on the machine's speed,
what ran before, or any cache: the same trace gives the same verdict everywhere.
"""
from __future__ import annotations

from contextvars import ContextVar
from typing import Any, Callable, Iterator

#: steps one check may take (about a second at most): a real tool call's arguments take hundreds
STEP_BUDGET = 500_000
#: schemas nested in schemas (``properties`` in ``items`` in ``allOf`` …) one check may follow
MAX_NESTING = 96
#: ``$ref`` and ``$dynamicRef`` followed one inside another
MAX_REF_DEPTH = 32

#: keywords that apply a schema to the value or a part of it: each is one level of nesting
APPLICATORS = frozenset({"$ref", "$dynamicRef", "$recursiveRef", "allOf", "anyOf", "oneOf", "not", "if", "then",
                         "else", "items", "prefixItems", "additionalItems", "contains", "properties",
                         "patternProperties", "additionalProperties", "propertyNames", "dependentSchemas",
                         "dependencies", "unevaluatedItems", "unevaluatedProperties", "extends"})
_REFS = frozenset({"$ref", "$dynamicRef", "$recursiveRef"})
#: steps a keyword that applies schemas costs per schema it names (resolving a reference costs more: measured
#: by benchmarks/bench_schema_budget.py, so that a budget's worth of any keyword takes about as long)
APPLIED_COST, REF_COST = 2, 20


class SchemaUnusable(Exception):
    """The schema cannot decide this value: the message says why, in words."""


class RefUnresolved(SchemaUnusable):
    """A ``$ref`` that points outside the schema (or nowhere in it)."""


class PatternUndecided(SchemaUnusable):
    """A pattern tracetui does not run (it could take unbounded time): neither a match nor a mismatch."""


class TooManySteps(SchemaUnusable):
    """The check needs more steps than :data:`STEP_BUDGET`, or nests deeper than tracetui follows."""


class Budget:
    """What one check has left, and what it has already paid for (each pattern is paid for once)."""

    __slots__ = ("left", "nesting", "refs", "compiled")

    def __init__(self, steps: int = STEP_BUDGET) -> None:
        self.left = steps
        self.nesting = 0
        self.refs = 0
        self.compiled: dict[str, Any] = {}  # pattern -> RE2 program, for this check (no eviction, no thrash)


_CURRENT: ContextVar[Budget | None] = ContextVar("tracetui_schema_budget", default=None)


def current() -> Budget | None:
    return _CURRENT.get()


def charge(steps: int) -> None:
    """Spend ``steps`` of the running check's budget; :class:`TooManySteps` when it runs out."""
    budget = _CURRENT.get()
    if budget is None:
        return  # jsonschema used outside a check of tracetui's (no budget asked for)
    budget.left -= steps
    if budget.left < 0:
        budget.left = 0
        raise TooManySteps(f"tracetui stopped checking these arguments after {STEP_BUDGET:,} steps: the schema (or "
                           f"the arguments) would take longer than that to check, so there is no verdict from it")


def run_with(budget: Budget, work: Callable[[], Any]) -> Any:
    token = _CURRENT.set(budget)
    try:
        return work()
    finally:
        _CURRENT.reset(token)


def _size(value: Any) -> int:
    return len(value) if isinstance(value, (list, dict)) else 0


def counted_keyword(name: str, check: Callable[..., Any]) -> Callable[..., Any]:
    """``check`` (a keyword's) charged a step per use and per entry of its value; nesting bounded if it applies
    a schema."""
    if name not in APPLICATORS:
        def plain(validator: Any, value: Any, instance: Any, schema: Any) -> Any:
            charge(1 + _size(value) // 16)  # (enum, required: a cheap test per entry)
            return check(validator, value, instance, schema)
        return plain
    is_ref = name in _REFS

    cost = REF_COST if is_ref else APPLIED_COST

    def applied(validator: Any, value: Any, instance: Any, schema: Any) -> Iterator[Any]:
        charge(cost * (1 + _size(value)))
        budget = _CURRENT.get()
        if budget is None:
            yield from check(validator, value, instance, schema) or ()
            return
        if budget.nesting >= MAX_NESTING:
            raise TooManySteps(f"the schema nests more than {MAX_NESTING} levels deep here (with the arguments): "
                               f"tracetui does not follow it further, so there is no verdict from it")
        if is_ref and budget.refs >= MAX_REF_DEPTH:
            raise TooManySteps(f"the schema's references nest too deeply: tracetui follows at most {MAX_REF_DEPTH} "
                               f"$ref one inside another, so there is no verdict from it")
        budget.nesting += 1
        budget.refs += is_ref
        try:
            yield from check(validator, value, instance, schema) or ()
        finally:
            budget.nesting -= 1
            budget.refs -= is_ref
    return applied


def counted_type(check: Callable[[Any, Any], bool]) -> Callable[[Any, Any], bool]:
    def counted(checker: Any, instance: Any) -> bool:
        charge(1)
        return check(checker, instance)
    return counted


def canonical(value: Any) -> Any:
    """A hashable form of a JSON value under JSON Schema's equality: 1 == 1.0, true != 1, objects equal
    whatever their keys' order, arrays in order. Charged a step per node."""
    charge(1)
    if isinstance(value, bool):
        return ("b", value)
    if isinstance(value, (int, float)):
        return ("n", value)
    if isinstance(value, str):
        return ("s", value)
    if isinstance(value, list):
        return ("a", tuple(canonical(v) for v in value))
    if isinstance(value, dict):
        return ("o", frozenset((k, canonical(v)) for k, v in value.items()))
    return ("?", repr(value))


def unique_items(validator: Any, unique: Any, instance: Any, schema: Any) -> Iterator[Any]:
    """``uniqueItems``, linear in the array (jsonschema compares every pair when items cannot be sorted)."""
    from jsonschema import ValidationError

    if not unique or not validator.is_type(instance, "array"):
        return
    seen: set[Any] = set()
    for item in instance:
        key = canonical(item)
        if key in seen:
            yield ValidationError(f"{instance!r} has non-unique elements")
            return
        seen.add(key)
