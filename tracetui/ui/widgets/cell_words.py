"""How wide a swimlane cell is, and the word it holds at that width.

The grid fits the terminal: a short run is shown whole, a long one in whole cells. A cell is
a glyph, a space and a word; at the narrower widths the word is a short form chosen for it
(``deny``, ``call``), never a clipped fragment of the long one (``alid``).
"""
from __future__ import annotations

from typing import NamedTuple

from rich.cells import cell_len

from tracetui.trace.format import LANE_TITLES

#: lane names for the label column when the full titles do not leave room for the steps
LANE_TAGS = {"http": "http", "generation": "gen", "arguments": "args", "authorization": "auth",
             "receipt": "rcpt", "answer": "ans"}

#: short forms of the cell words (:func:`tracetui.ui.model.cell_label`): (at most 5 cells, at most 3)
SHORT_WORDS = {
    "calls": ("calls", "fn"), "text": ("text", "txt"), "ok": ("ok", "ok"), "valid": ("ok", "ok"),
    "allowed": ("ok", "ok"), "receipt": ("ok", "ok"), "verified": ("ok", "ok"), "lookup": ("look", "get"),
    "unchecked": ("unchk", "?"), "denied": ("deny", "no"), "tool err": ("err", "err"), "loop": ("loop", "lp"),
    "refused": ("rfsd", "rfs"), "cut off": ("cut", "cut"), "dup id": ("dupid", "dup"),
    "no tool": ("notl", "?fn"), "unbacked": ("unbkd", "unb"), "failed": ("fail", "err"),
    "cancel": ("cancl", "cxl"), "budget": ("budgt", "bdg"), "schema": ("schma", "sch"),
    "bad json": ("json", "jsn"), "handoff": ("hand", "hnd"), "rule": ("rule", "rul"),
    "unknown": ("unkwn", "unk"), "twice": ("twice", "2x"), "protocol": ("proto", "prt"),
    "bad body": ("body", "bdy"), "stream": ("strm", "str"), "timeout": ("tmout", "t/o"),
}


class CellLayout(NamedTuple):
    """The grid's geometry at one width: label column, cell width, longest word, full lane titles."""

    label_w: int
    col_w: int
    word_w: int
    full_labels: bool


WIDE = CellLayout(15, 12, 9, True)
#: widest first: the first that shows every step is used
LAYOUTS = (WIDE, CellLayout(6, 12, 9, False), CellLayout(6, 8, 5, False), CellLayout(6, 6, 3, False))
#: a run too long to show whole: the widest layout that still shows this many steps, else the narrowest
MIN_STEPS_SHOWN = 8


def choose_layout(width: int, steps: int) -> CellLayout:
    for layout in LAYOUTS:
        if layout.label_w + steps * layout.col_w <= width:
            return layout
    for layout in LAYOUTS:
        if visible_steps(layout, width) >= MIN_STEPS_SHOWN:
            return layout
    return LAYOUTS[-1]


def visible_steps(layout: CellLayout, width: int) -> int:
    """How many whole cells fit beside the labels (at least one)."""
    return max(1, (width - layout.label_w) // layout.col_w)


def short_word(word: str, limit: int) -> str:
    """``word`` in at most ``limit`` cells: as it is, its short form, or cut with a visible ellipsis."""
    if cell_len(word) <= limit:
        return word
    forms = SHORT_WORDS.get(word)
    if forms is not None:
        form = forms[0] if limit >= 5 else forms[1]
        if cell_len(form) <= limit:
            return form
    if word.isdigit():  # an HTTP status or a number: never a fragment of one
        return "#"
    return word[:max(0, limit - 1)] + "…"


def lane_label(lane: str, layout: CellLayout) -> str:
    return LANE_TITLES[lane] if layout.full_labels else LANE_TAGS.get(lane, lane[:4])
