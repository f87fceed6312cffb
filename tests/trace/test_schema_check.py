"""Checking arguments against an untrusted schema: bounded work, in steps, whatever the schema (issue 18)."""
from __future__ import annotations

import json

import pytest
from safety_net import safety_net

from tracetui.loop.validation import SCHEMA_UNCHECKED, validate_arguments
from tracetui.trace.schema_budget import STEP_BUDGET
from tracetui.trace.tool_schema import PatternUndecided, TooManySteps, errors, validator


def doubling(depth: int, keyword: str = "allOf", leaf: bool = True) -> dict:
    """``$defs`` d0…d{depth}, each applying the next one twice: 2**depth checks for jsonschema, ~80 bytes a level
    (for anyOf, whose first branch that fits decides, a leaf that fits nothing)."""
    defs = {f"d{i}": {keyword: [{"$ref": f"#/$defs/d{i + 1}"}, {"$ref": f"#/$defs/d{i + 1}"}]} for i in range(depth)}
    return {"type": "object", "$defs": {**defs, f"d{depth}": leaf}, "$ref": "#/$defs/d0"}


def tool(parameters: dict) -> dict:
    return {"name": "read_order", "parameters": parameters}


@pytest.mark.parametrize("keyword", ["allOf", "anyOf", "oneOf"])
def test_a_schema_whose_work_doubles_at_each_level_gets_no_verdict_in_bounded_steps(keyword):
    schema = doubling(24, keyword, leaf=keyword != "anyOf")  # 2**24 checks: hours before the budget
    with safety_net():
        first = validate_arguments(tool(schema), "read_order", '{"order_id": "o-1"}')
        with pytest.raises(TooManySteps) as again:
            errors(validator(schema), {"order_id": "o-1"})
    assert first[:2] == (None, SCHEMA_UNCHECKED)
    said = (f"tracetui stopped checking these arguments after {STEP_BUDGET:,} steps: the schema (or the arguments) "
            f"would take longer than that to check, so there is no verdict from it")
    assert first[2] == f"arguments not accepted unchecked: {said}"
    assert str(again.value) == said


def test_the_same_schema_just_within_the_budget_still_decides():
    assert validate_arguments(tool(doubling(8)), "read_order", '{"order_id": "o-1"}')[1] is None


def test_unique_items_is_linear_on_items_that_cannot_be_sorted():
    schema = {"type": "array", "uniqueItems": True}
    items = [i if i % 2 else str(i) for i in range(30_000)]  # ints and strings: jsonschema compares every pair
    with safety_net():
        assert errors(validator(schema), items) == []
        assert len(errors(validator(schema), [*items, 29_999])) == 1


@pytest.mark.parametrize("items, unique", [
    ([1, 1.0], False),  # JSON Schema's equality: the same number
    ([1, True], True), ([0, False], True),  # a boolean is not a number
    ([{"a": 1, "b": [2]}, {"b": [2], "a": 1.0}], False),  # objects whatever their keys' order
    ([[1, 2], [2, 1]], True),  # arrays in order
    (["1", 1, None, {}, []], True),
])
def test_unique_items_keeps_json_schemas_equality(items, unique):
    assert (errors(validator({"uniqueItems": True}), items) == []) == unique


def test_compiling_big_patterns_is_paid_for_from_the_budget():
    """Each pattern compiles to ~54,000 RE2 instructions (~40 ms): a thousand such make minutes of compiling."""
    schema = {"type": "object", "properties": {
        f"k{i}": {"type": "string", "pattern": f"^(?:\\p{{L}}|\\p{{N}}){{40}}x{i}$"} for i in range(1000)}}
    with safety_net(), pytest.raises(TooManySteps):
        errors(validator(schema), {f"k{i}": "a" for i in range(1000)})


