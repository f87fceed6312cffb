"""The named scenarios: each reproduces one way a tool-calling loop goes wrong.

A scenario is a user request plus at most a few changed inputs (a tool failure,
a budget, a flag) and, in :mod:`tracetui.providers.fake_model`, one model quirk.
Inputs are built from a scenario by :mod:`tracetui.loop.inputs`.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tracetui.providers.fake import FAULTS
from tracetui.providers.fake_wire import WIRES


@dataclass(frozen=True)
class Scenario:
    name: str
    about: str
    user_input: str
    expect: str  # the final status this scenario produces with no faults or ablation
    task: dict[str, Any] = field(default_factory=lambda: {"kind": "order_facts"})
    budgets: dict[str, int] = field(default_factory=dict)
    failures: dict[str, str] = field(default_factory=dict)
    stream: bool = False
    idempotency_guard: bool = True


ASK_ONE = "What is the status of order o-1?"
ASK_TWO = "What is the status of orders o-1 and o-3?"
REFUND = "Refund 20.00 on order o-1: it arrived damaged."

_ALL = [
    # the lab's scenario matrix
    Scenario("text", "a plain text reply does not enter the tool loop", "What can you help me with?",
             "answer_ready", task={"kind": "chat"}),
    Scenario("single", "one tool call, its result sent back by call id", ASK_ONE, "answer_ready"),
    Scenario("parallel", "two calls in one response, each result matched by its own id", ASK_TWO, "answer_ready"),
    Scenario("parallel_partial_failure", "one of two parallel calls fails; the other result is kept",
             ASK_TWO, "answer_ready", failures={"read_order:o-3": "service_unavailable"}),
    Scenario("invalid_args", "schema error sent back by call id; the model repairs its arguments",
             ASK_ONE, "answer_ready"),
    Scenario("tool_failure", "the tool fails; no result is invented", ASK_ONE, "tool_failed",
             failures={"read_order:o-1": "service_unavailable"}),
    Scenario("repeat", "the same call again after its result: the loop guard stops it", ASK_ONE, "loop_detected"),
    Scenario("refusal", "a refusal is not a normal completion", ASK_ONE, "refused"),
    Scenario("truncated", "output cut at the token limit goes to the failure branch", ASK_ONE, "incomplete",
             budgets={"max_output_tokens": 16}),
    Scenario("duplicate_ids", "two calls share one id: rejected before any tool runs", ASK_TWO, "duplicate_call_id"),
    Scenario("truncated_tool_call", "a cut-off write call has no side effect", REFUND, "incomplete",
             budgets={"max_output_tokens": 16}),
    # the response-contract lab's faults
    Scenario("unknown_tool", "the model calls a tool it was never offered", ASK_ONE, "unknown_tool"),
    Scenario("cross_tenant", "another tenant's order: permission denied, nothing protected returned",
             "What is the status of order o-2?", "permission_denied"),
    Scenario("reused_call_id", "a later turn reuses an earlier call id", ASK_TWO, "duplicate_call_id"),
    Scenario("no_receipt", "an answer that matches the data but was never read in this run", ASK_ONE,
             "unverified_answer"),
    Scenario("response_failed", "the API reports status failed", ASK_ONE, "response_failed"),
    Scenario("response_cancelled", "the API reports status cancelled", ASK_ONE, "response_cancelled"),
    Scenario("reasoning_items", "reasoning items kept in the transcript, as the API requires", ASK_ONE,
             "answer_ready"),
    Scenario("call_budget", "more tool calls than the call budget allows", "What is the status of orders o-1, o-2 and o-3?",
             "budget_exhausted", budgets={"max_calls": 2}),
    Scenario("turn_budget", "one order per turn runs out of turns before answering", ASK_TWO, "budget_exhausted",
             budgets={"max_turns": 2}),
    # the validation lab
    Scenario("refund", "a write with an idempotency key and a receipt", REFUND, "answer_ready"),
    Scenario("invalid_json", "arguments that are not JSON, repaired by the model", REFUND, "answer_ready"),
    Scenario("repair_exhausted", "the repair budget runs out: hand off to a human", REFUND, "handoff_required"),
    Scenario("business_rule", "valid JSON, valid schema, but more than the refundable balance",
             "Refund 80.00 on order o-1: it arrived damaged.", "business_rule_violation"),
    Scenario("write_timeout", "a write times out after committing; the receipt is checked, not rewritten",
             REFUND, "answer_ready", failures={"refund_order:o-1": "timeout_after_commit"}),
    Scenario("write_unguarded", "the same timeout without an idempotency guard: written twice, flagged",
             REFUND, "duplicate_execution", failures={"refund_order:o-1": "timeout_after_commit"},
             idempotency_guard=False),
    # streaming
    Scenario("stream", "text shown as it streams; tool arguments released only when complete", ASK_ONE,
             "answer_ready", stream=True),
    Scenario("stream_cut", "the stream drops in the middle of tool arguments", ASK_ONE, "stream_interrupted",
             stream=True),
    Scenario("stream_no_completion", "the stream ends without its completion event", ASK_ONE, "protocol_error",
             stream=True),
    Scenario("stream_bad_json", "the stream closes a tool call with broken JSON", ASK_ONE, "protocol_error",
             stream=True),
]

SCENARIOS: dict[str, Scenario] = {s.name: s for s in _ALL}
FAULT_CHOICES = FAULTS
#: the wire shapes the built-in provider speaks; the scenarios are written for the first
PROVIDERS: tuple[str, ...] = tuple(WIRES)


def expected_status(scenario: str, provider: str = "openai-responses") -> str:
    """The status ``scenario`` ends with in ``provider``'s wire shape (no faults, no ablation)."""
    difference = WIRES[provider].differences.get(scenario)
    return difference[0] if difference else SCENARIOS[scenario].expect


def differences(provider: str) -> dict[str, tuple[str, str]]:
    """Scenarios this provider's API cannot express as scripted: scenario → (its status here, why)."""
    return dict(WIRES[provider].differences)
