"""Opening huge traces fast, and keeping up with files that change: the index, split by concept.

- :mod:`.lines`: one file read with ``pread`` (never a memory map, so a file cut short
  cannot raise SIGBUS) and its line table, kept per run as byte segments;
- :mod:`.steps` and :mod:`.classify`: a step of whole lines read and classified in bulk
  with numpy (kind, run id, items); :mod:`.validation` and :mod:`.records` validate every
  line strictly (``check``) with msgspec, leaving to the exact path what only it may judge;
- :mod:`.runs`: one file's runs: repeated run ids, listed names (``id#2``), counts;
- :mod:`.bulk`: a chunk linked to its runs at once, with no Python work per line, when
  nothing in it needs the per-line rules; :mod:`.items`: what that needs that the chunk alone
  decides (its items, run lines' fields, summaries' row fields), found where the chunk is read;
  :mod:`.layout`: the writer's run and summary lines;
- :mod:`.scanner`: steps linked to runs (in bulk, or line by line through the reader's
  rules), problems found, runs that end reported;
- :mod:`.source`, :mod:`.publishing`, :mod:`.files`, :mod:`.entries`: :class:`IndexedSource`,
  the explorer's source of RunEntry rows (made from summary lines, rows alike sharing their
  shape), which also follows growing files;
- :mod:`.changes`: noticing a file truncated, replaced, rewritten or grown while open.

numpy is imported by the scan itself, not by this package, so opening the explorer
does not wait for it.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tracetui.trace.index.changes import Change, TraceChanged
    from tracetui.trace.index.publishing import MAX_PROBLEMS_PER_FILE
    from tracetui.trace.index.source import DEFAULT_CHUNK_BYTES, IndexedSource, Input, ScanProgress

#: the package's names and the module each comes from
_HOMES = {"Change": "changes", "TraceChanged": "changes", "MAX_PROBLEMS_PER_FILE": "publishing",
          "DEFAULT_CHUNK_BYTES": "source", "IndexedSource": "source", "Input": "source", "ScanProgress": "source"}
__all__ = sorted(_HOMES)


def __getattr__(name: str) -> Any:
    """The package's names, imported on first use: a scan imports only what it needs."""
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(f"{__name__}.{home}"), name)
    globals()[name] = value
    return value
