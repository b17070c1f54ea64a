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
yet reads :data:`UNBUILT`. The clamps (counters cut to what a token can tell apart,
``cpp/engine/clamp.cpp``) are native too: ``clamped(q, n)`` (``q``'s term clamped for tokens of
``n`` bytes), ``clamped_head(q, n, rounded=False)`` (only the term ``q`` reads first, where it
holds a counter over ``n`` and no call; where ``q`` is a choice whose ways call, the head of each
way so: the rest is left as it is, so once a token has read the head it goes on in exactly
``q``'s states), ``clamped_below(q, lengths)`` and ``head_cut(q,
lengths)`` (a cut of ``lengths``, longest first, for which the clamp changes ``q`` and that other
positions share: the next position's, one inside a string under a length bound, or one an earlier
position met; and the state: ``(0, q)`` where none does) and ``in_bounded_string(q)``.

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

from .. import _engine
from .expr import ExprPool
from .expr_text import MinLength, describe

__all__ = ["UNBUILT", "LazyAutomaton"]

#: What the flat array and the table hold for a state whose row is not built yet.
UNBUILT = _engine.UNBUILT


class LazyAutomaton(_engine.LazyAutomaton):
    """The DFA of expression ``root`` of ``pool``, built lazily (see the module docstring). The
    native methods: ``state_of(expr)``, ``fill(q, needed_mask)``, ``build(q)``, ``step(q, b)``,
    ``walk(q, data)``, ``accepts(data)``, ``row(q)``, ``symbols_of(q)``, ``edges(q)``,
    ``is_final(q)``, ``is_built(q)``, ``table_for(states)``; ``num_states``, ``memory_bytes``; the
    clamps (see the module docstring) and the string slices per state (``char_successor``,
    ``counted_run``, ``slice_chain``: :mod:`structgen.vocab.slices`)."""

    def __init__(self, pool: ExprPool, root: int) -> None:
        super().__init__(pool, root)
        self._minlen: MinLength | None = None

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

