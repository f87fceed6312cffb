"""The selected run's verdict in words: the first failing boundary and why."""
from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from tracetui.trace.safe_text import printable
from tracetui.trace.source import RunEntry
from tracetui.ui.model import headline

#: the banner shows a few lines: a reason of megabytes is cut, never wrapped whole
MAX_HEADLINE_CHARS = 1_000


def clipped(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + f"… ({len(text) - limit:,} more characters)"


class VerdictBanner(Static):
    DEFAULT_CSS = "VerdictBanner { height: auto; max-height: 4; padding: 0 1; }"

    plain = ""

    def show(self, entry: RunEntry | None, error: str | None = None) -> None:
        """Word the verdict the core computed (``RunEntry.first_failure``); never re-derive it."""
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
        if reason:
            text.append("\n  " + printable(reason))
        if error:
            text.append("\n  " + printable(clipped(error, MAX_HEADLINE_CHARS)), "yellow")
        self.plain = text.plain
        self.update(text)
