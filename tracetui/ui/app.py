"""The explorer app: opens a trace source and pushes screens. Logic lives in the screens and widgets."""
from __future__ import annotations

import sys
from typing import Sequence

from textual.app import App
from textual.binding import Binding

from tracetui.trace.reader import TraceReadError
from tracetui.trace.safe_text import printable
from tracetui.otel.detect import open_any
from tracetui.trace.source import TraceSource
from tracetui.ui.commands import TraceCommands
from tracetui.ui.screens.compare import CompareScreen
from tracetui.ui.screens.confirm import ConfirmQuit
from tracetui.ui.screens.edit import EditScreen
from tracetui.ui.screens.fixes import FixesScreen
from tracetui.ui.screens.help import HelpScreen, key_rows, screen_sections
from tracetui.ui.screens.inputs import InputsScreen
from tracetui.ui.screens.main import MainScreen
from tracetui.ui.screens.problems import ProblemsScreen


class TraceApp(App[None]):
    """Six swimlanes per run; the first failing boundary flagged."""

    TITLE = "tracetui"
    CSS_PATH = "styles/app.tcss"
    COMMANDS = App.COMMANDS | {TraceCommands}
    BINDINGS = [
        Binding("question_mark", "help", "help", key_display="?", tooltip="this help: every key that works here",
                id="help"),
        Binding("p", "problems", "problems", show=False, tooltip="lines of the file that could not be read",
                id="problems"),
        Binding("q", "quit", "quit", id="quit"),
    ]
    #: The other screens' keys, listed in the help after the keys of the screen it was opened over.
    OTHER_SCREENS = [("in the fixes panel (E)", FixesScreen), ("in the inputs tree (i)", InputsScreen),
                     ("in the editor (e)", EditScreen), ("in the compare view", CompareScreen)]

    def __init__(self, source: TraceSource) -> None:
        super().__init__()
        self.source = source

    def get_default_screen(self) -> MainScreen:
        return MainScreen(self.source)

    def action_help(self) -> None:
        """Every key that works on the current screen, in the order they are resolved, then the other screens'."""
        if isinstance(self.screen, HelpScreen):
            return
        sections, focus_order = screen_sections(self.screen)
        elsewhere = [(title, key_rows(screen.BINDINGS, self.get_key_display)) for title, screen in self.OTHER_SCREENS
                     if not isinstance(self.screen, screen)]
        self.push_screen(HelpScreen(sections, focus_order, elsewhere))

    async def action_quit(self) -> None:
        """Every way to quit (q, ctrl+q, the command palette) asks first while a re-run was never written."""
        compare = next((s for s in self.screen_stack if isinstance(s, CompareScreen)), None)
        if compare is not None and not isinstance(self.screen, ConfirmQuit):
            compare.action_quit()
        else:
            self.exit()

    def action_problems(self) -> None:
        if not isinstance(self.screen, ProblemsScreen):
            self.push_screen(ProblemsScreen(self.source.problems(), self.source.label))

    def get_default_screen_instance(self) -> MainScreen:
        return self.screen_stack[0]  # type: ignore[return-value]


def open_paths(paths: Sequence[str]) -> TraceSource:
    """The source for ``tracetui open``: the built-in demo for no path, else the files: tracetui traces
    indexed in the background, or OTLP/JSON files imported (told apart by content).

    Raises :class:`TraceReadError` for a missing, unreadable or directory path, or
    when every file is empty.
    """
    if not paths:
        from tracetui.loop.demo import demo_source

        return demo_source()
    return open_any(list(paths))


def run_app(paths: list[str]) -> None:
    """Entry point of ``tracetui open``: a clear message and exit code 2 when nothing can be opened."""
    try:
        source = open_paths(paths)
    except TraceReadError as exc:
        print(f"error: {printable(str(exc))}", file=sys.stderr)
        raise SystemExit(2) from None
    except OSError as exc:
        print(f"error: {printable(str(exc.filename or ''))}: {exc.strerror or exc}", file=sys.stderr)
        raise SystemExit(2) from None
    app = TraceApp(source)
    app.run()
    if app.return_code:
        raise SystemExit(app.return_code)
