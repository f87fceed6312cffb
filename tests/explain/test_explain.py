"""`tracetui explain`: proven fixes for every failing sample run, ranked and in words."""
from __future__ import annotations

import shlex
from pathlib import Path

import pytest
from click.testing import CliRunner

from tracetui.cli import main
from tracetui.explain import explain
from tracetui.explain import generate
from tracetui.explain.candidate import one
from tracetui.explain.search import FIX, PARTIAL, WHAT_IF, Search
from tracetui.trace.reader import read_trace

ROOT = Path(__file__).resolve().parent.parent.parent
SAMPLES = ROOT / "sample_traces"
FAILING = [(path.name, run_id) for path in sorted(p for p in SAMPLES.glob("*.jsonl") if not p.name.startswith("otel-"))
           for run_id, run in read_trace(path).runs.items() if not run.verdict()["ready"]]


def run_of(name: str, run_id: str):
    return read_trace(SAMPLES / name).runs[run_id]


def paste(command: str):
    """Run a printed command as a shell would split it (minus the program name)."""
    args = shlex.split(command)
    assert args[:2] == ["tracetui", "replay"]
    return CliRunner().invoke(main, args[1:] + ["--json"])


@pytest.mark.parametrize("name,run_id", FAILING)
def test_every_failing_sample_run_gets_a_fix_a_what_if_or_a_partial_and_each_one_re_verifies(name, run_id):
    import json

    result = explain(run_of(name, run_id))
    proofs = result.fixes + result.what_ifs + result.partials
    assert proofs, f"{run_id}: nothing proven"
    assert result.responsibility in ("model", "harness", "environment", "guard")
    for proof in proofs:
        assert proof.kind in (FIX, WHAT_IF, PARTIAL)
        assert proof.why_not is not None or proof.kind != WHAT_IF
        assert proof.why_not is None or proof.kind != FIX
        if proof.kind in (FIX, WHAT_IF):
            assert proof.outcome.after["ready"]
        else:
            assert not proof.outcome.after["ready"] and proof.outcome.after != proof.outcome.before
    for proof in result.fixes + result.what_ifs + ([] if result.fixes or result.what_ifs else result.partials):
        from tracetui.explain.command import replay_command

        command = replay_command(str(SAMPLES / name), run_id, proof.outcome.original, proof.edits)
        out = paste(command)
        assert out.exit_code == (1 if proof.kind == PARTIAL else 0), out.output
        assert json.loads(out.output)["after"] == proof.outcome.after  # the command reproduces the proof exactly


@pytest.mark.parametrize("run_id,words,path", [
    ("truncated", "max_output_tokens 64 is enough (16 cut the response off)", "/inputs/budgets/max_output_tokens"),
    ("write_unguarded", "the idempotency guard prevents the second refund", "/inputs/idempotency_guard"),
    ("unknown_tool", "the model should have called read_order (cancel_order is not offered)",
     "/responses/0/body/output/0/name"),
    ("duplicate_ids", "the model should have given the second read_order call its own id (call-2, not call-1)",
     "/responses/0/body/output/1/call_id"),
    ("no_receipt", "the model should have called read_order with order_id o-1 before answering",
     "/responses/0/body/output"),
    ("turn_budget", "max_turns 3 leaves room for the answer (2 ran out)", "/inputs/budgets/max_turns"),
    ("single-flatten_roles", "the model needs its whole transcript (the flatten_roles ablation: flatten every role "
     "and item into one user text)", "/inputs/ablation"),
])
def test_the_top_fix_of_each_scenario_in_a_bug_report_s_words(run_id, words, path):
    best = explain(run_of("ablations.jsonl" if "-" in run_id else "scenarios.jsonl", run_id)).best
    assert best is not None and best.outcome.after["ready"]
    assert (best.candidate.words, [e.path for e in best.edits]) == (words, [path])


def test_cross_tenant_the_guard_held_and_only_what_ifs_follow():
    result = explain(run_of("scenarios.jsonl", "cross_tenant"))
    assert result.responsibility == "guard" and result.guard_held and not result.fixes and result.best is None
    assert result.headline == ("the authorization check held: the caller asked for o-2, which belongs to shop-b; "
                               "nothing in the model or the harness needs fixing")
    by_side = {p.candidate.side: p for p in result.what_ifs}
    assert set(by_side) == {"caller", "data"}  # answering about o-1 instead does not answer the question
    caller = by_side["caller"]
    assert caller.candidate.words == "the caller would need tenant shop-b and user u-2"
    assert [(e.path, e.value) for e in caller.edits] == [("/inputs/principal", {"tenant": "shop-b", "user": "u-2"})]
    assert all(p.why_not.startswith("would defeat the authorization check") for p in result.what_ifs)
    assert all(p.at_first_failure for p in result.what_ifs)


def test_a_retry_budget_rides_out_the_5xx_burst():
    best = explain(run_of("transient-3.jsonl", "single-transient-3")).best
    assert best.candidate.words == "a retry budget of 3 rides out the 5xx burst"
    assert [(e.path, e.value) for e in best.edits] == [("/inputs/budgets/max_retries", 3)]


