"""Boolean algebra on byte DFAs: intersection, union, difference (product constructions).

Regular languages are closed under all three, so constraints that grammar engines must refuse or
approximate (``allOf`` of two patterns, ``not``, ``if``/``then``/``else``) are exact here. Each
operation walks the reachable pairs of states breadth first over the *joint* byte classes (bytes
that both automata treat alike), and stops at ``max_states`` pairs with
:class:`CompileBudgetExceeded` — products can blow up, so the budget is checked as pairs appear.

Example:
    >>> from structgen.automata.regex import regex_to_dfa
    >>> a, b = regex_to_dfa("[a-z]+"), regex_to_dfa("...")
    >>> both = intersect(a, b)
    >>> both.accepts(b"abc"), both.accepts(b"ab"), both.accepts(b"A_c")
    (True, False, False)
    >>> difference(a, b).accepts(b"abc"), difference(a, b).accepts(b"abcd")
    (False, True)
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from ..errors import CompileBudgetExceeded
from .dfa import DEFAULT_MAX_STATES, ByteDFA, minimal_dfa

__all__ = ["intersect", "union", "difference", "product"]

Rule = Callable[[bool, bool], bool]


def intersect(a: ByteDFA, b: ByteDFA, *, max_states: int = DEFAULT_MAX_STATES) -> ByteDFA:
    """The strings both ``a`` and ``b`` accept."""
    return product(a, b, lambda x, y: x and y, max_states=max_states)


def union(a: ByteDFA, b: ByteDFA, *, max_states: int = DEFAULT_MAX_STATES) -> ByteDFA:
    """The strings ``a`` or ``b`` accepts."""
    return product(a, b, lambda x, y: x or y, max_states=max_states)


def difference(a: ByteDFA, b: ByteDFA, *, max_states: int = DEFAULT_MAX_STATES) -> ByteDFA:
    """The strings ``a`` accepts and ``b`` does not (the complement of ``b`` within ``a``)."""
    return product(a, b, lambda x, y: x and not y, max_states=max_states)


def product(a: ByteDFA, b: ByteDFA, final: Rule, *, max_states: int = DEFAULT_MAX_STATES) -> ByteDFA:
    """The product automaton whose pair ``(p, q)`` is final when ``final(p final, q final)``.

    A missing transition (``-1``) is a dead sink state, so union and difference see strings only
    one side accepts. Pairs that both sides reject forever are never explored (``final(False,
    False)`` must be false: the result is trimmed anyway).
    """
    if final(False, False):
        raise ValueError("a product whose dead pair is final is not a finite automaton over useful states")
    joint = a.byte_classes.astype(np.int64) * b.num_classes + b.byte_classes
    pairs, class_of = np.unique(joint, return_inverse=True)
    ca, cb = (pairs // b.num_classes).astype(np.int64), (pairs % b.num_classes).astype(np.int64)
    # Columns of each side, read per joint class; a dead side is state -1 (an all -1 row).
    ta = np.vstack([a.transitions[:, ca], np.full((1, pairs.size), -1, dtype=np.int32)])
    tb = np.vstack([b.transitions[:, cb], np.full((1, pairs.size), -1, dtype=np.int32)])
    fa = np.append(a.finals, False)
    fb = np.append(b.finals, False)
    ids: dict[tuple[int, int], int] = {(0, 0): 0}
    order: list[tuple[int, int]] = [(0, 0)]
    rows: list[list[int]] = []
    # A side that died can still matter only if the rule can be true without it.
    need_a, need_b = not final(False, True), not final(True, False)
    for p, q in order:  # grows while we walk it
        row_a, row_b = ta[p].tolist(), tb[q].tolist()
        row = []
        for x, y in zip(row_a, row_b):
            if (x < 0 and (need_a or y < 0)) or (y < 0 and need_b):
                row.append(-1)
                continue
            key = (x, y)
            i = ids.get(key)
            if i is None:
                i = ids[key] = len(order)
                if i >= max_states:
                    raise CompileBudgetExceeded("states of a product automaton (allOf / not / if)", max_states)
                order.append(key)
            row.append(i)
        rows.append(row)
    table = np.array(rows, dtype=np.int32).reshape(len(rows), pairs.size)
    finals = np.array([final(bool(fa[p]), bool(fb[q])) for p, q in order], dtype=bool)
    return minimal_dfa(table, finals, class_of.astype(np.int64))
