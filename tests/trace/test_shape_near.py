"""A shape with no literal of its own is tried only where its ``near`` regex matches: that part must be in
every match of the shape, or a secret would be skipped unredacted."""
from __future__ import annotations

import orjson
from hypothesis import given, settings, strategies as st

from tracetui.trace import redact
from tracetui.trace.secret_shapes import SHAPES

DISCORD = next(shape for shape in SHAPES if shape.name == "Discord bot token")
_CHARS = "abcdefghijklmnopqrstuvwxyz0123456789_-"


def _part(low: int, high: int):
    return st.text(_CHARS, min_size=low, max_size=high)


@settings(max_examples=200, deadline=None)
@given(st.sampled_from("MNO"), _part(23, 25), _part(6, 6), _part(27, 38), st.sampled_from([" ", "token ", "\n", ": "]))
def test_every_discord_token_is_tried_and_redacted(first, head, middle, tail, before):
    token = f"{first}{head}.{middle}.{tail}"
    encoded = orjson.dumps(f"bot{before}{token} end")
    shapes, _ = redact._triggered(encoded.lower())
    assert DISCORD in shapes
    if DISCORD.pattern.search(encoded.lower()) and DISCORD.check(token.encode()):
        assert token not in redact.redact_text(f"bot{before}{token} end")


def test_a_text_with_dots_but_no_token_shape_does_not_try_it():
    shapes, _ = redact._triggered(orjson.dumps("request req_1 (2.50 USD): POST /v1/responses. no tool ran.").lower())
    assert DISCORD not in shapes


def test_a_token_whose_dots_are_written_as_escapes_is_still_redacted():
    token = "M" + "a" * 23 + ".abcdef." + "b" * 27
    escaped = token.replace(".", "\\u002e")
    line = b'{"text": "bot ' + escaped.encode() + b' end"}'
    redacted = orjson.loads(redact.redact_line(line))["text"]
    assert token not in redacted and "<redacted>" in redacted
