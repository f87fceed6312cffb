"""One file of an indexed source: its lines, its runs and its problems; and inputs that are not named files."""
from __future__ import annotations

import orjson

from tracetui.trace.index.changes import TraceChanged
from tracetui.trace.index.lines import FileLines
from tracetui.trace.index.runs import RunTable
from tracetui.trace.index.scanner import Scanner
from tracetui.trace.reader import Problem


class Input:
    """A trace that is not a named file: standard input spooled to an unnamed file (see :mod:`tracetui.trace.spool`).

    ``fd`` reads it; ``growing()`` is true while more is still being written to it;
    ``long_lines`` gives the true length of lines it kept only the start of; ``error``, why the copy
    stopped before the input ended (it then holds only a cut of it).
    """

    label: str = "-"
    fd: int = -1
    long_lines: dict[int, int] = {}
    error: str | None = None

    def growing(self) -> bool:
        return False


class FileIndex:
    """One file's index: its lines (:class:`.lines.FileLines`), its runs (:class:`.runs.RunTable`), its problems."""

    def __init__(self, lines: FileLines, runs: RunTable):
        self.lines = lines
        self.runs = runs
        self.scanner: Scanner | None = None
        self.problems: list[Problem] = []
        self.problem_count = 0
        self.runs_found = 0
        self.grown: set[int] = set()  # published runs that got more lines since (following)

    @property
    def source(self) -> int:
        return self.lines.source

    @property
    def path(self) -> str:
        return self.lines.path

    @property
    def done(self) -> bool:
        return self.lines.done

    def run_number(self, name: str) -> int:
        """The run listed as ``name`` (its id, or ``id#2``…). Raises KeyError."""
        try:
            return self.runs.number(name)
        except KeyError:
            raise KeyError(f"{name!r} is not a run of {self.path}") from None

    def failure_reason(self, run_name: str) -> str:
        """The first failure's reason in a run's summary line (its last), read back from the file."""
        try:
            summary = orjson.loads(self.lines.last_line(self.runs.tail[self.run_number(run_name)]))
            run_id, reason = summary["run_id"], summary["first_failure"]["reason"]
            if (summary["rec"] == "summary" and isinstance(reason, str) and isinstance(run_id, str)
                    and (run_name == run_id or run_name.startswith(run_id + "#"))):  # still this run's line
                return reason
        except (OSError, ValueError, KeyError, TypeError, TraceChanged):
            pass
        return "(the reason could not be read back: the trace file changed or was closed since it was opened)"

    def close(self) -> None:
        self.lines.close()


