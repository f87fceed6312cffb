"""Reading the requests each official SDK sends: declared tools, tool results, the turn, the user's question."""
from __future__ import annotations

import pytest

from tracetui.loop.validation import validate_arguments
from tracetui.record.wire_requests import (ANY_OBJECT, ToolResult, conversation_length, declared_tools,
                                           first_user_text, openapi_schema, results_after_last_model_turn,
                                           tool_results)

from wire_run import DESCRIPTION, PROVIDERS, READ_ORDER, USER, Wire, call_reply, run_agent, text_reply

READ_O1 = call_reply(("read_order", {"order_id": "o-1"}, "call_1"))


def second_request(provider: str, tools=None) -> dict:
    """The body of the request that carries read_order's result back, as the provider's SDK sent it."""
    exchanges, _ = run_agent(provider, [READ_O1, text_reply("done")], tools=tools)
    return exchanges[1].request["body"]


@pytest.mark.parametrize("provider", PROVIDERS)
def test_the_declared_tool_in_the_loops_shape(provider):
    body = second_request(provider)
    assert declared_tools(provider, body) == {
        "read_order": {"name": "read_order", "description": DESCRIPTION, "parameters": READ_ORDER}}


@pytest.mark.parametrize("provider", PROVIDERS)
def test_the_tool_result_by_call_id(provider):
    body = second_request(provider)
    results = tool_results(provider, body)
    assert len(results) == 1
    result = results[0]
    assert result.call_id == "call_1" and not result.is_error
    assert result.value() == {"order_id": "o-1", "status": "delivered"}
    assert result.name == ("read_order" if provider == "gemini" else None)


@pytest.mark.parametrize("provider", PROVIDERS)
def test_the_turn_and_the_users_question(provider):
    exchanges, _ = run_agent(provider, [READ_O1, text_reply("done")])
    first, second = (ex.request["body"] for ex in exchanges)
    lengths = (conversation_length(provider, first), conversation_length(provider, second))
    if provider == "openai-chat":
        assert lengths == (2, 4)  # system, user; then the assistant's call and the tool message
    elif provider == "openai-responses":
        assert lengths == (1, 3)  # the user; then the function_call and its output
    else:
        assert lengths == (1, 3)  # user; model/assistant; the results as a user turn
    assert first_user_text(provider, first) == first_user_text(provider, second) == USER


def test_anthropic_is_error_and_block_content():
    body = second_request("anthropic", tools={"read_order": lambda a: ("no such order", True)})
    (result,) = tool_results("anthropic", body)
    assert result.is_error and result.text == "no such order"
    body["messages"][2]["content"][0]["content"] = [{"type": "text", "text": "part one, "},
                                                    {"type": "text", "text": "part two"}]
    assert tool_results("anthropic", body)[0].text == "part one, part two"


def test_an_anthropic_user_turn_of_tool_results_is_not_the_question():
    body = {"messages": [{"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": "x"}]},
                         {"role": "user", "content": [{"type": "text", "text": "and now?"}]}]}
    assert first_user_text("anthropic", body) == "and now?"


def test_responses_input_as_one_text():
    body = {"model": "m", "input": "hello there"}
    assert conversation_length("openai-responses", body) == 1
    assert first_user_text("openai-responses", body) == "hello there"


def test_built_in_server_tools_are_not_declared_function_tools():
    assert declared_tools("anthropic", {"tools": [
        {"type": "web_search_20250305", "name": "web_search", "max_uses": 3},
        {"name": "lookup", "input_schema": {"type": "object"}}]}) == {
        "lookup": {"name": "lookup", "description": "", "parameters": {"type": "object"}}}
    assert declared_tools("openai-responses", {"tools": [{"type": "web_search"}, {"type": "file_search"}]}) == {}
    assert declared_tools("openai-chat", {"functions": [{"name": "legacy"}]}) == {
        "legacy": {"name": "legacy", "description": "", "parameters": ANY_OBJECT}}


def test_gemini_openapi_parameters_are_read_as_json_schema():
    from google.genai import types as gt

    wire = Wire([text_reply("done")])
    schema = gt.Schema(type=gt.Type.OBJECT, required=["order_id"], properties={
        "order_id": gt.Schema(type=gt.Type.STRING, pattern="^o-[0-9]+$"),
        "note": gt.Schema(type=gt.Type.STRING, nullable=True)})
    config = gt.GenerateContentConfig(tools=[gt.Tool(function_declarations=[
        gt.FunctionDeclaration(name="read_order", description="d", parameters=schema)])])
    wire.client("gemini").models.generate_content(model="fake-model", contents="hi", config=config)
    body = wire.exchanges[0].request["body"]
    sent = body["tools"][0]["functionDeclarations"][0]["parameters"]
    assert sent["type"] == "OBJECT"  # the SDK sends OpenAPI's capitals: jsonschema would not know the type
    tool = declared_tools("gemini", body)["read_order"]
    assert tool["parameters"]["type"] == "object"
    assert tool["parameters"]["properties"]["note"]["type"] == ["string", "null"]
    assert validate_arguments(tool, "read_order", '{"order_id": "o-1", "note": null}')[1] is None
    assert validate_arguments(tool, "read_order", '{"order_id": "x"}')[1] == "schema_error"
    assert first_user_text("gemini", body) == "hi"


def test_openapi_schema_keeps_what_it_does_not_rename():
    assert openapi_schema({"type": "ARRAY", "items": {"type": "INTEGER", "minimum": 1}, "minItems": 2,
                           "propertyOrdering": ["a"]}) == {
        "type": "array", "items": {"type": "integer", "minimum": 1}, "minItems": 2}


def test_gemini_results_are_matched_after_the_last_model_turn():
    body = {"contents": [
        {"role": "user", "parts": [{"text": "q"}]},
        {"role": "model", "parts": [{"functionCall": {"name": "read_order", "args": {}}}]},
        {"role": "user", "parts": [{"functionResponse": {"name": "read_order", "response": {"output": "old"}}}]},
        {"role": "model", "parts": [{"functionCall": {"name": "read_order", "args": {}}}]},
        {"role": "user", "parts": [{"function_response": {"name": "read_order", "response": {"output": "new"}}}]}]}
    assert [r.value() for r in tool_results("gemini", body)] == [{"output": "old"}, {"output": "new"}]
    assert [r.value() for r in results_after_last_model_turn("gemini", body)] == [{"output": "new"}]


@pytest.mark.parametrize("body", [None, "text", [], {"messages": "no"}, {"messages": [1, None, {"role": 5}]},
                                  {"tools": [{"function": None}, 3]}, {"contents": [{"parts": None}]}])
@pytest.mark.parametrize("provider", [*PROVIDERS, None])
def test_a_body_of_any_shape_reads_as_nothing_rather_than_failing(provider, body):
    assert declared_tools(provider, body) == {}
    assert tool_results(provider, body) == []
    assert first_user_text(provider, body) is None
    assert conversation_length(provider, body) in (None, 0, 3, 1)


def test_a_result_value_is_json_or_none():
    assert ToolResult("c", None, '{"a": 1}', False).value() == {"a": 1}
    assert ToolResult("c", None, "plain", False).value() is None
