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
from tracetui.explain.command import printed_command
from tracetui.explain.report import edit_words, reruns_words, verdict_brief
from tracetui.explain.kinds import partials_shown
from tracetui.explain.search import FIX, PARTIAL, WHAT_IF
from tracetui.trace.reader import RunData
from tracetui.trace.responsibility import WORDS as RESPONSIBILITY_WORDS, responsibility
from tracetui.trace.safe_text import one_line, printable
from tracetui.ui.long_work import long_work
from tracetui.ui.widgets.verdict import RESPONSIBILITY_STYLES

MAX_PARTIALS = 3
#: the panel's sections, top to bottom: fixes, then what-ifs, then partials, however the proofs arrive
SECTION = {FIX: 0, WHAT_IF: 1, PARTIAL: 2}
KIND_WORDS = {FIX: "fix", WHAT_IF: "what-if", PARTIAL: "partial"}
KIND_STYLES = {FIX: ("✓", "bold green"), WHAT_IF: ("?", "bold cyan"), PARTIAL: ("◐", "bold yellow")}
#: a candidate's side in a row's few cells (the CLI's longer words: tracetui.explain.candidate.SIDES)
SIDE_WORDS = {"data": "tool data", "tools": "tool definitions", "budget": "loop budget", "setting": "loop setting",
              "context": "model input"}
MAX_TAG = 28


class ProofFound(Message):
    def __init__(self, proof: Proof, tried: int) -> None:
        super().__init__()
        self.proof, self.tried = proof, tried


class Headline(Message):
    """The core's line about what the run's failure means for its fixes (a guard held: nothing to fix)."""

    def __init__(self, text: str, held: bool = False) -> None:
        super().__init__()
        self.text, self.held = text, held


class SearchDone(Message):
    def __init__(self, tried: int, reason: str | None, headline: str | None = None,
                 timing: str | None = None) -> None:
        super().__init__()
        self.tried, self.reason, self.headline, self.timing = tried, reason, headline, timing


def proof_tag(proof: Proof) -> str:
    """What kind of proof and which side of the run it edits: ``fix · model``, ``what-if · caller``."""
    sides = " + ".join(SIDE_WORDS.get(s, s) for s in str(proof.candidate.side).split(" + "))
    return f"{KIND_WORDS.get(proof.kind, proof.kind)} · {sides}"


def proof_prompt(proof: Proof, width: int, tag_width: int = 0) -> Text:
    """The proof in words after its kind and side; then what it edits and the verdict it leads to;
    for a what-if, why it is not a fix."""
    icon, style = KIND_STYLES.get(proof.kind, KIND_STYLES[PARTIAL])
    text = Text()
    text.append(f"{icon} ", style)
    tag = proof_tag(proof)
    text.append(one_line(tag, MAX_TAG).ljust(min(tag_width, MAX_TAG)) + "  ", style.replace("bold ", ""))
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
    if proof.kind == WHAT_IF and proof.why_not:
        text.append("\n    why not: ", "cyan")
        text.append(one_line(printable(str(proof.why_not)), max(16, width - 13)))
    return text


def divider(words: str, width: int) -> Text:
    """A section's heading across the list: ``── what-ifs: … ──────``."""
    head = f"── {one_line(words, max(10, width - 8))} "
    return Text(head + "─" * max(2, width - len(head)), "cyan")


