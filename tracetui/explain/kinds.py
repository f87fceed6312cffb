"""What a proven edit is: a fix, or only a what-if; and the line that says so when a guard held.

A replay proves that an edit flips the verdict, not that the edit is advice. A *fix*
changes something in the user's control that makes the run succeed as it should: the
model's output, the loop's budgets, its guard settings, the tools it declares, the
context it builds. A *what-if* is true but not advice: it changes the environment (the
faults and tool failures a run injects, what the provider answered, streaming of a
stream that broke) or the facts a guard protects (who the caller is, who owns the data,
what was paid). Each what-if carries one line saying why it is not a fix; an edit that
gets past the authorization check says it "would defeat the authorization check".

When a guard refused what the user really asked for (a denial of the order the request
names, a refund over the balance the request asks for), the failure is the right outcome:
nothing in the model or the harness needs fixing, and every proven edit is a what-if.
"""
from __future__ import annotations

from typing import Any

from tracetui.explain.arguments import parse_or_close
from tracetui.explain.candidate import Candidate
from tracetui.explain.evidence import Evidence, event_data
from tracetui.replay.cause import GUARDED_INPUTS, is_safeguard
from tracetui.replay.pointer import EditError, parse_pointer
from tracetui.trace.responsibility import ENVIRONMENT, GUARD, responsibility

FIX, WHAT_IF, PARTIAL = "fix", "what_if", "partial"

DEFEATS_AUTHORIZATION = "would defeat the authorization check"
#: guard failures where the request itself was refused: succeeding means doing something else
REFUSED_REQUEST = frozenset({"permission_denied", "business_rule_violation"})
NO_RETRY_SETTING = ("the loop has no setting that retries a failed response (max_retries covers HTTP failures, "
                    "as the SDKs do): retrying it in your loop is the change to make")


def whose(ev: Evidence) -> str | None:
    """Who is responsible for the run's failure (:mod:`tracetui.trace.responsibility`)."""
    return responsibility(ev.failure or None, ev.inputs) if not ev.ready else None


#: a response the provider reports cancelled: the loop never cancels one, so a client holding your API key did
#: (the Responses API cancels only on request): the harness's (tracetui.trace.responsibility), not the model's
CANCELLED = "response_cancelled"


#: a 200 whose body is not this API's: a gateway's page (environment) or another vendor's API (harness)
FOREIGN = "unexpected_body"


def not_the_model_s_response(ev: Evidence) -> bool:
    """The failing response was not the model's choice (the provider failed it, your side cancelled it, or it
    came from another server than the API): rewriting it is a what-if, in the provider's words, never "the
    model should have"."""
    return whose(ev) == ENVIRONMENT or ev.failure.get("code") in (CANCELLED, FOREIGN)


def _wrong_server(ev: Evidence) -> bool:
    """Another vendor's body: the harness points at the wrong base URL or adapter."""
    return ev.failure.get("code") == FOREIGN and whose(ev) != ENVIRONMENT


def guard_held(ev: Evidence) -> bool:
    """A guard refused exactly what the user asked for: the failure is the right outcome.

    A refused refund counts only when the request names an amount and the refused call asked for exactly it
    (as the loop decides, :func:`tracetui.loop.answer.not_asked_note`): without one, the amount was the model's.
    """
    if whose(ev) != GUARD or ev.failure.get("code") not in REFUSED_REQUEST:
        return False
    if ev.agent:  # the user's own agent: its lanes name a value the request does not (then the class is the model's)
        return ev.failure.get("code") == "permission_denied" and _denied_as_asked(ev)
    return ev.failure.get("code") != "business_rule_violation" or _refund_refused(ev)[1] is not None


def _denied_as_asked(ev: Evidence) -> bool:
    """For a recorded agent: the denied call asked only for values the user's request names. The record lanes
    call a made-up value the model's only when it looks like an id (has a digit); a made-up name does not, and a
    guard cannot have held for what nobody asked."""
    failing = ev.event(ev.failure.get("decided_at")) or ev.event(ev.failure.get("seq")) or {}
    call = ev.call_of(failing)
    parsed = parse_or_close(call.arguments) if call and call.arguments else None
    args = parsed[0] if parsed and isinstance(parsed[0], dict) else None
    if args is None:
        return True  # nothing to read: the lanes' class stands
    asked = ev.user_input
    return all(str(v) in asked for v in args.values()
               if isinstance(v, (str, int, float)) and not isinstance(v, bool) and str(v))


