"""The explorer app: opens a trace source and pushes screens. Logic lives in the screens and widgets."""
from __future__ import annotations

import asyncio
import os
import signal
import sys
from typing import Any, BinaryIO, Sequence

from textual.app import App
from textual.binding import Binding

from tracetui.trace.reader import TraceReadError
from tracetui.trace.safe_text import printable
from tracetui.trace.source import TraceSource
from tracetui.ui.commands import TraceCommands
from tracetui.ui.screens.help import HelpScreen, key_rows, screen_sections
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

    def __init__(self, source: TraceSource) -> None:
        super().__init__()
        self.source = source
        self.written: list[tuple[str, str]] = []  # (what, path) of each file written: said again on exit

    def wrote(self, what: str, path: object) -> None:
        """Say that ``what`` was written to ``path``. A toast is narrow and soon gone: the whole path is
        printed again when the explorer exits (:func:`written_lines`)."""
        full = os.path.abspath(str(path))
        self.written.append((what, full))
        here = os.path.relpath(full)
        shown = full if here.startswith("..") else here  # the shorter of the two, as the user would type it
        message = f"wrote {printable(what)} to {printable(shown)} (printed again on exit)"
        self.notify(message, markup=False, timeout=8)

    def get_default_screen(self) -> MainScreen:
        return MainScreen(self.source)

    def action_help(self) -> None:
        """Every key that works on the current screen, in the order they are resolved, then the other screens'."""
        if isinstance(self.screen, HelpScreen):
            return
        sections, focus_order = screen_sections(self.screen)
        elsewhere = [(title, key_rows(screen.BINDINGS, self.get_key_display)) for title, screen in other_screens()
                     if not isinstance(self.screen, screen)]
        self.push_screen(HelpScreen(sections, focus_order, elsewhere))

    async def action_quit(self) -> None:
        """Every way to quit (q, ctrl+q, the command palette) asks first while a re-run was never written."""
        compare_module = sys.modules.get("tracetui.ui.screens.compare")  # loaded with the first re-run, not before
        if compare_module is None:
            self.exit()
            return
        from tracetui.ui.screens.confirm import ConfirmQuit

        compare = next((s for s in self.screen_stack if isinstance(s, compare_module.CompareScreen)), None)
        if compare is not None and not isinstance(self.screen, ConfirmQuit):
            compare.action_quit()
        else:
            self.exit()

    def action_problems(self) -> None:
        if not isinstance(self.screen, ProblemsScreen):
            self.push_screen(ProblemsScreen(self.source.problems(), self.source.label))

    def get_default_screen_instance(self) -> MainScreen:
        return self.screen_stack[0]  # type: ignore[return-value]


def other_screens() -> list[tuple[str, type]]:
    """The other screens' keys, listed in the help after the keys of the screen it was opened over.

    Imported when the help is asked for: they bring the re-run code (replay, the loop,
    jsonschema), which opening a trace does not need.
    """
    from tracetui.ui.screens.compare import CompareScreen
    from tracetui.ui.screens.edit import EditScreen
    from tracetui.ui.screens.fixes import FixesScreen
    from tracetui.ui.screens.inputs import InputsScreen

    return [("in the fixes panel (E)", FixesScreen), ("in the inputs tree (i)", InputsScreen),
            ("in the editor (e)", EditScreen), ("in the compare view", CompareScreen)]


