"""What each Gemini ``finishReason`` means for a turn: a kind, a code and words.

Every value of google-genai's ``FinishReason`` other than ``STOP`` ends the turn
without running a tool, each for its own reason; a value this table does not know
(a newer API) stays ``unsupported_response``, named as it came.
"""
from __future__ import annotations

from tracetui.providers.base import FAILED, INCOMPLETE, INVALID_TOOL_CALL, REFUSED

#: finishReason → (turn kind, failure code, words); None as the code: the kind's own
FINISH_REASONS: dict[str, tuple[str, str | None, str]] = {
    "MAX_TOKENS": (INCOMPLETE, None, "response cut off at maxOutputTokens"),
    "CONTINUATION": (INCOMPLETE, None, "response cut off at the per-request token limit; the API offers a "
                                       "continuation this loop does not follow"),
    "SAFETY": (REFUSED, None, "response blocked: it may violate safety policies"),
    "RECITATION": (REFUSED, None, "response blocked: it may recite a source"),
    "LANGUAGE": (REFUSED, None, "response blocked: flagged for an unsupported language"),
    "BLOCKLIST": (REFUSED, None, "response blocked: it holds a term from a configured blocklist"),
    "PROHIBITED_CONTENT": (REFUSED, None, "response blocked: it may hold prohibited content"),
    "SPII": (REFUSED, None, "response blocked: it may hold sensitive personal information"),
    "IMAGE_SAFETY": (REFUSED, None, "response blocked: the generated image may violate safety policies"),
    "IMAGE_PROHIBITED_CONTENT": (REFUSED, None, "response blocked: the generated image may be prohibited content"),
    "IMAGE_RECITATION": (REFUSED, None, "response blocked: the generated image may recite a source"),
    "MODEL_ARMOR": (REFUSED, None, "response blocked by Model Armor"),
    "ESCALATION": (REFUSED, None, "request filtered by an escalation rule"),
    "MALFORMED_FUNCTION_CALL": (INVALID_TOOL_CALL, None, "the API rejected the model's function call as "
                                                         "syntactically invalid"),
    "UNEXPECTED_TOOL_CALL": (INVALID_TOOL_CALL, None, "the API rejected the model's function call: function "
                                                      "calling is off, or the function was not declared"),
    "TOO_MANY_TOOL_CALLS": (INVALID_TOOL_CALL, None, "the model made too many tool calls in one request"),
    "OTHER": (FAILED, "generation_stopped", "the model stopped for a reason the API does not specify"),
    "IMAGE_OTHER": (FAILED, "generation_stopped", "image generation stopped for a reason the API does not specify"),
    "FINISH_REASON_UNSPECIFIED": (FAILED, "finish_reason_unspecified", "the API named no finish reason"),
    "MALFORMED_RESPONSE": (FAILED, "malformed_response", "the API reports the model's response as malformed"),
    "NO_IMAGE": (FAILED, "no_image", "the model was to produce an image and produced none"),
    "MISSING_THOUGHT_SIGNATURE": (FAILED, "missing_thought_signature", "the request lacked a thought signature: "
                                                                       "a model part was not sent back as it came"),
    "PUP_LIMITED_DISABLED": (FAILED, "account_restricted", "the account is limited or disabled for Prohibited "
                                                           "Use Policy violations"),
}
