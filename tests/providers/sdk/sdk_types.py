"""Each provider's bodies, stream events, errors and requests, checked against its official SDK's own types.

``model_validate`` on the SDK's pydantic models (and TypeAdapters over its request
TypedDicts), then the enum check pydantic leaves out: google-genai's enums take an
unknown value with only a warning, so every enum in a validated Gemini model must
be a declared member. Top-level request keys must all be the SDK's own.
"""
from __future__ import annotations

import enum
import typing
import warnings
from functools import lru_cache
from typing import Any

from pydantic import BaseModel, TypeAdapter

PROVIDERS = ("openai-responses", "openai-chat", "anthropic", "gemini")


@lru_cache(maxsize=None)
def _adapter(kind: str, provider: str) -> TypeAdapter:
    if provider == "openai-responses":
        from openai.types.responses import Response, ResponseStreamEvent
        return TypeAdapter({"body": Response, "event": ResponseStreamEvent}[kind])
    if provider == "openai-chat":
        from openai.types.chat import ChatCompletion, ChatCompletionChunk
        return TypeAdapter({"body": ChatCompletion, "event": ChatCompletionChunk}[kind])
    if provider == "anthropic":
        from anthropic.types import Message, RawMessageStreamEvent
        return TypeAdapter({"body": Message, "event": RawMessageStreamEvent}[kind])
    from google.genai.types import GenerateContentResponse
    return TypeAdapter(GenerateContentResponse)


def validate_body(provider: str, body: Any) -> Any:
    """The SDK's model of a 200 response body; raises when the body is not one."""
    return _checked(provider, _adapter("body", provider).validate_python(body))


def validate_event(provider: str, event: dict[str, Any]) -> Any:
    """The SDK's model of one stream event (Chat's ``[DONE]`` is the SSE sentinel, not an event)."""
    if provider == "openai-chat" and event == {"data": "[DONE]"}:
        return None
    if provider == "anthropic" and event == {"type": "ping"}:  # the SDK's Stream skips pings before parsing
        return None
    return _checked(provider, _adapter("event", provider).validate_python(event))


def validate_error(provider: str, status: int, body: Any) -> None:
    """An error body as the SDK reads it: OpenAI's ``error`` object, Anthropic's ErrorResponse, Gemini's APIError."""
    if provider.startswith("openai"):
        from openai.types.shared import ErrorObject
        ErrorObject.model_validate(body["error"])
    elif provider == "anthropic":
        from anthropic.types import ErrorResponse
        ErrorResponse.model_validate(body)
    else:
        from google.genai.errors import APIError
        error = APIError(status, body)
        assert (error.code, error.status) == (status, body["error"]["status"]) and error.message


def _checked(provider: str, model: Any) -> Any:
    if provider == "gemini":
        for value in _enums(model):
            assert value.name in type(value).__members__, f"{value.value!r} is no {type(value).__name__}"
    return model


def _enums(value: Any):
    if isinstance(value, enum.Enum):
        yield value
    elif isinstance(value, BaseModel):
        for name in type(value).model_fields:
            yield from _enums(getattr(value, name))
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from _enums(item)
    elif isinstance(value, dict):
        for item in value.values():
            yield from _enums(item)


# -- requests --------------------------------------------------------------------------------------
@lru_cache(maxsize=None)
def _params(provider: str, stream: bool):
    if provider == "openai-responses":
        from openai.types.responses import response_create_params as p
        return p.ResponseCreateParamsStreaming if stream else p.ResponseCreateParamsNonStreaming
    if provider == "openai-chat":
        from openai.types.chat import completion_create_params as p
        return p.CompletionCreateParamsStreaming if stream else p.CompletionCreateParamsNonStreaming
    from anthropic.types import message_create_params as p
    return p.MessageCreateParamsStreaming if stream else p.MessageCreateParamsNonStreaming


GEMINI_REQUEST = {"contents": "list[Content]", "tools": "list[Tool]", "systemInstruction": "Content",
                  "generationConfig": "GenerationConfig"}


@lru_cache(maxsize=None)
def _gemini_adapter(key: str) -> TypeAdapter:
    from google.genai import types as gt

    kind = GEMINI_REQUEST[key]
    inner = getattr(gt, kind.removeprefix("list[").removesuffix("]"))
    return TypeAdapter(list[inner] if kind.startswith("list[") else inner)


def validate_request(provider: str, body: dict[str, Any]) -> None:
    """A request body against the SDK's request parameters (the TypedDict ``create`` takes; for Gemini, the REST
    request's parts as google-genai's types, by their wire names)."""
    if provider == "gemini":
        from google.genai import types as gt
        assert set(body) <= set(GEMINI_REQUEST), set(body) - set(GEMINI_REQUEST)
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # an unknown enum value warns: make it fail
            for key, value in body.items():
                _checked("gemini", _gemini_adapter(key).validate_python(value))
        return
    adapter, known = _params_adapter(provider, bool(body.get("stream")))
    assert set(body) <= known, f"keys the SDK does not take: {set(body) - known}"
    adapter.validate_python(body)


@lru_cache(maxsize=None)
def _params_adapter(provider: str, stream: bool) -> tuple[TypeAdapter, frozenset[str]]:
    params = _params(provider, stream)
    return TypeAdapter(params), frozenset(typing.get_type_hints(params))