#: failures of a request the provider answered (and the SDK retried) that a record run's response edit papers over
PROVIDER_FAILED = frozenset({"rate_limited", "server_error", "overloaded", "timeout", "connection_error"})


def _refund_refused(ev: Evidence) -> tuple[Any, float | None]:
    """(the order, the amount) of the refused refund call, the amount only when it is what the request names."""
    failing = ev.event(ev.failure.get("decided_at")) or ev.event(ev.failure.get("seq")) or {}
    call = ev.call_of(failing)
    parsed = parse_or_close(call.arguments) if call and call.arguments else None
    args = parsed[0] if parsed and isinstance(parsed[0], dict) else {}
    amount, asked = args.get("amount"), ev.refund_asked()
    same = isinstance(amount, (int, float)) and not isinstance(amount, bool) and asked is not None \
        and float(amount) == asked
    return args.get("order_id"), asked if same else None


def partials_shown(partials: list[Any], any_fix: bool, held: bool) -> list[Any]:
    """The partials a surface lists (the CLI, ``--json``, the explorer's fixes panel): none once a fix is proven,
    and none when a guard held, where nothing needs fixing and getting further means doing something else."""
    return [] if any_fix or held else list(partials)


def _parts(path: str) -> list[Any]:
    try:
        return parse_pointer(path)
    except EditError:
        return []


#: what the user asked: a run that succeeds once it is rewritten answers another request
REQUEST_INPUTS = frozenset({"user_input", "task"})
LOOSENS_ARGUMENT_CHECK = ("it loosens the check on the model's arguments to accept what the model sent: a fix only "
                          "if the tool's schema itself was wrong, which the trace cannot tell")


def why_not(path: str, ev: Evidence, value: Any = None) -> str | None:
    """Why an edit at ``path`` (to ``value``) is not a fix (None: it may be one).

    Every path :func:`tracetui.replay.cause.is_safeguard` calls a safeguard (the one rule for
    security-relevant inputs, shared with the explorer's ``e``) is a what-if, except a guard's
    switch turned on: switching the idempotency guard on strengthens it, and that is a fix.
    """
    parts = _parts(path)
    if parts[:1] == ["inputs"] and len(parts) == 1:
        return f"{DEFEATS_AUTHORIZATION}: it replaces every input of the run, the caller and the data included"
    if len(parts) >= 2 and parts[0] == "inputs" and parts[1] in REQUEST_INPUTS:
        return "it rewrites what the user asked: the run would then answer a different request"
    if parts[:2] == ["inputs", "tool_data"] and len(parts) == 2:
        return f"{DEFEATS_AUTHORIZATION}: it replaces the tool data, who owns what and what was paid included"
    if parts[:2] == ["inputs", "principal"]:
        return f"{DEFEATS_AUTHORIZATION}: it changes who the caller is"
    if parts[:3] == ["inputs", "tool_data", "orders"]:
        order = parts[3] if len(parts) > 3 else "the orders"
        field = parts[4] if len(parts) > 4 else None
        if field in ("paid", "refunded"):
            return f"would defeat the business rule: it changes what {order} was paid or refunded"
        if field in (None, "tenant", "user"):
            return f"{DEFEATS_AUTHORIZATION}: it rewrites who owns {order}"
        return f"it rewrites the data the tools hold ({order}), not the run"
    if parts[:3] == ["inputs", "tool_data", "failures"]:
        return "it removes a tool failure the run injects: a failing tool service is the environment's, not yours"
    if parts[:2] == ["inputs", "faults"] and _wrong_server(ev):
        return ("it removes the fault the run injects (another vendor's body): in a real run the change to make is "
                "the base URL or adapter your loop points at")
    if parts[:2] in (["inputs", "faults"], ["inputs", "transient_failures"]):
        return "it removes the HTTP faults the run injects: a provider that fails is the environment's, not yours"
    if parts[:2] == ["inputs", "stream"] and whose(ev) == ENVIRONMENT:
        return "it turns streaming off so the simulated stream cannot break: a broken stream is not repaired that way"
    if parts[:1] == ["responses"] and not_the_model_s_response(ev):
        if ev.failure.get("code") == CANCELLED:
            return "it replaces a response that was cancelled: what cancelled it is the change to make"
        if _wrong_server(ev):
            return ("it replaces what the server answered: another vendor's body means the loop points at the "
                    "wrong base URL or adapter, and that is the change to make")
        if ev.agent and ev.failure.get("code") in PROVIDER_FAILED:
            return (f"it replaces what the provider answered ({ev.failure.get('code')}) after the SDK gave up "
                    f"retrying: the environment's, not advice; more retries or a backoff in your agent is the "
                    f"change to make")
        return "it replaces what the provider answered: the provider failed, not the model"
    if parts[:2] == ["inputs", "tools"] and (len(parts) <= 3 or parts[3] == "parameters"):
        return LOOSENS_ARGUMENT_CHECK
    if is_safeguard(path):
        if len(parts) == 2 and parts[1] in GUARDED_INPUTS and value is True:
            return None  # a guard switched on
        if len(parts) == 2 and str(parts[1]).endswith("_guard"):
            return f"would defeat the {str(parts[1]).replace('_', ' ')}: it switches it off or changes it"
        return f"{DEFEATS_AUTHORIZATION}: it changes who may do what"
    return None


