"""The original run above its edited re-run: both sets of lanes on one step axis, and what changed.

The re-run itself happens in the core (``tracetui.replay``) on a worker thread;
this screen only shows the outcome, keeps editing the new run on request, and
writes it to a new file. The original trace is never modified. The two runs share
one step cursor (←→), so every step of both stays reachable at any width; the
screen scrolls (↑↓, page keys, home, end) when it is taller than the terminal. Quitting with a
re-run that was never written asks first.
"""
from __future__ import annotations

from typing import Any, Callable

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import Screen
from textual.widgets import Static

from tracetui.explain.candidate import brief
from tracetui.replay.pointer import EditError
from tracetui.replay.replay import EventChange, ReplayOutcome, replay_further
from tracetui.replay.save import save_records
from tracetui.trace.format import OUTCOME_ICONS
from tracetui.trace.safe_text import one_line, printable
from tracetui.trace.source import entry_from_run
from tracetui.ui.screens.confirm import ConfirmQuit
from tracetui.ui.screens.edit import EditScreen
from tracetui.ui.widgets.swimlanes import SwimLanes
from tracetui.ui.widgets.verdict import VerdictBanner

COLOURS = {"ok": "green", "recovered": "#ffaf00", "failed": "red"}


def verdict_words(verdict: dict[str, Any]) -> str:
    """'authorization failed at step 4' or 'answer ready' (trace text made safe to print)."""
    ff = verdict.get("first_failure")
    if verdict.get("ready"):
        return "answer ready"
    if ff:
        return printable(f"{ff.get('lane')} failed at step {ff.get('seq')} ({ff.get('code')})")
    return printable(f"{verdict.get('outcome', 'failed')}: {verdict.get('status', '?')}")


def edits_words(edits: list[tuple[str, Any]], limit: int = 60) -> str:
    """``path = value`` for each edit, in the order they were applied."""
    return "; ".join(f"{path} = {brief(value, limit)}" for path, value in edits) or "no edit"


def change_line(change: EventChange) -> Text:
    def side(event: dict[str, Any] | None) -> Text:
        if event is None:
            return Text("(none)", style="dim")
        outcome = event.get("outcome")
        icon, colour = OUTCOME_ICONS.get(outcome, "?"), COLOURS.get(outcome, "white")
        return Text.assemble((f"{icon} ", colour), (f"{event.get('lane')}: ", "bold"),
                             one_line(str(event.get("summary", "")), 52))
    marker = Text("* " if change.verdict_changed else "  ", style="bold yellow")
    before = side(change.before)
    before.truncate(64, overflow="ellipsis", pad=True)
    return Text.assemble(marker, (f"{change.seq:>3}  ", "dim"), before, (" → ", "dim"), side(change.after))


def replay_or_notify(screen: Screen, replay_fn: Callable[..., ReplayOutcome], *args: Any) -> ReplayOutcome | None:
    """Run a re-run on a worker thread; an edit the loop refuses becomes a notification, not a crash."""
    try:
        return replay_fn(*args)
    except EditError as exc:
        screen.app.call_from_thread(screen.notify, printable(str(exc)), severity="error", markup=False)
        return None


def key_hints(bindings: list[Binding]) -> Text:
    """One line of keys. A Footer builds a widget per key: about a third of this screen's cost to draw."""
    line = Text()
    for b in bindings:
        if b.show:
            line.append(f" {b.key_display or b.key} ", "bold #ffaf00")
            line.append(f"{b.description} ")
    return line


