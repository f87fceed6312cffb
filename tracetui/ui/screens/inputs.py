"""The inputs tree (``i``): everything a run was made from, each field with its JSON Pointer path.

Nodes are built when they are opened, so a run with large recorded responses opens at
once. ``Enter`` on a leaf opens the editor on that path; ``e`` on any node does too,
and an object or list is edited as JSON over several lines.
"""
from __future__ import annotations

from typing import Any

import orjson
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Static, Tree
from textual.widgets.tree import TreeNode

from tracetui.replay.edit import OVERRIDES, editable_document
from tracetui.replay.pointer import format_pointer
from tracetui.trace.reader import RunData
from tracetui.trace.redact import redact_field
from tracetui.trace.safe_text import one_line, printable
from tracetui.ui.screens.edit import EditScreen

KEY_W, VALUE_W = 18, 30
HIDDEN = (OVERRIDES, "edits")  # how an edited run records its edits: shown through the fields they changed
MAX_CHILDREN = 500


def summary(value: Any, noun: str = "item") -> str:
    """A value in one short cell: scalars as JSON, containers by their size."""
    if isinstance(value, dict):
        return f"{{{len(value)} field{'s' if len(value) != 1 else ''}}}"
    if isinstance(value, list):
        return f"[{len(value)} {noun}{'s' if len(value) != 1 else ''}]"
    try:
        return orjson.dumps(value).decode()
    except (TypeError, orjson.JSONEncodeError):
        return type(value).__name__


def node_label(key: str, value: Any, path: str, leaf: bool, key_w: int = KEY_W, value_w: int = VALUE_W) -> Text:
    """key, value, path in columns (a leaf is indented by the width of an open/close arrow, to line up)."""
    label = Text("  " if leaf else "")
    label.append(one_line(key, key_w - 1).ljust(key_w), "bold")
    noun = "exchange" if path == "/responses" else "item"
    label.append(one_line(summary(value, noun), value_w - 1).ljust(value_w), "cyan" if isinstance(value, str) else "")
    label.append(printable(path), "dim")
    return label


class InputsScreen(ModalScreen[tuple[str, Any] | None]):
    """Dismisses with the edit made in the editor (``(path, value)``), or None."""

    CSS_PATH = "../styles/replay.tcss"
    BINDINGS = [
        Binding("e", "edit", "edit this field", id="inputs.edit"),
        Binding("y", "copy", "copy the path or the value", tooltip="copy the field's JSON Pointer path or its value",
                id="inputs.copy"),
        Binding("escape", "close", "back", key_display="esc", id="inputs.close"),
    ]

    def __init__(self, run: RunData) -> None:
        super().__init__()
        self.run = run
        self.doc = editable_document(run)
        self.key_w, self.value_w = KEY_W, VALUE_W

    def compose(self) -> ComposeResult:
        with Vertical(id="inputs-box"):
            yield Tree(Text(printable(f"inputs of {self.run.run_id}")), id="inputs-tree")
            yield Static(Text.assemble((" enter ", "bold #ffaf00"), "open or edit  ", (" e ", "bold #ffaf00"),
                                       "edit (objects as JSON)  ", (" y ", "bold #ffaf00"), "copy  ",
                                       (" esc ", "bold #ffaf00"), "back"), id="inputs-keys")

    def on_mount(self) -> None:
        self.query_one("#inputs-box").border_title = Text(one_line(f"inputs of {self.run.run_id}", 80))  # never markup
        if self.app.size.width < 110:  # narrow: shorter columns, so the paths stay in view
            self.key_w, self.value_w = 14, 16
        tree = self.query_one(Tree)
        tree.show_root = False
        tree.guide_depth = 2
        inputs = {k: v for k, v in self.doc["inputs"].items() if k not in HIDDEN}
        for key, value in inputs.items():
            self._add(tree.root, key, value, ["inputs", key])
        self._add(tree.root, "responses", self.doc["responses"], ["responses"])
        tree.root.expand()
        tree.focus()

    def _add(self, parent: TreeNode, key: str, value: Any, parts: list[Any]) -> None:
        path = format_pointer(parts)
        value = redact_field(key, value)  # as the file holds it: a credential's value, object or list is the marker
        leaf = not isinstance(value, (dict, list)) or not value
        node = parent.add(node_label(key, value, path, leaf, self.key_w, self.value_w), data=(parts, value),
                          allow_expand=not leaf)
        node.populated = False  # type: ignore[attr-defined]

    @on(Tree.NodeExpanded)
    def populate(self, event: Tree.NodeExpanded) -> None:
        node = event.node
        if node.data is None or getattr(node, "populated", True):
            return
        node.populated = True  # type: ignore[attr-defined]
        parts, value = node.data
        items = value.items() if isinstance(value, dict) else enumerate(value)
        for n, (key, child) in enumerate(items):
            if n >= MAX_CHILDREN:
                node.add_leaf(Text(f"… {len(value) - n} more: e on the parent edits them all", "dim"))
                break
            self._add(node, str(key), child, [*parts, key])

    @on(Tree.NodeSelected)
    def selected(self, event: Tree.NodeSelected) -> None:
        if event.node.data is not None and not event.node.allow_expand:
            self.open_editor(event.node)

    def action_edit(self) -> None:
        node = self.query_one(Tree).cursor_node
        if node is not None and node.data is not None:
            self.open_editor(node)

    def action_copy(self) -> None:
        """The field's JSON Pointer path (as ``replay --set`` takes it) or its value (as the tree shows it)."""
        from tracetui.ui.clipboard import clipboard_value, copy_text
        from tracetui.ui.screens.copy_menu import CopyChoice, open_copy_menu

        node = self.query_one(Tree).cursor_node
        if node is None or node.data is None:
            self.notify("no field selected", timeout=2)
            return
        parts, value = node.data
        path = format_pointer(parts)
        preview = summary(value) if isinstance(value, (dict, list)) else clipboard_value(value)  # a big one: later
        open_copy_menu(self, f"copy {path}", [
            CopyChoice("p", "path", path, lambda: copy_text(self, "the path", clipboard_value(path))),
            CopyChoice("v", "value", preview, lambda: copy_text(self, f"the value of {path}", clipboard_value(value))),
        ])

    def open_editor(self, node: TreeNode) -> None:
        parts, _ = node.data
        path = format_pointer(parts)
        self.app.push_screen(EditScreen(self.run, path, f"edit run {self.run.run_id} · {path}"), self._edited)

    def _edited(self, result: tuple[str, Any] | None) -> None:
        if result is not None:
            self.dismiss(result)

    def action_close(self) -> None:
        self.dismiss(None)
