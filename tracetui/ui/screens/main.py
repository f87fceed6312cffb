"""The main screen: run list and lane summary on the left, the selected run on the right.

It only wires widgets together and asks the source for data; verdicts come from
the core's RunEntry rows.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Any, Sequence

from rich.text import Text
from textual import events, on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import Footer, Input, Label, ProgressBar

from tracetui.trace.index.changes import TraceChanged
from tracetui.trace.safe_text import printable
from tracetui.trace.source import RunEntry, TraceSource
from tracetui.ui.model import RunQuery, call_ids_of, failed_count, lane_counts
from tracetui.ui.run_facts import calls_words, rerun_refusal
from tracetui.ui.screens.explain_actions import EXPLAIN_BINDINGS, ExplainActions
from tracetui.ui.screens.live import LIVE_BINDINGS, LiveSource, ScanProgress, no_runs_report  # noqa: F401 - re-exported
from tracetui.ui.screens.replay_actions import REPLAY_BINDINGS, ReplayActions
from tracetui.ui.screens.share_actions import SHARE_BINDINGS, ShareActions
from tracetui.ui.screens.copy_actions import COPY_BINDINGS, CopyActions
from tracetui.ui.screens.group_actions import GROUP_BINDINGS, GroupActions
from tracetui.ui.screens.run_compare_actions import RUN_COMPARE_BINDINGS, RunCompareActions
from tracetui.ui.screens.search_actions import SEARCH_BINDINGS, SearchActions
from tracetui.ui.widgets.detail import DetailPane
from tracetui.ui.widgets.filter_box import FilterBox
from tracetui.ui.widgets.header import HeaderBar
from tracetui.ui.widgets.lane_summary import LaneSummary
from tracetui.ui.widgets.run_list import RunList
from tracetui.ui.widgets.swimlanes import SwimLanes
from tracetui.ui.widgets.verdict import VerdictBanner

#: Shown in the footer (short labels: it must fit 80 columns whole), the help screen (the tooltip,
#: when there is one) and the command palette; ids allow keymaps.
MAIN_BINDINGS = [
    Binding("down", "run(1)", "runs", key_display="↑↓", tooltip="next run", id="run_next"),
    Binding("up", "run(-1)", "previous run", show=False, key_display="↑", id="run_prev"),
    Binding("right", "step(1)", "next step", show=False, key_display="→", id="step_next"),
    Binding("left", "step(-1)", "previous step", show=False, key_display="←", id="step_prev"),
    Binding("f", "first_failure", "first failure", show=False, tooltip="this run's first failure", id="first_failure"),
    Binding("n", "next_failure(1)", "next fail", key_display="n",
            tooltip="next failed run, at its first failure; while a search text is set: the next event "
                    "holding it",
            id="next_failure"),
    Binding("N", "next_failure(-1)", "previous failure", show=False,
            tooltip="previous failed run; while a search text is set: the previous event holding it", id="prev_failure"),
    *EXPLAIN_BINDINGS[:1],
    *REPLAY_BINDINGS,
    *SHARE_BINDINGS,
    *EXPLAIN_BINDINGS[1:],
    Binding("c", "partner(1)", "next call partner", show=False,
            tooltip="next event of the same tool call (its call partner)", id="partner_next"),
    Binding("C", "partner(-1)", "previous call partner", show=False,
            tooltip="previous event of the same tool call (its call partner)", id="partner_prev"),
    Binding("slash", "search", "search", key_display="/",
            tooltip="filter runs by text, in their events too (enter or ↓ back to the list; n N: matches)",
            id="search"),
    Binding("t", "cycle('status')", "status filter", show=False, id="status_filter"),
    Binding("l", "cycle('lane')", "lane filter", show=False, id="lane_filter"),
    Binding("b", "cycle('responsibility')", "responsibility filter", show=False,
            tooltip="filter failed runs by whose failure: model, harness, environment, or a guard that held",
            id="responsibility_filter"),
    Binding("s", "cycle('sort')", "sort", show=False, id="sort"),
    Binding("x", "clear_filters", "clear filters", show=False, id="clear_filters"),
    Binding("escape", "clear_search", "clear search", show=False, key_display="esc", id="clear_search"),
    *LIVE_BINDINGS,
    Binding("v", "whole_value", "whole event", show=False, tooltip="the selected event whole, however large",
            id="whole_value"),
    *SEARCH_BINDINGS,
    *GROUP_BINDINGS,
    *RUN_COMPARE_BINDINGS,
    *COPY_BINDINGS,
]
#: the actions that re-run the shown run: offered only when it can be (an imported run cannot)
RERUN_ACTIONS = frozenset({"edit", "fixes", "inputs"})
#: their keys: pressed on a run that cannot be re-run, the screen says why (Textual runs no greyed action)
RERUN_KEYS = frozenset(b.key for b in MAIN_BINDINGS if b.action in RERUN_ACTIONS)
#: Keys the filter box hands to the screen when, as text, they would leave no run to show.
#: Quitting, reloading and following are not among them: a typo must never close the app or drop
#: what it shows.
FILTER_HANDS_OVER = frozenset(b.key for b in MAIN_BINDINGS
                              if len(b.key) == 1 and b.id not in ("reload", "follow")) | {"question_mark"}


class MainScreen(LiveSource, ReplayActions, ShareActions, ExplainActions, SearchActions, GroupActions,
                 RunCompareActions, CopyActions, Screen):
    BINDINGS = MAIN_BINDINGS
    HELP_TITLE = "runs and steps"
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (110, "-normal"), (180, "-wide")]

    def __init__(self, source: TraceSource) -> None:
        super().__init__()
        self.source = source
        self.query_state = RunQuery()
        self.entries: Sequence[RunEntry] = ()
        self.counts: dict[str, int] = {}
        self._counted = 0
        self.failed = 0
        self.events: list[dict[str, Any]] = []
        self.shown: RunEntry | None = None  # the run the verdict, lanes and detail show
        self.scanning = False
        self._filter_timer: Timer | None = None
        self.agent_commands: dict[str, list[str]] = {}  # file -> the command its recorded agent runs with (E)
        self.rerunnable = False  # whether the shown run can be re-run (E, e, i): an imported one cannot
        self.rerun_refusal: str | None = None  # why not, in words (said when one of those keys is pressed)

    def compose(self) -> ComposeResult:
        yield HeaderBar(self.source.label, id="header")
        yield ProgressBar(id="scan", show_eta=False)
        with Horizontal(id="body"):
            with Vertical(id="runs-pane"):
                yield FilterBox(placeholder="/ filter runs…", id="filter")
                yield Label(id="query")
                yield RunList(id="runs", files=getattr(self.source, "paths", None))
                yield LaneSummary(id="lanes")
            with Vertical(id="run-pane"):
                yield VerdictBanner(id="verdict")
                yield SwimLanes(id="swimlanes")
                yield DetailPane(id="detail")
        yield Footer(compact=True)

    def on_mount(self) -> None:
        self.query_one("#runs-pane").border_title = "Runs"
        self.query_one("#lanes").border_title = "failures by lane"
        self.query_one("#detail").border_title = "event"
        self.query_one(RunList).focus()
        self.start_scan()
        if not self.scanning:
            self.query_one("#scan").display = False
        self.refresh_runs()

    # -- data -----------------------------------------------------------------------------
    def reset_runs(self) -> None:
        """Forget the runs shown (a reload): counts start over, nothing of the old file stays on screen."""
        self.entries, self.counts, self._counted, self.failed = (), {}, 0, 0
        self.shown = None
        self.query_one(RunList).set_view((), range(0))
        self.show_run(None)

    def refresh_runs(self, scanning: bool = False) -> None:
        """Re-read the source's runs (they grow while scanning) and re-apply the query.

        ``scanning``: a progress report of the index. The run list, once a screenful, is then
        left as it is (counts and the header still change): redrawing it re-lays out the whole
        screen, and the index waits for the interpreter lock meanwhile. The report that ends
        the scan redraws everything."""
        entries = self.source.runs()
        if entries is not self.entries or len(entries) < self._counted:
            self.counts, self._counted, self.failed = {}, 0, 0
        self.entries = entries
        # the scan thread may append while we count: count up to a length taken once, so a run
        # appended meanwhile is counted on the next refresh, never skipped
        end = len(entries)
        new = entries[self._counted:end]
        self.counts = lane_counts(new, self.counts or None)
        self.failed += failed_count(new)
        self._counted = end
        self.apply_query(scanning)

    def apply_query(self, scanning: bool = False) -> None:
        runs = self.query_one(RunList)
        if not self.entries:
            runs.empty_message = "indexing…" if self.scanning else self._no_runs_message()
        else:
            runs.empty_message = "no run matches — x clears filters"
        if (scanning and self.query_state.is_identity and runs.entries is self.entries
                and len(runs.view) >= runs.size.height > 0):
            view = range(len(self.entries))  # the list already shows a screenful: drawn again at the end
        else:
            view = self.query_state.apply(self.entries)
            runs.set_view(self.entries, view)
        if runs.current is not self.shown:  # the view changed under the cursor: show what it is on
            self.show_run(runs.current)
        problems = getattr(self.source, "problem_count", None)
        problems = len(self.source.problems()) if problems is None else problems
        self.query_one(HeaderBar).update_counts(len(self.entries), self.failed, problems, self.progress_text())
        self.query_one(LaneSummary).update_counts(self.counts, self.query_state.lane)
        described = self.query_state.describe()
        shown = f"{len(view):,}/{len(self.entries):,}" if described else f"{len(self.entries):,}"
        label = Text(f"{shown} · ", style="dim")
        label.append(described or "t status · l lane · b whose · s sort", "bold" if described else "dim")
        self.query_one("#query", Label).update(label, layout=False)  # one line, its size fixed by the CSS

    def _no_runs_message(self) -> str:
        problems = self.source.problems()
        detail = f"; {len(problems)} bad line(s) — p to view" if problems else ""
        return f"no runs found in {printable(self.source.label)}{detail}"

    # -- selection ------------------------------------------------------------------------
    def on_run_list_highlighted(self, message: RunList.Highlighted) -> None:
        """Show the run under the cursor *now*: a message may be older than the last move or filter."""
        current = self.query_one(RunList).current
        if current is not self.shown:
            self.show_run(current)

    def show_run(self, entry: RunEntry | None) -> None:
        """Load ``entry`` and show its verdict, lanes and title (nothing when None)."""
        error = None
        inputs = None
        loaded = True
        self.rerunnable, self.rerun_refusal = False, None
        self.shown = entry
        self.events = []
        if entry is None:
            self.query_one("#run-pane").border_title = ""  # no run: the last one's name must not stay
        else:
            try:
                run = self.source.load(entry)
                self.events, inputs = list(run.events), run.inputs
                self.rerun_refusal = rerun_refusal(run)
                self.rerunnable = self.rerun_refusal is None
            except TraceChanged as exc:  # the file changed on disk: say so, offer to reload
                error, loaded = f"could not load this run: {exc}; r reloads the file", False
                self.rerun_refusal = "this run could not be loaded, so it cannot be re-run; r reloads the file"
                if not self.change_notice:
                    self.call_later(self.file_changed, str(exc))
            except Exception as exc:  # noqa: BLE001 - a broken run must not close the app
                error, loaded = f"could not load this run: {exc}", False
                self.rerun_refusal = "this run could not be loaded, so it cannot be re-run"
            if self.source.runs() is not self.entries:  # loading found bad lines: the verdict changed
                self.call_later(self.refresh_runs)
            pane = self.query_one("#run-pane")
            title = Text(f"run {printable(entry.run_id)}")
            if error is None and not self.rerunnable:  # first: at 80 columns the title's end is cut
                title.append(" · imported: no re-run")
            if entry.scenario:
                title.append(f" · scenario {printable(entry.scenario)}")
            if entry.ablation and entry.ablation != "complete":
                title.append(f" · {printable(entry.ablation)}")
            title.append(f" · {calls_words(entry, self.events)}")
            pane.border_title = title
        if error is None and self.change_notice and entry is not None:
            error = f"{self.change_notice}: this may be stale; r reloads"
        self.query_one(VerdictBanner).show(entry, error, inputs, loaded=loaded)
        self.refresh_bindings()  # E, e and i are offered only for a run that can be re-run (check_action)
        self.query_one(SwimLanes).show_run(entry, self.events)

    def on_swim_lanes_event_selected(self, message: SwimLanes.EventSelected) -> None:
        compact = self.has_class("-narrow")
        self.query_one(DetailPane).show(message.event, self.events, compact)
        self.reveal_match()  # the search text marked in it (and scrolled to, after n/N)

    @on(LaneSummary.LaneChosen)
    def lane_chosen(self, message: LaneSummary.LaneChosen) -> None:
        self._set_query(lane=message.lane)

    @on(Input.Changed, "#filter")
    def filter_changed(self, message: Input.Changed) -> None:
        """Filter as you type; on huge files wait for a pause in typing (each pass is ~0.1 s per 200k runs).
        The runs' events are searched for the text too, in a worker (:mod:`.search_actions`)."""
        self.search_text_changed(message.value)
        if self._filter_timer is not None:
            self._filter_timer.stop()
            self._filter_timer = None
        if len(self.entries) < 20_000:
            self._set_query(text=message.value)
        else:
            self._filter_timer = self.set_timer(0.2, lambda: self._set_query(text=message.value))

    @on(Input.Submitted, "#filter")
    def filter_submitted(self, message: Input.Submitted) -> None:
        if self._filter_timer is not None:
            self._filter_timer.stop()
        if self.query_state.text != message.value:
            self._set_query(text=message.value)
        self.focus_list()  # (the groups, while they are shown in place of the runs)

    def _set_query(self, **changes: Any) -> None:
        searching = self.searching_text
        self.query_state = replace(self.query_state, **changes)
        self.apply_query()
        if self.searching_text != searching:  # the footer's n says what it does now
            self.refresh_bindings()

    # -- actions --------------------------------------------------------------------------
    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """E, e and i are greyed in the footer (and do nothing) on a run that cannot be re-run; n/N are the
        search's (next match) while a search text is set, else the next failed run."""
        if action in RERUN_ACTIONS and not self.rerunnable:
            return None
        if action in ("next_failure", "next_match"):  # one n/N at a time: the search's while a text is set
            return (action == "next_match") == self.searching_text
        return super().check_action(action, parameters)

    def on_key(self, event: events.Key) -> None:
        """E, e or i on a run that cannot be re-run: Textual runs no greyed action, so say here why not."""
        if self.shown is not None and self.rerun_refusal and event.key in RERUN_KEYS:
            event.stop()
            self.notify(self.rerun_refusal, timeout=4, markup=False)

    def action_run(self, delta: int) -> None:
        self.query_one(RunList).action_cursor(delta)

    def action_step(self, delta: int) -> None:
        lanes = self.query_one(SwimLanes)
        lanes.move_to(lanes.cursor + delta)

    def action_first_failure(self) -> None:
        lanes = self.query_one(SwimLanes)
        if lanes.first_failure_seq is None:
            self.notify("this run has no failure", timeout=2)
        else:
            lanes.select_seq(lanes.first_failure_seq)

    def action_next_failure(self, direction: int) -> None:
        """Select the next (or previous) failed run in list order and show its first failure (while a
        search text is set: the next event holding it, :meth:`action_next_match`)."""
        if self.searching_text:
            self.action_next_match(direction)
            return
        runs = self.query_one(RunList)
        view, n = runs.view, len(runs.view)
        for step in range(1, n + 1):
            pos = (runs.cursor + direction * step) % n
            entry = self.entries[view[pos]]
            if entry.failed:
                if pos == runs.cursor:
                    self.action_first_failure()
                else:
                    runs.action_cursor(pos - runs.cursor)
                return
        self.notify("no failed run in this list", timeout=2)

    def action_partner(self, direction: int) -> None:
        """Jump to the next event about the same tool call (validation → authorization → receipt)."""
        lanes = self.query_one(SwimLanes)
        current = lanes.current
        ids = set(call_ids_of(current)) if current else set()
        if not ids:
            self.notify("this event has no tool call id", timeout=2)
            return
        group = [i for i, e in enumerate(lanes.events) if ids & set(call_ids_of(e))]
        here = group.index(lanes.cursor) if lanes.cursor in group else 0
        lanes.move_to(group[(here + direction) % len(group)])

    def action_whole_value(self) -> None:
        """The selected event whole (the detail pane shows a bounded preview of a huge one)."""
        event = self.query_one(DetailPane).event
        if event is None:
            self.notify("no event selected", timeout=2)
            return
        from tracetui.ui.screens.value import ValueScreen

        self.app.push_screen(ValueScreen(f"event {event.get('seq')} · {event.get('lane')}", event))

    def action_jump_to_step(self, seq: int) -> None:
        self.query_one(SwimLanes).select_seq(seq)

    def action_search(self) -> None:
        # focus now, not after a refresh (Widget.focus defers): keys typed right after `/` belong to the box
        self.set_focus(self.query_one("#filter", Input))

    def filter_hands_over(self, text: str, key: str) -> bool:
        """Whether a key typed in the filter box is meant for the screen: one of its keys that, as
        text, would turn a search that finds runs into one that finds none (FilterBox then hands it
        over). A search that already finds nothing is being typed: its keys stay text."""
        runs = self.query_one(RunList)
        if key not in FILTER_HANDS_OVER or not runs.view:
            return False
        query = replace(self.query_state, text=text)  # (runs found in events: by what the search found so far)
        return not any(query.matches(self.entries[i]) for i in runs.view) and not self.events_may_hold(text)

    def leave_filter(self) -> None:
        self.focus_list()

    def action_clear_search(self) -> None:
        box = self.query_one("#filter", Input)
        if box.value:
            box.value = ""
        self.focus_list()

    def action_cycle(self, field: str) -> None:
        self.query_state = self.query_state.cycled(field)
        self.apply_query()

    def action_set_query(self, field: str, value: Any) -> None:
        self._set_query(**{field: value})

    def action_clear_filters(self) -> None:
        self.query_one("#filter", Input).value = ""
        self.query_state = RunQuery()
        self.apply_query()
        self.refresh_bindings()
