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
from .dfa import DEFAULT_MAX_STATES, ByteDFA, minimal_dfa
from .expr import ExprPool, bytes_of_mask

__all__ = ["lazy_to_dfa"]


def lazy_to_dfa(pool: ExprPool, root: int, *, max_states: int = DEFAULT_MAX_STATES) -> ByteDFA:
    """The minimal :class:`ByteDFA` of expression ``root`` of ``pool``.

    Raises :class:`CompileBudgetExceeded` when the automaton has more than ``max_states`` states
    (before minimisation), and ``ValueError`` for an expression with symbols (calls or guards: a
    finite automaton over bytes cannot read them; inline the calls first)."""
    if pool.symbols_in(root):
        raise ValueError(f"an expression with symbols {sorted(pool.symbols_in(root))} has no byte automaton")
    ids = {root: 0}
    order = [root]
    rows: list[list[int]] = []
    for e in order:  # (grows while we walk it)
        row = [-1] * 256
        for mask, d in pool.row_classes(e):
            t = ids.get(d)
            if t is None:
                t = ids[d] = len(order)
                if t >= max_states:
                    raise CompileBudgetExceeded("states of an automaton", max_states)
                order.append(d)
            for b in bytes_of_mask(mask):
                row[b] = t
        rows.append(row)
    table = np.array(rows, dtype=np.int32).reshape(len(rows), 256)
    finals = np.array([pool.nullable(e) for e in order], dtype=bool)
    return minimal_dfa(table, finals)
