"""The answer rule: backed by a receipt of this run, and about what the request asks."""
from __future__ import annotations

from tracetui.loop.answer import orders_named, verify_answer
from tracetui.loop.runner import run_scenario
from tracetui.replay.replay import replay
from tracetui.trace.reader import read_trace

TASK = {"kind": "order_facts"}
O1 = {"order_id": "o-1", "status": "delivered", "source": "read_order"}
O3 = {"order_id": "o-3", "status": "shipped", "source": "read_order"}


def test_an_answer_about_another_order_than_asked_is_off_topic():
    ok, code, summary, data = verify_answer(TASK, '{"order_id":"o-1","status":"delivered","source":"read_order"}',
                                            [O1], orders_named("What is the status of order o-2?"))
    assert (ok, code) == (False, "answer_off_topic")
    assert summary.startswith("answer is about o-1, but the request asks about o-2") and data["asked"] == ["o-2"]


def test_an_answer_silent_on_an_asked_order_is_off_topic_unless_its_read_failed():
    asked = orders_named("What is the status of orders o-1 and o-3?")
    text = '{"order_id":"o-1","status":"delivered","source":"read_order"}'
    assert verify_answer(TASK, text, [O1], asked)[:2] == (False, "answer_off_topic")
    assert verify_answer(TASK, text, [O1], asked, {"o-3"})[:2] == (True, None)  # o-3's read failed: said so
    both = '[{"order_id":"o-1","status":"delivered","source":"read_order"},' \
           '{"order_id":"o-3","status":"shipped","source":"read_order"}]'
    assert verify_answer(TASK, both, [O1, O3], asked)[:2] == (True, None)


def test_a_request_that_names_no_order_takes_an_answer_about_any():
    assert verify_answer(TASK, '{"order_id":"o-1","status":"delivered","source":"read_order"}', [O1], [])[0]


def test_an_unbacked_answer_is_still_unverified_first():
    assert verify_answer(TASK, '{"order_id":"o-1","status":"delivered","source":"read_order"}', [],
                         ["o-2"])[1] == "unverified_answer"


def test_cross_tenant_edited_to_read_o_1_is_not_answer_ready(root):
    run = read_trace(root / "sample_traces" / "scenarios.jsonl").runs["cross_tenant"]
    outcome = replay(run, [("/responses/0/body/output/0/arguments", '{"order_id":"o-1"}')])
    assert outcome.after["status"] == "answer_off_topic" and not outcome.after["ready"]
    assert outcome.after["responsibility"] == "model"


def test_every_built_in_answer_still_answers_its_question():
    assert run_scenario("parallel_partial_failure").status == "answer_ready"  # o-3 failed, o-1 answered
    assert run_scenario("parallel").status == "answer_ready"
