"""The ``tracetui`` command line: generate, run, check, replay, open.

One module per subcommand (or small group of them); each parses its flags, calls the layers below and
prints. :data:`main` is the entry point; each subcommand's module is imported when that command runs
(:data:`~tracetui.cli.group.COMMAND_MODULES`)."""
from __future__ import annotations

import os

# numpy is used for bulk byte scans, never for linear algebra; left alone, its BLAS starts a thread per
# core that spins for the first ~50 ms after import, taking a core from the index and the explorer's
# first frame. Set here, for the command, before anything imports numpy; a user's own
# setting wins.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

from tracetui.cli.group import exit_on_signals, load_all_commands, main  # noqa: E402
from tracetui.cli.common import writes_over  # noqa: E402

__all__ = ["main", "exit_on_signals", "regenerate_samples", "writes_over", "load_all_commands"]


def __getattr__(name: str):  # ``from tracetui.cli import regenerate_samples`` without importing it for every command
    if name == "regenerate_samples":
        from tracetui.cli.generate import regenerate_samples

        return regenerate_samples
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
