"""Which candidate edits a failing run's evidence calls for, by the code of each event that decided it."""
from __future__ import annotations

from dataclasses import replace
from typing import Any, Callable, Iterator

from tracetui.explain import agent_side as agent
from tracetui.explain import input_side as inputs
from tracetui.explain import model_side as model
from tracetui.explain.candidate import Candidate
from tracetui.explain.evidence import Evidence
from tracetui.explain.kinds import not_the_model_s_response
from tracetui.trace.verdict import RECORDING_ENDED

Generator = Callable[[Evidence, dict[str, Any]], Iterator[Candidate]]

_GENERATION = (model.bad_response,)
_HTTP_RETRIED = (inputs.retries, inputs.faults)
#: failure code -> the generators its evidence feeds, the most direct first
BY_CODE: dict[str, tuple[Generator, ...]] = {
    "permission_denied": (model.denied, inputs.caller, inputs.owner),
    "schema_error": (model.bad_arguments, inputs.schema),
    "invalid_json": (model.bad_arguments,),
    "handoff_required": (model.bad_arguments, inputs.schema, inputs.repair_budget),
    "unknown_tool": (model.unknown_tool,),
    "duplicate_call_id": (model.duplicate_id, model.answer_instead),
    "business_rule_violation": (model.over_balance, inputs.balance),
    "loop_detected": (model.answer_instead,),
    "budget_exhausted": (inputs.loop_budget, model.answer_instead),
    "incomplete": (inputs.output_budget, model.bad_response),
    "refused": _GENERATION,
    "response_failed": _GENERATION,
    "response_cancelled": _GENERATION,
    "unsupported_response": _GENERATION,
    "empty_response": _GENERATION,
    "invalid_tool_call": _GENERATION,
    "protocol_error": (inputs.streaming, model.bad_response),
    "unverified_answer": (model.unbacked_answer,),
    "empty_answer": (model.unbacked_answer,),
    "tool_failed": (inputs.injected_failure,),
    "write_outcome_unknown": (inputs.guard, inputs.injected_failure),
    "duplicate_execution": (inputs.guard, inputs.injected_failure),
    "stream_interrupted": (inputs.streaming, inputs.faults),
    "unexpected_body": (inputs.faults, inputs.gateway_status),
    RECORDING_ENDED: (model.recording_ended,),
    **{code: _HTTP_RETRIED for code in ("server_error", "overloaded", "rate_limited", "timeout", "connection_error",
                                         "conflict", "http_error")},
}

#: a run of the user's own agent (``source: record``): only what the model answered can be edited, so no input-side
#: generator (budgets, caller, owner, faults, tool data) ever fires for one
_AGENT_TURN = (agent.bad_turn,)
AGENT_BY_CODE: dict[str, tuple[Generator, ...]] = {
    "permission_denied": (agent.denied_resource,),
    "schema_error": (model.bad_arguments,),
    "invalid_json": (model.bad_arguments,),
    "unknown_tool": (model.unknown_tool,),
    "duplicate_call_id": (model.duplicate_id,),
    "answer_rejected": (agent.rejected_answer,),
    RECORDING_ENDED: (agent.recording_ended,),
    **{code: _AGENT_TURN for code in ("incomplete", "refused", "response_failed", "empty_response",
                                      "invalid_tool_call", "protocol_error", "unsupported_response")},
    **{code: (agent.rate_limit,) for code in ("rate_limited", "server_error", "overloaded", "timeout",
                                              "connection_error")},
}


def candidates(ev: Evidence) -> Iterator[Candidate]:
    """Every distinct candidate the run's evidence suggests, the decisive failure's first; none for a ready run."""
    if ev.ready or not ev.inputs:
        return
    seen: set[bytes] = set()
    provider_failed = not_the_model_s_response(ev)

    def fresh(found: Iterator[Candidate]) -> Iterator[Candidate]:
        for candidate in found:
            if candidate.key not in seen:
                seen.add(candidate.key)
                yield _provider_voiced(candidate) if provider_failed else candidate

    by_code = AGENT_BY_CODE if ev.agent else BY_CODE
    for event in ev.failing:
        for generator in by_code.get(str(event.get("code")), ()):
            yield from fresh(generator(ev, event))
    if not ev.agent:
        yield from fresh(inputs.whole_context(ev))


def _provider_voiced(candidate: Candidate) -> Candidate:
    """A rewritten response where the provider failed (a failed status, a broken stream) is the provider's
    answer, not the model's: said so, and not blamed on the model."""
    if candidate.side != "model":
        return candidate
    words = candidate.words.replace("the model should have ", "a working response would have ", 1)
    return replace(candidate, side="provider", words=words)
