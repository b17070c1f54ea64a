"""Eager tables made natively (``cpp/engine/utf8_dfa.cpp``): the canonical numbering of a table
is a function of its language alone (the same for any numbering of its states and columns, and
the language kept), and a code-point class's automaton reads exactly the UTF-8 of its code points."""

from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from structgen.automata.dfa import ByteDFA, canonical_dfa
from structgen.automata.utf8 import MAX_CODE_POINT, code_points_rows


def _accepts(table: np.ndarray, finals: np.ndarray, start: int, class_of: np.ndarray, data: bytes) -> bool:
    q = start
    for b in data:
        q = int(table[q, class_of[b]])
        if q < 0:
            return False
    return bool(finals[q])


@st.composite
def _tables(draw: st.DrawFn) -> tuple[np.ndarray, np.ndarray, int, np.ndarray]:
    n = draw(st.integers(1, 7))
    k = draw(st.integers(1, 4))
    table = np.array(draw(st.lists(st.lists(st.integers(-1, n - 1), min_size=k, max_size=k), min_size=n, max_size=n)), dtype=np.int32)
    finals = np.array(draw(st.lists(st.booleans(), min_size=n, max_size=n)), dtype=bool)
    # every column read by some byte (bytes 0..k-1 read columns 0..k-1; the rest: any column)
    class_of = np.array(list(range(k)) + draw(st.lists(st.integers(0, k - 1), min_size=256 - k, max_size=256 - k)), dtype=np.int32)
    return table, finals, draw(st.integers(0, n - 1)), class_of


@settings(max_examples=300, deadline=None)
@given(_tables(), st.randoms(use_true_random=False))
def test_the_canonical_table_keeps_the_language_and_forgets_the_numbering(case: tuple, rnd: random.Random) -> None:
    table, finals, start, class_of = case
    got = canonical_dfa(table, finals, start, class_of)
    texts = [bytes(rnd.choice(range(6)) for _ in range(rnd.randint(0, 6))) for _ in range(60)]
    for text in texts:
        assert got.accepts(text) == _accepts(table, finals, start, class_of, text), text
    # breadth first from state 0 (a state's targets in byte order), classes numbered by their first byte
    found = [0]
    for q in found:
        found += [t for t in dict.fromkeys(int(got.transitions[q, got.byte_classes[b]]) for b in range(256)) if t >= 0 and t not in found]
    assert found == list(range(got.num_states))
    assert list(np.unique(got.byte_classes, return_index=True)[1]) == sorted(np.unique(got.byte_classes, return_index=True)[1])
    assert np.array_equal(got.byte_classes[np.sort(np.unique(got.byte_classes, return_index=True)[1])], np.arange(got.num_classes))
    again = canonical_dfa(got.transitions, got.finals, 0, got.byte_classes)
    assert np.array_equal(again.transitions, got.transitions) and np.array_equal(again.finals, got.finals)
    # the states and the columns numbered otherwise: the same table
    n, k = table.shape
    perm, cols = list(range(n)), list(range(k))
    rnd.shuffle(perm)
    rnd.shuffle(cols)
    inv = np.argsort(perm)  # old state i is new state inv[i]
    moved = np.full_like(table, -1)
    for i in range(n):
        for c in range(k):
            t = table[i, c]
            moved[inv[i], cols.index(c)] = -1 if t < 0 else inv[t]
    other = canonical_dfa(moved, finals[perm], int(inv[start]), np.array([cols.index(c) for c in class_of], dtype=np.int32))
    assert np.array_equal(other.transitions, got.transitions)
    assert np.array_equal(other.finals, got.finals) and np.array_equal(other.byte_classes, got.byte_classes)


@pytest.mark.parametrize("args", [
    (np.zeros((2, 256), dtype=np.int32), np.zeros(3, dtype=bool), 0, np.arange(256)),  # finals and rows disagree
    (np.full((2, 256), 2, dtype=np.int32), np.zeros(2, dtype=bool), 0, np.arange(256)),  # a move to no state
    (np.zeros((2, 256), dtype=np.int32), np.zeros(2, dtype=bool), 2, np.arange(256)),  # a start that is no state
    (np.zeros((2, 4), dtype=np.int32), np.zeros(2, dtype=bool), 0, np.arange(256)),  # a byte read by no column
    (np.zeros((2, 4), dtype=np.int32), np.zeros(2, dtype=bool), 0, np.zeros(255)),  # a class per byte, but one
])
def test_a_malformed_table_is_refused(args: tuple) -> None:
    with pytest.raises(ValueError):
        canonical_dfa(*args)


_POINTS = st.sampled_from([0, 0x7F, 0x80, 0x7FF, 0x800, 0xD7FF, 0xD800, 0xDFFF, 0xE000, 0xFFFF, 0x10000, 0x10FFFF]) | st.integers(0, MAX_CODE_POINT)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(_POINTS, st.integers(-5, 70000)), max_size=12), st.lists(_POINTS, max_size=30))
def test_a_class_automaton_reads_the_utf8_of_its_code_points_and_nothing_else(pairs: list, probes: list) -> None:
    intervals = [(a, a + w) for a, w in pairs]  # (any order, overlapping, empty, past U+10FFFF)
    rows, finals = code_points_rows(intervals)
    dfa = ByteDFA(rows, np.arange(256, dtype=np.int32), finals)
    members = lambda cp: any(a <= cp <= b for a, b in intervals) and not 0xD800 <= cp <= 0xDFFF  # noqa: E731
    for cp in probes + [p for a, b in intervals for p in (a - 1, a, b, b + 1) if 0 <= p <= MAX_CODE_POINT]:
        assert dfa.accepts(chr(cp).encode("utf-8", "surrogatepass")) == members(cp), hex(cp)
    for bad in (b"\xc0\x80", b"\xe0\x80\x80", b"\xf0\x80\x80\x80", b"\xf4\x90\x80\x80", b"\xed\xa0\x80", b""):
        assert not dfa.accepts(bad), bad  # (overlong forms, past U+10FFFF, a surrogate, nothing)
    # minimal: no two states with the same moves and finality
    assert len({(bytes(r.astype(np.int32).tobytes()), bool(f)) for r, f in zip(rows, finals)}) == len(finals)


def test_a_negative_code_point_is_refused() -> None:
    with pytest.raises(ValueError, match="below 0"):
        code_points_rows([(-1, 5)])
