"""The automaton of an expression, built state by state as walks reach it.

A :class:`LazyAutomaton` numbers the expressions it meets (:mod:`.expr`) as states, starting with
the root as state 0. A state's transitions are computed the first time something steps from it,
one derivative per byte class, and only for the classes asked for (:meth:`LazyAutomaton.fill`):
a step derives one class, a trie walk the classes of a node's children; the *row* (all 256
transitions, and the symbols, calls or guards, that may come first) is complete once every class
is, or at once where a caller asks for it (:meth:`LazyAutomaton.build`). Never a whole automaton.

The automaton is native (``structgen._engine.LazyAutomaton``, ``cpp/engine/lazy.cpp``): rows live
in one flat int32 table (``state * 256 + byte``), read through :attr:`~LazyAutomaton.flat` (a live
view, it grows in place), :attr:`~LazyAutomaton.finals` and :attr:`~LazyAutomaton.exprs` (live
views too), and :attr:`~LazyAutomaton.table` (a numpy view ``[state, byte]`` of the engine's own rows, for
vectorised and compiled trie walks: read it, never write it; fetch it again after building a state: the table may have
been reallocated, and an older view keeps reading the rows as they were). A transition not built
yet reads :data:`UNBUILT`. This module adds the clamps (counters cut to what a token can tell
apart), which build terms in Python (:func:`.expr_rewrite.clamp`).

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

from typing import Callable, Sequence

from .. import _engine
from .expr import KINDS, ExprPool
from .expr_rewrite import clamp
from .expr_text import MinLength, describe
from .string_length import in_length_bounded_string

__all__ = ["UNBUILT", "LazyAutomaton"]

#: What the flat array and the table hold for a state whose row is not built yet.
UNBUILT = _engine.UNBUILT
_SEQ, _REP = KINDS["seq"], KINDS["rep"]


class LazyAutomaton(_engine.LazyAutomaton):
    """The DFA of expression ``root`` of ``pool``, built lazily (see the module docstring). The
    native methods: ``state_of(expr)``, ``fill(q, needed_mask)``, ``build(q)``, ``step(q, b)``,
    ``walk(q, data)``, ``accepts(data)``, ``row(q)``, ``symbols_of(q)``, ``edges(q)``,
    ``is_final(q)``, ``is_built(q)``, ``table_for(states)``; ``num_states``, ``memory_bytes``."""

    def __init__(self, pool: ExprPool, root: int) -> None:
        super().__init__(pool, root)
        self._minlen: MinLength | None = None
        self._clamped: dict[tuple[int, int], int] = {}

    pool: ExprPool

    def __repr__(self) -> str:
        return f"<LazyAutomaton: {self.num_states} states built of {describe(self.pool, self.root, 60)!r}>"

    @property
    def is_empty(self) -> bool:
        """Whether the automaton accepts nothing at all."""
        return not self.pool.is_live(self.root)

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
        if not in_length_bounded_string(self.pool, self.exprs[q]):
            return 0, q
        return _first_cut(q, lengths, self.clamped)

    def in_bounded_string(self, q: int) -> bool:
        """Whether ``q`` reads on inside a string intersected with its length term
        (:func:`.string_length.in_length_bounded_string`)."""
        return in_length_bounded_string(self.pool, self.exprs[q])

    def head_cut(self, q: int, lengths: Sequence[int]) -> tuple[int, int]:
        """``(n, state)``: the first ``n`` of ``lengths`` (longest first) for which
        :meth:`clamped_head` changes ``q``, and that state; ``(0, q)`` where none does (a clamp
        for fewer bytes cuts at least as much: where the shortest does not, none does)."""
        return _first_cut(q, lengths, self.clamped_head)

    def clamped_head(self, q: int, n: int, rounded: bool = False) -> int:
        """``q`` with the term its expression reads first (the head of its chain of
        concatenations) clamped for ``n`` bytes (:func:`.expr_rewrite.clamp`), where that term
        holds a counter over ``n`` and no call (a string's body ``x{lo,hi}``, or a string under
        a length bound far enough from it). The rest is left as it is, so once a token has read
        the head it goes on in exactly the states of ``q`` (the call and return points of a
        frame's walk within ``n`` bytes are ``q``'s own), and a counter further on is cut only
        where it matters. ``rounded``: ``n`` rounded up to a power of two first (walks below nodes of
        many heights then meet few clamped states)."""
        pool = self.pool
        e = self.exprs[q]
        if pool.largest_counter(e) <= n:
            return q
        node = pool.node(e)
        head, rest = (node[1], node[2]) if node[0] == _SEQ else (e, -1)
        if pool.largest_counter(head) <= n or pool.symbols_in(head):
            return q
        if rounded:
            n = 1 << max(n - 1, 0).bit_length()
        key = (q, -1 - n)  # (apart from clamped()'s keys)
        got = self._clamped.get(key)
        if got is None:
            cut = clamp(pool, head, n)
            got = self._clamped[key] = q if cut == head else self.state_of(cut if rest < 0 else pool.seq(cut, rest))
        return got

    def clamped(self, q: int, n: int) -> int:
        """The state of ``q``'s expression with counters cut to what ``n`` bytes tell apart
        (:func:`.expr_rewrite.clamp`): tokens of at most ``n`` bytes are accepted from both alike."""
        e = self.exprs[q]
        if self.pool.largest_counter(e) <= n:
            return q  # (no counter to cut)
        key = (q, n)
        got = self._clamped.get(key)
        if got is None:
            got = self._clamped[key] = self.state_of(clamp(self.pool, e, n))
        return got


def _first_cut(q: int, lengths: Sequence[int], cut: Callable[[int, int], int]) -> tuple[int, int]:
    """``(n, cut(q, n))`` for the first ``n`` of ``lengths`` (longest first) where that is not
    ``q``; ``(0, q)`` where none is (a cut for fewer bytes cuts at least as much: where the
    shortest does not, none does)."""
    if not lengths or cut(q, lengths[-1]) == q:
        return 0, q
    for n in lengths:
        got = cut(q, n)
        if got != q:
            return n, got
    return 0, q
