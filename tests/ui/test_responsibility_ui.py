"""Whose failure a run was, in the explorer: the banner, the run list's filter, the fixes panel's
kinds and sides, and `e` offering the cause (never a safeguard) on a denial."""
from __future__ import annotations

import dataclasses

from textual.widgets import OptionList

from tracetui.explain import Search
from tracetui.replay.cause import REQUEST, is_safeguard
from tracetui.trace.responsibility import GUARD, RESPONSIBILITIES, WORDS, responsibility
from tracetui.ui.app import TraceApp
from tracetui.ui.app import open_paths as open_source
from tracetui.ui.commands import palette_commands
from tracetui.ui.model import RunQuery, run_responsibility
from tracetui.ui.screens import fixes as fixes_screen
from tracetui.ui.screens.edit import EditScreen
from tracetui.ui.screens.fixes import FIX, KIND_WORDS, PARTIAL, WHAT_IF, FixesScreen, proof_tag
from tracetui.ui.widgets.run_list import RunList
from tracetui.ui.widgets.verdict import VerdictBanner

from test_replay_ui import open_run
from ui_helpers import screen_text, wait_until


def test_the_run_query_filters_by_whose_failure_it_was(demo):
    runs = demo.runs()
    by_class = {whose: [runs[i].run_id for i in RunQuery(responsibility=whose).apply(runs)]
                for whose in RESPONSIBILITIES}
    assert "cross_tenant" in by_class[GUARD]
    assert all("cross_tenant" not in ids for whose, ids in by_class.items() if whose != GUARD)
    failed = [e for e in runs if e.failed]
    assert sum(map(len, by_class.values())) == sum(run_responsibility(e) is not None for e in failed) > 0
    for whose, ids in by_class.items():  # each class exactly the failed runs the core puts in it
        assert ids == [e.run_id for e in failed if responsibility(e.first_failure) == whose]
    assert RunQuery(responsibility=GUARD).describe() == "whose: guard"
    q = RunQuery()
    for whose in RESPONSIBILITIES:
        q = q.cycled("responsibility")
        assert q.responsibility == whose
    assert q.cycled("responsibility").responsibility is None


async def test_the_banner_says_whose_failure_it_was(scenarios_file):
    app = TraceApp(open_source([scenarios_file]))
    async with app.run_test(size=(160, 45)) as pilot:
        await open_run(pilot, "cross_tenant")
        banner = app.screen.query_one(VerdictBanner)
        run = app.screen.source.load(app.screen.query_one(RunList).current)
        assert banner.responsibility == responsibility(run.verdict()["first_failure"], run.inputs) == GUARD
        assert f"guard — {WORDS[GUARD]}" in screen_text(app)
        await open_run(pilot, "single")  # a ready run has no one to blame
        assert app.screen.query_one(VerdictBanner).responsibility is None
        assert f"— {WORDS[GUARD]}" not in screen_text(app)


async def test_b_filters_the_run_list_by_whose_failure_and_the_palette_and_help_know_it(scenarios_file):
    app = TraceApp(open_source([scenarios_file]))
    async with app.run_test(size=(160, 45)) as pilot:
        await open_run(pilot, "cross_tenant")
        main = app.screen
        runs = main.query_one(RunList)
        everything = len(runs.view)
        for whose in RESPONSIBILITIES:
            await pilot.press("b")
            await pilot.pause()
            assert main.query_state.responsibility == whose
            shown = [runs.entries[i] for i in runs.view]
            assert all(run_responsibility(e) == whose for e in shown)
            assert len(shown) == sum(run_responsibility(e) == whose for e in runs.entries)
            assert ("cross_tenant" in [e.run_id for e in shown]) == (whose == GUARD)
            if whose == GUARD:
                assert f"{len(shown)}/{everything} · whose: guard" in screen_text(app)
        await pilot.press("b")
        await pilot.pause()
        assert main.query_state.responsibility is None and len(runs.view) == everything
        commands = {name: callback for name, _, callback in palette_commands(main, app)}
        assert "responsibility filter" in commands
        await commands["whose failure: environment"]()
        await pilot.pause()
        assert main.query_state.responsibility == "environment"
        assert {e.run_id for e in (runs.entries[i] for i in runs.view)} >= {"tool_failure", "stream_cut"}
        await pilot.press("question_mark")
        await pilot.pause()
        assert "filter failed runs by whose failure" in " ".join(screen_text(app).split())


