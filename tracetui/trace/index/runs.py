"""The runs of one file: which run a run id's next line belongs to, how each run is listed, its counts.

Repeated run ids follow the reader's rule (:meth:`~tracetui.trace.reader.RunData.accepts`):
``ids`` maps a run id to the newest run of that id (the key is the run's listed name, the same
string, when the id is listed as itself),
stored as ``~r`` once that run has read its summary, so a further line of that id
starts the next run. Runs of a repeated id are listed under
:func:`~tracetui.trace.reader.run_name` names (``id#2``…), kept in ``named``.
"""
from __future__ import annotations

from array import array
from typing import Any

from tracetui.trace.reader import run_name


class RunTable:
    """Per run ``r`` (0, 1, … in order of first line): its listed name, first and last segment,
    event count, position in the source's entry list (-1 until published), scenario, ablation."""

    def __init__(self) -> None:
        self.ids: dict[str, int] = {}
        self.named: dict[str, int] = {}  # listed name -> r, for runs of an id that repeats (and odd names)
        self.repeats: dict[str, int] = {}  # run id -> how many runs have that id, once it repeats
        self.names: list[str] = []
        self.head = array("q")
        self.tail = array("q")
        self.nevents = array("q")
        self.pub = array("q")
        self.scenario: list[str | None] = []
        self.ablation: list[str | None] = []
        self.seqs: dict[int, set[Any]] = {}  # strict mode: the seqs of open runs

    def __len__(self) -> int:
        return len(self.names)

    def number(self, name: str) -> int:
        """The run listed as ``name`` (its id, or ``id#2``…). Raises KeyError."""
        r = self.named.get(name)
        if r is None:
            r = self.ids.get(name)
            if r is None:
                raise KeyError(name)
            if r < 0:
                r = ~r
        return r

    # -- in bulk (:mod:`.bulk`) ----------------------------------------------------------------
    def add_runs(self, keys: list[str]) -> None:
        """New runs, numbered from ``len(self)`` in order, of ids ``keys`` listed as themselves."""
        if not keys:
            return
        r0, k = len(self.names), len(keys)
        self.ids.update(zip(keys, range(r0, r0 + k)))
        self.names += keys
        unset = array("q", [-1]) * k
        self.head += unset
        self.tail += unset
        self.pub += unset
        self.nevents += array("q", bytes(8 * k))
        self.scenario += [None] * k
        self.ablation += [None] * k

    def set_fields(self, runs: Any, scenarios: list[Any], ablations: list[Any]) -> None:
        """Each of ``runs`` (an int array) read its run line: its scenario and ablation."""
        k = len(runs)
        if not k:
            return
        lo = int(runs[0])
        if int(runs[-1]) - lo == k - 1 and (k == 1 or bool((runs[1:] - runs[:-1] == 1).all())):
            self.scenario[lo:lo + k] = scenarios  # new runs, in order: the usual case
            self.ablation[lo:lo + k] = ablations
            return
        for r, scenario, ablation in zip(runs.tolist(), scenarios, ablations):
            self.scenario[r] = scenario
            self.ablation[r] = ablation

    def add_events(self, runs: Any, counts: Any) -> None:
        """Add ``counts[j]`` events to run ``runs[j]``, for every j."""
        import numpy as np

        nevents = np.frombuffer(self.nevents, np.int64)
        np.add.at(nevents, runs, counts)
        del nevents

    def published(self, runs: Any) -> Any:
        """Whether each of ``runs`` is listed already (a bool array)."""
        import numpy as np

        return np.frombuffer(self.pub, np.int64)[runs] >= 0

    def new_run(self, key: str, previous: int | None) -> int:
        """A run of id ``key``: its first, or the next after run ``previous``."""
        r = len(self.names)
        name = key
        if previous is not None or (self.named and key in self.named):
            name = self._name(key, previous, r)
        self.ids[key] = r
        self.names.append(name)
        self.head.append(-1)
        self.tail.append(-1)
        self.nevents.append(0)
        self.pub.append(-1)
        self.scenario.append(None)
        self.ablation.append(None)
        return r

    def _name(self, key: str, previous: int | None, r: int) -> str:
        """How new run ``r`` of id ``key`` is listed, when that is not its id (see ``new_run``)."""
        named = self.named

        def taken(name: str) -> bool:
            return name in named or name in self.ids

        if previous is None:  # its id is taken by an earlier id's id#2…
            name = run_name(key, 1, taken)
        else:
            nth = self.repeats.get(key, 1) + 1
            self.repeats[key] = nth
            if nth == 2:
                named[self.names[previous]] = previous
            name = run_name(key, nth, taken)
        named[name] = r
        return name


_INTERNED: dict[str, str] = {}
_INTERNED_BYTES: dict[bytes, str] = {}


def intern_name(value: Any) -> Any:
    """Scenario and ablation names repeat across runs: keep one string per name."""
    if not isinstance(value, str):
        return value
    return _INTERNED.setdefault(value, value) if len(_INTERNED) < 10_000 else value


def intern_bytes(value: bytes) -> str:
    """A scenario or ablation name read from raw bytes, decoded once per distinct name."""
    name = _INTERNED_BYTES.get(value)
    if name is None:
        name = intern_name(value.decode("utf-8"))
        if len(_INTERNED_BYTES) < 10_000:
            _INTERNED_BYTES[value] = name
    return name
