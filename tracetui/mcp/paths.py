"""Which files an assistant may make tracetui read: regular files inside the directories the user named.

The assistant chooses the paths, so every path is checked before anything reads it: resolved through
every symlink (``os.path.realpath``) and compared with each allowed directory (``os.path.commonpath``),
then opened without following a last symlink (``O_NOFOLLOW``, without blocking: a FIFO never waits for
a writer) and checked on the open descriptor (``fstat``: a regular file, not a device, FIFO, socket or
directory). The readers are then handed that very descriptor (``/proc/self/fd/N`` where the system has
it), so what is read is what was checked, even if a name is swapped meanwhile. Its type is looked at
before the open too (``lstat``): opening a device can do something (a tape rewinds), so none is opened.

A hard link inside a served directory is served: it is that directory's file (the same file under a
second name), and only someone who may write there can make one, as they could copy a file in.
"""
from __future__ import annotations

import os
import stat
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Iterator, Sequence

from tracetui.mcp.bounds import echoed


class PathRefused(Exception):
    """A path the server will not read, with the reason in words (shown to the assistant as the tool's error)."""


_KINDS = {stat.S_IFIFO: "a FIFO", stat.S_IFCHR: "a character device", stat.S_IFBLK: "a block device",
          stat.S_IFSOCK: "a socket", stat.S_IFDIR: "a directory", stat.S_IFLNK: "a symlink"}


@dataclass(frozen=True)
class CheckedFile:
    """A file that passed the checks: ``shown`` is the path as the caller gave it (for messages and the
    replay commands explain prints), ``path`` what the readers open (the checked descriptor)."""

    shown: str
    path: str
    real: str


class Confinement:
    """The directories given on the command line; every tool's path must lie inside one of them."""

    def __init__(self, roots: Sequence[str]):
        if not roots:
            roots = ["."]
        self.roots = [os.path.realpath(r) for r in roots]
        for given, real in zip(roots, self.roots):
            if not os.path.isdir(real):
                raise PathRefused(f"{given}: not a directory; tracetui mcp serves the files under the directories "
                                  f"it is given")

    def where(self, path: str) -> str:
        """The real path of ``path`` (relative paths are taken from the first directory), refused unless it
        lies inside an allowed directory."""
        if not isinstance(path, str) or not path.strip():
            raise PathRefused("give the path of a trace file (relative to the first served directory, or absolute)")
        if "\x00" in path:
            raise PathRefused("a path cannot hold a NUL character")
        joined = path if os.path.isabs(path) else os.path.join(self.roots[0], path)
        real = os.path.realpath(joined)
        if not any(_inside(real, root) for root in self.roots):
            lexical = os.path.normpath(joined)
            how = ("it leads there through a symlink" if any(_inside(lexical, root) for root in self.roots)
                   else "it lies outside them")
            raise PathRefused(f"{echoed(path)}: refused: this server reads only files under {self.described()}, "
                              f"and {how}")
        return real

    def described(self) -> str:
        return ", ".join(self.roots)

    @contextmanager
    def opened(self, path: str) -> Iterator[CheckedFile]:
        """The checked file, open for as long as the block runs."""
        real = self.where(path)
        shown = echoed(path)
        try:
            kind = stat.S_IFMT(os.lstat(real).st_mode)
        except OSError:
            kind = stat.S_IFREG  # (the open below says why)
        if kind != stat.S_IFREG:
            raise PathRefused(f"{shown}: is {_KINDS.get(kind, 'not a regular file')}, not a trace file; give a "
                              f"regular file")
        flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
        try:
            fd = os.open(real, flags)
        except FileNotFoundError:
            raise PathRefused(f"{shown}: no such file") from None
        except PermissionError:
            raise PathRefused(f"{shown}: permission denied") from None
        except OSError as exc:  # ELOOP: the last component became a symlink after it was resolved
            raise PathRefused(f"{shown}: cannot open: {exc.strerror or exc}") from None
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                kind = _KINDS.get(stat.S_IFMT(st.st_mode), "not a regular file")
                raise PathRefused(f"{shown}: is {kind}, not a trace file; give a regular file")
            os.set_blocking(fd, True)
            by_fd = f"/proc/self/fd/{fd}"
            if not os.path.exists(by_fd):  # (no /proc: the name checked is what is read)
                yield CheckedFile(path, real, real)
                return
            opened = os.readlink(by_fd)  # where the descriptor really is: a directory swapped for a symlink
            if not any(_inside(opened, root) for root in self.roots):  # between the check and the open shows here
                raise PathRefused(f"{shown}: refused: it led outside {self.described()} when it was opened")
            yield CheckedFile(path, by_fd, opened)
        finally:
            os.close(fd)


def _inside(path: str, root: str) -> bool:
    try:
        return os.path.commonpath([path, root]) == root
    except ValueError:  # another drive (Windows), or a mix of absolute and relative
        return False
