"""Explain a failing run: the smallest edits that fix it, each proven by an offline replay.

Candidates come only from the run's own evidence (:mod:`.evidence`): the events that
decided it, its inputs and its recorded responses. Each is re-run with the same
deterministic replay the ``replay`` command uses (:mod:`.search`), and only the edits
that change the verdict are kept, ranked, and put in words (:mod:`.report`).
"""
from tracetui.explain.search import Explanation, Proof, Search, explain

__all__ = ["Explanation", "Proof", "Search", "explain"]
