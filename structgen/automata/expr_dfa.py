"""An expression's whole automaton, built eagerly: for the automata algebra (∩, −), which needs
finite automata on both sides, and for the public entry points that return a :class:`ByteDFA`.

:func:`lazy_to_dfa` walks the states of the expression's automaton (its derivatives, see
:mod:`.expr`) breadth first, one row per state and one derivative per byte class, within a state
budget, then minimises. Everywhere else the automaton of an expression is built lazily, a state
at a time (:mod:`.lazy`).

Example:
    >>> from structgen.automata.expr import ExprPool
    >>> pool = ExprPool()
    >>> digit = pool.byte_range(ord("0"), ord("9"))
    >>> dfa = lazy_to_dfa(pool, pool.seq(pool.repeat(digit, 1, 3), pool.literal(b"!")))
    >>> dfa.accepts(b"12!"), dfa.accepts(b"1234!"), dfa.num_states
    (True, False, 5)
"""

from __future__ import annotations

import numpy as np

from ..errors import CompileBudgetExceeded
from .dfa import DEFAULT_MAX_STATES, ByteDFA, canonical_dfa, minimal_dfa
from .expr import NOTHING, ExprPool, bytes_of_mask

__all__ = ["lazy_to_dfa"]


def lazy_to_dfa(pool: ExprPool, root: int, *, max_states: int = DEFAULT_MAX_STATES, minimise: bool = True) -> ByteDFA:
    """The :class:`ByteDFA` of expression ``root`` of ``pool``, minimal unless ``minimise`` is
    false (then it is the automaton of the derivatives: trim, numbered breadth first, often
    minimal already; an operand of the algebra, whose product is minimised anyway).

    Raises :class:`CompileBudgetExceeded` when the automaton has more than ``max_states`` states
    (before minimisation), and ``ValueError`` for an expression with symbols (calls or guards: a
    finite automaton over bytes cannot read them; inline the calls first)."""
    if pool.symbols_in(root):
        raise ValueError(f"an expression with symbols {sorted(pool.symbols_in(root))} has no byte automaton")
    ids = {root: 0}
    order = [root]
    mask_ids: dict[int, int] = {}
    sources: list[int] = []  # one edge per (state, byte class): source, class mask id, target
    labels: list[int] = []
    targets: list[int] = []
    for q, e in enumerate(order):  # (grows while we walk it)
        for mask, d in _row_classes(pool, e):
            t = ids.get(d)
            if t is None:
                t = ids[d] = len(order)
                if t >= max_states:
                    raise CompileBudgetExceeded("states of an automaton", max_states)
                order.append(d)
            m = mask_ids.get(mask)
            if m is None:
                m = mask_ids[mask] = len(mask_ids)
            sources.append(q)
            labels.append(m)
            targets.append(t)
    n = len(order)
    table = np.full((n, 256), -1, dtype=np.int32)
    src = np.array(sources, dtype=np.int64)
    lab = np.array(labels, dtype=np.int64)
    dst = np.array(targets, dtype=np.int32)
    by_label = np.argsort(lab, kind="stable")
    bounds = np.searchsorted(lab[by_label], np.arange(len(mask_ids) + 1))
    for mask, m in mask_ids.items():  # (one fancy assignment per distinct byte class)
        edges = by_label[bounds[m] : bounds[m + 1]]
        columns = np.array(bytes_of_mask(mask), dtype=np.int64)
        table[src[edges][:, None], columns[None, :]] = dst[edges][:, None]
    finals = np.array([pool.nullable(e) for e in order], dtype=bool)
    if minimise:
        return minimal_dfa(table, finals)
    return canonical_dfa(table, finals, 0, np.arange(256))


def _row_classes(pool: ExprPool, e: int) -> list[tuple[int, int]]:
    """``(byte mask, derivative)`` for each byte class of ``e`` whose derivative is not
    ``NOTHING`` (one derivative per class)."""
    out = []
    for mask in pool.byte_classes(e):
        d = pool.derive(e, (mask & -mask).bit_length() - 1)
        if d != NOTHING:
            out.append((mask, d))
    return out
