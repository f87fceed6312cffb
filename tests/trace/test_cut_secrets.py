"""A text cut short for a message is redacted before the cut: a key cut first has lost its shape, and its
start would pass every later redaction (``sk-proj-A1b2C…`` in an error, a lane's reason, a file name)."""
from __future__ import annotations

import string

import pytest
from hypothesis import given, settings, strategies as st

from tracetui.explain import agent_side, candidate
from tracetui.loop import inputs, loop
from tracetui.mcp import bounds
from tracetui.otel import lanes_tools, otlp_read
from tracetui.providers import base, shapes
from tracetui.replay import diff_words, pointer
from tracetui.share.output import safe_name
from tracetui.trace.format import version_problem
from tracetui.trace.safe_text import cut_text, one_line, printable, redacted_prefix
from tracetui.ui.widgets import detail, verdict

#: each place that cuts a text short, given the text
CUTS = {
    "redacted_prefix": lambda t: redacted_prefix(t, 40),
    "explain brief": lambda t: candidate.brief(t, 40),
    "provider brief": lambda t: shapes.brief(t, 40),
    "provider plain": lambda t: shapes.plain({"k": t}, 40),
    "provider brief_text": lambda t: base.brief_text(t, 40),
    "pointer in a message": lambda t: pointer._short(t, 40),
    "diff sentence": lambda t: diff_words.brief(t, 40),
    "OTel lane reason": lambda t: lanes_tools._short(t, 40),
    "share file name": safe_name,
    "trace_version": lambda t: version_problem([t]),
    "API error message": lambda t: loop._api_error_message({"error": {"message": t * 3}}),
    "input value": lambda t: inputs._shown({"v": t}),
    "OTLP span described": lambda t: otlp_read._described({"name": t, "spanId": t}),
    "receipt facts": lambda t: agent_side._facts([("get_order", {"v": t})]),
    "cut_text": lambda t: cut_text(t, 40),
    "one_line": lambda t: one_line(t, 40),
    "MCP strings": lambda t: bounds.as_text(bounds.cut_strings({"v": t}, 40)),
    "MCP error": lambda t: bounds.error_text(t * 60),
    "UI event detail": lambda t: detail.clipped(t, 40),
    "UI verdict banner": lambda t: verdict.clipped(t, 40),
}


@pytest.mark.parametrize("place", sorted(CUTS))
@settings(max_examples=25, deadline=None)
@given(before=st.integers(0, 70), body=st.text(string.ascii_letters + string.digits, min_size=60, max_size=80))
def test_no_start_of_a_key_survives_a_cut(place, before, body):
    key = "sk-proj-" + body
    text = "x" * before + " " + key + " and the rest of the text"
    shown = CUTS[place](text)
    assert body[:6] not in shown and body[:6] not in printable(shown), (place, shown)


def _jwt(length: int) -> str:
    """A JSON Web Token of ``length`` characters: redacted, it shrinks to the marker."""
    head, sig = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ", "." + "Q9w8E7r6" * 6
    return head + "a" * (length - len(head) - len(sig)) + sig


@pytest.mark.parametrize("place", ["redacted_prefix", "cut_text", "one_line", "UI event detail"])
def test_a_key_brought_inside_the_cut_by_an_earlier_secret_shrinking_is_redacted_too(place):
    """The JWT ends inside the margin read past the cut and shrinks to the marker: the key after it, cut at
    the margin's end, moves inside the width shown."""
    key = "gsk_" + "Q9w8E7r6" * 7
    for pad in (1, 7, 20):
        for before_edge in (4, 12, 20):  # the key begins this far before the end of the first window read
            text = f"{_jwt(40 + 4096 - before_edge - pad - 2)} {'x' * pad} {key} and more"
            shown = CUTS[place](text)
            assert "Q9w8E7r6Q9w8" not in shown and "gsk_" not in shown, (pad, before_edge, shown)


@pytest.mark.parametrize("place", ["provider brief", "provider brief_text", "pointer in a message", "provider plain",
                                   "receipt facts"])
def test_a_keyed_secret_is_redacted_before_it_is_quoted_or_joined(place):
    if place == "provider plain":
        shown = shapes.plain({"password": "hunter2hunter2"}, 200)
    elif place == "receipt facts":
        shown = agent_side._facts([("login", {"password": "hunter2hunter2"})])
    else:
        shown = CUTS[place]("password='hunter2hunter2' \"x\"")
    assert "hunter2hunter2" not in shown and "hunter2hunter2" not in printable(shown), shown


@settings(max_examples=200, deadline=None)
@given(st.text(string.ascii_letters + string.digits + " .,'\"-_/", max_size=300), st.integers(5, 120))
def test_a_text_with_nothing_to_redact_is_cut_as_before(text, limit):
    """(The sample traces are compared byte for byte with the CLI's output: a cut they hold must not move.)"""
    from tracetui.trace.redact import redact_text

    if redact_text(text) != text:
        return
    old_repr = repr(text)
    assert shapes.brief(text, limit) == (old_repr if len(old_repr) <= limit else old_repr[:limit - 1] + "…")
    assert base.brief_text(text, limit) == repr(text if len(text) <= limit else text[:limit - 1] + "…")
    assert candidate.brief(text, limit) == (text if len(text) <= limit else text[:limit - 1] + "…")
    assert redacted_prefix(text, limit) == text[:limit]
    assert safe_name(text) == (__import__("re").sub(r"[^A-Za-z0-9._-]+", "_", text).strip("._-")[:60] or "run")


@pytest.mark.parametrize("place", ["redacted_prefix", "one_line", "MCP strings", "UI event detail"])
def test_a_credential_keys_value_cut_before_it_closes_is_redacted(place):
    """A JSON text whose ``secrets`` list is longer than the window read: the value never closes there."""
    text = '{"secrets": ["hunter2-prod-db-pass", "' + "x" * 70_000 + '"]}'
    assert "hunter2" not in CUTS[place](text)


def test_a_text_of_long_secrets_is_read_a_bounded_way_past_the_cut(monkeypatch):
    """Each secret shrinks to the marker, so the window never fills: it stops doubling (a 15 MB key block
    shown in a row of the explorer must not be redacted whole at each move)."""
    from tracetui.trace import safe_text

    read: list[int] = []
    real = safe_text.redact_text

    def counting(text):
        read.append(len(text))
        return real(text)

    monkeypatch.setattr(safe_text, "redact_text", counting)
    key = "gsk_" + "Q9w8E7r6" * 7
    text = " ".join([key] * 300_000)  # 18 MB of keys
    shown = one_line(text, 52)
    assert "Q9w8" not in shown
    assert sum(read) < 20 * (52 + safe_text.ONE_LINE_MARGIN) + len(shown) * 2
