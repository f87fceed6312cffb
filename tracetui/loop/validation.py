"""Candidate tool arguments: parse, then schema, before anything runs.

Three kinds of failure are kept apart because they call for different recovery:
``invalid_json`` and ``schema_error`` can be sent back for the model to repair;
``unknown_tool`` cannot. Business rules live in :mod:`tracetui.loop.tools` because
they read tool data, and run only after authorization.

The schema is checked through :mod:`tracetui.trace.tool_schema` (a replayed trace's
schemas are anyone's): no ``$ref`` is fetched, patterns run on RE2, and the check has a
budget of steps. A check that cannot decide these arguments (a pattern tracetui does
not run, a check past its budget) is ``schema_unchecked``, not a pass: a harness that
cannot check arguments must not run the tool with them. Nor is it sent back for repair:
the schema is the harness's tool definition, and no argument the model could write
makes it decidable; so the run stops there, blamed on the harness. A schema unusable
for any value (a ``$ref`` to outside it, a pattern that is no regular expression)
raises instead: the run cannot be made at all, which a replay reports in words.
"""
from __future__ import annotations

from functools import lru_cache
from typing import Any

import orjson
from tracetui.trace.tool_schema import PatternUndecided, TooManySteps, errors, validator

UNKNOWN_TOOL = "unknown_tool"
INVALID_JSON = "invalid_json"
SCHEMA_ERROR = "schema_error"
SCHEMA_UNCHECKED = "schema_unchecked"  # the tool's schema gives no verdict on these arguments: not repairable
REPAIRABLE = frozenset({INVALID_JSON, SCHEMA_ERROR})


@lru_cache(maxsize=256)
def _validator(schema_json: bytes) -> Any:
    return validator(orjson.loads(schema_json))  # the draft its $schema names, as for an OTLP file's tools


@lru_cache(maxsize=4096)
def _check(schema_json: bytes, raw: str) -> tuple[Any, str | None, str | None]:
    """Pure and memoised: the same text against the same schema always gives the same verdict."""
    try:
        args = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        return None, INVALID_JSON, f"arguments are not valid JSON: {exc}"
    try:
        found = sorted(errors(_validator(schema_json), args), key=lambda e: list(e.absolute_path))
    except (PatternUndecided, TooManySteps) as exc:
        return None, SCHEMA_UNCHECKED, f"arguments not accepted unchecked: {exc}"
    if found:
        err = found[0]
        where = "/".join(str(p) for p in err.absolute_path)
        return None, SCHEMA_ERROR, (f"{where}: " if where else "") + err.message
    return args, None, None


def validate_arguments(tool: dict[str, Any] | None, name: str, raw: str) -> tuple[Any, str | None, str | None]:
    """Return ``(arguments, error_type, message)``; the arguments are shared: do not mutate them."""
    if tool is None:
        return None, UNKNOWN_TOOL, f"no tool named {name!r} is offered to the model"
    schema_json = tool.get("_schema_json")
    if schema_json is None:
        schema_json = orjson.dumps(tool["parameters"], option=orjson.OPT_SORT_KEYS)
    return _check(schema_json, raw)
