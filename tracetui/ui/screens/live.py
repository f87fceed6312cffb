"""The main screen's live file: indexing in the background, following it as it grows, reloading it.

Kept apart from the main screen's navigation so each stays small. A file that
changes under the explorer is noticed (by the index's scan, by loading a run, and by
a look every second), said in the header and the banner until it is reloaded with
``r``; nothing shown is silently stale. While following (``F``, or ``open --follow``),
runs appended by a writer show up as they arrive, and a file that is truncated or
replaced is reloaded by itself, as ``tail -F`` does.
"""
from __future__ import annotations

import time
from typing import Any, Sequence

from rich.text import Text
from textual import work
from textual.binding import Binding
from textual.message import Message
from textual.worker import get_current_worker

from tracetui.trace.index.changes import TraceChanged
from tracetui.trace.reader import TraceReadError
from tracetui.trace.safe_text import printable

LIVE_BINDINGS = [
    Binding("r", "reload", "reload", show=False, tooltip="read the file again from disk (after it changed)",
            id="reload"),
    Binding("F", "toggle_follow", "follow", show=False, tooltip="follow the file as it grows, as tail -f does",
            id="follow"),
]
#: how often the files are looked at for changes, in seconds
WATCH_SECONDS = 1.0
#: progress messages a second after the first (which shows the first runs at once): each redraws the
#: run list, and the scan shares the interpreter lock with the drawing (one every two seconds: the
#: index of 1 GB inside the explorer took 1.16x its headless time, against 1.22x at one a second)
PROGRESS_PER_SECOND = 0.5


class ScanProgress(Message):
    """The background index found more runs (``done`` when it finished)."""

    def __init__(self, fraction: float | None, done: bool = False, error: str | None = None,
                 fatal: bool = False, changed: str | None = None, generation: int = 0,
                 caught_up: bool = False) -> None:
        super().__init__()
        self.fraction, self.done, self.error, self.fatal = fraction, done, error, fatal
        self.changed, self.generation, self.caught_up = changed, generation, caught_up


