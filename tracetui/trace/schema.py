"""The JSON Schema of one trace line, as printed by ``tracetui schema``."""
from __future__ import annotations

from typing import Any

from tracetui.trace.format import LANES, OUTCOMES, TRACE_VERSION

_ID = {"type": "string", "minLength": 1}
_FAILURE = {
    "type": ["object", "null"],
    "required": ["lane", "seq", "code", "reason"],
    "properties": {"lane": {"enum": list(LANES)}, "seq": {"type": "integer", "minimum": 1},
                   "code": {"type": "string"}, "reason": {"type": "string"},
                   "decided_at": {"type": "integer", "minimum": 1}},
}

#: the inputs of a run of the built-in loop: everything it needs to re-run exactly
_LOOP_INPUTS: dict[str, Any] = {
    "type": "object",
    "required": ["source", "provider", "model", "instructions", "user_input", "task", "principal",
                 "tools", "tool_data", "budgets", "seed"],
    "properties": {
        "source": {"enum": ["scenario", "responses", "http"]},
        "scenario": {"type": ["string", "null"]},
        "ablation": {"type": "string"},
        "provider": {"type": "string"},
        "tools": {"type": "array", "items": {"type": "object", "required": ["name", "parameters"]}},
        "budgets": {"type": "object", "additionalProperties": {"type": "integer"}},
        "faults": {"type": "array", "items": {"type": "string"}},
        "seed": {"type": "integer"},
        "responses": {"type": "array"},
    },
}
#: the inputs of your own agent's run (``tracetui record``): its wire is in the events, its command is
#: the user's to give again (``command_hint`` is shown, never run)
_RECORD_INPUTS: dict[str, Any] = {
    "type": "object",
    "required": ["source", "provider", "upstream", "command_hint"],
    "properties": {
        "source": {"const": "record"},
        "provider": {"type": ["string", "null"]},
        "upstream": {"type": "object", "additionalProperties": {"type": "string"}},
        "command_hint": {"type": "array", "items": {"type": "string"}},
    },
}

SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "$id": f"https://tracetui.dev/schema/trace-v{TRACE_VERSION}.json",
    "title": f"tracetui trace line (version {TRACE_VERSION})",
    "oneOf": [
        {"$ref": "#/$defs/run"},
        {"$ref": "#/$defs/event"},
        {"$ref": "#/$defs/summary"},
    ],
    "$defs": {
        "run": {
            "type": "object",
            "required": ["rec", "run_id", "trace_version"],
            # a run records its inputs, unless it was imported from another producer (it says which)
            "anyOf": [{"required": ["inputs"]}, {"required": ["source"], "not": {"required": ["inputs"]}}],
            "properties": {
                "rec": {"const": "run"}, "run_id": _ID, "trace_version": {"const": TRACE_VERSION},
                "producer": {"type": "string"},
                "source": {"type": "string", "description": "an imported run's origin, e.g. otel (no inputs)"},
                "inputs": {"oneOf": [_LOOP_INPUTS, _RECORD_INPUTS]},
            },
        },
        "event": {
            "type": "object",
            "required": ["rec", "run_id", "seq", "lane", "kind", "outcome", "turn", "t_ms", "call_id", "code",
                         "summary", "data"],
            "properties": {
                "rec": {"const": "event"}, "run_id": _ID, "seq": {"type": "integer", "minimum": 1},
                "lane": {"enum": list(LANES)}, "kind": {"type": "string"}, "outcome": {"enum": list(OUTCOMES)},
                "turn": {"type": "integer", "minimum": 0}, "t_ms": {"type": "integer", "minimum": 0},
                "call_id": {"type": ["string", "null"]}, "code": {"type": ["string", "null"]},
                "summary": {"type": "string"}, "data": {"type": "object"},
            },
        },
        "summary": {
            "type": "object",
            "required": ["rec", "run_id", "status", "ready", "metrics", "first_failure"],
            "properties": {
                "rec": {"const": "summary"}, "run_id": _ID, "status": {"type": "string"},
                "ready": {"type": "boolean"},
                "metrics": {
                    "type": "object",
                    "required": ["iterations", "model_calls", "tool_calls", "input_units"],
                    "additionalProperties": {"type": "integer", "minimum": 0},
                },
                "first_failure": _FAILURE,
            },
        },
    },
}
