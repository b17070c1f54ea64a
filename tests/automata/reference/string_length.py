"""The reference (pure Python) string-length verdict the native one replaced (differential
tests only). JSON strings under a length (``minLength`` / ``maxLength``): the term ``"unit{lo,hi}"``
intersected with the string, and what is known about such intersections without a search.

The schema compiler writes a length as an intersection with ``"unit{lo,hi}"`` (``unit``: one
decoded character, an escape included) and marks the pool (:func:`mark_string_length`). Then:

- far from its bound, a state's tokens are the string's own (:func:`clampable_string`, used by
  :func:`.expr_rewrite.clamp`): positions of a long string share one mask;
- once the minimum is reached, whether the intersection can still be completed is whether the
  string has a completion of at most ``hi`` characters (:func:`fewest_units`, a search over the
  string's own derivatives, shared by every position), not a search over the product, which
  would differ at every position (:func:`string_length_verdict`, the pool's liveness proof).

Example:
    >>> from structgen.automata.expr import ExprPool
    >>> pool = ExprPool()
    >>> unit, quote = pool.byte_range(97, 122), pool.literal(b'"')
    >>> mark_string_length(pool, unit, quote)
    >>> string = pool.concat([quote, pool.literal(b"abc"), pool.star(unit), quote])
    >>> short, long = (pool.both((string, pool.concat([quote, pool.repeat(unit, 0, n), quote]))) for n in (2, 5))
    >>> string_length_verdict(pool, short), string_length_verdict(pool, long)
    (False, True)
"""

from __future__ import annotations

from collections import deque
from typing import TYPE_CHECKING, Optional

from .expr import KINDS, NOTHING, ExprPool


__all__ = [
    "STRING_LENGTH", "clampable_string", "fewest_units", "in_length_bounded_string", "mark_string_length", "note_restricted",
    "string_length_verdict",
]

_SEQ, _ALT, _REP, _DFA, _AND, _NOT, _SYM = (KINDS[k] for k in ("seq", "alt", "rep", "dfa", "and", "not", "sym"))

#: ``pool.facts[STRING_LENGTH]``: ``(units, quote)`` of the length terms ``"unit{lo,hi}"`` that
#: the schema compiler intersects a JSON string with (a ``minLength`` / ``maxLength``): the set of
#: unit terms (one decoded character, and its restrictions to vocabularies) and the quote.
STRING_LENGTH = "string length"
#: Most pairs :func:`fewest_units` visits before it gives up.
_REACH_LIMIT = 4096
_INF = 1 << 60
_BETWEEN = -1  # (fewest_units: between two units, not inside one)


def mark_string_length(pool: ExprPool, unit: int, quote: int) -> None:
    """Note in ``pool`` that its JSON strings are intersected with length terms ``"unit{lo,hi}"``
    (``unit``: one decoded character): clamps then share masks far from the bound, and
    liveness asks :func:`string_length_verdict` before it searches."""
    marked = pool.facts.get(STRING_LENGTH)
    if marked is None:
        pool.facts[STRING_LENGTH] = marked = (set(), quote)
        pool.search.proof = lambda e: string_length_verdict(pool, e)
    marked[0].add(unit)  # type: ignore[index]


def note_restricted(pool: ExprPool, e: int, restricted: int) -> None:
    """Where ``e`` is a unit, its restriction to a vocabulary's bytes (:func:`.expr_rewrite.restrict`)
    is one too (a string restricted alike is a sequence of them)."""
    marked = pool.facts.get(STRING_LENGTH)
    if marked is not None and e in marked[0]:  # type: ignore[index]
        marked[0].add(restricted)  # type: ignore[index]


def string_length_verdict(pool: ExprPool, e: int) -> Optional[bool]:
    """Whether ``e``, a string term intersected with its length term ``"unit{0,hi}"`` (the
    minimum reached), matches some string: whether the string has one of at most ``hi`` units
    before its closing quote (:func:`fewest_units`). ``None``: not such a term, or not known."""
    node = pool.node(e)
    if node[0] != _AND:
        return None
    found = _string_with_length(pool, node[1], opened=False)
    if found is None:
        return None
    string, unit, hi = found
    if hi < 0 or _min_length(pool).of(string) - 1 <= hi:  # (a unit is a byte or more: the shortest string will do)
        return True
    fewest = fewest_units(pool, string, unit)
    return None if fewest is None else fewest <= hi