class LiveSource:
    """Mixed into :class:`~tracetui.ui.screens.main.MainScreen` (which defines ``refresh_runs``)."""

    scanning = False
    change_notice: str | None = None  # the file changed on disk: what the header and the banner say
    _generation = 0  # a reload starts a new scan; messages of the old one are dropped

    # -- indexing ----------------------------------------------------------------------------
    def start_scan(self) -> None:
        self.scanning = hasattr(self.source, "scan")  # type: ignore[attr-defined]
        if self.scanning:  # after the first frame is drawn: drawing it and indexing share one interpreter lock
            self._generation += 1
            self.call_after_refresh(self._first_scan, self._generation, self.source)  # type: ignore[attr-defined]
        self.set_interval(WATCH_SECONDS, self.watch_files, name="watch files")  # type: ignore[attr-defined]

    def _first_scan(self, generation: int, source: Any) -> None:
        """The first scan, once the first frame is drawn; a reload meanwhile scans its own source (this
        one is then closed)."""
        if generation == self._generation:
            self.scan_source(generation)
        else:
            source.close()

    @work(thread=True, exclusive=True, group="scan")
    def scan_source(self, generation: int) -> None:
        """Index the file off the UI thread, telling the screen a few times a second."""
        worker = get_current_worker()
        source = self.source  # type: ignore[attr-defined]
        post = self.post_message  # type: ignore[attr-defined]
        last = 0.0
        try:
            for progress in source.scan():
                if worker.is_cancelled:
                    return
                now = time.monotonic()
                if progress.caught_up or now - last > 1 / PROGRESS_PER_SECOND:
                    last = now
                    post(ScanProgress(_fraction(progress), generation=generation, caught_up=progress.caught_up))
        except TraceChanged as exc:
            post(ScanProgress(None, done=True, changed=str(exc), generation=generation))
            return
        except TraceReadError as exc:  # fatal when no run was read: nothing to explore (else: said, runs kept)
            post(ScanProgress(None, done=True, error=str(exc), fatal=not source.runs(), generation=generation))
            return
        except Exception as exc:  # noqa: BLE001 - shown to the user, never a traceback
            if not worker.is_cancelled:
                post(ScanProgress(None, done=True, error=f"indexing stopped: {exc}", generation=generation))
            return
        finally:
            if generation != self._generation:  # reloaded meanwhile: this source is no longer shown
                source.close()
        post(ScanProgress(1.0, done=True, generation=generation))

    def on_scan_progress(self, message: ScanProgress) -> None:
        if message.generation != self._generation:
            return
        bar = self.query_one("#scan")  # type: ignore[attr-defined]
        if message.fraction is not None:
            bar.update(total=1.0, progress=message.fraction)
        if message.caught_up:
            bar.display = False
        if message.done:
            self.scanning = False
            bar.display = False
            if message.fatal:
                from tracetui.otel.detect import otlp_hint

                report = no_runs_report(message.error or "", self.source.problems())  # type: ignore[attr-defined]
                hint = otlp_hint(self.source)  # type: ignore[attr-defined]
                self.app.exit(return_code=2, message=Text(  # type: ignore[attr-defined]
                    report + (f"\n{hint}" if hint else "")))
                return
            if message.error:
                self.notify(printable(message.error), severity="error", markup=False)  # type: ignore[attr-defined]
            if message.changed:
                self.file_changed(message.changed, during_scan=True)
        self.refresh_runs(scanning=not message.done)  # type: ignore[attr-defined]

    @property
    def following(self) -> bool:
        return bool(getattr(self.source, "following", False))  # type: ignore[attr-defined]

    def progress_text(self) -> str:
        """What the header says about the index: indexing, following, or that the file changed."""
        if self.change_notice:
            return f"⚠ {self.change_notice} — r reloads"
        if self.following:
            return "following"
        return "indexing…" if self.scanning else ""

    # -- changes on disk ---------------------------------------------------------------------
    def watch_files(self) -> None:
        """Look at the files: a change is said until the file is reloaded (in follow mode: reloaded)."""
        changes = getattr(self.source, "changes", None)  # type: ignore[attr-defined]
        if changes is None:
            return
        try:
            found = changes()
        except OSError as exc:
            found = [exc]
        if found and not self.change_notice:
            first = found[0]
            self.file_changed(first.describe() if hasattr(first, "describe") else str(first))

    def file_changed(self, what: str, during_scan: bool = False) -> None:
        if self.following and "grown" not in what:
            self.notify(f"{printable(what)}: reloaded", severity="warning", markup=False)  # type: ignore[attr-defined]
            self.action_reload()
            return
        hint = "F follows it, r reloads it" if "grown" in what else "r reloads it"
        self.change_notice = printable(what)
        self.notify(f"{self.change_notice}: what is shown may be stale; {hint}",  # type: ignore[attr-defined]
                    severity="warning", timeout=8, markup=False)
        self.refresh_runs()  # type: ignore[attr-defined]

    # -- actions -----------------------------------------------------------------------------
    def action_reload(self) -> None:
        """Index the files again from the start (after they changed on disk)."""
        reopened = getattr(self.source, "reopened", None)  # type: ignore[attr-defined]
        if reopened is None:
            self.notify("nothing to reload: these runs are not read from a file", timeout=3)  # type: ignore[attr-defined]
            return
        try:
            source = reopened()
        except (TraceReadError, OSError) as exc:
            self.notify(f"cannot reload: {printable(str(exc))}", severity="error", markup=False)  # type: ignore[attr-defined]
            return
        self.workers.cancel_group(self, "scan")  # type: ignore[attr-defined]
        scanning = self.scanning
        old, self.source = self.source, source  # type: ignore[attr-defined]
        self.app.source = source  # type: ignore[attr-defined]
        self.reset_runs()  # type: ignore[attr-defined]
        self.change_notice = None
        self.query_one("#scan").display = True  # type: ignore[attr-defined]
        self._generation += 1
        self.scanning = True
        self.scan_source(self._generation)
        self.refresh_runs()  # type: ignore[attr-defined]
        if not scanning:  # else its scan thread closes it as it stops
            old.close()

    def action_toggle_follow(self) -> None:
        """Follow the file as it grows (new runs show as a writer appends them), or stop."""
        follow = getattr(self.source, "follow", None)  # type: ignore[attr-defined]
        if follow is None:
            self.notify("only trace files can be followed", timeout=3)  # type: ignore[attr-defined]
            return
        on = not self.following
        follow(on)
        if on:
            if self.change_notice and "grown" in self.change_notice:
                self.change_notice = None
            if not self.scanning:
                self.scanning = True
                self._generation += 1
                self.scan_source(self._generation)
        self.notify("following the file: new runs show as they are written" if on  # type: ignore[attr-defined]
                    else "stopped following", timeout=3, markup=False)
        self.refresh_runs()  # type: ignore[attr-defined]


def no_runs_report(error: str, problems: Sequence[Any], limit: int = 5) -> str:
    """What ``tracetui open`` prints when a file holds no run: the reason and the first bad lines."""
    lines = [f"error: {printable(error)}"]
    for p in list(problems)[:limit]:
        lines.append(f"  line {p.line}: {printable(p.message)}")
    if len(problems) > limit:
        lines.append(f"  … {len(problems) - limit} more (tracetui check FILE lists them all)")
    return "\n".join(lines)


def _fraction(progress: Any) -> float | None:
    """Read a progress value from the index's scan(): a float, or an object with ``fraction``."""
    if isinstance(progress, (int, float)):
        return float(progress)
    value = getattr(progress, "fraction", None)
    return float(value) if isinstance(value, (int, float)) else None
