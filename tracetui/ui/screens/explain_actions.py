"""The main screen's ``E`` (fixes proven by replay) and ``i`` (the run's inputs as a tree) actions.

Kept apart from navigation and from edit-and-re-run (:mod:`.replay_actions`), whose
helpers these reuse: the selected run, its file, and the worker that re-runs an edit.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Callable

from textual.binding import Binding

from tracetui.trace.reader import RunData
from tracetui.trace.safe_text import printable

if TYPE_CHECKING:
    from tracetui.explain import Proof

EXPLAIN_BINDINGS = [
    Binding("E", "fixes", "fixes", tooltip="fixes for this run, each proven by replay; enter opens one",
            id="fixes"),
    Binding("i", "inputs", "inputs", tooltip="this run's inputs as a tree with their paths; enter edits one",
            id="inputs"),
]


class ExplainActions:
    """Mixed into :class:`~tracetui.ui.screens.main.MainScreen`, after ``ReplayActions``.

    A recorded agent's run is proven by re-running the user's command: asked for once per file and kept in
    memory (:attr:`agent_commands`) while the app runs, never written anywhere.
    """

    agent_commands: dict[str, list[str]]

    def _rerunnable(self) -> tuple[RunData, str | None] | None:
        """The selected run and its file, when it can be re-run (else say why)."""
        from tracetui.replay.edit import editable_document  # the re-run code loads on first use
        from tracetui.replay.pointer import EditError

        selected = self._selected()  # type: ignore[attr-defined]
        if selected is None:
            return None
        entry, run = selected
        try:
            editable_document(run)
        except EditError as exc:  # a run without its inputs (a foreign trace): nothing to re-run
            self.notify(printable(str(exc)), severity="warning", markup=False)  # type: ignore[attr-defined]
            return None
        return run, self.source_path(entry)  # type: ignore[attr-defined]

    def action_fixes(self) -> None:
        from tracetui.ui.screens.compare import CompareScreen
        from tracetui.ui.screens.fixes import FixesScreen

        chosen = self._rerunnable()
        if chosen is None:
            return
        run, original = chosen
        if run.verdict()["ready"]:
            self.notify(printable(f"run {run.run_id} is answer-ready: nothing to fix"), markup=False,  # type: ignore[attr-defined]
                        timeout=3)
            return

        def prove(command: list[str] | None) -> None:
            def opened(proof: "Proof | None") -> None:
                if proof is not None:
                    self.app.push_screen(CompareScreen(proof.outcome, original, command))  # type: ignore[attr-defined]

            self.app.push_screen(FixesScreen(run, original, command), opened)  # type: ignore[attr-defined]

        self.with_agent_command(run, original, prove)

    def with_agent_command(self, run: RunData, original: str | None,
                           then: "Callable[[list[str] | None], None]") -> None:
        """Call ``then`` with the command that re-runs ``run``: None for a built-in run; for a recorded agent's, the
        command the user typed for this file (asked for the first time, never read from the trace)."""
        from tracetui.explain.command import command_hint, needs_agent_command

        if not needs_agent_command(run):
            then(None)
            return
        known = self.agent_commands
        key = original or ""
        if key in known:
            then(known[key])
            return
        from tracetui.ui.screens.agent_command import AgentCommandScreen

        def typed(command: list[str] | None) -> None:
            if command:
                known[key] = command
                then(command)

        self.app.push_screen(AgentCommandScreen(run.run_id, command_hint(run)), typed)  # type: ignore[attr-defined]

    def action_inputs(self) -> None:
        from tracetui.ui.screens.inputs import InputsScreen

        chosen = self._rerunnable()
        if chosen is None:
            return
        run, original = chosen
        self.app.push_screen(InputsScreen(run),  # type: ignore[attr-defined]
                             lambda edit: self.rerun(run, edit, original) if edit else None)  # type: ignore[attr-defined]
