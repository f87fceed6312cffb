"""The ``tracetui replay … --set PATH=VALUE`` command that reproduces a fix, ready to paste.

A value is written the way ``replay --set`` reads it back (text fields as typed, the
rest as JSON), and checked by reading it back: an edit that cannot be typed on a
command line is never offered as a fix. A value longer than :data:`LONG_VALUE`
characters, or one holding a line break or control character, is written to a file
that the command reads (``--set PATH=@FILE``, :mod:`tracetui.replay.value_file`), so
the command stays short and plain enough to paste.

Trace content is untrusted and a printed command gets pasted into a shell: each
argument is redacted *before* it is quoted (:class:`PrintedCommand`), never the
quoted line afterwards.

A run of the user's own agent is re-run with the user's command, so its replay command
ends ``-- COMMAND…``: the command the user gave (each argument redacted, then quoted),
never the ``command_hint`` the trace holds (running a command found in a file someone
sent you would be code execution from that file).
"""
from __future__ import annotations

import shlex
from dataclasses import dataclass
from typing import Any, Iterable, Sequence

import orjson

from tracetui.explain.candidate import Edit
from tracetui.replay.edit import current_value, parse_value
from tracetui.replay.pointer import EditError
from tracetui.replay.value_file import FROM_FILE, value_folder, write_value_file
from tracetui.trace.reader import RunData
from tracetui.trace.redact import redact_text
from tracetui.trace.safe_text import has_control, printable

#: longest value typed into a printed command; a longer one is read from a file
LONG_VALUE = 200


def _same(a: Any, b: Any) -> bool:
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return a == b


def set_text(run: RunData, edit: Edit) -> str | None:
    """What follows ``PATH=`` so that ``replay --set`` reads back exactly ``edit.value``; None when nothing does."""
    try:
        current, exists = current_value(run, edit.path)
    except EditError:
        return None
    texts = [edit.value] if exists and isinstance(current, str) and isinstance(edit.value, str) \
        and not edit.value.startswith(FROM_FILE) else []  # "@…" would name a file: typed as JSON instead
    try:
        texts.append(orjson.dumps(edit.value).decode())
    except (TypeError, orjson.JSONEncodeError):
        return None
    for text in texts:
        try:
            if _same(parse_value(current, text, exists=exists), edit.value):
                return text
        except EditError:
            continue
    return None


@dataclass(frozen=True)
class PrintedCommand:
    """A replay command ready to paste (``text``), or why none is printed (``why_not``).

    Every argument is redacted first and shell-quoted after, so a redaction can never eat a quote and
    let trace content out of its quotes; the command is printed only if printing it whole (which redacts
    and escapes again) leaves it exactly as it is. ``redacted`` says a value held a secret, which the
    command sets as ``<redacted>``: it may not reproduce the proof.
    """

    text: str | None
    why_not: str | None = None
    redacted: bool = False


def _plain(text: str) -> bool:
    """Whether a terminal shows ``text`` as typed: no line break, tab or control character (printable() would
    escape those, and a pasted ESC can end a shell's bracketed paste)."""
    return "\n" not in text and "\t" not in text and not has_control(text)


def _needs_file(text: str) -> bool:
    """A value too long to paste, or one that is not plain: read from a file, which holds it exactly, so the
    command line holds only plain characters."""
    return len(text) > LONG_VALUE or not _plain(text)


