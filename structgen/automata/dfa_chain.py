"""Automata chained with numpy, for the algebra's operands that are long chains of one small
automaton: :func:`repeat_unit` (``x{lo,hi}`` of a *unit*, one character say: ``maxLength: 253``
is 253 copies) and :func:`enclose` (between an opening and a closing byte, as quotes enclose a
string). A copy costs a few array operations, not a subset construction or derivatives per state.

Example:
    >>> from structgen.automata.regex import regex_to_dfa
    >>> counted = enclose(repeat_unit(regex_to_dfa("a|bc"), 1, 3), ord('"'), ord('"'))
    >>> counted.accepts(b'"abca"'), counted.accepts(b'""'), counted.accepts(b'"aaaa"')
    (True, False, False)
"""

from __future__ import annotations

from typing import Optional

import numpy as np

from ..errors import CompileBudgetExceeded
from .dfa import DEFAULT_MAX_STATES, ByteDFA

__all__ = ["enclose", "is_unit", "repeat_unit"]


def is_unit(dfa: ByteDFA) -> bool:
    """Whether ``dfa`` is a unit: its start state is not final and no edge enters it, and no edge
    leaves a final state (every string it accepts is one whole step, a character say)."""
    t = dfa.transitions
    return bool(dfa.finals.any() and not dfa.finals[0] and not (t == 0).any() and not (t[dfa.finals] >= 0).any())


def repeat_unit(unit: ByteDFA, lo: int, hi: Optional[int], *, max_states: int = DEFAULT_MAX_STATES) -> ByteDFA:
    """``unit{lo,hi}`` (``hi=None``: unbounded) for a unit automaton (:func:`is_unit`): one
    *boundary* state per count of units read (its row is the unit's start row) and one copy of
    the unit's inner states per count; a unit's end leads to the next boundary. Minimal when the
    unit is."""
    if not is_unit(unit) or lo < 0 or (hi is not None and hi < lo):
        raise ValueError("repeat_unit needs a unit automaton and 0 <= lo <= hi")
    t = unit.transitions
    n, width = t.shape
    inner = np.flatnonzero(~unit.finals & (np.arange(n) != 0))
    m = inner.size
    bounds = (hi if hi is not None else lo) + 1  # boundary states B_0 .. B_top
    copies = hi if hi is not None else lo + 1  # copy i leads from B_i to B_{i+1} (the last, unbounded, back to B_lo)
    total = bounds + copies * m
    if total > max_states:
        raise CompileBudgetExceeded("states of an automaton", max_states)
    slot = np.full(n, -1, dtype=np.int64)
    slot[inner] = np.arange(m)
    rows = t[np.concatenate(([0], inner))]  # the start row, then the inner rows: [1 + m, width]
    live = rows >= 0
    ends = live & unit.finals[np.maximum(rows, 0)]
    into = live & ~ends
    i = np.arange(copies).reshape(-1, 1, 1)
    after = np.minimum(i + 1, lo) if hi is None else i + 1  # the boundary a unit ends in
    out = np.where(into, bounds + i * m + slot[np.maximum(rows, 0)], np.where(ends, after, -1)).astype(np.int32)
    table = np.full((total, width), -1, dtype=np.int32)
    table[:copies] = out[:, 0, :]
    table[bounds:] = out[:, 1:, :].reshape(copies * m, width)
    finals = np.zeros(total, dtype=bool)
    finals[lo:bounds] = True
    return ByteDFA(table, unit.byte_classes.copy(), finals)


def enclose(dfa: ByteDFA, opening: int, closing: int) -> ByteDFA:
    """``opening``, then a string of ``dfa``, then ``closing`` (bytes), for a ``dfa`` whose
    final states do not read ``closing``."""
    t, c = dfa.transitions, dfa.byte_classes
    if (t[dfa.finals, c[closing]] >= 0).any():
        raise ValueError("the closing byte is read inside the automaton")
    n, width = t.shape
    shifted = np.where(t >= 0, t + 2, -1).astype(np.int32)  # states 0 and 1: before and after
    open_col, close_col = width, width + (opening != closing)  # columns of their own for both bytes
    table = np.full((n + 2, close_col + 1), -1, dtype=np.int32)
    table[2:, :width] = shifted
    table[2:, open_col] = shifted[:, c[opening]]
    table[2:, close_col] = shifted[:, c[closing]]
    table[2:, close_col][dfa.finals] = 1
    table[0, open_col] = 2
    classes = c.astype(np.int32).copy()
    classes[opening] = open_col
    classes[closing] = close_col
    finals = np.zeros(n + 2, dtype=bool)
    finals[1] = True
    return ByteDFA(table, classes, finals)
