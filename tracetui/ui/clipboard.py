"""Copying to the clipboard: one way for every ``y``, so each copy says alike what it copied, or why not.

The text goes through Textual's :meth:`App.copy_to_clipboard` (OSC 52: the terminal puts it on the
clipboard, over SSH too); ``App.clipboard`` keeps the last copy. What gets copied and how is decided
here:

- a value is copied as the value: text as it is, anything else as compact JSON. Secrets are redacted as
  the file would hold them (the explorer never hands one out), and a text holding a character a terminal
  acts on (ESC, CR, C1, bidi) is copied as its JSON string instead: pasted, an ``ESC[201~`` would end a
  shell's bracketed paste early and run what follows;
- a command is built by the core (:func:`tracetui.explain.command.printed_command`: every argument
  redacted, then shell-quoted) and copied only when it is printable as it is;
- a run without a file of its own (standard input, the demo) is named by a copy of it
  (:mod:`tracetui.replay.run_copy`), or the toast says why there is none.
"""
from __future__ import annotations

from typing import Any

import orjson

from tracetui.trace.redact import redact_value
from tracetui.trace.safe_text import has_control, json_for_terminal, one_line, printable

#: a toast's message is cut to this many characters (it wraps within the toast, never off the screen)
TOAST_CHARS = 80
#: a copy longer than this is said to be long: OSC 52 sends it whole, and several terminals (and tmux) drop or cut
#: a sequence of more than about 100 kB rather than copy it
LONG_COPY = 74_000


def clipboard_value(value: Any) -> str:
    """``value`` as it is copied: redacted; a plain text as it is, a text with a control character or anything
    else as compact JSON (see the module)."""
    try:
        value = redact_value(value)
    except TypeError:
        value = repr(value)
    if isinstance(value, str) and not has_control(value):
        return value
    return json_for_terminal(orjson.dumps(value, default=repr).decode())


def copy_text(screen: Any, what: str, text: str) -> None:
    """Put ``text`` on the clipboard and say, in one toast of at most TOAST_CHARS characters, what was copied."""
    screen.app.copy_to_clipboard(text)
    if len(text) > LONG_COPY:
        what += f" ({len(text):,} chars: too long for some terminals)"
    head = f"copied {one_line(what, TOAST_CHARS - 20)}: "  # a long path in ``what`` leaves room for the text
    screen.notify(head + one_line(text, max(10, TOAST_CHARS - len(head))), markup=False, timeout=4)


def not_copied(screen: Any, why: str, outcome: str = "not copied") -> None:
    screen.notify(one_line(why, 2 * TOAST_CHARS) + f": {outcome}", severity="warning", markup=False, timeout=5)


def copy_command(screen: Any, what: str, printed: Any) -> bool:
    """Copy a :class:`~tracetui.explain.command.PrintedCommand`'s text, or say why there is none to copy."""
    command = printed.text
    if command is None or printable(command) != command:  # pasted, an ESC[201~ ends a shell's bracketed paste early
        not_copied(screen, printed.why_not or "the command holds a control character or a secret from the trace")
        return False
    if printed.redacted:  # the CLI prints redacted_note under such a command; the toast says it in short
        what += " (holds <redacted>: may not reproduce)"
    copy_text(screen, what, command)
    return True


def command_file_or_say(screen: Any, original: str | None, run: Any, outcome: str = "not copied") -> str | None:
    """The file a command for ``run`` names (its own, or a copy of a run from standard input), or None after a
    toast saying why there is none (and then ``outcome``)."""
    from tracetui.replay.run_copy import command_file
    from tracetui.trace.writer import NothingToWrite

    try:
        return command_file(original, run)
    except (OSError, NothingToWrite) as exc:
        why = getattr(exc, "strerror", None) or str(exc)
        not_copied(screen, f"run {run.run_id} has no file of its own (standard input), and a copy of it could not "
                           f"be written for the command to name: {why}", outcome)
        return None
