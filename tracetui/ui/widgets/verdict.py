"""The selected run's verdict in words: the first failing boundary, whose failure it was, and why."""
from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from tracetui.trace.safe_text import printable, redacted_prefix
from tracetui.trace.source import RunEntry
from tracetui.ui.model import headline, responsibility_line

#: the banner shows a few lines: a reason of megabytes is cut, never wrapped whole
MAX_HEADLINE_CHARS = 1_000
#: one colour per responsibility class: a guard that held is not an alarm
RESPONSIBILITY_STYLES = {"model": "bold #ff8787", "harness": "bold #ffaf00", "environment": "bold #87afff",
                         "guard": "bold #87d787"}


def clipped(text: str, limit: int) -> str:
    return text if len(text) <= limit else redacted_prefix(text, limit) + f"… ({len(text) - limit:,} more characters)"


#: the banner's lines at most (its CSS max-height): a longer reason is cut where it says where it goes on
MAX_LINES = 5
CONTINUES = " … (the whole reason: f, then v)"


class VerdictBanner(Static):
    DEFAULT_CSS = "VerdictBanner { height: auto; max-height: 5; padding: 0 1; }"

    plain = ""
    responsibility: str | None = None  # whose failure the shown run was (the core's class), None if none

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._parts: list[tuple[Text, bool]] = []  # the banner's paragraphs, and whether each may be cut

    def show(self, entry: RunEntry | None, error: str | None = None, inputs: dict | None = None,
             loaded: bool = True) -> None:
        """Word the verdict the core computed (``RunEntry.first_failure``); never re-derive it.
        ``inputs`` (the loaded run's) refine whose failure it was. ``loaded`` False: the run could not
        be read (``error`` says why), so its listed verdict is not claimed: it may be of a file since changed."""
        self.responsibility = None
        if entry is None:
            self._parts = [(Text(printable(error or "no run selected"), style="dim"), True)]
            self._fit()
            return
        if not loaded:
            head = Text(printable(f"? run {entry.run_id}: no verdict shown — it could not be read"), "bold yellow")
            self._parts = [(head, False), (Text("  " + printable(clipped(error or "", MAX_HEADLINE_CHARS)),
                                                "yellow"), True)]
            self._fit()
            return
        line, reason = headline(entry)
        line, reason = clipped(line, MAX_HEADLINE_CHARS), clipped(reason, MAX_HEADLINE_CHARS)
        style = "bold red" if entry.failed else ("bold yellow" if entry.recovered or not entry.ready
                                                 else "bold green")
        parts = [(Text(printable(line), style), False)]
        whose = responsibility_line(entry.first_failure, inputs) if entry.failed else None
        if whose is not None:
            self.responsibility = whose[0]
            text = Text("  ")
            text.append(printable(whose[0]), RESPONSIBILITY_STYLES.get(whose[0], "bold"))
            text.append(printable(f" — {whose[1]}"), "dim")
            parts.append((text, False))
        if reason:
            parts.append((Text("  " + printable(reason)), True))
        if error:
            parts.append((Text("  " + printable(clipped(error, MAX_HEADLINE_CHARS)), "yellow"), True))
        self._parts = parts
        self._fit()

    def on_resize(self) -> None:
        """Re-cut the text for the new width, after this layout pass: an update made inside the pass
        that sized the banner does not size it again (it kept the old text's height, hiding the end)."""
        if self._parts:
            self.call_after_refresh(self._fit)

    def _fit(self) -> None:
        """Show every paragraph whole when they fit :data:`MAX_LINES`; else cut the ones that may be cut
        (the reason, an error), each ending in where the rest is."""
        width = self.content_region.width or self.size.width
        texts = [text.copy() for text, _ in self._parts]
        if width > 0:
            lines = [self._lines(t, width) for t in texts]
            over = sum(lines) - MAX_LINES
            for i in reversed(range(len(texts))):  # the last paragraphs give their lines first
                if over <= 0:
                    break
                if not self._parts[i][1] or lines[i] <= 1:
                    continue
                keep = max(1, lines[i] - over)
                texts[i] = self._cut(texts[i], width, keep, CONTINUES if i == self._reason_index() else " …")
                over -= lines[i] - self._lines(texts[i], width)
        text = Text("\n").join(texts)
        self.plain = text.plain
        self.update(text)

    def _reason_index(self) -> int | None:
        for i, (text, may_cut) in enumerate(self._parts):
            if may_cut and not text.style:
                return i
        return None

    def _lines(self, text: Text, width: int) -> int:
        return len(text.wrap(self.app.console, width))

    def _cut(self, text: Text, width: int, lines: int, suffix: str) -> Text:
        """``text`` cut so that it, with ``suffix``, wraps to at most ``lines`` lines of ``width``."""
        low, high = 0, len(text.plain)
        while low < high:  # the longest head that fits
            mid = (low + high + 1) // 2
            if self._lines(self._head(text, mid, suffix), width) <= lines:
                low = mid
            else:
                high = mid - 1
        return self._head(text, low, suffix)

    @staticmethod
    def _head(text: Text, length: int, suffix: str) -> Text:
        head = text[:length]
        head.rstrip()
        head.append(suffix, "dim")
        return head
