"""How long a schema check takes to spend its step budget, beside an ordinary check, by kind of work.

Prints figures; asserts nothing. The steps a check may take (tracetui.trace.schema_budget)
are meant to cost about the same time whatever the schema spends them on, so a hostile
schema is refused in about the same time however it is built. The reference is an
ordinary tool call's arguments against an ordinary schema, in the same run; each
figure is also a ratio to it, and per step.

    python benchmarks/bench_schema_budget.py [--repeat N]
"""
from __future__ import annotations

import argparse
import time

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import measure as measure_  # noqa: E402
from measure import row  # noqa: E402
from tracetui.trace import schema_budget  # noqa: E402
from tracetui.trace.tool_schema import SchemaUnusable, validator  # noqa: E402


def doubling(depth: int, keyword: str, leaf: bool) -> dict:
    defs = {f"d{i}": {keyword: [{"$ref": f"#/$defs/d{i + 1}"}, {"$ref": f"#/$defs/d{i + 1}"}]} for i in range(depth)}
    return {"$defs": {**defs, f"d{depth}": leaf}, "$ref": "#/$defs/d0"}


ITEM = {"type": "object", "properties": {k: {"type": "string", "minLength": 1} for k in "abcde"}, "required": list("abcde")}
CASES = {
    "ordinary call (reference)": ({"type": "object", "properties": {"order_id": {"type": "string", "pattern": "^o-[0-9]+$"}},
                                   "required": ["order_id"]}, {"order_id": "o-1"}),
    "allOf doubling x24": (doubling(24, "allOf", True), {}),
    "oneOf doubling x24": (doubling(24, "oneOf", True), {}),
    "anyOf doubling x24": (doubling(24, "anyOf", False), {}),
    "10,000 objects in items": ({"type": "array", "items": ITEM}, [{k: "x" for k in "abcde"}] * 10_000),
    "uniqueItems, 30,000 mixed": ({"type": "array", "uniqueItems": True}, [i if i % 2 else str(i) for i in range(30_000)]),
    "50 big patterns, 400 KB": ({"allOf": [{"pattern": "^(?:(?:a|b)*a(?:a|b){500})d"}] * 50},
                                "".join("ab"[(i * 7919 + i // 3) % 2] for i in range(400_000))),
}


def measure(schema: dict, value: object, repeat: int) -> tuple[float, int, str]:
    times, steps, said = [], 0, "verdict"
    for _ in range(repeat):
        budget = schema_budget.Budget()
        start = time.perf_counter()
        try:
            schema_budget.run_with(budget, lambda: list(validator(schema).iter_errors(value)))
        except SchemaUnusable:
            said = "no verdict"
        times.append(time.perf_counter() - start)
        steps = schema_budget.STEP_BUDGET - budget.left
    return times, steps, said


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=3)
    repeat = parser.parse_args().repeat
    reference = None
    measure_.header(f"bench_schema_budget: a check spending its budget ({schema_budget.STEP_BUDGET:,} steps), "
                    "beside an ordinary check")
    measure_.columns("ordinary call")
    for name, (schema, value) in CASES.items():
        times, steps, said = measure(schema, value, max(3, repeat))
        reference = reference or times
        row(name, times, reference, "ordinary call", unit="ms",
            note=f"({steps:,} steps, {min(times) * 1e6 / max(steps, 1):.2f} µs/step; {said})")


if __name__ == "__main__":
    main()
