"""The explorer app: opens a trace source and pushes screens. Logic lives in the screens and widgets."""
from __future__ import annotations

import os
import signal
import sys
from typing import Any, BinaryIO, Sequence

from textual.app import App
from textual.binding import Binding

from tracetui.trace.reader import TraceReadError
from tracetui.trace.safe_text import printable
from tracetui.trace.index import IndexedSource
from tracetui.trace.source import TraceSource
from tracetui.ui.commands import TraceCommands
from tracetui.ui.screens.help import HelpScreen
from tracetui.ui.screens.main import MainScreen
from tracetui.ui.screens.problems import ProblemsScreen


class TraceApp(App[None]):
    """Six swimlanes per run; the first failing boundary flagged."""

    TITLE = "tracetui"
    CSS_PATH = "styles/app.tcss"
    COMMANDS = App.COMMANDS | {TraceCommands}
    BINDINGS = [
        Binding("question_mark", "help", "help", key_display="?", id="help"),
        Binding("p", "problems", "problems", show=False, id="problems"),
        Binding("q", "quit", "quit", id="quit"),
    ]

    def __init__(self, source: TraceSource) -> None:
        super().__init__()
        self.source = source

    def get_default_screen(self) -> MainScreen:
        return MainScreen(self.source)

    def action_help(self) -> None:
        if not isinstance(self.screen, HelpScreen):
            main = self.get_default_screen_instance()
            self.push_screen(HelpScreen([("runs and steps", list(main.BINDINGS)), ("app", list(self.BINDINGS))]))

    def action_problems(self) -> None:
        if not isinstance(self.screen, ProblemsScreen):
            self.push_screen(ProblemsScreen(self.source.problems(), self.source.label))

    def get_default_screen_instance(self) -> MainScreen:
        return self.screen_stack[0]  # type: ignore[return-value]


def open_paths(paths: Sequence[str], follow: bool = False, stdin: BinaryIO | int | None = None) -> TraceSource:
    """The source for ``tracetui open``: the built-in demo for no path, else the files (indexed in the background).

    ``-`` is standard input (or ``stdin`` when given), spooled and followed until it ends
    (:mod:`tracetui.trace.spool`). Raises :class:`TraceReadError` for a missing,
    unreadable, directory or non-regular path, or when every file is empty.
    """
    if not paths:
        from tracetui.loop.demo import demo_source

        return demo_source()
    inputs: list[Any] = []
    for path in paths:
        if path == "-":
            from tracetui.trace.spool import Spool

            inputs.append(Spool(stdin if stdin is not None else sys.stdin.buffer))
        else:
            inputs.append(path)
    return IndexedSource(inputs, follow=follow)


def _stdin_from_terminal() -> int:
    """For ``open -``: keep the piped trace on a new descriptor and give the terminal back to fd 0,
    where the explorer reads keys. Raises TraceReadError without a terminal."""
    try:
        tty = os.open("/dev/tty", os.O_RDWR)
    except OSError:
        raise TraceReadError("-: the explorer needs a terminal to read keys from; "
                             "use tracetui check - to read a trace from a pipe") from None
    piped = os.dup(0)
    os.dup2(tty, 0)
    os.close(tty)
    sys.stdin = open(0, "r", closefd=False)
    return piped


def run_app(paths: list[str], follow: bool = False) -> None:
    """Entry point of ``tracetui open``: a clear message and exit code 2 when nothing can be opened."""
    try:
        stdin = _stdin_from_terminal() if "-" in paths and not os.isatty(0) else None
        source = open_paths(paths, follow=follow, stdin=stdin)
    except TraceReadError as exc:
        print(f"error: {printable(str(exc))}", file=sys.stderr)
        raise SystemExit(2) from None
    except OSError as exc:
        print(f"error: {printable(str(exc.filename or ''))}: {exc.strerror or exc}", file=sys.stderr)
        raise SystemExit(2) from None
    app = TraceApp(source)
    _exit_on_signals(app)
    app.run()
    if app.return_code:
        raise SystemExit(app.return_code)


def _exit_on_signals(app: App[Any]) -> None:
    """SIGTERM and SIGHUP close the explorer as ``q`` does, so the terminal is restored (never left raw)."""
    for name in ("SIGTERM", "SIGHUP"):
        number = getattr(signal, name, None)
        if number is not None:
            signal.signal(number, lambda signum, frame: app.exit(return_code=128 + signum))
