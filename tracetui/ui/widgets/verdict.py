"""The selected run's verdict in words: the first failing boundary, whose failure it was, and why."""
from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from tracetui.trace.safe_text import printable
from tracetui.trace.source import RunEntry
from tracetui.ui.model import headline, responsibility_line

#: the banner shows a few lines: a reason of megabytes is cut, never wrapped whole
MAX_HEADLINE_CHARS = 1_000
#: one colour per responsibility class: a guard that held is not an alarm
RESPONSIBILITY_STYLES = {"model": "bold #ff8787", "harness": "bold #ffaf00", "environment": "bold #87afff",
                         "guard": "bold #87d787"}


def clipped(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + f"… ({len(text) - limit:,} more characters)"


class VerdictBanner(Static):
    DEFAULT_CSS = "VerdictBanner { height: auto; max-height: 5; padding: 0 1; }"

    plain = ""
    responsibility: str | None = None  # whose failure the shown run was (the core's class), None if none

    def show(self, entry: RunEntry | None, error: str | None = None, inputs: dict | None = None) -> None:
        """Word the verdict the core computed (``RunEntry.first_failure``); never re-derive it.
        ``inputs`` (the loaded run's) refine whose failure it was."""
        self.responsibility = None
        if entry is None:
            text = Text(printable(error or "no run selected"), style="dim")
            self.plain = text.plain
            self.update(text)
            return
        line, reason = headline(entry)
        line, reason = clipped(line, MAX_HEADLINE_CHARS), clipped(reason, MAX_HEADLINE_CHARS)
        style = "bold red" if entry.failed else ("bold yellow" if entry.recovered or not entry.ready
                                                 else "bold green")
        text = Text()
        text.append(printable(line), style)
        whose = responsibility_line(entry.first_failure, inputs) if entry.failed else None
        if whose is not None:
            self.responsibility = whose[0]
            text.append("\n  ")
            text.append(printable(whose[0]), RESPONSIBILITY_STYLES.get(whose[0], "bold"))
            text.append(printable(f" — {whose[1]}"), "dim")
        if reason:
            text.append("\n  " + printable(reason))
        if error:
            text.append("\n  " + printable(clipped(error, MAX_HEADLINE_CHARS)), "yellow")
        self.plain = text.plain
        self.update(text)
