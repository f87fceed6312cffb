"""The views the redactor matches on (escapes as white space, escaped quotes as quotes) are made in C where no
escaped backslash is: the same bytes as the per-escape substitution, which stays for the rest."""
from __future__ import annotations

from hypothesis import given, settings, strategies as st

from tracetui.trace import redact

pieces = st.lists(st.sampled_from([b"\\", b"\\\\", b"n", b"r", b"t", b'"', b'\\"', b"\\n", b"a", b" ", b"u00",
                                   b"\\u005c", b"'"]), max_size=24).map(b"".join)


@settings(max_examples=3000, deadline=None)
@given(pieces)
def test_the_fast_views_are_the_substitutions(line):
    assert redact._spaced(line) == redact._ESCAPED_SPACE.sub(redact._as_space, line)
    quoted = redact._ESCAPED_QUOTE.sub(lambda m: b" " * (m.end() - m.start() - 1) + b"'", line)
    assert redact._quotes_as_text(line) == quoted
    assert len(redact._spaced(line)) == len(line) == len(redact._quotes_as_text(line))


def test_a_traceback_with_a_keyed_secret_is_still_redacted():
    text = 'Traceback (most recent call last):\n  File "/app/x.py", line 12\nValueError: token=abc123xyz789 failed'
    assert "abc123xyz789" not in redact.redact_text(text)
    assert redact.redact_text(text).startswith('Traceback (most recent call last):\n  File "/app/x.py"')
