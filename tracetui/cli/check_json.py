"""What ``check``'s outputs share: the JSON document's pieces, written as they are decided, and the first
problem lines printed before an error. Its own module so each mode of check (plain, --baseline/--junit,
--group) prints the one same shape, without one command module importing another."""
from __future__ import annotations

import sys
from typing import Any

import click

#: problem lines listed before "no runs found"
FIRST_PROBLEMS = 5


def first_problems(problems: Any) -> str:
    """The first problem lines, one a line (and how many more there are), to print before an error."""
    from itertools import islice

    from tracetui.trace.safe_text import printable

    shown = [f"line {p.line}: {printable(p.message)}\n" for p in islice(iter(problems), FIRST_PROBLEMS)]
    more = len(problems) - len(shown)
    return "".join(shown) + (f"… and {more} more problem line(s)\n" if more > 0 else "")


def close_json(opened: Any, error: str | None = None, problems: Any = ()) -> None:
    """Close the runs list and the document when it was opened: standard output stays one JSON document.
    ``error``: why check stopped there, given as the document's ``"error"`` (its runs are not all the input's),
    after the ``problems`` lines read before it."""
    if not opened:
        return
    if error is None:
        click.echo("\n  ]\n}", nl=True)
        return
    from tracetui.trace.output_stream import write_out
    from tracetui.trace.safe_text import printable_json

    write_out("\n  ],\n  \"problems\": ")
    write_json_list({"line": p.line, "message": p.message} for p in problems)
    write_out(",\n  \"error\": " + printable_json(error, indent=False) + "\n}\n", flush=True)


def fail(message: str, opened: Any = False, error: str | None = None, problems: Any = ()) -> None:
    """An error that ends check (exit 2): ``message`` on standard error, and the JSON document, when it was
    opened, closed with ``error`` (the error itself, as read: the document escapes it) and ``problems``."""
    close_json(opened, error if error is not None else message, problems)
    click.echo(message, err=True)
    sys.exit(2)


def json_open(trace_file: str) -> str:
    from tracetui.trace.safe_text import printable_json

    return '{\n  "file": ' + printable_json(trace_file, indent=False) + ',\n  "runs": [\n'


def json_item(value: Any, indent: str = "    ") -> str:
    """``value`` as ``printable_json`` prints it (redacted, controls escaped), inside a list two levels deep."""
    from tracetui.trace.safe_text import printable_json

    text = printable_json(value)
    return indent + text.replace("\n", "\n" + indent)


def write_json_list(values: Any) -> None:
    """An indented JSON list at the second level, written item by item (never whole in memory)."""
    from tracetui.trace.output_stream import write_out

    first = True
    for value in values:
        write_out(("[\n" if first else ",\n") + json_item(value))
        first = False
    write_out("[]" if first else "\n  ]")

