"""Candidate tool arguments: parse, then schema, before anything runs.

Three kinds of failure are kept apart because they call for different recovery:
``invalid_json`` and ``schema_error`` can be sent back for the model to repair;
``unknown_tool`` cannot. Business rules live in :mod:`tracetui.loop.tools` because
they read tool data, and run only after authorization.
"""
from __future__ import annotations

from functools import lru_cache
from typing import Any

import orjson
from jsonschema import Draft202012Validator

UNKNOWN_TOOL = "unknown_tool"
INVALID_JSON = "invalid_json"
SCHEMA_ERROR = "schema_error"
REPAIRABLE = frozenset({INVALID_JSON, SCHEMA_ERROR})


@lru_cache(maxsize=256)
def _validator(schema_json: bytes) -> Draft202012Validator:
    return Draft202012Validator(orjson.loads(schema_json))


@lru_cache(maxsize=4096)
def _check(schema_json: bytes, raw: str) -> tuple[Any, str | None, str | None]:
    """Pure and memoised: the same text against the same schema always gives the same verdict."""
    try:
        args = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        return None, INVALID_JSON, f"arguments are not valid JSON: {exc}"
    errors = sorted(_validator(schema_json).iter_errors(args), key=lambda e: list(e.absolute_path))
    if errors:
        err = errors[0]
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
