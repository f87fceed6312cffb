"""Checking a value against a JSON Schema that came in a trace, where nobody vetted it.

A trace's tool schemas are whatever the file's author wrote, and jsonschema, left to
its defaults, trusts them three times over. It fetches a ``$ref`` the schema cannot
resolve itself: a GET to any address (a silent server hangs the check) or a
``file://`` read of this machine, whose content then decides the verdict (and travels
on with an export). It runs ``pattern`` with Python's backtracking ``re``: ``^(a+)+$``
over 47 characters runs for ever while holding the GIL, so no key, Ctrl-C or signal is
handled. And it does whatever work the schema asks: forty ``$defs`` that each ``allOf``
the next one twice are 2**40 checks, ``uniqueItems`` compares every pair of items.
Every schema check in tracetui goes through :func:`validator` and :func:`errors`:

* References resolve only inside the schema itself: the registry retrieves nothing, so
  any other reference is :class:`RefUnresolved`, said in words; nothing is fetched.
* ``pattern`` and ``patternProperties`` (also where ``additionalProperties`` reads them)
  run on RE2 (:mod:`tracetui.trace.schema_patterns`); a pattern RE2 cannot run is run
  by nothing else: :class:`PatternUndecided`. ``unevaluatedProperties`` in a schema
  that has ``patternProperties`` would have jsonschema run those patterns with ``re``:
  undecided too.
* Each check has a budget of steps (:mod:`tracetui.trace.schema_budget`): past it, or
  nested deeper than tracetui follows, :class:`TooManySteps`. ``uniqueItems`` is
  linear. A backtracking engine, or a check, with a timeout was the alternative and was
  refused: what it decides would depend on the speed of the machine, and the same trace
  must give the same verdict everywhere.

The draft is the one the schema's ``$schema`` names, 2020-12 without one (or with one
jsonschema does not know), for a native trace's tools and an OTLP file's alike.
"""
from __future__ import annotations

from functools import lru_cache
from typing import Any, Iterator

from jsonschema import Draft202012Validator, ValidationError
from jsonschema.validators import extend, validator_for
from referencing import Registry
from referencing.exceptions import NoSuchAnchor, NoSuchResource, PointerToNowhere, Unresolvable

from tracetui.trace.schema_budget import (Budget, PatternUndecided, RefUnresolved, SchemaUnusable, TooManySteps,
                                          counted_keyword, counted_type, run_with, unique_items)
from tracetui.trace.schema_patterns import SHOWN_CHARS, search, shown

__all__ = ["SHOWN_CHARS", "PatternUndecided", "RefUnresolved", "SchemaUnusable", "TooManySteps", "errors", "search",
           "validator"]


def _refuse(uri: str) -> Any:
    raise NoSuchResource(ref=uri)


#: resolves nothing but the schema being checked (added as its root by the validator)
NOTHING_OUTSIDE = Registry(retrieve=_refuse)  # type: ignore[call-arg]


def _pattern(validator: Any, pattern: Any, instance: Any, schema: Any) -> Iterator[ValidationError]:
    if validator.is_type(instance, "string") and not search(pattern, instance):
        yield ValidationError(f"{instance!r} does not match {pattern!r}")


def _pattern_properties(validator: Any, patterns: Any, instance: Any, schema: Any) -> Iterator[ValidationError]:
    if not validator.is_type(instance, "object"):
        return
    for pattern, subschema in patterns.items():
        for key, value in instance.items():
            if search(pattern, key):
                yield from validator.descend(value, subschema, path=key, schema_path=pattern)


def _additional_properties(base: Any) -> Any:
    original = base.VALIDATORS["additionalProperties"]

    def check(validator: Any, extra: Any, instance: Any, schema: Any) -> Iterator[ValidationError]:
        patterns = schema.get("patternProperties")
        if not patterns or not validator.is_type(instance, "object"):  # no pattern runs: jsonschema's own
            yield from original(validator, extra, instance, schema)
            return
        named = schema.get("properties", {})
        extras = [k for k in instance if k not in named and not any(search(p, k) for p in patterns)]
        if validator.is_type(extra, "object"):
            for key in extras:
                yield from validator.descend(instance[key], extra, path=key)
        elif not extra and extras:
            verb = "does" if len(extras) == 1 else "do"
            yield ValidationError(f"{', '.join(map(repr, sorted(extras)))} {verb} not match any of the regexes: "
                                  f"{', '.join(map(repr, sorted(patterns)))}")
    return check


