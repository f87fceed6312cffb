"""Who is responsible for a failed run: the model, the harness, the environment, or a guard doing its job.

The first question a developer asks about a failure, answered in one place beside the
verdict rule (:mod:`tracetui.trace.verdict`), from the deciding failure alone:

- ``model``: the model chose wrong (a tool, its arguments or ids, an answer no receipt backs,
  an answer about something else, a refusal of an allowed request, a resource it made up);
- ``harness``: the loop's configuration or code (a budget, a guard switched off, the context
  it builds, a request the API rejects, the recording it replays);
- ``environment``: outside both (provider errors and outages, broken streams, foreign bodies,
  a tool service failing);
- ``guard``: a check did its job (a denial of what the caller asked for, a business rule that
  refused the write the user asked for, the loop guard stopping a repeat).

Two facts the code alone does not give are written by the loop into the failing event's
summary (and so into the verdict's ``reason``, which every reader keeps, OpenTelemetry
included): :data:`NOT_ASKED` when a denied resource or refused amount is not what the
user's request named (the model made it up), and :data:`ABLATED` when the request the
failing response answered was changed by a deliberate context ablation. The class is
decided from the reason alone, never from the run's inputs: the strict ``check`` scan and
an imported OpenTelemetry trace have no inputs, so a rule that read them could give one
run two classes. A trace written before the loop wrote these phrases gets the class its
code gives (re-generate it for the ablation to count).
"""
from __future__ import annotations

from typing import Any, Mapping

MODEL, HARNESS, ENVIRONMENT, GUARD = "model", "harness", "environment", "guard"
RESPONSIBILITIES: tuple[str, ...] = (MODEL, HARNESS, ENVIRONMENT, GUARD)
WORDS = {
    MODEL: "the model chose wrong",
    HARNESS: "the loop's configuration or code",
    ENVIRONMENT: "outside both: the provider, the network or a tool service",
    GUARD: "a check did its job",
}

#: written after a denial or a refused write whose resource or amount the request did not name
NOT_ASKED = "not what the request asked for"
#: written after a failure whose response answered a request the run's context ablation changed
ABLATED = "the context was ablated"
#: a 200 whose body is another vendor's API: the harness points at the wrong base URL or adapter
FOREIGN_BODY = "body looks like"

_GUARDED = frozenset({"permission_denied", "business_rule_violation"})  # a guard, unless the model made it up
_BY_CODE = {
    **dict.fromkeys(("unknown_tool", "schema_error", "invalid_json", "handoff_required", "duplicate_call_id",
                     "unverified_answer", "empty_answer", "answer_off_topic", "refused", "empty_response",
                     "invalid_tool_call", "answer_rejected"), MODEL),
    **dict.fromkeys(("budget_exhausted", "duplicate_execution", "request_rejected", "auth_error", "not_found",
                     "request_too_large", "cassette_exhausted", "malformed_exchange", "interrupted",
                     "response_cancelled", "schema_unchecked",
                     # a recorded agent (tracetui record): its process and its own tool loop are the harness
                     "no_exchanges", "no_tool_result", "agent_killed", "agent_not_started"), HARNESS),
    **dict.fromkeys(("rate_limited", "server_error", "overloaded", "timeout", "connection_error", "conflict",
                     "http_error", "response_failed", "unsupported_response",
                     "protocol_error", "stream_interrupted", "unexpected_body", "tool_failed",
                     "write_outcome_unknown", "response_too_large"), ENVIRONMENT),
    "loop_detected": GUARD,
}
#: a code this rule does not know, by its boundary
_BY_LANE = {"http": ENVIRONMENT, "generation": MODEL, "arguments": MODEL, "authorization": GUARD,
            "receipt": ENVIRONMENT, "answer": MODEL}
#: what a response cut off by the request's own output limit says about why it stopped
_TOKEN_LIMIT = ("max_output_tokens", "max_tokens", "length", "MAX_TOKENS", "maxOutputTokens")


def responsibility(first_failure: Mapping[str, Any] | None, inputs: Mapping[str, Any] | None = None) -> str | None:
    """The class of a run's deciding failure, or None when nothing failed.

    ``first_failure`` is a verdict's (a summary's) ``first_failure``. ``inputs`` is accepted
    for the callers that hold them and does not change the class: every surface must give a
    run the same class, and some have only the summary (see the module docstring).
    The reason is read only when the code leaves the class open (a run list may keep
    reasons in the file until they are asked for): for a denial, a refused write, a
    response cut off, a foreign body, and the failures a damaged context can cause.
    """
    if not first_failure:
        return None
    code = first_failure.get("code")
    code = code if isinstance(code, str) else ""
    found = _BY_CODE.get(code) or _BY_LANE.get(str(first_failure.get("lane")), MODEL)
    if found in (HARNESS, ENVIRONMENT) and code not in ("incomplete", "unexpected_body"):
        return found  # settled by the code alone
    reason = first_failure.get("reason")
    reason = reason if isinstance(reason, str) else ""
    if code == "unexpected_body":  # an HTML page is a gateway's (environment); another vendor's API is a wrong URL
        return HARNESS if FOREIGN_BODY in reason else ENVIRONMENT
    if code in _GUARDED:
        found = MODEL if NOT_ASKED in reason else GUARD
    elif code == "incomplete":
        found = HARNESS if any(word in reason for word in _TOKEN_LIMIT) else ENVIRONMENT
    if ABLATED in reason and (found == MODEL or code == "loop_detected"):
        return HARNESS  # the model was sent a context damaged on purpose: that is what failed
    return found