def fewest_units(pool: ExprPool, string: int, unit: int) -> Optional[int]:
    """The fewest ``unit`` terms (characters) that spell a string of ``string`` (the rest of a
    JSON string, its closing quote included) before the quote; ``None`` past :data:`_REACH_LIMIT`
    pairs. A 0-1 breadth-first search over pairs (the string's derivative, where in a unit it
    is): a byte that starts a unit costs one. Memoised in the pool."""
    key = ("fewest units", string, unit)
    if key in pool.facts:
        return pool.facts[key]  # type: ignore[return-value]
    quote = pool.facts[STRING_LENGTH][1]  # type: ignore[index]
    quote_byte = (pool.node(quote)[1] & -pool.node(quote)[1]).bit_length() - 1
    cost = {(string, _BETWEEN): 0}
    todo = deque([(0, string, _BETWEEN)])
    got: Optional[int] = _INF
    while todo:
        d, x, u = todo.popleft()
        if d > cost[(x, u)]:
            continue
        if d >= got:  # type: ignore[operator]
            break
        inside = unit if u == _BETWEEN else u
        for mask in _joint_classes(pool, x, inside):
            if u == _BETWEEN and mask >> quote_byte & 1:  # (the closing quote: the string may end)
                if pool.nullable(pool.derive(x, quote_byte)):
                    got = min(got, d)  # type: ignore[type-var]
                continue
            b = (mask & -mask).bit_length() - 1
            x2 = pool.derive(x, b)
            if x2 == NOTHING:
                continue
            u2 = pool.derive(inside, b)
            if u2 == NOTHING:
                continue
            d2 = d + (u == _BETWEEN)
            for nxt in ((x2, u2), (x2, _BETWEEN)) if pool.nullable(u2) else ((x2, u2),):
                if d2 < cost.get(nxt, _INF):
                    cost[nxt] = d2
                    (todo.append if d2 > d else todo.appendleft)((d2, *nxt))
        if len(cost) > _REACH_LIMIT:
            got = None
            break
    pool.facts[key] = got
    return got


def _joint_classes(pool: ExprPool, a: int, b: int) -> list[int]:
    """The byte classes that refine both ``a``'s and ``b``'s."""
    return [m for x in pool.byte_classes(a) for y in pool.byte_classes(b) if (m := x & y)]


def _string_with_length(pool: ExprPool, members: tuple[int, ...], opened: bool = True) -> Optional[tuple[int, int, int]]:
    """``(string, unit, hi)`` where the members of an intersection are a string term without
    algebra and its length term ``unit{0,hi}"`` (the minimum reached; ``hi`` -1: unbounded), else ``None``.
    Unless ``opened``, the length term may be ``"unit{0,hi}"`` whole, and ``string`` is then
    what follows its opening quote."""
    marked = pool.facts.get(STRING_LENGTH)
    if marked is None or len(members) != 2:
        return None
    units, quote = marked  # type: ignore[misc]
    for length, string in (members, members[::-1]):
        node = pool.node(length)
        if not opened and node[0] == _SEQ and node[1] == quote:
            mask = pool.node(quote)[1]
            string = pool.derive(string, (mask & -mask).bit_length() - 1)
            node = pool.node(node[2])
        if node[0] != _SEQ or node[2] != quote or pool.is_algebraic(string) or pool.symbols_in(string):
            continue
        rep = pool.node(node[1])
        if rep[0] == _REP and rep[1] in units and rep[2] == 0:
            return string, rep[1], rep[3]
    return None


def _min_length(pool: ExprPool) -> "MinLength":
    """The pool's memoised :class:`MinLength` (symbols weigh nothing)."""

    got = pool.facts.get(("min length",))
    if got is None:
        got = pool.facts[("min length",)] = MinLength(pool, {})
    return got  # type: ignore[return-value]




_BYTES, _EPS = KINDS["bytes"], KINDS["epsilon"]


class MinLength:
    """The fewest bytes of a string of each expression of a pool (the reference copy of the
    Python class the native one replaced)."""

    def __init__(self, pool: ExprPool, weights: dict[int, int]) -> None:
        self.pool = pool
        self.weights = weights
        self._memo: dict[int, int] = {NOTHING: _INF, 1: 0}

    def of(self, e: int) -> int:
        got = self._memo.get(e)
        if got is not None:
            return got
        node = self.pool.node(e)
        kind = node[0]
        if kind == _BYTES:
            got = 1
        elif kind == _SEQ:
            got = min(_INF, self.of(node[1]) + self.of(node[2]))
        elif kind == _ALT:
            got = min(self.of(p) for p in node[1])
        elif kind == _REP:
            got = 0 if node[2] == 0 else min(_INF, node[2] * self.of(node[1]))
        elif kind == _SYM:
            got = self.weights.get(node[1], 0)
        elif kind in (_AND, _NOT):
            got = min(_INF, self.pool.witness_length(e))
        else:
            got = self.pool.embedded(node[1]).min_lengths(self.weights)[node[2]]
        self._memo[e] = got
        return got
