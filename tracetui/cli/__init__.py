"""The ``tracetui`` command line: generate, run, check, replay, open.

One module per subcommand (or small group of them); each parses its flags, calls the layers below and
prints. Importing this package registers every subcommand on :data:`main`, the entry point."""
from __future__ import annotations

import os

# numpy is used for bulk byte scans, never for linear algebra; left alone, its BLAS starts a thread per
# core that spins for the first ~50 ms after import, taking a core from the index and the explorer's
# first frame. Set here, for the command, before anything imports numpy; a user's own
# setting wins.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

from tracetui.cli.group import exit_on_signals, main  # noqa: E402
from tracetui.cli.common import writes_over  # noqa: E402
from tracetui.cli import generate as _generate, run as _run, check as _check  # noqa: E402,F401  (registers them)
from tracetui.cli import explain as _explain, replay as _replay  # noqa: E402,F401
from tracetui.cli import open as _open, export as _export  # noqa: E402,F401
from tracetui.cli import record as _record, share as _share, mcp as _mcp  # noqa: E402,F401
from tracetui.cli import diff as _diff  # noqa: E402,F401
from tracetui.cli.generate import regenerate_samples  # noqa: E402

__all__ = ["main", "exit_on_signals", "regenerate_samples", "writes_over"]