class CompareScreen(Screen[None]):
    """Original above, edited below, on one step axis; the differing events below both."""

    CSS_PATH = "../styles/replay.tcss"

    BINDINGS = [
        Binding("escape", "back", "back", key_display="esc", id="compare.back"),
        Binding("right", "step(1)", "steps", key_display="←→", id="compare.step_next"),
        Binding("left", "step(-1)", "previous step", show=False, id="compare.step_prev"),
        Binding("e", "edit_again", "edit again", id="compare.edit"),
        Binding("w", "write", "write", id="compare.write"),
        Binding("y", "copy", "copy", tooltip="copy the replay command with these edits, or the run id",
                id="compare.copy"),
        Binding("q", "quit", "quit", id="compare.quit"),
    ]

    def __init__(self, outcome: ReplayOutcome, original_path: str | None, command: list[str] | None = None) -> None:
        super().__init__()
        self.outcome = outcome
        self.original_path = original_path
        self.command = command  # the user's command a recorded agent's run is re-run with (None: a built-in run)
        self.written: str | None = None

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="compare-scroll"):
            with Vertical(id="compare-original", classes="compare-side"):
                yield VerdictBanner(id="verdict-original")
                yield SwimLanes(id="lanes-original")
            with Vertical(id="compare-edited", classes="compare-side"):
                yield Static(id="compare-edits")
                yield VerdictBanner(id="verdict-edited")
                yield SwimLanes(id="lanes-edited")
            yield Static(id="compare-summary")
            yield Static(id="compare-list")
        yield Static(key_hints(self.BINDINGS), id="compare-keys")

    def on_mount(self) -> None:
        self.show_outcome()
        self.query_one("#compare-scroll").focus()

    def show_outcome(self) -> None:
        o = self.outcome
        before, after = entry_from_run(o.original), entry_from_run(o.replayed)
        self.query_one("#compare-original").border_title = "original"
        edits = edits_words(o.edits)
        paths = ", ".join(printable(path) for path, _ in o.edits) or "no edit"
        self.query_one("#compare-edited").border_title = Text(one_line(f"edited: {paths}", 100))  # never markup
        self.query_one("#compare-edits", Static).update(
            Text.assemble(("edit  ", "dim"), (printable(edits), "bold")))
        self.query_one("#verdict-original", VerdictBanner).show(before)
        self.query_one("#verdict-edited", VerdictBanner).show(after)
        original = self.query_one("#lanes-original", SwimLanes)
        original.show_run(before, o.original.events)
        edited = self.query_one("#lanes-edited", SwimLanes)
        edited.show_run(after, o.replayed.events)
        edited.move_to(original.cursor)  # one step cursor for both: step n above step n
        summary = Text.assemble(
            (verdict_words(o.before), "red" if not o.before["ready"] else "green"), "  →  ",
            (verdict_words(o.after), "green" if o.after["ready"] else "red"),
            (f"   ·  {len(o.changes)} event(s) differ, {sum(c.verdict_changed for c in o.changes)} "
             f"with a new outcome (*)", "dim"))
        if self.written:
            summary.append(f"   ·  written to {printable(self.written)}", "green")
        self.query_one("#compare-summary", Static).update(summary)
        lines = Text("\n").join(change_line(c) for c in o.changes) if o.changes else Text(
            "no event differs: the edit changed nothing the loop looks at", style="dim")
        self.query_one("#compare-list", Static).update(lines)

    # -- actions ----------------------------------------------------------------------------
    def _lanes(self) -> list[SwimLanes]:
        return list(self.query(SwimLanes))

    def action_step(self, delta: int) -> None:
        """Both runs' cursors move together: step n of one is under step n of the other."""
        for lanes in self._lanes():
            lanes.move_to(lanes.cursor + delta)

    def action_back(self) -> None:
        self.dismiss(None)

    def action_quit(self) -> None:
        if self.written or not self.outcome.edits:
            self.app.exit()
            return
        self.app.push_screen(ConfirmQuit("The edited re-run is not written to a file: quitting loses it."),
                             self._quit_choice)

    def _quit_choice(self, choice: str | None) -> None:
        if choice == "write":
            if self.action_write():
                self.app.exit()
        elif choice == "quit":
            self.app.exit()

    def action_edit_again(self) -> None:
        last = self.outcome.edits[-1][0] if self.outcome.edits else "/inputs/user_input"
        self.app.push_screen(EditScreen(self.outcome.replayed, last, f"edit the edited run {self.outcome.replayed.run_id}"),
                             self._edited)

    def _edited(self, result: tuple[str, Any] | None) -> None:
        if result is not None:
            self.rerun(*result)

    @work(thread=True, exclusive=True, group="replay")
    def rerun(self, path: str, value: Any) -> None:
        from tracetui.ui.long_work import long_work

        with long_work():  # a quitting app does not wait for a re-run that never ends
            outcome = replay_or_notify(self, replay_further, self.outcome, path, value, self.command)
        if outcome is not None:
            self.app.call_from_thread(self._replace, outcome)

    def _replace(self, outcome: ReplayOutcome) -> None:
        self.outcome = outcome
        self.written = None
        self.show_outcome()

    def action_copy(self) -> None:
        """The replay command that makes this re-run (the original's file, or a copy of a run from standard input,
        with each edit as --set), or the run id."""
        from tracetui.explain.candidate import Edit
        from tracetui.explain.command import printed_command
        from tracetui.ui.clipboard import clipboard_value, command_file_or_say, copy_command, copy_text
        from tracetui.ui.screens.copy_menu import CopyChoice, open_copy_menu

        o = self.outcome
        run = o.original

        def copy_replay() -> None:
            file = command_file_or_say(self, self.original_path, run)
            if file is not None:
                copy_command(self, "the replay command", printed_command(
                    file, run.run_id, run, [Edit(path, value) for path, value in o.edits], self.command))

        sets = " ".join(f"--set {path}=…" for path, _ in o.edits)
        open_copy_menu(self, f"copy from the re-run of {run.run_id}", [
            CopyChoice("r", "replay command", f"tracetui replay … --run {run.run_id} {sets}", copy_replay),
            CopyChoice("i", "run id", run.run_id, lambda: copy_text(self, "the run id", clipboard_value(run.run_id))),
        ])

    def action_write(self) -> bool:
        try:
            path = save_records(self.outcome.records, self.original_path, self.outcome.replayed.run_id)
        except OSError as exc:
            self.notify(f"could not write: {printable(exc.strerror or str(exc))}", severity="error", markup=False)
            return False
        self.written = str(path)
        self.app.wrote("the edited run", path)
        self.show_outcome()
        return True