class FixesScreen(ModalScreen[Proof | None]):
    """Dismisses with the chosen proof (the caller opens it in the compare view), or None."""

    CSS_PATH = "../styles/replay.tcss"
    BINDINGS = [
        Binding("enter", "apply", "open in compare", priority=True, id="fixes.apply"),
        Binding("y", "copy", "copy the replay command", id="fixes.copy"),
        Binding("escape", "close", "back", key_display="esc", id="fixes.close"),
        # a modal screen hides the app's q: the panel has its own, which stops the search, then quits as the app does
        Binding("q", "quit", "quit", id="fixes.quit"),
    ]

    def __init__(self, run: RunData, original_path: str | None, command: list[str] | None = None) -> None:
        super().__init__()
        self.run = run
        self.original_path = original_path
        self.command = command  # the user's command a recorded agent's run is re-run with (never the trace's)
        self.timing: str | None = None  # how long each re-run of the user's command took, once the search ends
        self.proofs: list[Proof] = []
        self.tried = 0
        self.done = False
        self.reason: str | None = None
        self.headline: str | None = None  # the core's one line when a guard held ("nothing needs fixing")
        self.responsibility: str | None = None  # whose failure the run was (the core's class)
        self.guard_held = False  # the core says a guard refused what the user asked for: no partial is listed
        self.pending = False  # Enter was pressed before a fix was proven
        self._moved = False  # the user moved the highlight: keep it on their choice
        self._rebuilding = False
        self._listed: list[Proof] = []  # the proofs the list shows, in its order

    def compose(self) -> ComposeResult:
        with Vertical(id="fixes-box"):
            yield Static(id="fixes-status")
            yield OptionList(id="fixes-list")
            yield Static(Text.assemble((" enter ", "bold #ffaf00"), "open in compare  ", (" y ", "bold #ffaf00"),
                                       "copy the replay command  ", (" esc ", "bold #ffaf00"), "back  ",
                                       (" q ", "bold #ffaf00"), "quit"), id="fixes-keys")

    def on_mount(self) -> None:
        verdict = self.run.verdict()
        box = self.query_one("#fixes-box")
        title = f"fixes for {self.run.run_id} · {verdict_brief(verdict)}"
        whose = self.responsibility = responsibility(verdict.get("first_failure"), self.run.inputs)
        if whose:
            title += f" · {whose}: {RESPONSIBILITY_WORDS.get(whose, whose)}"
        box.border_title = Text(one_line(title, 120))  # never markup
        self.show_status()
        self.query_one(OptionList).focus()
        self.search()

    @work(thread=True, exclusive=True, group="explain")
    def search(self) -> None:
        worker = get_current_worker()
        # asked before every replay: esc (which cancels the group), q and ctrl+q (every worker, on exit) stop
        # the search within one replay, so quitting never waits for the whole search
        # (a replay that never ends would keep the process alive after q: run_app exits past it)
        with long_work():
            search = Search(self.run, cancelled=lambda: worker.is_cancelled, command=self.command)
            if search.headline:  # known before any replay: shown while the proofs come
                self.post_message(Headline(search.headline, search.guard_held))
            for proof in search.proofs():
                if worker.is_cancelled:
                    return
                self.post_message(ProofFound(proof, search.tried))
            self.post_message(SearchDone(search.tried, search.reason, search.headline, reruns_words(search)))

    # -- messages from the worker ------------------------------------------------------------------
    def on_headline(self, message: Headline) -> None:
        self.headline, self.guard_held = message.text, message.held
        self.show_status()

    def on_proof_found(self, message: ProofFound) -> None:
        self.tried = message.tried
        self.proofs.append(message.proof)
        self.proofs.sort(key=lambda p: (SECTION.get(p.kind, len(SECTION)), p.rank_key))
        self.show_proofs()

    def on_search_done(self, message: SearchDone) -> None:
        self.tried, self.reason, self.done = message.tried, message.reason, True
        self.headline = message.headline or self.headline
        self.timing = message.timing
        self.show_status()
        if self.pending:
            self.pending = False
            self.action_apply()

    # -- drawing -----------------------------------------------------------------------------------
    @property
    def shown(self) -> list[Proof]:
        """The listed proofs in display order: every fix, then the what-ifs, then the furthest partials
        (only while no fix is proven and no guard held: the CLI's rule, :func:`tracetui.explain.kinds.partials_shown`)."""
        fixes = [p for p in self.proofs if p.kind == FIX]
        what_ifs = [p for p in self.proofs if p.kind == WHAT_IF]
        partials = partials_shown([p for p in self.proofs if p.kind not in (FIX, WHAT_IF)], bool(fixes),
                                  self.guard_held)[:MAX_PARTIALS]
        return fixes + what_ifs + partials

    def show_proofs(self) -> None:
        options = self.query_one(OptionList)
        keep = self.highlighted if self._moved else None
        shown = self.shown
        width = max(40, (options.size.width or self.app.size.width) - 4)
        tag_width = max((len(proof_tag(p)) for p in shown), default=0)
        rows: list[Option] = []
        at: dict[int, int] = {}  # a shown proof's position -> its option's
        for i, proof in enumerate(shown):
            if proof.kind == WHAT_IF and (i == 0 or shown[i - 1].kind != WHAT_IF):
                rows.append(Option(divider("what-ifs: these would pass too, but none is a fix (why not: below each)",
                                           width), disabled=True))
            elif proof.kind not in (FIX, WHAT_IF) and i > 0 and shown[i - 1].kind in (FIX, WHAT_IF):
                rows.append(Option(divider("partial: these only get it further", width), disabled=True))
            at[i] = len(rows)
            rows.append(Option(proof_prompt(proof, width, tag_width), id=f"proof-{i}"))
        self._rebuilding = True
        self._listed = shown
        options.clear_options()
        options.add_options(rows)
        options.highlighted = at[shown.index(keep)] if keep in shown else (at[0] if shown else None)
        self._rebuilding = False
        self.show_status()

    def show_status(self) -> None:
        fixes = sum(p.kind == FIX for p in self.proofs)
        what_ifs = sum(p.kind == WHAT_IF for p in self.proofs)
        also = f" · {what_ifs} what-if{'s' if what_ifs != 1 else ''}" if what_ifs else ""
        if self.reason:
            line = Text(printable(self.reason), "yellow")
        elif not self.done:
            line = Text(f"proving by replay… {fixes} proven{also} · {self.tried} tried", "dim")
        elif fixes:
            single = any(len(p.edits) == 1 for p in self.proofs if p.kind == FIX)
            line = Text(f"{fixes} proven{also} · {self.tried} tried", "green")
            if not single:
                line.append("  ·  no single edit fixes this run: each fix is a pair of edits", "yellow")
        elif what_ifs:
            line = Text(f"no fix{also} · {self.tried} tried", "yellow")
        elif self.proofs:
            line = Text(f"no edit makes it answer-ready ({self.tried} tried); these get it further", "yellow")
        else:
            line = Text(f"no edit tracetui can derive from this run changes its verdict ({self.tried} tried)", "yellow")
        if self.timing and not self.reason:
            line.append(f"  ·  {self.timing}", "dim")
        if self.headline:  # a guard held, the environment failed: the core says what it means, before any count
            style = RESPONSIBILITY_STYLES.get(self.responsibility or "", "bold")
            line = Text.assemble((printable(self.headline), style), "\n", line)
        self.query_one("#fixes-status", Static).update(line)

    @property
    def highlighted(self) -> Proof | None:
        options = self.query_one(OptionList)
        index = options.highlighted
        if index is None or not 0 <= index < options.option_count:
            return None
        option_id = options.get_option_at_index(index).id or ""
        shown = self._listed  # what the options show (a proof that arrived since is not among them yet)
        position = int(option_id[len("proof-"):]) if option_id.startswith("proof-") else -1
        return shown[position] if 0 <= position < len(shown) else None

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
        from tracetui.ui.clipboard import command_file_or_say, copy_command

        file = command_file_or_say(self, self.original_path, self.run)  # standard input: a copy of the run
        if file is not None:
            copy_command(self, "the replay command",
                         printed_command(file, self.run.run_id, self.run, proof.edits, proof.command))

    def action_close(self) -> None:
        self.workers.cancel_group(self, "explain")
        self.dismiss(None)

    async def action_quit(self) -> None:
        self.workers.cancel_group(self, "explain")
        await self.app.run_action("quit")
