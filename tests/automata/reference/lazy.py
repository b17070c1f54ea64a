"""The reference (pure Python) lazy automaton the native one replaced: kept only for the
differential tests (tests/automata/test_native_differential.py). The automaton of an expression, built state by state as walks reach it.

A :class:`LazyAutomaton` numbers the expressions it meets (:mod:`.expr`) as states, starting with
the root as state 0. A state's transitions are computed the first time something steps from it,
one derivative per byte class, and only for the classes asked for (:meth:`LazyAutomaton.fill`):
a step derives one class, a trie walk the classes of a node's children; the *row* (all 256
transitions, and the symbols, calls or guards, that may come first) is complete once every class
is, or at once where a caller asks for it (:meth:`LazyAutomaton.build`). Never a whole automaton.
Rows live in a flat array (``state * 256 + byte``, read by the per-token step) and in a numpy
table (read by vectorised trie walks); a transition not built yet reads :data:`UNBUILT` there.

Every state is live: an expression is ``NOTHING`` exactly when nothing can follow, so a
transition either leads to a state from which the output can still be completed, or is ``-1``.

Example:
    >>> from structgen.automata.expr import ExprPool
    >>> from structgen.automata.regex import regex_to_expr
    >>> pool = ExprPool()
    >>> auto = LazyAutomaton(pool, regex_to_expr("a{0,1000}b", pool))
    >>> s = auto.step(auto.step(0, ord("a")), ord("a"))
    >>> auto.num_states, auto.is_final(auto.step(s, ord("b")))  # (the states of a, a: 'b' not derived yet)
    (3, True)
"""

from __future__ import annotations

import functools
import threading
from array import array
from typing import Callable, Sequence

import numpy as np

from .expr import ALL_BYTES, KINDS, NOTHING, ExprPool, bytes_of_mask

__all__ = ["UNBUILT", "LazyAutomaton"]

#: What the flat array and the table hold for a state whose row is not built yet.
UNBUILT = -2
_INITIAL_CAPACITY = 64
_UNBUILT_ROW = array("i", [UNBUILT] * 256)
_SEQ, _REP = KINDS["seq"], KINDS["rep"]


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
        return f"<reference LazyAutomaton: {len(self.exprs)} states built>"

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
        """Compute state ``q``'s whole row and its symbols (once)."""
        if self._built[q]:
            return
        self.fill(q, ALL_BYTES)

    def fill(self, q: int, needed: int) -> None:
        """Compute the transitions of ``q`` for the bytes of mask ``needed`` (and the rest of their
        byte classes: one derivative per class); the row is built once every class is. A walk
        below a trie node needs only the bytes of the node's children."""
        with self._lock:
            if self._built[q]:
                return
            pool, e, flat = self.pool, self.exprs[q], self.flat
            base = q * 256
            done = True
            filled: list[tuple[int, int]] = []
            for mask in pool.byte_classes(e):
                low = (mask & -mask).bit_length() - 1
                if flat[base + low] != UNBUILT:
                    continue
                if not mask & needed:
                    done = False
                    continue
                d = pool.derive(e, low)
                if d == NOTHING or pool.is_algebraic(d) and not pool.is_live(d):
                    filled.append((mask, -1))  # (an intersection or complement with no string left: dead)
                else:
                    filled.append((mask, self.state_of(d)))
            if filled:
                row = self._table[q]  # (after state_of: the table may have grown)
                for mask, t in filled:
                    row[_byte_index(mask)] = t
                flat[base : base + 256] = array("i", row.tobytes())
            if done:
                self.symbols_of(q)
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
            self.fill(q, 1 << b)
            t = self.flat[q * 256 + b]
        return t

    def walk(self, q: int, data: bytes) -> int:
        """The state after ``data`` from ``q``, or -1."""
        flat = self.flat
        for b in data:
            t = flat[q * 256 + b]
            if t == UNBUILT:
                self.fill(q, 1 << b)
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
            pool, e = self.pool, self.exprs[q]
            got = tuple(
                (k, self.state_of(d)) for k in sorted(pool.first_symbols(e)) if (d := pool.derive_symbol(e, k)) != NOTHING
            )
            self.symbols[q] = got
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


@functools.lru_cache(maxsize=4096)
def _byte_index(mask: int) -> np.ndarray:
    """The bytes of a 256-bit mask as an index array (cached: masks repeat across states); for
    a mask of many bytes (the rest of a state's bytes: a mask of its own in each state, 60 us to
    list one by one) a boolean array, unpacked in one step."""
    if mask.bit_count() <= 16:
        return np.array(bytes_of_mask(mask), dtype=np.intp)
    return np.unpackbits(np.frombuffer(mask.to_bytes(32, "little"), dtype=np.uint8), bitorder="little").view(bool)