def _unevaluated_beside_patterns(validator: Any, value: Any, instance: Any, schema: Any) -> Iterator[ValidationError]:
    raise PatternUndecided("unevaluatedProperties not checked: beside patternProperties, jsonschema would run "
                           "those patterns with an engine whose time has no bound")
    yield  # a generator, as keyword checks are


@lru_cache(maxsize=None)
def _bounded(base: type, patterns_beside_unevaluated: bool) -> type:
    """``base`` (a draft's validator class) with every pattern run on RE2 and every step counted."""
    own = {"pattern": _pattern, "patternProperties": _pattern_properties,
           "additionalProperties": _additional_properties(base), "uniqueItems": unique_items}
    if patterns_beside_unevaluated:
        own["unevaluatedProperties"] = _unevaluated_beside_patterns
    keywords = {name: counted_keyword(name, own.get(name, check)) for name, check in base.VALIDATORS.items()}
    types = base.TYPE_CHECKER._type_checkers  # noqa: SLF001 - every type test is a step (jsonschema has no hook)
    checker = base.TYPE_CHECKER.redefine_many({name: counted_type(test) for name, test in types.items()})
    return extend(base, keywords, type_checker=checker)


def _mentions(node: Any, key: str, depth: int = 0) -> bool:
    if depth > 200:
        return True  # deeper than any real schema: assume the worst
    if isinstance(node, dict):
        return key in node or any(_mentions(v, key, depth + 1) for v in node.values())
    if isinstance(node, list):
        return any(_mentions(v, key, depth + 1) for v in node)
    return False


def draft_of(schema: Any) -> type:
    """The validator class of the draft ``schema``'s ``$schema`` names; 2020-12 without one, or for one
    jsonschema does not know."""
    try:
        return validator_for(schema, default=Draft202012Validator)
    except (TypeError, AttributeError):  # a $schema that is no text
        return Draft202012Validator


def validator(schema: Any, draft: type | None = None) -> Any:
    """A validator of ``schema`` that fetches nothing, runs patterns on RE2 and counts its steps.

    ``draft`` is the validator class to use; None: :func:`draft_of` the schema. Iterate it
    through :func:`errors`.
    """
    base = draft or draft_of(schema)
    strict = _mentions(schema, "unevaluatedProperties") and _mentions(schema, "patternProperties")
    return _bounded(base, strict)(schema, registry=NOTHING_OUTSIDE)


def errors(checker: Any, value: Any, first: bool = False) -> list[ValidationError]:
    """``value``'s errors against ``checker``'s schema (only the first with ``first``), within a budget of
    steps; raises :class:`SchemaUnusable` when it cannot decide."""
    def check() -> list[ValidationError]:
        found = []
        for error in checker.iter_errors(value):
            found.append(error)
            if first:
                break
        return found

    try:
        return run_with(Budget(), check)
    except Unresolvable as exc:
        cause = getattr(exc, "_wrapped", exc)  # jsonschema wraps referencing's error
        ref = str(getattr(cause, "ref", ""))
        if isinstance(cause, PointerToNowhere):
            raise RefUnresolved(f"$ref points nowhere in the schema: {shown('#' + ref)}") from None
        if isinstance(cause, NoSuchAnchor):
            raise RefUnresolved(f"$ref names an anchor the schema does not have: "
                                f"{shown(ref + '#' + str(cause.anchor))}") from None
        raise RefUnresolved(f"$ref not followed: tracetui fetches no reference from outside the schema (no network, "
                            f"no file): {shown(ref)}") from None
    except RecursionError:
        raise TooManySteps("the schema, or the arguments, nest too deeply for tracetui to check: no verdict from "
                           "it") from None
    except (TypeError, AttributeError, KeyError, IndexError, ValueError) as exc:  # {"enum": 5}, {"$ref": 5}, …
        raise SchemaUnusable(f"the schema has a keyword whose value is of the wrong kind ({type(exc).__name__}: "
                             f"{shown(str(exc))[1:-1]}): no verdict from it") from None
