"""The automaton of an expression, built state by state as walks reach it.

A :class:`LazyAutomaton` numbers the expressions it meets (:mod:`.expr`) as states, starting with
the root as state 0. A state's *row* (its 256 byte transitions, and the symbols, calls or guards,
that may come first) is computed the first time something steps from it, one derivative per byte
class: a step costs at most one row, never a whole automaton. Rows live in a flat array
(``state * 256 + byte``, read by the per-token step) and in a numpy table (read by vectorised trie
walks); a state whose row is not built yet reads :data:`UNBUILT` there.

Every state is live: an expression is ``NOTHING`` exactly when nothing can follow, so a
transition either leads to a state from which the output can still be completed, or is ``-1``.

Example:
    >>> from structgen.automata.expr import ExprPool
    >>> from structgen.automata.regex import regex_to_expr
    >>> pool = ExprPool()
    >>> auto = LazyAutomaton(pool, regex_to_expr("a{0,1000}b", pool))
    >>> s = auto.step(auto.step(0, ord("a")), ord("a"))
    >>> auto.num_states, auto.is_final(auto.step(s, ord("b")))
    (4, True)
"""

from __future__ import annotations

import threading
from array import array
from typing import Sequence

import numpy as np

from .expr import NOTHING, ExprPool, bytes_of_mask
from .expr_rewrite import clamp
from .string_length import in_length_bounded_string
from .expr_text import MinLength, describe

__all__ = ["UNBUILT", "LazyAutomaton"]

#: What the flat array and the table hold for a state whose row is not built yet.
UNBUILT = -2
_INITIAL_CAPACITY = 64
_UNBUILT_ROW = array("i", [UNBUILT] * 256)
_DEAD_ROW = array("i", [-1] * 256)


