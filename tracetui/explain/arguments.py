"""Tool arguments as the tool's schema wants them: the repair a model was asked for, done by rule.

Only what the schema and the failure show is changed: cut-off JSON is closed, a key the
schema does not know is renamed to the required key it resembles or dropped, and a
value of the wrong JSON type is converted when the conversion is exact ("20.00" → 20.0).
"""
from __future__ import annotations

from typing import Any

import orjson

#: endings tried, shortest first, to close JSON that was cut off
_CLOSERS = ("}", '"}', "]}", '"]}', "}}", '"}}', ": null}", "null}")


def parse_or_close(raw: str) -> tuple[Any, bool] | None:
    """The JSON value of ``raw``, or of ``raw`` with the shortest ending that closes it; and whether one was added."""
    try:
        return orjson.loads(raw), False
    except orjson.JSONDecodeError:
        pass
    if len(raw) > 100_000:
        return None
    for closer in _CLOSERS:
        try:
            return orjson.loads(raw + closer), True
        except orjson.JSONDecodeError:
            continue
    return None


def _squash(name: str) -> str:
    return "".join(ch for ch in name.lower() if ch.isalnum())


def _types(prop: Any) -> list[str]:
    kind = prop.get("type") if isinstance(prop, dict) else None
    return [kind] if isinstance(kind, str) else [k for k in kind if isinstance(k, str)] if isinstance(kind, list) else []


def _coerce(value: Any, prop: Any) -> Any:
    """``value`` converted to the schema's type when that is exact, else unchanged."""
    kinds = _types(prop)
    if not kinds:
        return value
    if isinstance(value, str) and ("number" in kinds or "integer" in kinds):
        try:
            number = float(value)
        except ValueError:
            return value
        if "integer" in kinds and number.is_integer():
            return int(number)
        return number if "number" in kinds else value
    if isinstance(value, (int, float)) and not isinstance(value, bool) and "string" in kinds:
        return str(value)
    if isinstance(value, str) and "boolean" in kinds and value in ("true", "false"):
        return value == "true"
    return value


def repaired(raw: str | None, schema: Any) -> tuple[dict[str, Any], list[str]] | None:
    """Arguments that should pass ``schema``, and what was changed in words; None when nothing can be done."""
    if not isinstance(raw, str) or not isinstance(schema, dict):
        return None
    parsed = parse_or_close(raw)
    if parsed is None or not isinstance(parsed[0], dict):
        return None
    value, closed = parsed
    notes = ["its JSON closed"] if closed else []
    props = schema.get("properties") if isinstance(schema.get("properties"), dict) else {}
    required = [r for r in schema.get("required", []) if isinstance(r, str)] if isinstance(
        schema.get("required"), list) else []
    closed_schema = schema.get("additionalProperties") is False
    out: dict[str, Any] = {}
    for key, item in value.items():
        if key in props:
            fixed = _coerce(item, props[key])
            if fixed != item or type(fixed) is not type(item):
                notes.append(f"{key} as a {_types(props[key])[0]}")
            out[key] = fixed
            continue
        target = next((r for r in [*required, *props] if r not in value and r not in out
                       and _squash(r) == _squash(key)), None)
        if target is not None:
            out[target] = _coerce(item, props.get(target))
            notes.append(f"{target}, not {key}")
        elif closed_schema:
            notes.append(f"without {key}")
        else:
            out[key] = item
    if not notes:
        return None
    return out, notes
