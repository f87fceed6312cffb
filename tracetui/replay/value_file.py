"""``replay --set PATH=@FILE``: an edit's value read from a file, and the files ``explain`` writes for it.

``@FILE`` stands for FILE's whole content, read as if it had been typed after ``=``
(UTF-8, exactly: a final newline is part of a text field's value; JSON ignores it).
A text that itself begins with ``@`` is typed as a JSON string: ``'"@home"'``.

``explain`` prints a ``tracetui replay`` command for each fix; a value of thousands
of characters (a whole recorded response of a long run) would make that command
tens of kilobytes. Such a value is written to a file the command reads instead, in
a folder of this user's own under the system's temporary folder
(``$TMPDIR/tracetui-UID/``, mode 0700, so no one else can plant a value there). The
file is named after a hash of its content, so explaining again writes nothing new
and two explains never race for a name; it is written atomically.
"""
from __future__ import annotations

import hashlib
import os
import stat
import tempfile
from pathlib import Path

from tracetui.replay.pointer import EditError
from tracetui.trace import limits
from tracetui.trace.writer import AtomicWriter

FROM_FILE = "@"


def value_text(text: str) -> str:
    """What follows ``PATH=``, with ``@FILE`` replaced by the file's text; :class:`EditError` when it cannot be
    read."""
    if not text.startswith(FROM_FILE):
        return text
    name = text[len(FROM_FILE):]
    if not name:
        raise EditError("@ must be followed by the file that holds the value (a text that begins with @ is "
                        "typed as JSON: '\"@…\"')")
    most = limits.MAX_LINE_BYTES  # no value larger than a trace line could be recorded
    try:
        with open(name, "rb") as file:
            data = file.read(most + 1)
    except OSError as exc:
        raise EditError(f"cannot read the value from {name}: {exc.strerror or exc}") from None
    if len(data) > most:
        raise EditError(f"{name} holds more than {most:,} bytes, more than a trace line may hold")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise EditError(f"{name} is not UTF-8 text (byte {exc.start + 1} is not)") from None


def value_folder() -> Path:
    """Where ``explain`` writes long values: this user's folder under the temporary folder (not created here)."""
    uid = os.getuid() if hasattr(os, "getuid") else None
    return Path(tempfile.gettempdir()) / (f"tracetui-{uid}" if uid is not None else "tracetui")


def _private_folder() -> Path:
    folder = value_folder()
    try:
        folder.mkdir(mode=0o700)
    except FileExistsError:
        pass
    info = os.lstat(folder)
    if not stat.S_ISDIR(info.st_mode) or (hasattr(os, "getuid") and (
            info.st_uid != os.getuid() or info.st_mode & 0o077)):
        raise OSError(f"{folder} is not a folder only this user can write to")
    return folder


def write_value_file(text: str) -> Path:
    """``text`` in a file named after its hash in :func:`value_folder`, written atomically; OSError when it
    cannot be."""
    data = text.encode("utf-8")
    return write_private_once(f"value-{hashlib.sha256(data).hexdigest()[:20]}.txt", data)


def write_private_once(name: str, data: bytes) -> Path:
    """``data`` in the file ``name`` of :func:`_private_folder`, written atomically unless it already holds
    exactly that (the names hold a hash of their content: written by an earlier command, it is left as it is)."""
    path = _private_folder() / name
    try:
        if path.read_bytes() == data:
            return path
    except OSError:
        pass
    with AtomicWriter(path) as out:
        out.write(data)
    return path
