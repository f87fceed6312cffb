"""The fixes panel (``E``): edits that fix the selected run, listed as a worker proves them by replay.

The search is the core's (:class:`tracetui.explain.Search`) on a worker thread; each
proof comes back as a message and takes its place in the ranking. Nothing unproven
is ever listed. ``Enter`` opens the highlighted fix in the compare view (pressed
before any fix is proven, it opens the best one as soon as the search ends).
"""
from __future__ import annotations

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.message import Message
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option
from textual.worker import get_current_worker

from tracetui.explain import Proof, Search
from tracetui.explain.command import replay_command
from tracetui.explain.report import edit_words, verdict_brief
from tracetui.explain.search import FIX
from tracetui.trace.reader import RunData
from tracetui.trace.safe_text import one_line, printable

MAX_PARTIALS = 3


class ProofFound(Message):
    def __init__(self, proof: Proof, tried: int) -> None:
        super().__init__()
        self.proof, self.tried = proof, tried


class SearchDone(Message):
    def __init__(self, tried: int, reason: str | None) -> None:
        super().__init__()
        self.tried, self.reason = tried, reason


def proof_prompt(proof: Proof, width: int) -> Text:
    """Two lines: the fix in words; then what it edits and the verdict it leads to."""
    fix = proof.kind == FIX
    text = Text()
    text.append("✓ " if fix else "◐ ", "bold green" if fix else "bold yellow")
    if not fix:
        text.append("partial: ", "yellow")
    if len(proof.edits) > 1:
        text.append(f"{len(proof.edits)} edits: ", "dim")
    text.append(printable(proof.candidate.words))  # wraps: the words are the point
    after = proof.outcome.after
    shown_after = printable(verdict_brief(after))
    edits = edit_words(proof, 400)
    for i, words in enumerate(edits):  # one line per edit, the last one ending with the verdict it leads to
        room = width - 6 - (len(shown_after) + 4 if i == len(edits) - 1 else 0)
        text.append("\n    ")
        text.append(one_line(words, max(16, room)), "dim")
    text.append("  → ")
    text.append(shown_after, "green" if after.get("ready") else "red")
    return text


class FixesScreen(ModalScreen[Proof | None]):
    """Dismisses with the chosen proof (the caller opens it in the compare view), or None."""

    CSS_PATH = "../styles/replay.tcss"
    BINDINGS = [
        Binding("enter", "apply", "open in compare", priority=True, id="fixes.apply"),
        Binding("y", "copy", "copy the replay command", id="fixes.copy"),
        Binding("escape", "close", "back", key_display="esc", id="fixes.close"),
    ]

    def __init__(self, run: RunData, original_path: str | None) -> None:
        super().__init__()
        self.run = run
        self.original_path = original_path
        self.proofs: list[Proof] = []
        self.tried = 0
        self.done = False
        self.reason: str | None = None
        self.pending = False  # Enter was pressed before a fix was proven
        self._moved = False  # the user moved the highlight: keep it on their choice
        self._rebuilding = False

    def compose(self) -> ComposeResult:
        with Vertical(id="fixes-box"):
            yield Static(id="fixes-status")
            yield OptionList(id="fixes-list")
            yield Static(Text.assemble((" enter ", "bold #ffaf00"), "open in compare  ", (" y ", "bold #ffaf00"),
                                       "copy the replay command  ", (" esc ", "bold #ffaf00"), "back"), id="fixes-keys")

    def on_mount(self) -> None:
        verdict = self.run.verdict()
        box = self.query_one("#fixes-box")
        box.border_title = Text(one_line(f"fixes for {self.run.run_id} · {verdict_brief(verdict)}", 90))  # never markup
        self.show_status()
        self.query_one(OptionList).focus()
        self.search()

    @work(thread=True, exclusive=True, group="explain")
    def search(self) -> None:
        worker = get_current_worker()
        search = Search(self.run)
        for proof in search.proofs():
            if worker.is_cancelled:
                return
            self.post_message(ProofFound(proof, search.tried))
        self.post_message(SearchDone(search.tried, search.reason))

    # -- messages from the worker ------------------------------------------------------------------
    def on_proof_found(self, message: ProofFound) -> None:
        self.tried = message.tried
        self.proofs.append(message.proof)
        self.proofs.sort(key=lambda p: p.rank_key)
        self.show_proofs()

    def on_search_done(self, message: SearchDone) -> None:
        self.tried, self.reason, self.done = message.tried, message.reason, True
        self.show_status()
        if self.pending:
            self.pending = False
            self.action_apply()

    # -- drawing -----------------------------------------------------------------------------------
    @property
    def shown(self) -> list[Proof]:
        fixes = [p for p in self.proofs if p.kind == FIX]
        return fixes + [p for p in self.proofs if p.kind != FIX][:MAX_PARTIALS]

    def show_proofs(self) -> None:
        options = self.query_one(OptionList)
        keep = self.highlighted if self._moved else None
        shown = self.shown
        width = max(40, (options.size.width or self.app.size.width) - 4)
        self._rebuilding = True
        options.clear_options()
        options.add_options([Option(proof_prompt(p, width), id=str(i)) for i, p in enumerate(shown)])
        options.highlighted = shown.index(keep) if keep in shown else 0
        self._rebuilding = False
        self.show_status()

    def show_status(self) -> None:
        fixes = sum(p.kind == FIX for p in self.proofs)
        if self.reason:
            line = Text(printable(self.reason), "yellow")
        elif not self.done:
            line = Text(f"proving by replay… {fixes} proven · {self.tried} tried", "dim")
        elif fixes:
            single = any(len(p.edits) == 1 for p in self.proofs if p.kind == FIX)
            line = Text(f"{fixes} proven · {self.tried} tried", "green")
            if not single:
                line.append("  ·  no single edit fixes this run: each fix is a pair of edits", "yellow")
        elif self.proofs:
            line = Text(f"no edit makes it answer-ready ({self.tried} tried); these get it further", "yellow")
        else:
            line = Text(f"no edit tracetui can derive from this run changes its verdict ({self.tried} tried)", "yellow")
        self.query_one("#fixes-status", Static).update(line)

    @property
    def highlighted(self) -> Proof | None:
        index = self.query_one(OptionList).highlighted
        shown = self.shown
        return shown[index] if index is not None and 0 <= index < len(shown) else None

    @on(OptionList.OptionHighlighted)
    def moved(self) -> None:
        if not self._rebuilding:
            self._moved = True

    @on(OptionList.OptionSelected)
    def selected(self) -> None:
        self.action_apply()

    # -- actions -----------------------------------------------------------------------------------
    def action_apply(self) -> None:
        proof = self.highlighted
        if proof is not None:
            self.workers.cancel_group(self, "explain")
            self.dismiss(proof)
        elif not self.done:
            self.pending = True
            self.notify("still proving: the best fix opens as soon as it is proven", timeout=2)
        else:
            self.notify("no proven fix to open", timeout=2)

    def action_copy(self) -> None:
        proof = self.highlighted
        if proof is None:
            self.notify("no proven fix to copy", timeout=2)
            return
        command = replay_command(self.original_path, self.run.run_id, self.run, proof.edits)
        if command and printable(command) != command:  # pasted, an ESC[201~ ends a shell's bracketed paste early
            self.notify("the replay command holds a control character or a secret from the trace: not copied",
                        severity="warning", markup=False, timeout=4)
            return
        if command:
            self.app.copy_to_clipboard(command)
            self.notify(printable(f"copied: {command}"), markup=False, timeout=4)

    def action_close(self) -> None:
        self.workers.cancel_group(self, "explain")
        self.dismiss(None)