def test_searching_a_long_text_with_a_big_program_is_paid_for_from_the_budget():
    """RE2's time is the program's size times the text's length when its DFA gives up: ~10 s here, 50 times over."""
    pattern = {"type": "string", "pattern": "^(?:(?:a|b)*a(?:a|b){500})d"}
    text = "".join("ab"[(i * 7919 + i // 3) % 2] for i in range(400_000))
    with safety_net(), pytest.raises(TooManySteps):
        errors(validator({"allOf": [pattern] * 50}), text)


def test_a_pattern_too_big_for_re2s_memory_is_not_checked_in_words():
    schema = {"type": "string", "pattern": "^(?:\\p{L}|\\p{N}){200}x$"}
    with pytest.raises(PatternUndecided) as refused:
        errors(validator(schema), "a")
    assert str(refused.value) == ("pattern '^(?:\\\\p{L}|\\\\p{N}){200}x$' not checked: it is too large to run "
                                  "(over 2,048 KB once compiled)")


def fits(pattern: str, text: str) -> bool | str:
    """Whether ``text`` fits ``pattern`` as a tool's schema sees it; the words when there is no verdict."""
    parameters = {"type": "object", "properties": {"s": {"type": "string", "pattern": pattern}}}
    _, code, message = validate_arguments(tool(parameters), "read_order", json.dumps({"s": text}))
    return message if code == SCHEMA_UNCHECKED else code is None


@pytest.mark.parametrize("pattern, text, expected", [
    ("^a{1,1001}$", "a" * 1001, True), ("^a{1,1001}$", "a" * 1002, False), ("^a{1,1001}$", "", False),
    ("^(ab){1200}$", "ab" * 1200, True), ("^(ab){1200}$", "ab" * 1199, False),
    ("^[a-c]{2000,}$", "c" * 2500, True), ("^[a-c]{2000,}$", "c" * 1999, False),
    ("^.{1,4096}$", "x" * 4096, True), ("^.{1,4096}$", "x" * 4097, False), ("^.{1,4096}$", "", False),
])
def test_repeats_beyond_re2s_limit_are_rewritten_exactly(pattern, text, expected):
    assert fits(pattern, text) is expected


@pytest.mark.parametrize("pattern, text, expected", [
    ("^\\S+$", "a\u00a0b", False), ("^\\S+$", "a\u000bb", False), ("^\\S+$", "ab", True),  # ECMA's \s: Unicode spaces
    ("^\\s$", "\u2028", True), ("^[\\s]$", "\ufeff", True),
    ("^.$", "\r", False), ("^.$", "\u2028", False), ("^.$", "é", True),  # ECMA's '.': no line terminator
    ("^\\uD83D\\uDE00$", "\U0001F600", True),  # a surrogate pair: one code point
])
def test_patterns_are_read_as_ecma_262_reads_them(pattern, text, expected):
    assert fits(pattern, text) is expected


@pytest.mark.parametrize("pattern, words", [
    ("^(?=o-)o-1$", "tracetui does not run lookahead or lookbehind (they can take unbounded time)"),
    ("^(o)\\1$", "tracetui does not run a backreference (it can take unbounded time)"),
    ("\\Z", "its engine (RE2) does not read it: invalid escape sequence: \\Z"),
])
def test_a_pattern_re2_refuses_is_not_checked_with_its_true_reason(pattern, words):
    assert fits(pattern, "o-1") == f"arguments not accepted unchecked: pattern {pattern!r} not checked: {words}"


def test_a_chain_of_references_deeper_than_tracetui_follows_says_so_wherever_it_is_called_from():
    defs = {f"d{i}": {"$ref": f"#/$defs/d{i + 1}"} for i in range(400)}
    schema = {"$defs": {**defs, "d400": {"type": "string"}}, "$ref": "#/$defs/d0"}

    def nested(depth: int) -> list:
        return nested(depth - 1) if depth else errors(validator(schema), 5)

    said = ("the schema's references nest too deeply: tracetui follows at most 32 $ref one inside another, so there "
            "is no verdict from it")
    for depth in (0, 200):  # frames already on the stack change nothing
        with pytest.raises(TooManySteps) as refused:
            nested(depth)
        assert str(refused.value) == said


def test_native_and_otlp_checks_read_the_draft_schema_names():
    from tracetui.otel.errors import schema_problem

    draft4 = {"$schema": "http://json-schema.org/draft-04/schema#", "type": "object",
              "properties": {"n": {"type": "integer", "maximum": 10, "exclusiveMaximum": True}}}
    assert validate_arguments(tool(draft4), "read_order", '{"n": 5}')[1] is None
    assert schema_problem({"n": 5}, draft4) == (None, None)
    assert validate_arguments(tool(draft4), "read_order", '{"n": 10}')[1] == "schema_error"
    assert schema_problem({"n": 10}, draft4)[0] is not None


@pytest.mark.parametrize("schema", [{"enum": 5}, {"$ref": 5}, {"properties": [1]}, {"patternProperties": [1]}])
def test_a_keyword_of_the_wrong_kind_is_said_in_words(schema):
    from tracetui.trace.tool_schema import SchemaUnusable

    with pytest.raises(SchemaUnusable) as refused:
        errors(validator(schema), {"a": 1})
    assert str(refused.value).startswith("the schema has a keyword whose value is of the wrong kind (")


@pytest.mark.parametrize("keyword", ["$ref", "$dynamicRef"])
def test_a_reference_to_an_anchor_the_schema_lacks_is_said_as_such(keyword):
    from tracetui.trace.tool_schema import RefUnresolved

    with pytest.raises(RefUnresolved) as refused:
        errors(validator({keyword: "#nope"}), 1)
    assert str(refused.value) == "$ref names an anchor the schema does not have: '#nope'"
