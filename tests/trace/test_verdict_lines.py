"""Verdict lines made in batches (``check``): every line equal to the whole-line path, whatever the ids of a batch."""
from __future__ import annotations

from hypothesis import example, given, settings
from hypothesis import strategies as st

from tracetui.trace.checking import ready_verdict
from tracetui.trace.safe_text import printable
from tracetui.trace.verdict import verdict_line
from tracetui.trace.verdict_lines import PrintableVerdicts

#: pieces of run ids: plain ones, and (rarer) what secrets begin with, separators a key or value follows,
#: controls, markup, white space
_PLAIN = st.sampled_from(["run-", "91b72265b1f5", "7", "a", "-", ".", "#2", "/", "@", "+", "_"])
_ODD = st.sampled_from(["sk-", "ghp_", "AKIA", "xoxb-", "Bearer ", "key", "token", "password", ":", "=", "\x1b[2J",
                        "\n", "\t", "é", "[/]", "eyJ", "Q7xT2mV9pL4kR8wZ1nB6cY3hJ5fD0gSaT3bk", " ", "\\", "\x9b",
                        "GR1348941", "dop_v1_", "CVhwwXkMEklqWV4ek2sr", "a91016e16b94fc53fca5383838f26c11"])
_IDS = st.lists(st.one_of(_PLAIN, _PLAIN, _PLAIN, _ODD), min_size=1, max_size=5).map("".join) | \
    st.text(max_size=12) | st.just("x" * 201)
_FAILURE = {"lane": "http", "seq": 1, "code": "x", "reason": "HTTP 503; token=abc123456789", "decided_at": 1}


def _verdicts(run_id: str) -> list[dict]:
    return [{"run_id": run_id, "status": "x", "outcome": "failed", "ready": False, "complete": True,
             "first_failure": _FAILURE},
            {"run_id": run_id, "status": "answer_ready", "outcome": "ready", "ready": True, "complete": True,
             "first_failure": None}]


@settings(max_examples=150, deadline=None)
@given(batches=st.lists(st.lists(_IDS, min_size=1, max_size=8), min_size=1, max_size=4))
@example(batches=[["run-\nrun-"]])  # (an id holding a line break: joined, it read as two plain ids)
def test_ids_looked_at_as_a_batch_print_as_each_alone(batches):
    """A batch's ids are looked at together for what a secret begins with: a secret's beginning, a control
    character or a colon in any id of the batch must still be redacted or escaped in that id's line, and
    an id of an earlier batch still printed right."""
    lines = PrintableVerdicts()
    seen: list[str] = []
    for batch in batches:
        lines.vouch(batch)
        seen += batch
        for run_id in seen:
            for v in _verdicts(run_id):
                assert lines(v) == printable(verdict_line(run_id, v)), run_id
            assert lines.ready_all([run_id])[0] == printable(verdict_line(run_id, ready_verdict(run_id))), run_id


def test_a_batch_of_plain_ids_is_vouched_for_and_one_secret_spoils_it():
    lines = PrintableVerdicts()
    lines.vouch(["run-91b72265b1f5", "run-3313c541013d"])
    assert lines.plain("run-3313c541013d")
    assert "run-91b72265b1f5" in lines._vouched  # (looked at once, together)
    lines.vouch(["run-91b72265b1f5", "sk-proj-Q7xT2mV9pL4kR8wZ1nB6cY3hJ5"])
    assert not lines._vouched  # one id holds a secret's beginning: each is looked at alone
    assert lines.plain("run-91b72265b1f5") and not lines.plain("sk-proj-Q7xT2mV9pL4kR8wZ1nB6cY3hJ5")


#: secrets whose shape begins with digits: a GitLab runner registration token, a DigitalOcean token
_DIGIT_SECRETS = ["GR1348941CVhwwXkMEklqWV4ek2sr",
                  "dop_v1_a91016e16b94fc53fca5383838f26c11eb82996ab8caafbec56789e48a24468c"]


def test_an_id_that_is_a_secret_beginning_with_digits_is_redacted_alone_and_in_a_batch():
    """What a secret begins with may hold digits: an id is not looked at as its digits-as-0 form (that
    printed these two tokens as they are), alone, beside a spoiling id, or vouched for in a batch."""
    for batch in ([], ["run-1", "has:colon"], ["run-1", *_DIGIT_SECRETS]):
        lines = PrintableVerdicts()
        lines.vouch(batch)
        for run_id in _DIGIT_SECRETS:
            for v in _verdicts(run_id):
                assert printable(run_id) != run_id and run_id not in lines(v), (batch, run_id)
                assert lines(v) == printable(verdict_line(run_id, v))
            assert lines.ready_all([run_id])[0] == printable(verdict_line(run_id, ready_verdict(run_id)))
