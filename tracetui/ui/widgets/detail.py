"""The selected event in full: fields, summary, call-id partners, data and raw record."""
from __future__ import annotations

from typing import Any, Sequence

import orjson
from rich.highlighter import JSONHighlighter
from rich.style import Style
from rich.text import Text
from textual.containers import VerticalScroll
from textual.widgets import Static

from tracetui.trace.redact import redact_value
from tracetui.trace.safe_text import printable, redacted_prefix
from tracetui.ui.model import cell_icon, partners

#: the most of an event's JSON the pane shows (the rest: ``v``, the whole value)
MAX_JSON_CHARS = 20_000
#: the most of one text field (a summary) the pane shows
MAX_TEXT_CHARS = 2_000
#: strings longer than this are cut before a huge event is redacted for the preview: redaction reads every
#: character (seconds for a 15 MB body), and past twice the preview nothing is shown, so a secret that
#: crosses the preview's end is still redacted whole
MAX_PREVIEW_STRING = 2 * MAX_JSON_CHARS
OUTCOME_STYLE = {"ok": "green", "recovered": "#ffaf00", "failed": "bold red"}
_json = JSONHighlighter()


def clipped(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters, saying how much more there is and how to see it."""
    if len(text) <= limit:
        return text
    return redacted_prefix(text, limit) + f"… ({len(text) - limit:,} more characters: v shows the whole event)"


def dumps(value: Any, indent: bool) -> str:
    """JSON for display, safe for the terminal and capped so a huge record stays responsive."""
    option = orjson.OPT_INDENT_2 if indent else 0
    try:
        length = len(orjson.dumps(value, option=option, default=repr).decode())  # its length, never shown
    except TypeError:
        length = 0
    if length > MAX_JSON_CHARS:
        value = _cut_strings(value)
    try:
        value = redact_value(value)  # as the file would hold it, before it is cut
    except TypeError:
        pass
    try:
        raw = orjson.dumps(value, option=option, default=repr).decode()
    except TypeError:
        raw = repr(value)
    length = max(length, len(raw))
    if len(raw) > MAX_JSON_CHARS:
        raw = raw[:MAX_JSON_CHARS] + f"\n… {length - MAX_JSON_CHARS:,} more characters: v shows the whole event"
    return printable(raw, keep_newlines=indent)


def _cut_strings(value: Any) -> Any:
    """``value`` with every string cut to MAX_PREVIEW_STRING characters (keys and structure kept, so
    a credential key or an edit's path still decides as in the file)."""
    if isinstance(value, str):
        return value[:MAX_PREVIEW_STRING]
    if isinstance(value, dict):
        return {k: _cut_strings(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_cut_strings(v) for v in value]
    return value


def event_text(event: dict[str, Any], events: Sequence[dict[str, Any]], compact: bool = False) -> Text:
    """Everything about one event as a rich Text; trace strings are only ever literal."""
    text = Text()
    outcome = str(event.get("outcome"))
    fields = [("kind", event.get("kind")), ("outcome", outcome), ("code", event.get("code")),
              ("call_id", event.get("call_id")), ("turn", event.get("turn")), ("t_ms", event.get("t_ms"))]
    if compact:  # one line of fields: the summary and partners matter more on a small terminal
        for name, value in fields:
            if value is not None:
                style = OUTCOME_STYLE.get(outcome, "") if name == "outcome" else ""
                shown = printable(clipped(str(value), 200))
                shown = {"turn": f"turn {shown}", "t_ms": f"{shown} ms"}.get(name, shown)
                text.append(shown, style)
                text.append(" · ", "dim")
        text.right_crop(3)
        text.append("\n")
    else:
        for i, (name, value) in enumerate(fields):
            text.append(f"{name:<8}", "dim")
            style = OUTCOME_STYLE.get(outcome, "") if name == "outcome" else "bold" if name == "kind" else ""
            shown = "—" if value is None else printable(clipped(str(value), 200))
            text.append(f"{shown:<22}" if i % 3 != 2 else shown, style)
            text.append("\n" if i % 3 == 2 else "  ")
        text.append("summary ", "dim")
    text.append(printable(clipped(str(event.get("summary") or ""), MAX_TEXT_CHARS)) + "\n")
    for call_id, group in partners(events, event):
        text.append("call    " if not compact else "", "dim")
        text.append(printable(call_id), "bold")
        text.append(" ")
        for other in group:
            seq = other.get("seq")
            label = f"{cell_icon(other)} {other.get('lane')} {seq}"
            text.append("  ")
            if other is event:
                text.append(f"◆ {label}", "reverse")
                continue
            action = Style(meta={"@click": f"screen.jump_to_step({int(seq)})"}) if isinstance(seq, int) else Style()
            text.append(f"▸ {label}", Style(color="cyan") + action)
        text.append("\n")
    if compact:
        return text
    text.append("\ndata\n", "bold dim")
    text.append_text(_json(Text(dumps(event.get("data"), indent=True))))
    text.append("\n\nraw record\n", "bold dim")
    text.append(dumps(event, indent=False), "dim")
    return text


class DetailPane(VerticalScroll, can_focus=True):
    """Scrolls when the event's data is long; click a partner to jump to it."""

    DEFAULT_CSS = "DetailPane { height: 1fr; padding: 0 1; } DetailPane > Static { width: 1fr; }"

    def compose(self):
        yield Static(id="detail-body")

    event: dict[str, Any] | None = None

    def show(self, event: dict[str, Any] | None, events: Sequence[dict[str, Any]], compact: bool = False) -> None:
        self.event = event
        body = self.query_one("#detail-body", Static)
        if event is None:
            self.border_title = Text("event")
            self.text = Text("no event selected", style="dim")
        else:
            title = Text(printable(clipped(f"event {event.get('seq')} · {event.get('lane')}", 200)))
            if event.get("call_id"):
                title.append(f" · call_id {printable(clipped(str(event['call_id']), 200))}")
            self.border_title = title
            self.text = event_text(event, events, compact)
        body.update(self.text)
        self.scroll_home(animate=False)
