"""``align`` skips difflib where one side of the stretch between the common head and tail is empty (most
lanes of most turns: ~0.25 s of 20,000 steps went to building matchers for nothing), with the same pairs."""
from __future__ import annotations

from difflib import SequenceMatcher

from hypothesis import given, settings, strategies as st

from tracetui.replay import run_diff
from tracetui.replay.run_diff import align


def difflib_align(a, b, key):
    """align as it was: difflib for every stretch (the stretches here are short)."""
    ka, kb = [key(x) for x in a], [key(x) for x in b]
    head = 0
    while head < len(ka) and head < len(kb) and ka[head] == kb[head]:
        head += 1
    tail = 0
    while tail < len(ka) - head and tail < len(kb) - head and ka[-1 - tail] == kb[-1 - tail]:
        tail += 1
    pairs = [(a[i], b[i]) for i in range(head)]
    found = SequenceMatcher(None, ka[head:len(a) - tail], kb[head:len(b) - tail], autojunk=False).get_opcodes()
    for _, i1, i2, j1, j2 in found:
        i1, i2, j1, j2 = i1 + head, i2 + head, j1 + head, j2 + head
        for k in range(max(i2 - i1, j2 - j1)):
            pairs.append((a[i1 + k] if i1 + k < i2 else None, b[j1 + k] if j1 + k < j2 else None))
    pairs.extend((a[len(a) - tail + i], b[len(b) - tail + i]) for i in range(tail))
    return pairs


steps = st.lists(st.tuples(st.sampled_from("abc"), st.integers(0, 9)), max_size=12)


@settings(max_examples=400, deadline=None)
@given(steps, steps)
def test_the_same_pairs_as_difflib_gives(a, b):
    assert align(a, b, lambda s: s[0]) == difflib_align(a, b, lambda s: s[0])


@settings(max_examples=100, deadline=None)
@given(steps, st.integers(0, 12), st.integers(0, 12))
def test_one_run_with_steps_the_other_lacks_the_same_pairs(a, cut, at):
    """One side a cut of the other (an extra retry, a run that stopped early): one side of the middle empty."""
    b = a[:at] + a[at + cut:]
    for x, y in ((a, b), (b, a)):
        assert align(x, y, lambda s: s[0]) == difflib_align(x, y, lambda s: s[0])


def test_no_matcher_is_built_when_one_side_is_empty(monkeypatch):
    built = []

    class Counted(SequenceMatcher):
        def __init__(self, *args, **kwargs):
            built.append(args)
            super().__init__(*args, **kwargs)
    monkeypatch.setattr(run_diff, "SequenceMatcher", Counted)
    assert align([], [1, 2], int) == [(None, 1), (None, 2)]
    assert align([1, 2, 3], [], int) == [(1, None), (2, None), (3, None)]
    assert align([1, 2], [1, 2], int) == [(1, 1), (2, 2)]
    assert align([1, 5, 2], [1, 2], int) == [(1, 1), (5, None), (2, 2)]  # the middle: 5 against nothing
    assert built == []
    assert align([1, 5, 2], [1, 6, 2], int) == [(1, 1), (5, 6), (2, 2)]
    assert len(built) == 1
