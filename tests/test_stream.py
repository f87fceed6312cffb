"""The stream assembler: text as it comes, tool arguments only when complete."""
from __future__ import annotations

import pytest

from tracetui.providers.fake_model import fn_call, message, response
from tracetui.providers.fake_wire.responses import ResponsesWire, responses_to_events
from tracetui.providers.openai_responses import StreamAssembler, assemble_responses_stream
from tracetui.providers.stream import StreamProtocolError

BODY = ResponsesWire().render(response([message("The order o-1 was delivered."),
                                        fn_call("read_order", {"order_id": "o-1"}, "call-1")]), 1, 1)[1]


def test_round_trip():
    body, error = assemble_responses_stream(responses_to_events(BODY))
    assert error is None and body == BODY


def test_text_deltas_are_shown_before_completion_but_calls_are_not_released():
    asm = StreamAssembler()
    events = responses_to_events(BODY)
    shown = [d for e in events[:-1] if (d := asm.feed(e))]
    assert "".join(shown) == "The order o-1 was delivered."
    with pytest.raises(StreamProtocolError, match="without a completion event"):
        asm.finish()
    asm.feed(events[-1])
    assert asm.finish() == BODY


@pytest.mark.parametrize("damage,message_part", [
    (lambda ev: ev[: len(ev) // 2], "without a completion event"),
    (lambda ev: ev[:-1], "without a completion event"),
    (lambda ev: [{**e, "arguments": e["arguments"][:-1]} if e["type"].endswith("arguments.done") else e for e in ev],
     "not complete JSON"),
    (lambda ev: ev[:3] + [{"type": "error", "error": {"message": "overloaded"}}] + ev[3:], "error event mid-stream"),
    (lambda ev: ev[:3] + [{"type": "error", "code": "server_error", "message": "flat error"}] + ev[3:],
     "error event mid-stream"),
    (lambda ev: ev + [ev[1]], "after the completion event"),
])
def test_broken_streams_are_protocol_errors(damage, message_part):
    body, error = assemble_responses_stream(damage(responses_to_events(BODY)))
    assert body is None and message_part in error
