"""The command that re-runs the user's own agent, asked for when ``E`` opens a recorded run's fixes.

A recorded run (``tracetui record``) is proven by re-running the user's agent, and the command
comes only from the user: a trace is untrusted, and running a command found in it would be code
execution from a file someone sent. The box starts empty; the argv the trace says it was recorded
with is shown below it, greyed, as a hint, and never used unless the user types it.
"""
from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Static

from tracetui.explain.command import agent_command
from tracetui.trace.safe_text import one_line


class AgentCommandScreen(ModalScreen[list[str] | None]):
    """Dismisses with the command's words, or None when cancelled."""

    CSS_PATH = "../styles/replay.tcss"
    BINDINGS = [Binding("escape", "cancel", "cancel", id="agent_command.cancel")]

    def __init__(self, run_id: str, hint: str | None) -> None:
        super().__init__()
        self.run_id = run_id
        self.hint = hint

    def compose(self) -> ComposeResult:
        with Vertical(id="agent-command-box"):
            yield Static(Text(one_line(f"run {self.run_id} is your own agent's: the command that runs it", 100)),
                         id="agent-command-title")  # Static, not Label: it wraps in a narrow terminal
            yield Static(Text("proving a fix re-runs it against the recording; asked once for this file, kept until "
                              "you quit"), classes="edit-label")
            # the model's side is played back, the agent's is not: an edited answer may call a tool for real
            yield Static(Text("each re-run runs your agent for real, its tools too (on answers written from this "
                              "trace): run it against test data", "yellow"), id="agent-command-warning")
            yield Input(placeholder="python agent.py …", id="agent-command")
            hint = (f"recorded as: {one_line(self.hint, 90)} (from the trace: shown, never run unless you type it)"
                    if self.hint else "the trace names no command")
            yield Static(Text(hint), id="agent-command-hint")
            yield Static(id="agent-command-error")
            yield Static(Text.assemble((" enter ", "bold #ffaf00"), "prove fixes with it  ",
                                       (" esc ", "bold #ffaf00"), "cancel"), id="agent-command-keys")

    def on_mount(self) -> None:
        self.query_one(Input).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        try:
            argv = agent_command(event.value)
        except ValueError as exc:
            self.query_one("#agent-command-error", Static).update(Text(str(exc), "red"))
            return
        self.dismiss(argv)

    def action_cancel(self) -> None:
        self.dismiss(None)