def open_paths(paths: Sequence[str], follow: bool = False, stdin: BinaryIO | int | None = None,
               query: Any = None) -> TraceSource:
    """The source for ``tracetui open``: the built-in demo for no path, else the files: tracetui traces
    indexed in the background, or OTLP/JSON files imported whole (told apart by content).

    ``-`` is standard input (or ``stdin`` when given), spooled and followed until it ends
    (:mod:`tracetui.trace.spool`). Raises :class:`TraceReadError` for a missing,
    unreadable, directory or non-regular path, or when every file is empty.
    """
    if not paths:
        from tracetui.loop.demo import demo_source

        return demo_source()
    from tracetui.otel.backend import is_backend_source
    from tracetui.otel.detect import is_otlp, open_any  # loaded when a file is opened, as the index is

    files = [p for p in paths if p != "-"]
    if files and any(is_backend_source(p) or is_otlp(p) for p in files):  # imported runs are read whole
        if "-" in paths:
            raise TraceReadError("-: standard input cannot be opened beside an OTLP/JSON file or a backend")
        return open_any(files, query)
    inputs: list[Any] = []
    for path in paths:
        if path == "-":
            from tracetui.otel.detect import spooled_source
            from tracetui.trace.spool import Spool

            spool = Spool(stdin if stdin is not None else sys.stdin.buffer)
            try:
                imported = spooled_source(spool, timeout=STDIN_KIND_SECONDS)
            except BaseException:
                spool.close()
                raise
            if imported is not None:  # OTLP/JSON on standard input: read as it arrives, as a file of it is
                if len(paths) > 1:
                    imported.close()
                    raise TraceReadError("-: standard input holds OTLP/JSON: open it on its own")
                return imported
            inputs.append(spool)
        else:
            inputs.append(path)
    from tracetui.trace.index import IndexedSource

    return IndexedSource(inputs, follow=follow)


#: how long ``open -`` waits for standard input's first bytes to tell OTLP/JSON from a trace before it
#: opens the explorer on a trace (a writer still starting); ``check -`` waits as long as it takes
STDIN_KIND_SECONDS = 0.5


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


def run_app(paths: list[str], follow: bool = False, query: Any = None) -> None:
    """Entry point of ``tracetui open``: a clear message and exit code 2 when nothing can be opened."""
    try:
        if "-" in paths and os.isatty(0):  # the explorer reads its keys there: it holds no trace
            raise TraceReadError("-: standard input is this terminal, not a trace; pipe one in "
                                 "(cat FILE | tracetui open -) or name the file")
        stdin = _stdin_from_terminal() if "-" in paths else None
        source = open_paths(paths, follow=follow, stdin=stdin, query=query)
    except TraceReadError as exc:
        print(f"error: {printable(str(exc))}", file=sys.stderr)
        raise SystemExit(2) from None
    except OSError as exc:
        print(f"error: {printable(str(exc.filename or ''))}: {exc.strerror or exc}", file=sys.stderr)
        raise SystemExit(2) from None
    app = TraceApp(source)
    _exit_on_signals(app)
    # on a loop of its own, not asyncio.run's: that would join every executor thread before returning, and a
    # thread worker inside a replay that never ends would keep the explorer from ever exiting
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    app.run(loop=loop)
    for line in written_lines(app):
        print(line)
    _exit_past_long_work(source, app.return_code or 0)
    loop.run_until_complete(loop.shutdown_default_executor())
    asyncio.set_event_loop(None)
    loop.close()
    if app.return_code:
        raise SystemExit(app.return_code)


def written_lines(app: TraceApp) -> list[str]:
    """What the session wrote, one line a file, printed once the terminal is restored."""
    return [f"tracetui: wrote {printable(what)} to {printable(path)}" for what, path in app.written]


def _exit_past_long_work(source: TraceSource, code: int) -> None:
    """The app has closed (q, ctrl+q, SIGTERM): when a re-run or an explain search is still running on a
    thread (cancelled, but inside a replay that does not ask), exit now rather than wait for it at the
    interpreter's exit (:mod:`tracetui.ui.long_work`); its result would be dropped anyway."""
    from tracetui.ui.long_work import still_running

    if not still_running():
        return
    close = getattr(source, "close", None)
    try:
        from tracetui.record.child import stop_live_agents

        stop_live_agents()  # a re-run of your agent still going: stopped, never left behind
        if close is not None:
            close()
        sys.stdout.flush()
        sys.stderr.flush()
    finally:
        os._exit(code)


def _exit_on_signals(app: App[Any]) -> None:
    """SIGTERM and SIGHUP close the explorer as ``q`` does, so the terminal is restored (never left raw)."""
    for name in ("SIGTERM", "SIGHUP"):
        number = getattr(signal, name, None)
        if number is not None:
            signal.signal(number, lambda signum, frame: app.exit(return_code=128 + signum))
