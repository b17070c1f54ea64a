"""JSON strings under a length (``minLength`` / ``maxLength``): the term ``"unit{lo,hi}"``
intersected with the string, and what is known about such intersections without a search.

The schema compiler writes a length as an intersection with ``"unit{lo,hi}"`` (``unit``: one
decoded character, an escape included) and marks the pool (:func:`mark_string_length`). Then:

- far from its bound, a state's tokens are the string's own (:func:`clampable_string`, used by
  :func:`.expr_rewrite.clamp`): positions of a long string share one mask;
- once the minimum is reached, whether the intersection can still be completed is whether the
  string has a completion of at most ``hi`` characters (:func:`fewest_units`, a search over the
  string's own derivatives, shared by every position), not a search over the product, which
  would differ at every position (:func:`string_length_verdict`, which the native liveness search
  asks before it searches).

The marks, the verdict, :func:`fewest_units` and the clamp's bounds are native
(``cpp/engine/string_length.cpp``, ``cpp/engine/clamp.cpp``).

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

from typing import Optional

from .expr import ExprPool

__all__ = [
    "clampable_string", "fewest_units", "in_length_bounded_string", "longest_shortest", "mark_string_length",
    "note_restricted", "string_length_verdict",
]


def mark_string_length(pool: ExprPool, unit: int, quote: int) -> None:
    """Note in ``pool`` that its JSON strings are intersected with length terms ``"unit{lo,hi}"``
    (``unit``: one decoded character; ``quote``: a byte set, the first quote marked stays): clamps
    then share masks far from the bound, and liveness asks :func:`string_length_verdict` before it searches."""
    pool.mark_string_length(unit, quote)


def note_restricted(pool: ExprPool, e: int, restricted: int) -> None:
    """Where ``e`` is a unit, its restriction to a vocabulary's bytes (:func:`.expr_rewrite.restrict`)
    is one too (a string restricted alike is a sequence of them)."""
    pool.note_restricted(e, restricted)


def string_length_verdict(pool: ExprPool, e: int) -> Optional[bool]:
    """Whether ``e``, a string term intersected with its length term ``"unit{0,hi}"`` (the
    minimum reached), matches some string: whether the string has one of at most ``hi`` units
    before its closing quote (:func:`fewest_units`). ``None``: not such a term, or not known."""
    return pool.string_length_verdict(e)  # type: ignore[no-any-return]


def fewest_units(pool: ExprPool, string: int, unit: int) -> Optional[int]:
    """The fewest ``unit`` terms (characters) that spell a string of ``string`` (the rest of a
    JSON string, its closing quote included) before the quote; ``None`` past 4,096 pairs (a 0-1
    breadth-first search over pairs: the string's derivative, where in a unit it is)."""
    return pool.fewest_units(string, unit)  # type: ignore[no-any-return]


def clampable_string(pool: ExprPool, members: tuple[int, ...], n: int) -> Optional[int]:
    """The string of an intersection with its length ``unit{0,hi}"`` (the minimum reached),
    ``hi`` at least ``n`` plus the longest shortest completion of any term the string leads to
    (:func:`longest_shortest`): for a token of at most ``n`` bytes the length cannot be what kills the
    string, so its tokens, and whether they end it, are the string's own. Else ``None``."""
    return pool.clampable_string(members, n)  # type: ignore[no-any-return]


def in_length_bounded_string(pool: ExprPool, e: int) -> bool:
    """Whether ``e`` reads on inside a string under its length: its first part (down a chain of
    concatenations) is a string term intersected with its length term, the minimum reached."""
    return pool.in_length_bounded_string(e)  # type: ignore[no-any-return]


def longest_shortest(pool: ExprPool, e: int) -> int:
    """An upper bound on the shortest completion (bytes) of every term ``e`` leads to, from its
    structure: a concatenation's is its first part's plus the second's shortest string (or the
    second's own), a repetition's one more pass than it still needs, an embedded automaton's its
    farthest state's. Terms with algebra or symbols: ``1 << 60``. Memoised in the pool."""
    return pool.longest_shortest(e)  # type: ignore[no-any-return]