def printed_command(file: str | None, run_id: str, run: RunData, edits: Iterable[Edit],
                    command: Sequence[str] | None = None, verb: str = "replay") -> PrintedCommand:
    """The shell command that re-runs ``run`` with ``edits`` (and, for a record run, the user's ``command``
    after ``--``), every argument redacted then quoted for a POSIX shell; or why no command can be printed
    safely. ``verb="explain"`` (with no edits): the command that proves the run's fixes."""
    if file and file.startswith("-"):  # as typed it would be read as options
        file = f"./{file}"
    file = file or "FILE"
    if redact_text(file) != file or redact_text(run_id) != run_id:
        return PrintedCommand(None, "the trace's file name or the run id looks like a secret, which is "
                                    "never printed")
    args = ["tracetui", verb, file, "--run", run_id]
    redacted = False
    for edit in edits:
        if "=" in edit.path:  # --set splits PATH=VALUE at the first "=", and a JSON Pointer has no escape for it
            return PrintedCommand(None, f"the edited path {edit.path} holds '=', which replay --set would read as "
                                        f"the end of the path; no command can set it")
        text = set_text(run, edit)
        if text is None:
            return PrintedCommand(None, f"the value of {edit.path} cannot be typed on a command line")
        shown = redact_text(text)
        if shown != text:
            redacted = True
            try:
                current, exists = current_value(run, edit.path)
                parse_value(current, shown, exists=exists)
            except EditError:
                return PrintedCommand(None, f"the value of {edit.path} holds what looks like a secret, which is "
                                            f"never printed, and redacted it is no longer a value of that field")
        if _needs_file(shown):
            try:
                shown = FROM_FILE + str(write_value_file(shown))
            except OSError as exc:
                if not _plain(shown):  # not only long: it cannot be typed as it is
                    return PrintedCommand(None, f"the value of {edit.path} holds a line break or a control "
                                                f"character, and the file to hold it cannot be written: "
                                                f"{exc.strerror or exc}")
                # only long: typed out in full, long, but it still works
        args += ["--set", f"{edit.path}={shown}"]
    if command:
        agent = [redact_text(str(a)) for a in command]
        redacted = redacted or agent != [str(a) for a in command]
        if not all(_plain(a) for a in agent):
            return PrintedCommand(None, "your command holds a line break or a control character, which a "
                                        "printed command cannot hold")
        args += ["--", *agent]
    line = " ".join(shlex.quote(a) for a in args)
    if printable(line) != line:
        return PrintedCommand(None, "the command would hold a control character or what looks like a secret "
                                    "from the trace, so it is not printed")
    return PrintedCommand(line, redacted=redacted)


def replay_command(file: str | None, run_id: str, run: RunData, edits: Iterable[Edit],
                   command: Sequence[str] | None = None) -> str | None:
    """The command of :func:`printed_command`, or None when none can be printed safely."""
    return printed_command(file, run_id, run, edits, command).text


def redacted_note(command: PrintedCommand) -> str | None:
    """The line printed under a command whose values were redacted."""
    if not command.redacted or command.text is None:
        return None
    return "(a value held what looks like a secret, shown as <redacted>; the command sets that text in its place, " \
           "so it may not reproduce the proof)"


def value_files_note(command: str | None) -> str | None:
    """The line printed under a command that reads values from files: where they are, and why."""
    folder = str(value_folder())
    if not command or f"={FROM_FILE}{folder}" not in command:
        return None
    return (f"(values over {LONG_VALUE} characters or of several lines are read from files that explain wrote "
            f"in {folder}/: "
            f"--set PATH=@FILE reads the value from FILE)")


def needs_agent_command(run: RunData) -> bool:
    """Whether re-running ``run`` runs the user's own agent (a ``tracetui record`` run): then the user types the
    command, which is never read from the trace."""
    inputs = run.inputs if isinstance(run.inputs, dict) else {}
    return inputs.get("source") == "record"


def command_hint(run: RunData) -> str | None:
    """The argv a record run says it was recorded with, as one line to *show* (never run): a hint for the user."""
    inputs = run.inputs if isinstance(run.inputs, dict) else {}
    hint = inputs.get("command_hint")
    if not isinstance(hint, list) or not hint or not all(isinstance(a, str) for a in hint):
        return None
    return printable(redact_text(shlex.join(hint)))


def agent_command(text: str) -> list[str]:
    """The command a user typed (shell words, as a shell splits them; nothing is expanded or run here).

    Raises ValueError with a sentence to show when it is not one.
    """
    try:
        argv = shlex.split(text)
    except ValueError as exc:
        raise ValueError(f"that is not a command a shell would read ({exc}): check its quotes") from None
    if not argv:
        raise ValueError("type the command that runs your agent, e.g. python agent.py")
    return argv
