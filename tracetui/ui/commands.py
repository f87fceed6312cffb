"""Command palette (ctrl+p): every key binding plus the filters and sorts, by name."""
from __future__ import annotations

from functools import partial
from typing import Callable, Iterator

from textual.command import DiscoveryHit, Hit, Hits, Provider

from tracetui.trace.format import LANES
from tracetui.trace.responsibility import RESPONSIBILITIES, WORDS as RESPONSIBILITY_WORDS
from tracetui.ui.model import SORTS, STATUS_FILTERS


def palette_commands(screen, app) -> Iterator[tuple[str, str, Callable[[], object]]]:
    """(name, help, callback) for each command; screen actions run on the screen the palette was opened over."""
    seen = set()
    for owner, bindings in ((screen, screen.BINDINGS), (app, app.BINDINGS)):
        for binding in bindings:
            if not binding.description or binding.action in seen:
                continue
            seen.add(binding.action)
            key = binding.key_display or binding.key
            yield binding.description, f"key: {key}", partial(owner.run_action, binding.action)
    if hasattr(screen, "action_set_query"):
        for status in STATUS_FILTERS:
            yield f"show runs: {status}", "status filter", partial(screen.run_action, f"set_query('status', {status!r})")
        for lane in (None, *LANES):
            yield (f"failing lane: {lane or 'any'}", "lane filter",
                   partial(screen.run_action, f"set_query('lane', {lane!r})"))
        for whose in (None, *RESPONSIBILITIES):
            words = RESPONSIBILITY_WORDS.get(whose, whose) if whose else "every run"
            yield (f"whose failure: {whose or 'any'}", f"responsibility filter: {words}",
                   partial(screen.run_action, f"set_query('responsibility', {whose!r})"))
        for sort in SORTS:
            yield f"sort by {sort}", "sort the run list", partial(screen.run_action, f"set_query('sort', {sort!r})")


class TraceCommands(Provider):
    """Lists the app's commands so every action is reachable without remembering its key."""

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for name, help_text, callback in palette_commands(self.screen, self.app):
            score = matcher.match(name)
            if score > 0:
                yield Hit(score, matcher.highlight(name), callback, help=help_text)

    async def discover(self) -> Hits:
        for name, help_text, callback in palette_commands(self.screen, self.app):
            yield DiscoveryHit(name, callback, help=help_text)
