from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def root() -> Path:
    return ROOT


@pytest.fixture
def forced_worker(monkeypatch) -> dict[str, int]:
    """The worker process used for any file of two ranges or more, whatever the machine's CPUs and load,
    and waited for (however fast the scan would go without it). Returns the counts of ranges each side
    prepared (filled in by the scan)."""
    from tracetui.trace.index import parallel

    monkeypatch.setattr(parallel, "PARALLEL_MIN_CHUNKS", 2)
    monkeypatch.setattr(parallel, "PARALLEL_MIN_BYTES", 0)
    monkeypatch.setattr(parallel, "usable_cpus", lambda: {0, 1})
    split: dict[str, int] = {}
    steps = parallel._parallel_steps
    # started at once (not after sampling the processors' idle time), and waited for
    monkeypatch.setattr(parallel, "_parallel_steps",
                        lambda *args, **kwargs: steps(*args, worker=kwargs.get("worker"), split=split,
                                                      wait_for_start=True))
    return split
