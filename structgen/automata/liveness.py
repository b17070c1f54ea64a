"""Liveness of the terms of an expression pool that hold an intersection or a complement: such a
term can match nothing without being ``NOTHING``, so whether it still matches some string is
searched for, over its derivatives, and remembered. The search is native (:mod:`structgen._engine`,
``cpp/engine/liveness.cpp``); this module holds its limits and :class:`Search`, its Python face.

Two searches: :meth:`Search.liveness`, best-first towards the end of a string, for "does any
string match" (the compiler's algebra and the lazy automata's dead states ask that; it first
reads a verdict off the term's structure, then tries strings guessed from it, then proves a
superset without large counters empty, and only then searches), and :meth:`Search.witness_length`,
breadth-first, for the length of a shortest string (budgets). Both stop after a given number of
terms; a search that gives up takes its term as dead: sound, since nothing is allowed without a
witness of a completion. Chains of concatenations are read in loops, not recursion (a 108-key
object once raised ``RecursionError`` here).

Example:
    >>> from structgen.automata.expr import ExprPool
    >>> pool = ExprPool()
    >>> digits, letters = pool.star(pool.byte_range(48, 57)), pool.star(pool.byte_range(97, 122))
    >>> pool.search.liveness(pool.both((pool.seq(pool.byte_range(48, 57), digits), letters)))
    False
    >>> pool.search.witness_length(pool.minus(digits, pool.literal(b"")))
    1
"""

from __future__ import annotations

from typing import Any, Optional

__all__ = ["INF", "LIVENESS_LIMIT", "RELAXED_COUNTER", "Search"]

#: A search gives up past this many terms: the term is then taken as dead (sound: nothing is
#: allowed that has no witness of a completion). (``LIVENESS_LIMIT`` in cpp/engine/liveness.h.)
LIVENESS_LIMIT = 20_000
#: Counters above this are read as ``*`` or ``+`` in the superset that may prove a term empty.
RELAXED_COUNTER = 16
#: The length of nothing (no string matches).
INF = 1 << 60


class Search:
    """The liveness facts of one pool (``pool``: an :class:`~.expr.ExprPool`): the searches, and
    what they found so far (copies, for tests and debugging)."""

    __slots__ = ("pool",)

    def __init__(self, pool: Any) -> None:
        self.pool = pool

    def liveness(self, e: int, limit: int = LIVENESS_LIMIT) -> Optional[bool]:
        """Whether some string matches ``e``, searching up to ``limit`` terms: ``None`` when the
        search gave up (``e`` is then taken as dead from here on)."""
        return self.pool.liveness(e, limit)  # type: ignore[no-any-return]

    def witness_length(self, e: int, limit: int = LIVENESS_LIMIT) -> int:
        """The length of a shortest string of ``e`` (:data:`INF`: none, or the search gave up)."""
        return self.pool.witness_length(e, limit)  # type: ignore[no-any-return]

    def shortest_text(self, e: int) -> Optional[bytes]:
        """A shortest string of ``e`` read off its structure (no intersection, complement or
        symbol in it, and at most 512 bytes); ``None`` otherwise."""
        return self.pool._shortest_text(e)  # type: ignore[no-any-return]

    def _guessed(self, e: int) -> bool:
        return self.pool._guessed(e)  # type: ignore[no-any-return]

    def _relaxed(self, e: int) -> int:
        return self.pool._relaxed(e)  # type: ignore[no-any-return]

    @property
    def witness(self) -> dict[int, int]:
        """Algebraic term -> the length of its shortest string (:data:`INF`: dead), so far."""
        return self.pool._witness()  # type: ignore[no-any-return]

    @property
    def gave_up(self) -> set[int]:
        """The terms whose search ran out (taken as dead)."""
        return self.pool._gave_up()  # type: ignore[no-any-return]

    @property
    def alive(self) -> set[int]:
        """The algebraic terms some string is known to match."""
        return self.pool._alive()  # type: ignore[no-any-return]
