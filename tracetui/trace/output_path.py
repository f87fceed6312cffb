"""Which file a write to ``-o PATH`` lands on, found as the kernel finds it, and whether that is the input.

``os.path.realpath`` drops ``name/..`` by text when ``name`` does not exist, so
``nosuchdir/../runs.jsonl`` came out as ``runs.jsonl`` although opening it fails:
the same-file check (which asks the kernel) said "not the input" and the writer
(which used realpath) then replaced the input. Here a folder must be one the
kernel reaches (every part of it there, ``file/..`` refused), symlinks at the last
part are followed one at a time by the same rule, and the writer and the check both
use :func:`output_target`, so they cannot disagree.
"""
from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

#: symlinks followed at the last part of a path before giving up, as the kernel does (ELOOP)
MAX_LINKS = 40


def output_target(path: str | os.PathLike[str]) -> Path:
    """The absolute name of the file that writing to ``path`` replaces or creates.

    OSError, saying why, when opening ``path`` for writing would fail for its folder
    (a missing part, a part that is a file, a symlink loop).
    """
    given = os.fspath(path)
    name = given
    for _ in range(MAX_LINKS + 1):
        folder, base = os.path.split(name)
        if base in ("", ".", ".."):
            raise IsADirectoryError(errno.EISDIR, "is a folder, not a file", given)
        real = os.path.join(_real_folder(folder or ".", given), base)
        try:
            link = os.readlink(real)
        except OSError:  # not a symlink, or nothing there yet: this is the file
            return Path(real)
        name = os.path.join(os.path.dirname(real), link)  # an absolute target replaces the folder
    raise OSError(errno.ELOOP, f"more than {MAX_LINKS} symlinks in a row", given)


def _real_folder(folder: str, given: str) -> str:
    """``folder``'s absolute name without symlinks, when the kernel reaches it by that path."""
    try:
        seen = os.stat(folder)  # the kernel's own walk: a missing part or ``file/..`` fails here
    except FileNotFoundError:
        raise FileNotFoundError(errno.ENOENT, f"its folder {folder} does not exist (a part of it is missing)",
                                given) from None
    except OSError as exc:
        raise type(exc)(exc.errno, f"its folder {folder} cannot be reached: {exc.strerror}", given) from None
    if not stat.S_ISDIR(seen.st_mode):
        raise NotADirectoryError(errno.ENOTDIR, f"{folder} is not a folder", given)
    real = os.path.realpath(folder)
    try:
        same = os.path.samestat(os.stat(real), seen)
    except OSError:
        same = False
    if not same:  # moved while looked up (realpath and the kernel walked different folders)
        raise FileNotFoundError(errno.ENOENT, f"its folder {folder} changed while it was looked up", given)
    return real


def writes_over(output: str | os.PathLike[str], original: str | os.PathLike[str]) -> bool:
    """Whether writing to ``output`` would replace, or write into, the file ``original`` names.

    Through symlinks, hard links and ``..`` alike; ``original`` ``-`` is standard input
    (when it is a file). False when ``output`` cannot be written at all (the writer
    then fails without touching anything) or ``original`` does not exist.
    """
    try:
        theirs = os.fstat(0) if os.fspath(original) == "-" else os.stat(original)
    except OSError:
        return False
    if not stat.S_ISREG(theirs.st_mode):
        return False
    # the file as the kernel opens it (a device or link written in place), and the one an atomic write replaces
    for look in (lambda: os.stat(output), lambda: os.stat(output_target(output))):
        try:
            if os.path.samestat(look(), theirs):
                return True
        except OSError:
            continue
    return False