async def test_e_on_a_denial_offers_the_cause_never_who_the_caller_is(scenarios_file):
    app = TraceApp(open_source([scenarios_file]))
    async with app.run_test(size=(160, 45)) as pilot:
        await open_run(pilot, "cross_tenant")  # on its first failure: the denial
        await pilot.press("e")
        await pilot.pause()
        assert isinstance(app.screen, EditScreen)
        path = app.screen.query_one("#edit-path").value
        assert not path.startswith("/inputs/principal") and not is_safeguard(path)
        assert path == REQUEST  # the caller named o-2, which is not theirs: the check held
        assert app.screen.query_one("#edit-value").value == "What is the status of order o-2?"


def row_texts(panel: FixesScreen) -> list[tuple[str, bool]]:
    """Each option of the fixes list as (plain text, is a heading)."""
    options = panel.query_one(OptionList)
    return [(str(options.get_option_at_index(i).prompt), options.get_option_at_index(i).disabled)
            for i in range(options.option_count)]


async def test_fixes_rows_carry_kind_and_side_and_what_ifs_sit_below_every_fix(scenarios_file, monkeypatch):
    """Proofs arrive in any order (a what-if may be proven before a fix): the panel still lists every fix
    first, then a divider, then the what-ifs (each with why it is not a fix), then the partials."""
    from tracetui.trace.reader import read_trace

    run = read_trace(scenarios_file).runs["cross_tenant"]
    real = list(Search(run).proofs())
    assert real, "cross_tenant has proofs to reshape"

    def as_kind(proof, kind, why_not=None):
        copied = dataclasses.replace(proof, kind=kind)
        copied.why_not = why_not
        return copied

    what_if = as_kind(real[0], WHAT_IF, "it changes who the caller is: the check was right to refuse")
    fix, partial = as_kind(real[-1], FIX), as_kind(real[0], PARTIAL)

    class OutOfOrder:
        def __init__(self, run, **options):
            self.tried, self.reason, self.headline = 0, None, "the check held: nothing needs fixing"
            self.guard_held = False  # proofs out of order, not a guard: the CLI's partial rule alone decides
            self.command, self.reruns, self.seconds_per_run = None, 0, None  # a built-in run: no command re-run

        def proofs(self):
            for proof in (what_if, partial, fix):
                self.tried += 1
                yield proof

    monkeypatch.setattr(fixes_screen, "Search", OutOfOrder)
    app = TraceApp(open_source([scenarios_file]))
    async with app.run_test(size=(160, 45)) as pilot:
        await open_run(pilot, "cross_tenant")
        await pilot.press("E")
        await wait_until(pilot, lambda: isinstance(app.screen, FixesScreen) and app.screen.done)
        panel = app.screen
        # the partial came first and is dropped once the fix is proven, as the CLI lists it
        assert [p.kind for p in panel.shown] == [FIX, WHAT_IF] and PARTIAL in [p.kind for p in panel.proofs]
        rows = row_texts(panel)
        headings = [i for i, (_, heading) in enumerate(rows) if heading]
        kinds = [text.split(" · ")[0][2:] for text, heading in rows if not heading]
        assert kinds == ["fix", "what-if"]
        assert rows[0][0].startswith(f"✓ {proof_tag(fix)}")
        assert rows[headings[0]][0].startswith("── what-ifs")
        assert headings[0] == 1 and rows[2][0].startswith(f"? {proof_tag(what_if)}")
        assert "why not: it changes who the caller is: the check was right to refuse" in rows[2][0]
        text = screen_text(app)
        assert "the check held: nothing needs fixing" in text
        assert "1 proven · 1 what-if · 3 tried" in text
        await pilot.press("down")  # the highlight skips the divider: from the fix to the what-if
        await pilot.pause()
        assert panel.highlighted is panel.shown[1]


async def test_the_real_fixes_panel_tags_every_row_with_its_kind_and_side(scenarios_file):
    app = TraceApp(open_source([scenarios_file]))
    async with app.run_test(size=(160, 45)) as pilot:
        await open_run(pilot, "cross_tenant")
        await pilot.press("E")
        await wait_until(pilot, lambda: isinstance(app.screen, FixesScreen) and app.screen.done, 100)
        panel = app.screen
        rows = [text for text, heading in row_texts(panel) if not heading]
        assert len(rows) == len(panel.shown) > 0
        for text, proof in zip(rows, panel.shown):
            assert text[2:].startswith(proof_tag(proof)), text
            assert proof_tag(proof).split(" · ")[0] == KIND_WORDS[proof.kind]
        title = str(panel.query_one("#fixes-box").border_title)
        assert title.endswith(f"· guard: {WORDS[GUARD]}")