def test_ranking_every_smallest_fix_grouped_by_side_then_larger_ones():
    from tracetui.explain.candidate import SIDES

    ablated = explain(run_of("ablations.jsonl", "single-sliding_window"))
    sizes = [(len(p.edits), p.candidate.cost) for p in ablated.fixes]
    assert sizes == sorted(sizes) and len(set(sizes)) < len(sizes)  # several fixes of the smallest size, first
    smallest = [p for p in ablated.fixes if (len(p.edits), p.candidate.cost) == sizes[0]]
    assert {p.candidate.side for p in smallest} == {"model", "context"}  # two sides repair it, each listed
    order = [list(SIDES).index(p.candidate.side) for p in smallest]
    assert order == sorted(order)  # grouped by side
    assert [p.kind for p in ablated.fixes + ablated.what_ifs] == sorted(
        (p.kind for p in ablated.fixes + ablated.what_ifs), key=[FIX, WHAT_IF].index)


def test_nothing_unverified_is_ever_presented(monkeypatch):
    """A candidate that changes nothing, and one the loop refuses, are tried and dropped."""
    run = run_of("scenarios.jsonl", "cross_tenant")

    def noise(ev, event):
        yield one(["inputs", "user_input"], ev.user_input, "a no-op", "context", "authorization")
        yield one(["inputs", "budgets", "max_turns"], 10 ** 9, "an edit the loop refuses", "budget", "authorization")

    monkeypatch.setitem(generate.BY_CODE, "permission_denied", (noise, *generate.BY_CODE["permission_denied"]))
    result = explain(run, pairs=False)
    words = [p.candidate.words for p in result.fixes + result.what_ifs + result.partials]
    assert "a no-op" not in words and "an edit the loop refuses" not in words
    assert result.refused >= 1 and result.tried == len(words) + 2


def test_when_no_single_edit_fixes_a_run_pairs_and_partials_are_said_so():
    result = explain(run_of("scenarios.jsonl", "refusal"))
    assert not result.single_edit_fix and result.fixes
    pair = result.best
    assert len(pair.edits) == 2 and pair.outcome.after["ready"]
    assert pair.candidate.words == ("the model should have called read_order with order_id o-1, "
                                    "then answered from the read_order receipt (o-1 delivered)")
    assert [p.kind for p in result.partials] == [PARTIAL]
    out = CliRunner().invoke(main, ["explain", str(SAMPLES / "scenarios.jsonl"), "--run", "refusal"])
    assert out.exit_code == 0
    assert "no single edit makes it answer-ready; 1 pair of edits does (" in out.output


def test_a_recording_that_ends_too_early_gets_its_next_response_supplied():
    result = explain(run_of("recorded-no_receipt.jsonl", "recorded-no_receipt"))
    assert [e.path for e in result.best.edits] == ["/responses/0/body/output", "/responses/1"]
    assert "the recording ends too early: the next response should answer from the read_order receipt" in \
        result.best.candidate.words
    one_edit = explain(run_of("recorded-extra_field_then_answer.jsonl", "recorded-extra_field_then_answer")).best
    assert len(one_edit.edits) == 1  # its recording already holds the answer that follows the repaired call


def test_only_partials_when_nothing_fixes_and_the_text_says_so(monkeypatch):
    from tracetui.explain import search

    monkeypatch.setattr(search, "PAIR_TRIES", 0)  # no pairs: only the refusal's partial is left
    out = CliRunner().invoke(main, ["explain", str(SAMPLES / "scenarios.jsonl"), "--run", "refusal"])
    assert out.exit_code == 1
    assert "these get it further (partial)" in out.output and " 1. partial: the model should have called" in out.output


def test_a_search_yields_proofs_as_they_are_found():
    search = Search(run_of("scenarios.jsonl", "unknown_tool"))
    first = next(search.proofs())
    assert first.kind == FIX and search.tried == 1


@pytest.mark.parametrize("name,run_id,reason", [
    ("scenarios.jsonl", "single", "already answer-ready"),
])
def test_a_ready_run_has_nothing_to_explain(name, run_id, reason):
    result = explain(run_of(name, run_id))
    assert reason in result.reason and not result.fixes
    out = CliRunner().invoke(main, ["explain", str(SAMPLES / name), "--run", run_id])
    assert out.exit_code == 0 and reason in out.output


def test_a_run_without_inputs_cannot_be_explained(tmp_path):
    path = tmp_path / "foreign.jsonl"
    path.write_bytes(b'{"rec":"event","run_id":"f","seq":1,"lane":"answer","kind":"answer.verify","outcome":"failed",'
                     b'"code":"unverified_answer","summary":"no receipt"}\n')
    out = CliRunner().invoke(main, ["explain", str(path), "--run", "f"])
    assert out.exit_code == 1 and "no recorded inputs" in out.output and "cannot be re-run" in out.output
