"""The answer lane of a recorded agent: the business's acceptance is the agent's own exit status.

tracetui cannot know what a correct answer is for someone else's agent; the agent's code can, and
says so by how it exits. Exit 0 accepts the run (every failure before it was overcome, as the loop's
verified answer overcomes them), except the end of a recording: a replay that ran out of responses
proves nothing. Any other end fails the lane, with how the agent ended in the words.
"""
from __future__ import annotations

from typing import Any

from tracetui.providers.base import CASSETTE_EXHAUSTED
from tracetui.record.exchange import AgentExit
from tracetui.record.wire_tools import brief
from tracetui.trace.format import FAILED, OK

ANSWER_REJECTED = "answer_rejected"
AGENT_KILLED = "agent_killed"
AGENT_NOT_STARTED = "agent_not_started"
NO_EXCHANGES = "no_exchanges"
INTERRUPTED = "interrupted"
NO_ENDPOINT = ("the agent never called the endpoint: does it read OPENAI_BASE_URL / ANTHROPIC_BASE_URL / "
               "GOOGLE_GEMINI_BASE_URL?")


def trace_text(value: Any) -> str:
    """Text a trace can hold. An argument the OS gave as bytes that are no UTF-8 (a Latin-1 file name)
    arrives with lone surrogates, which JSON cannot write: shown with U+FFFD in their place."""
    text = value if isinstance(value, str) else "" if value is None else str(value)
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        errors = "surrogateescape" if _escaped_only(text) else "replace"
        return text.encode("utf-8", errors).decode("utf-8", "replace")


def _escaped_only(text: str) -> bool:
    """Whether every lone surrogate in ``text`` is one ``surrogateescape`` made (U+DC80..U+DCFF)."""
    return all(not 0xD800 <= ord(ch) <= 0xDFFF or 0xDC80 <= ord(ch) <= 0xDCFF for ch in text)


def answer_event(lanes: Any, agent_exit: AgentExit, text: str, exchanges: int) -> dict[str, Any]:
    """Add the run's last event, ``answer.verify``, from how the agent ended; earlier failures it overcame
    are marked recovered."""
    signal = trace_text(agent_exit.signal) if agent_exit.signal is not None else None
    data = {"text": text, "exit_status": agent_exit.status, "signal": signal, "exchanges": exchanges}
    plural = "exchange" if exchanges == 1 else "exchanges"
    outcome, code = FAILED, None
    if agent_exit.interrupted:
        code, summary = INTERRUPTED, f"stopped with Ctrl-C after {exchanges} {plural}; the run holds what it did"
    elif not agent_exit.started:
        reason = trace_text(agent_exit.reason) or "no reason given"
        code, summary = AGENT_NOT_STARTED, f"the command did not start: {reason}"
    elif agent_exit.status is None:
        signal = signal or "a signal"
        code, summary = AGENT_KILLED, (f"the agent was killed by {signal} after {exchanges} {plural}; "
                                       f"the run holds what it did")
        if agent_exit.reason:  # tracetui stopped it (a re-run past its time limit): say so
            summary = f"{trace_text(agent_exit.reason)}: {summary}"
    elif not exchanges:  # whatever its status: nothing the model did can have decided it
        code, summary = NO_EXCHANGES, NO_ENDPOINT
        if agent_exit.status != 0:
            summary = f"the agent exited with status {agent_exit.status} and {summary[10:]}"
    elif agent_exit.status != 0:
        code = ANSWER_REJECTED
        summary = f"the agent exited with status {agent_exit.status}: its own acceptance rejected the run"
        if text:
            summary += f" after: {brief(text, 80)}"
    else:
        outcome = OK
        summary = "the agent accepted its answer (exit 0)" if text else \
            "the agent accepted its run (exit 0); its last model response was no text answer"
        lanes.recover([e for e in lanes.events if e.get("code") != CASSETTE_EXHAUSTED])
    return lanes.add("answer", "answer.verify", outcome, summary, code=code, data=data)
