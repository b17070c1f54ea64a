"""Byte regular expressions as hash-consed terms, and their derivatives: automata built lazily.

The terms live in the native engine (:mod:`structgen._engine`, C++): an :class:`ExprPool` is its
pool, with this module's Python additions. Terms are integer ids (``NOTHING`` = 0 is the empty
language, ``EPSILON`` = 1 the empty string). Constructors simplify as they build (``∅·x = ∅``,
``ε·x = x``, alternatives flattened, sorted and deduplicated, byte sets merged, the counts of one
body merged where they meet: ``h·x{0,3}·t | h·x{2,5}·t = h·x{0,5}·t``), so two equal
expressions built twice are one id, and an expression is ``NOTHING`` exactly when its language is
empty (intersections and complements aside: :meth:`is_live` searches those). The *derivative* of
an expression by a byte (Brzozowski) is the expression of what may follow that byte; the states of
an automaton are expressions, and a state's transitions are computed the first time a walk needs
them (:mod:`.lazy`): no whole automaton is ever determinised or minimised.

Kinds of terms (the first item of :meth:`ExprPool.node`, see :data:`KINDS`):

- a byte set (one byte of a 256-bit mask, a Python int);
- concatenation (kept right-nested), alternation;
- bounded repetition ``x{lo,hi}`` as **one term with counters**: its derivative is
  ``d(x)·x{lo-1,hi-1}``, so ``maxLength: 1024`` is a number in a term, not 1,024 copies;
- a *symbol* ``k`` (a call of automaton ``k`` of a network, or a guard: zero-width steps a
  pushdown guide takes, see :mod:`.markers`), read by :meth:`ExprPool.derive_symbol`;
- an embedded :class:`~.dfa.ByteDFA` at one of its states (look-arounds, algebra results,
  document spans: automata built eagerly elsewhere);
- an intersection and a complement (built lazily: their states are read off the parts' derivatives).

The native methods (every constructor, :meth:`~ExprPool.derive`, :meth:`~ExprPool.nullable`,
:meth:`~ExprPool.byte_classes`, :meth:`~ExprPool.is_live`, ...) check their arguments: an id that
is no term is an ``IndexError``, a bad range a ``ValueError``, a limit
:class:`~structgen.errors.CompileBudgetExceeded`. A pool is not locked: every call holds the GIL.

Example:
    >>> pool = ExprPool()
    >>> digit = pool.byte_range(ord("0"), ord("9"))
    >>> e = pool.seq(pool.repeat(digit, 1, 3), pool.literal(b"!"))   # [0-9]{1,3}!
    >>> for b in b"12!":
    ...     e = pool.derive(e, b)
    >>> pool.nullable(e), pool.derive(pool.derive(pool.derive(pool.derive(
    ...     pool.seq(pool.repeat(digit, 1, 3), pool.literal(b"!")), 49), 50), 51), 52) == NOTHING
    (True, True)
"""

from __future__ import annotations

from typing import Sequence

from .. import _engine
from .byte_masks import ALL_BYTES, byte_mask, bytes_of_mask
from .dfa import ByteDFA
from .embedded import EmbeddedDfa
from .liveness import Search
from .pool_memo import PoolMemo

__all__ = ["ALL_BYTES", "EPSILON", "KINDS", "NOTHING", "ExprPool", "byte_mask", "bytes_of_mask"]

NOTHING = _engine.NOTHING
EPSILON = _engine.EPSILON

#: The kind of a term, by name: the first item of :meth:`ExprPool.node`.
KINDS = {
    "nothing": 0, "epsilon": 1, "bytes": 2, "seq": 3, "alt": 4, "rep": 5, "sym": 6, "dfa": 7, "and": 8, "not": 9,
}


class ExprPool(_engine.Pool):
    """Hash-consed byte expressions and their derivatives (see the module docstring); the terms
    and every per-byte operation are native, this class adds what reads Python objects (a
    :class:`~.dfa.ByteDFA` to embed, code-point intervals) and the rewrites' memo tables
    (:attr:`memo`). Everything a pool builds stays until the pool is dropped."""

    def __init__(self) -> None:
        super().__init__()
        #: the memo tables of the rewrites that still build terms in Python (:class:`.PoolMemo`)
        self.memo = PoolMemo()
        #: ``(template, n)``: the pool began as a copy of ``template``'s first ``n`` terms (:meth:`forked`)
        self.fork_of: tuple["ExprPool", int] | None = None
        self._code_points: dict[tuple[tuple[int, int], ...], int] = {}
        self._embedded_ids: dict[int, int] = {}  # id(dfa) -> index
        self._held: list[ByteDFA] = []  # (keeps id(dfa) from being reused while the pool lives)

    @classmethod
    def forked(cls, template: "ExprPool") -> "ExprPool":
        """A new pool that starts with ``template``'s terms under the same ids (its memo tables
        empty): :func:`.expr_rewrite.copy_from` reads those as they are. A guide's compile
        starts as a fork of the template of shared JSON pieces instead of copying each piece it uses.

        >>> template = ExprPool()
        >>> ab = template.literal(b"ab")
        >>> pool = ExprPool.forked(template)
        >>> pool.node(ab) == template.node(ab) and pool.fork_of == (template, len(template))
        True
        """
        pool = cls()
        pool._fork_from(template)
        pool._embedded_ids, pool._held = dict(template._embedded_ids), list(template._held)
        pool._code_points = dict(template._code_points)
        pool.fork_of = (template, len(template))
        return pool

    def __reduce__(self) -> tuple[object, ...]:
        # the terms, embedded automata, string-length marks and liveness facts, as bytes
        return (_restore, (self._dump(),))

    @property
    def firsts(self) -> "ExprPool":
        """What terms read first: :meth:`byte_classes`, :meth:`first_bytes`, :meth:`first_symbols`
        (the pool itself; the name of the table the Python pool kept them in)."""
        return self

    @property
    def search(self) -> Search:
        """The liveness search of this pool's algebraic terms (:class:`.liveness.Search`)."""
        return Search(self)

    @property
    def memory_bytes(self) -> int:
        """Approximate bytes held by the terms, the memo tables and the embedded automata."""
        return int(super().memory_bytes + 100 * self.memo.entries)

    def code_points(self, intervals: Sequence[tuple[int, int]]) -> int:
        """One character whose code point is in ``intervals`` (inclusive), as UTF-8 bytes (cached;
        native: ``cpp/engine/code_points.cpp``)."""
        key = tuple(intervals)
        got = self._code_points.get(key)
        if got is None:
            got = self._code_points[key] = self.code_points_term(key)
        return got

    def embed(self, dfa: ByteDFA, state: int = 0) -> int:
        """The language of ``dfa`` from ``state`` (an eager automaton inside an expression)."""
        if state < 0:
            return NOTHING
        index = self._embedded_ids.get(id(dfa))
        if index is None:
            index = self._embedded_ids[id(dfa)] = self.add_embedded(EmbeddedDfa.of(dfa))
            self._held.append(dfa)
        return self.embed_state(index, state)


def _restore(data: bytes) -> ExprPool:
    pool = ExprPool()
    pool._load(data)
    return pool
