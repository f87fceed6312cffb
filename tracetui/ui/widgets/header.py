"""One-line header: what is open, how many runs failed, and where help is."""
from __future__ import annotations

from rich.text import Text
from textual.widget import Widget

from tracetui.trace.safe_text import one_line


class HeaderBar(Widget):
    DEFAULT_CSS = "HeaderBar { dock: top; height: 1; background: $panel; }"

    def __init__(self, label: str, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.label = label
        self.runs = 0
        self.failed = 0
        self.problems = 0
        self.progress: str = ""

    def update_counts(self, runs: int, failed: int, problems: int, progress: str = "") -> None:
        self.runs, self.failed, self.problems, self.progress = runs, failed, problems, progress
        self.refresh()

    def render(self) -> Text:
        """What fits, in this order of giving way: the help hint, then the long forms of the warnings,
        then the file's name (kept at 8 cells at least); the counts and each warning's key stay."""
        width = self.size.width
        help_hint = Text.assemble(("? ", "bold"), "help  ", ("^p ", "bold"), "commands ")
        left = Text.assemble((" tracetui ", "bold reverse"), " ")
        attempts = [(help_hint, False), (Text(""), False), (Text(""), True)]
        for right, short in attempts:
            rest = self._rest(short)
            room = width - left.cell_len - rest.cell_len - right.cell_len - 1
            if room >= (12 if right.cell_len else 8):
                break
        left.append(one_line(self.label, max(8, room)))
        left.append_text(rest)
        pad = width - left.cell_len - right.cell_len
        if pad > 0:
            return Text.assemble(left, " " * pad, right, no_wrap=True, overflow="ellipsis")
        left.no_wrap, left.overflow = True, "ellipsis"
        return left

    def _rest(self, short: bool) -> Text:
        """The counts, then what is going on and the problems: in ``short`` words when the long ones do not fit."""
        rest = Text(f" · {self.runs:,} runs · ")
        rest.append(f"{self.failed:,} failed", "bold red" if self.failed else "green")
        if self.progress:
            progress = short_warning(self.progress) if short else self.progress
            rest.append(f" · {progress}", "bold yellow" if progress.startswith("⚠") else "italic")
        if self.problems:
            words = "p" if short else "p to view"
            rest.append(f" · {self.problems:,} problem{'s' if self.problems != 1 else ''} — {words}", "bold yellow")
        return rest


def short_warning(text: str) -> str:
    """A warning's short form: "⚠ <what happened> — <key>" becomes "⚠ file changed — <key>"; the key stays."""
    if not text.startswith("⚠") or " — " not in text:
        return text
    return "⚠ file changed — " + text.rsplit(" — ", 1)[1]