class LazyAutomaton:
    """The DFA of expression ``root`` of ``pool``, built lazily (see the module docstring)."""

    __slots__ = (
        "pool", "root", "exprs", "finals", "flat", "symbols", "_ids", "_table", "_built", "_lock", "_minlen",
        "_clamped",
    )

    def __init__(self, pool: ExprPool, root: int) -> None:
        self.pool = pool
        self.root = root
        self.exprs: list[int] = []  # state -> its expression
        self.finals: list[bool] = []  # state -> whether the output may end there
        # state * 256 + byte -> next state, -1 (dead) or UNBUILT: an array, not a list, so that the
        # garbage collector has no reference to walk per entry (a few hundred thousand per schema)
        self.flat = array("i")
        self.symbols: list[tuple[tuple[int, int], ...] | None] = []  # state -> ((symbol, next), ...)
        self._ids: dict[int, int] = {}
        self._table = np.full((_INITIAL_CAPACITY, 256), UNBUILT, dtype=np.int32)
        self._built: list[bool] = []
        self._lock = threading.RLock()
        self._minlen: MinLength | None = None
        self._clamped: dict[tuple[int, int], int] = {}
        self.state_of(root)

    def __repr__(self) -> str:
        return f"<LazyAutomaton: {len(self.exprs)} states built of {describe(self.pool, self.root, 60)!r}>"

    @property
    def num_states(self) -> int:
        """The states met so far (every int below it is a state)."""
        return len(self.exprs)

    @property
    def is_empty(self) -> bool:
        """Whether the automaton accepts nothing at all."""
        return not self.pool.is_live(self.root)

    @property
    def memory_bytes(self) -> int:
        """Approximate bytes held: the table, the flat array and the per-state lists."""
        n = len(self.exprs)
        return int(self._table.nbytes + self.flat.itemsize * len(self.flat) + 120 * n)

    def state_of(self, expr: int) -> int:
        """The state of expression ``expr`` (numbered when first met)."""
        got = self._ids.get(expr)
        if got is not None:
            return got
        with self._lock:
            got = self._ids.get(expr)
            if got is None:
                got = len(self.exprs)
                if got >= self._table.shape[0]:
                    grown = np.full((2 * self._table.shape[0], 256), UNBUILT, dtype=np.int32)
                    grown[: self._table.shape[0]] = self._table
                    self._table = grown
                self.exprs.append(expr)
                self.finals.append(self.pool.nullable(expr))
                self.flat.extend(_UNBUILT_ROW)
                self.symbols.append(None)
                self._built.append(False)
                self._ids[expr] = got
        return got

    def build(self, q: int) -> None:
        """Compute state ``q``'s row and symbols (once)."""
        if self._built[q]:
            return
        with self._lock:
            if self._built[q]:
                return
            pool, e = self.pool, self.exprs[q]
            row = array("i", _DEAD_ROW)
            state_of = self.state_of
            for mask, d in pool.row_classes(e):
                if pool.is_algebraic(d) and not pool.is_live(d):
                    continue  # (an intersection or complement with no string left: dead)
                t = state_of(d)
                for b in bytes_of_mask(mask):
                    row[b] = t
            syms = tuple(
                (k, self.state_of(d))
                for k in sorted(pool.first_symbols(e))
                if (d := pool.derive_symbol(e, k)) != NOTHING
            )
            base = q * 256
            self.flat[base : base + 256] = row
            self._table[q] = np.frombuffer(row, dtype=np.int32)
            self.symbols[q] = syms
            self._built[q] = True

    def is_final(self, q: int) -> bool:
        """Whether the output may end in state ``q``."""
        return self.finals[q]

    def is_built(self, q: int) -> bool:
        return self._built[q]

    def step(self, q: int, b: int) -> int:
        """The state after byte ``b`` from ``q`` (-1: nothing accepted continues that way)."""
        t = self.flat[q * 256 + b]
        if t == UNBUILT:
            self.build(q)
            t = self.flat[q * 256 + b]
        return t

    def walk(self, q: int, data: bytes) -> int:
        """The state after ``data`` from ``q``, or -1."""
        flat = self.flat
        for b in data:
            t = flat[q * 256 + b]
            if t == UNBUILT:
                self.build(q)
                flat = self.flat
                t = flat[q * 256 + b]
            if t < 0:
                return -1
            q = t
        return q

    def accepts(self, data: bytes) -> bool:
        q = self.walk(0, data)
        return q >= 0 and self.finals[q]

    def row(self, q: int) -> Sequence[int]:
        """The 256 transitions of ``q`` (built if needed)."""
        self.build(q)
        return self.flat[q * 256 : q * 256 + 256]

    def symbols_of(self, q: int) -> tuple[tuple[int, int], ...]:
        """``((symbol, next state), ...)``: the symbols that may come first from ``q``."""
        got = self.symbols[q]
        if got is None:
            self.build(q)
            got = self.symbols[q]
            assert got is not None
        return got

    def edges(self, q: int) -> dict[int, int]:
        """``{byte: next state}`` of ``q``."""
        self.build(q)
        row = self._table[q]
        at = np.flatnonzero(row >= 0)
        return dict(zip(at.tolist(), row[at].tolist()))

    @property
    def table(self) -> np.ndarray:
        """The transition table as built so far (``[state, byte]``, int32; :data:`UNBUILT` rows
        for states not built yet). Fetch it again after building a state (it may be reallocated)."""
        return self._table

    def table_for(self, states: Sequence[int] | np.ndarray) -> np.ndarray:
        """The transition table (``[state, byte]``, int32) with the rows of ``states`` built: for
        vectorised walks. Fetch it again after building more states (it may be reallocated)."""
        built = self._built
        for q in set(np.asarray(states).tolist()):
            if not built[q]:
                self.build(q)
        return self._table

    def min_length(self, q: int) -> int:
        """The fewest bytes from ``q`` to the end of an accepted string (symbols weigh 0)."""
        ml = self._minlen
        if ml is None:
            ml = self._minlen = MinLength(self.pool, {})
        return ml.of(self.exprs[q])

    def clamped_below(self, q: int, lengths: Sequence[int]) -> tuple[int, int]:
        """``(n, state)``: the first ``n`` of ``lengths`` (longest first) for which ``q`` clamps to
        another state (:meth:`clamped`), and that state; ``(0, q)`` where none does. Tried only
        inside a string under a length (where positions would otherwise not share masks), and a
        clamp for fewer bytes cuts at least as much: where the shortest does not, none does."""
        if not lengths or not in_length_bounded_string(self.pool, self.exprs[q]) or self.clamped(q, lengths[-1]) == q:
            return 0, q
        for n in lengths:
            got = self.clamped(q, n)
            if got != q:
                return n, got
        return 0, q

    def clamped(self, q: int, n: int) -> int:
        """The state of ``q``'s expression with counters cut to what ``n`` bytes tell apart
        (:func:`.expr_rewrite.clamp`): tokens of at most ``n`` bytes are accepted from both alike."""
        key = (q, n)
        got = self._clamped.get(key)
        if got is None:
            got = self._clamped[key] = self.state_of(clamp(self.pool, self.exprs[q], n))
        return got
