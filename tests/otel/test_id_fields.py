"""Span ids are exactly their size: hex of ``2 * size`` digits or base64 of ``size`` bytes, never a shorter id made
of hex with spaces in it (``bytes.fromhex`` skips them)."""
from __future__ import annotations

import base64

from hypothesis import given, strategies as st

from tracetui.otel.otlp_fields import hex_id
from tracetui.otel.otlp_typed import _hex_id

ids = st.one_of(st.text(alphabet="0123456789abcdefABCDEF \t\n", min_size=14, max_size=34), st.text(max_size=34),
                st.binary(min_size=7, max_size=17).map(lambda b: base64.b64encode(b).decode()))


@given(ids, st.sampled_from([8, 16]))
def test_an_id_read_is_its_size_in_lowercase_hex_and_both_readers_agree(value, size):
    found = hex_id(value, size)
    assert found is None or (len(found) == 2 * size and not found.strip("0123456789abcdef") and found.strip("0"))
    assert _hex_id(value, size) == found


def test_hex_with_spaces_is_not_an_id():
    assert hex_id("0af7 651916cd43dd8448eb211c8031 ", 16) is None  # 15 bytes, written in 32 characters
    assert hex_id("0af7651916cd43dd 8448eb211c80319", 16) is None
    assert hex_id("00f067aa 0ba902b", 8) is None


def test_the_usual_forms_still_read():
    assert hex_id("0AF7651916CD43DD8448EB211C80319C", 16) == "0af7651916cd43dd8448eb211c80319c"
    assert hex_id(base64.b64encode(bytes.fromhex("00f067aa0ba902b7")).decode(), 8) == "00f067aa0ba902b7"
    assert hex_id("0" * 16, 8) is None
