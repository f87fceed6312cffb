"""The live run's key: found in a text of any length at a cost linear in it, and found in pieces.

A long run of token characters (base64, a long URL, a hash) once made the key's
search rescan it from each of its characters: a 40,000-character answer took
half a minute with a key set, a streamed one never ended. These tests assert
what is found and shown, on texts long enough that the old search would not end
within the safety net (speed figures: ``benchmarks/bench_secrets.py``).
"""
from __future__ import annotations

import base64
import random
import string

import pytest

from tracetui.trace.known_secret import KnownSecret
from tracetui.trace.redact import TEXT_MARKER, text_spans
from tracetui.trace.stream_redact import StreamRedactor, redact_events

from safety_net import safety_net

KEY = "sk-proj-Q7xT2mV9pL4kR8wZ1nB6cY3hJ5fD0gSaT3BlbkFJ"  # 48 characters, as the issue's key
LONG = 40_000


def _letters(size: int, seed: int = 7) -> str:
    rng = random.Random(seed)
    return "".join(rng.choice(string.ascii_letters) for _ in range(size))


@pytest.mark.parametrize("token", [
    "A" * LONG,  # one letter
    _letters(LONG),  # letters
    base64.b64encode(bytes(range(256)) * (LONG // 342)).decode(),  # base64
    "https://example.com/" + "a1/" * (LONG // 3),  # a long URL
], ids=["one letter", "letters", "base64", "long URL"])
def test_a_long_token_with_the_key_set_is_searched_whole_and_left_alone(token):
    known = KnownSecret(KEY)
    text = f"here: {token} done"
    with safety_net():
        assert known.spans(text) == []
        assert known.redact(text) == text
        assert known.scrub({"answer": text, token: 1}) == {"answer": text, token: 1}


@pytest.mark.parametrize("where", ["start", "middle", "end"])
def test_the_key_in_a_long_token_is_found_wherever_it_is(where):
    known = KnownSecret(KEY)
    filler = _letters(LONG)
    encoded = base64.b64encode(b"u:" + KEY.encode()).decode()
    for form in (KEY, KEY.upper(), encoded):
        text = {"start": form + " " + filler, "middle": filler[:LONG // 2] + " " + form + " " + filler[LONG // 2:],
                "end": filler + " " + form}[where]
        with safety_net():
            redacted = known.redact(text)
        assert form not in redacted and KEY not in redacted
        assert redacted.count(TEXT_MARKER) == 1 and len(redacted) == len(text) - len(form) + len(TEXT_MARKER)


def _stream(redactor: StreamRedactor, text: str, deltas: int) -> str:
    size = -(-len(text) // deltas)
    return "".join(redactor.feed(text[i:i + size]) for i in range(0, len(text), size)) + redactor.close()


@pytest.mark.parametrize("token", ["A" * LONG, _letters(LONG), "0123456789abcdef" * (LONG // 16)],
                         ids=["one letter", "letters", "hex"])
def test_a_300_delta_stream_of_a_long_token_with_the_key_set_is_shown_whole(token):
    text = f"The digest is {token}, and that is all."
    with safety_net():
        shown = _stream(StreamRedactor(KnownSecret(KEY)), text, 300)
    assert shown == text


def test_a_300_delta_stream_with_the_key_inside_a_long_token_never_shows_it():
    filler = _letters(LONG)
    text = f"Look: {filler[:20_000]}{KEY}{filler[20_000:]} ok"
    with safety_net():
        shown = _stream(StreamRedactor(KnownSecret(KEY)), text, 300)
        events = redact_events([{"delta": text[i:i + 137]} for i in range(0, len(text), 137)], KnownSecret(KEY))
    assert KEY not in shown and shown.startswith("Look: ") and shown.endswith(" ok")
    assert shown == f"Look: {filler[:20_000]}{TEXT_MARKER}{filler[20_000:]} ok"
    assert KEY not in "".join(e["delta"] for e in events)


def test_text_spans_of_many_secrets_in_a_long_text_are_exact():
    """Character offsets of many secrets (the text escaped for JSON: a tab, é) map back exactly."""
    piece = "é\tsk-proj-Q7xT2mV9pL4kR8wZ1nB6 "
    text = piece * 2000
    with safety_net():
        spans = text_spans(text)
    assert len(spans) == 2000
    assert all(text[s:e] == "sk-proj-Q7xT2mV9pL4kR8wZ1nB6" for s, e in spans)


# -- a key echoed in pieces ---------------------------------------------------------------------------

@pytest.mark.parametrize("cut", [8, 16, 20, 24, 32])
@pytest.mark.parametrize("gap", [" ", "\n", " - ", "\u200b"], ids=["space", "newline", "dash", "zero width"])
def test_a_key_echoed_with_a_space_in_it_leaves_no_run_of_16(cut, gap):
    known = KnownSecret(KEY)
    echoed = f"Your key {KEY[:cut]}{gap}{KEY[cut:]} is invalid."
    redacted = known.redact(echoed)
    for piece in (KEY[:cut], KEY[cut:]):
        if len(piece) >= KnownSecret.MIN_FRAGMENT:
            assert piece not in redacted, redacted
    assert redacted.startswith("Your key ") and redacted.endswith(" is invalid.")


def test_the_issue_case_the_last_28_of_48_characters_are_caught():
    known = KnownSecret(KEY)
    assert len(KEY) == 48
    redacted = known.redact(f"echo: {KEY[:20]} {KEY[20:]}")
    assert KEY[20:] not in redacted and KEY[:20] not in redacted


@pytest.mark.parametrize("start, size", [(0, 16), (5, 16), (31, 17), (9, 30), (32, 16)])
def test_any_run_of_16_or_more_of_the_key_is_caught_in_any_case(start, size):
    known = KnownSecret(KEY)
    fragment = KEY[start:start + size]
    for form in (fragment, fragment.upper(), fragment.lower()):
        assert known.redact(f"x {form} y") == f"x {TEXT_MARKER} y"


def test_a_run_of_15_or_prose_sharing_letters_with_the_key_is_left_alone():
    known = KnownSecret(KEY)
    for text in (f"x {KEY[3:18]} y", "the quick brown fox jumps over the lazy dog", "Q7xT2 mV9pL 4kR8w"):
        assert known.redact(text) == text


def test_a_split_key_never_reaches_the_stream_display_or_the_events():
    text = f"Checking {KEY[:20]} {KEY[20:]} now."
    for size in (1, 3, 7, 50):
        redactor = StreamRedactor(KnownSecret(KEY))
        shown = "".join(redactor.feed(text[i:i + size]) for i in range(0, len(text), size)) + redactor.close()
        assert KEY[20:] not in shown and KEY[:20] not in shown, (size, shown)
        assert shown.startswith("Checking ") and shown.endswith(" now.")
    events = [{"delta": text[i:i + 5]} for i in range(0, len(text), 5)]
    joined = "".join(e["delta"] for e in redact_events(events, KnownSecret(KEY)))
    assert KEY[20:] not in joined and KEY[:20] not in joined
