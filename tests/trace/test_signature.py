"""A failure's signature: runs that failed alike share one, different kinds of failure stay apart (issue 24)."""
from __future__ import annotations

import re
import string
from pathlib import Path

from hypothesis import given, settings, strategies as st

from tracetui.trace.reader import read_trace
from tracetui.trace.signature import failure_signature, masked, signature_words

from test_terminal_output import SECRET

SAMPLES = Path(__file__).resolve().parents[2] / "sample_traces"
DENIED = "permission denied: {order} belongs to tenant {tenant}, user {user}; caller is tenant {caller}, " \
         "user {me}: tenant and user differ; no protected field returned"


def denied(reason: str) -> dict:
    return {"lane": "authorization", "seq": 4, "code": "permission_denied", "reason": reason}


def test_a_signature_masks_ids_numbers_and_names():
    a = denied("permission denied: o-2 belongs to tenant shop-b, refund 80.00, call call_17 id 3f9a0c1b2d4e")
    b = denied("permission denied: o-7 belongs to tenant shop-c, refund 5.5, call call_2 id 99aa00bb11cc")
    assert failure_signature(a) == failure_signature(b)
    assert failure_signature(a)[2] == "permission denied: o-# belongs to tenant #, refund #, call call_# id #"
    assert failure_signature(None) is None
    assert signature_words(failure_signature(a)).startswith("authorization · permission_denied · ")


def test_the_sample_reasons_of_one_kind_share_a_signature_and_keep_their_words():
    reasons = [DENIED.format(order="o-2", tenant="shop-b", user="u-2", caller="shop-a", me="u-1"),
               DENIED.format(order="o-913", tenant="acme", user="u-77", caller="globex", me="u-3")]
    one, other = (failure_signature(denied(r)) for r in reasons)
    assert one == other
    assert one[2] == ("permission denied: o-# belongs to tenant #, user #; caller is tenant #, user #: "
                      "tenant and user differ; no protected field returned")
    assert masked("no tool named 'cancel_order' is offered") == masked("no tool named 'delete_user' is offered")
    assert masked('loop guard: read_order {"order_id":"o-1"} already ran') == \
        'loop guard: read_order {"order_id":"#"} already ran'
    assert masked("mail alice@example.com bounced") == masked("mail bob.smith@corp.example.org bounced")
    assert masked("request req_acafda failed") == masked("request req_4f2a9c failed") == "request req_# failed"
    assert masked("max_output_tokens; call_id call-1") == "max_output_tokens; call_id call-#"


def test_different_kinds_of_failure_stay_apart():
    assert masked("POST /v1/responses attempt 3: HTTP 503 (overloaded)") != \
        masked("POST /v1/responses attempt 1: HTTP 400 (overloaded)")
    assert masked("amount: '20.00' is not of type 'number'") != masked("amount: 20 is not of type 'string'")
    assert masked("tenant and user differ") != masked("tenant differs")
    assert masked("read_order failed (service_unavailable)") != masked("read_order failed (timeout)")


def test_the_sample_traces_failures_group_into_kinds():
    """Every failing run of the samples, grouped: runs failing alike (across files: the same scenario
    under other faults or ablations) share a signature; there are fewer signatures than failures."""
    failures = [run.verdict()["first_failure"] for path in sorted(SAMPLES.glob("*.jsonl")) if "otel" not in path.name
                for run in read_trace(path).runs.values() if run.verdict()["first_failure"]]
    signatures = {failure_signature(f) for f in failures}
    assert len(signatures) < len(failures)
    codes = {f["code"] for f in failures}
    assert {s[1] for s in signatures} == codes  # no kind is lost in another


def test_a_signature_redacts_before_it_masks():
    assert SECRET not in masked(f"bad key {SECRET}") and "<redacted>" in masked(f"bad key {SECRET}")


_LOWER = st.text(string.ascii_lowercase, min_size=1, max_size=8)
#: an id's value (its prefix says what it names, so it is the same in the reasons compared)
_ID_VALUE = st.builds(lambda n, tail: f"{n}{tail}", st.integers(0, 10**9), st.sampled_from(["", "-x", "b7", "_2"]))
#: a tenant's or user's name; not one of the words after which no name follows ("tenant and user differ"),
#: nor a JSON type's name (a quoted 'number' is kept: is not of type 'number')
_NAME = st.builds(lambda a, b: f"{a}-{b}" if b else a, _LOWER, st.one_of(st.just(""), _LOWER)).filter(
    lambda name: re.match(r"(and|or|is|are|was|were|not|no|of|the|a|an|to|in|on|for|with|from|by|at|as|id|ids|"
                          r"name|names|differ|differs|mismatch|has|have|had|does|do|"
                          r"number|string|integer|boolean|object|array|null)\b", name) is None)
_AMOUNT = st.one_of(st.integers(0, 10**12).map(str), st.floats(0, 1e6, allow_nan=False).map(lambda f: f"{f:.2f}"))


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(_ID_VALUE, _NAME, _NAME, _ID_VALUE, _AMOUNT, st.integers(1, 9)), min_size=2,
                max_size=2))
def test_reasons_that_differ_only_in_ids_numbers_and_names_share_a_signature(values):
    def reason(order, tenant, user, call, amount, attempt):
        return (f"POST /v1/responses attempt {attempt}: HTTP 409; permission denied: o-{order} belongs to "
                f"tenant {tenant}, user {user}; call call_{call}: refund {amount} refused for '{tenant}'; "
                f'args {{"order_id":"o-{order}","note":"{user}"}}')

    (a, b) = (failure_signature(denied(reason(*v))) for v in values)
    assert a == b
    assert "HTTP 409" in a[2] and "permission denied" in a[2]


def test_tokens_of_letters_and_digits_are_masked_however_their_digits_fall():
    """A temporary directory or a session token (``tmp8x7qzk2``): masking only its digits left its letters
    (``tmp#x#qzk#``), a new signature, so a new group, per run."""
    assert masked("open /tmp/tmp8x7qzk2/trace.jsonl failed") == masked("open /tmp/tmpab3cd9xy/trace.jsonl failed") \
        == "open /tmp/#/trace.jsonl failed"
    assert masked("session Ab3xK9qZ expired") == masked("session 7QzzP0wmL expired")
    assert masked("sha256 of a utf8 body") == "sha# of a utf# body"  # (short words stay words)