def partial_why_not(candidate: Candidate, ev: Evidence) -> str | None:
    """For a partial: why the edit, even were it to get the run through, would not be a fix (None: it could be)."""
    return next((why for why in (why_not(e.path, ev, e.value) for e in candidate.edits) if why), None)


def kind_of(candidate: Candidate, ev: Evidence) -> tuple[str, str | None]:
    """FIX or WHAT_IF for an edit that made the run answer-ready, and why it is not a fix."""
    for edit in candidate.edits:
        why = why_not(edit.path, ev, edit.value)
        if why:
            return WHAT_IF, why
    if guard_held(ev):
        asked = "refund" if ev.failure.get("code") == "business_rule_violation" else "read"
        return WHAT_IF, f"the {asked} the user asked for was refused, rightly: succeeding here means doing something else"
    return FIX, None


def headline(ev: Evidence) -> str | None:
    """One line above the proposals when a guard held or the environment failed: what that means."""
    if ev.ready:
        return None
    failing = ev.event(ev.failure.get("decided_at")) or ev.event(ev.failure.get("seq")) or {}
    data = event_data(failing)
    if guard_held(ev):
        if ev.failure.get("code") == "permission_denied" and ev.agent:
            return ("the authorization check held: the request asked for what the agent's tool denied; nothing "
                    "in the model or the harness needs fixing")
        if ev.failure.get("code") == "permission_denied":
            owner = data.get("resource_tenant") or "another tenant"
            what = f"the caller asked for {data.get('resource')}, which belongs to {owner}"
            return f"the authorization check held: {what}; nothing in the model or the harness needs fixing"
        order, asked = _refund_refused(ev)
        facts = ev.orders.get(order) if isinstance(order, str) else None
        try:
            balance = f" {float(facts['paid']) - float(facts.get('refunded', 0)):.2f}" if facts else ""
        except (KeyError, TypeError, ValueError):
            balance = ""  # a paid or refunded that is not a number: say no figure
        return (f"the business rule held: the user asked to refund {asked:.2f} on {order}, more than its refundable "
                f"balance{balance}; nothing in the model or the harness needs fixing")
    if whose(ev) == GUARD and ev.failure.get("code") == "loop_detected":
        return "the loop guard stopped a repeated call: the model caused it; the guard did its job"
    if _wrong_server(ev):
        return ("the server answered in another vendor's API: the loop points at the wrong base URL or adapter; "
                "nothing in the model needs fixing")
    if ev.failure.get("code") == CANCELLED:
        return ("the response was cancelled, not failed by the model: the loop never cancels one, so a client "
                "holding your API key did (the API cancels a response only when asked to); find what cancelled it")
    if whose(ev) == ENVIRONMENT:
        if ev.failure.get("code") == "response_failed":
            return "the provider failed the response, not the model; " + NO_RETRY_SETTING
        return "the environment failed (the provider, the network or a tool service), not the model or the harness"
    return None
