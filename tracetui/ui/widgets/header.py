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
        width = self.size.width
        right = Text.assemble(("? ", "bold"), "help  ", ("^p ", "bold"), "commands ")
        left = Text.assemble((" tracetui ", "bold reverse"), " ")
        rest = Text(f" · {self.runs:,} runs · ")
        rest.append(f"{self.failed:,} failed", "bold red" if self.failed else "green")
        if self.progress:
            rest.append(f" · {self.progress}", "bold yellow" if self.progress.startswith("⚠") else "italic")
        if self.problems:
            rest.append(f" · {self.problems:,} problem{'s' if self.problems != 1 else ''} — p to view",
                        "bold yellow")
        room = width - left.cell_len - rest.cell_len - right.cell_len - 1
        if room < 12:  # narrow: drop the help hint before the label
            right = Text("")
            room = width - left.cell_len - rest.cell_len - 1
        left.append(one_line(self.label, max(8, room)))
        left.append_text(rest)
        pad = width - left.cell_len - right.cell_len
        if pad > 0:
            return Text.assemble(left, " " * pad, right, no_wrap=True, overflow="ellipsis")
        left.no_wrap, left.overflow = True, "ellipsis"
        return left
