"""The reference (pure Python) clamp and its bounds the native ones replaced: kept only for the
differential tests (tests/vocab/test_native_vocab.py). The memo that lived in the pool lives in a table here."""

from __future__ import annotations

import weakref
from typing import Any, Callable, Optional, Sequence

from structgen.automata.expr import KINDS, ExprPool

_SEQ, _ALT, _REP, _DFA, _AND, _NOT, _SYM = (KINDS[k] for k in ("seq", "alt", "rep", "dfa", "and", "not", "sym"))
_INF = 1 << 60
_MEMO: "weakref.WeakKeyDictionary[ExprPool, dict[str, dict[Any, int]]]" = weakref.WeakKeyDictionary()


def _memo(pool: ExprPool, name: str) -> dict[Any, int]:
    return _MEMO.setdefault(pool, {}).setdefault(name, {})


def _children_first(table: dict[Any, int], e: int, key_of: Callable[[int], Any], parts_of: Callable[[int], Sequence[int]],
                    make: Callable[[int], int]) -> int:
    """``make(e)`` memoised in ``table`` under ``key_of(e)``, the parts it reads (``parts_of``)
    made first, without recursion: a term may nest hundreds of levels (an object with
    ``maxProperties: 300`` holds one level per key), deeper than Python's stack."""
    facts = table
    stack = [e]
    while stack:
        x = stack[-1]
        k = key_of(x)
        if k in facts:
            stack.pop()
            continue
        pending = [p for p in parts_of(x) if key_of(p) not in facts]
        if pending:
            stack.extend(pending)
            continue
        facts[k] = make(x)
        stack.pop()
    return facts[key_of(e)]


def largest_counter(pool: ExprPool, e: int) -> int:
    """The largest repetition counter in ``e`` (lower or upper), or a huge number where ``e``
    holds an intersection (which :func:`clamp` may rewrite whatever the counters): kept by the
    pool as terms are built (:meth:`.ExprPool.largest_counter`)."""
    return pool.largest_counter(e)


def clamp(pool: ExprPool, e: int, n: int) -> int:
    """``e`` with every repetition's counters cut to what ``n`` bytes can tell apart: for every
    string ``w`` of at most ``n`` bytes, ``w`` leads somewhere in ``e`` iff it does in the result,
    and to a final state iff it does there. States that differ only in large counters then share
    one token mask (a token of at most ``n`` bytes cannot see the difference). An intersection or
    a complement is left whole (whether it can still be completed may depend on any counter),
    but for a string's length far from its bound (:func:`.string_length.clampable_string`)."""
    table = _memo(pool, 'clamped')
    key = (e, n)
    got = table.get(key)
    if got is not None:
        return got
    node = pool.node(e)
    if node[0] == _REP and pool.largest_counter(node[1]) <= n:  # (a string body alone, directly)
        got = table[key] = _cut_repeat(pool, node[1], node[2], node[3], n)
        return got
    if node[0] == _SEQ and pool.largest_counter(node[2]) <= n:
        head = pool.node(node[1])
        if head[0] == _REP and pool.largest_counter(head[1]) <= n:  # (a string body x{lo,hi}"...: the common case, directly)
            got = table[key] = pool.seq(_cut_repeat(pool, head[1], head[2], head[3], n), node[2])
            return got
    strings: dict[int, Optional[int]] = {}

    def string_of(x: int) -> Optional[int]:  # (an intersection's string far from its length bound)
        if x not in strings:
            strings[x] = clampable_string(pool, pool.node(x)[1], n)
        return strings[x]

    def key_of(x: int) -> tuple[int, int]:
        return (x, n)

    def parts_of(x: int) -> Sequence[int]:
        if largest_counter(pool, x) <= n:
            return ()
        node = pool.node(x)
        kind = node[0]
        if kind == _AND:
            string = string_of(x)
            return () if string is None else (string,)
        return node[1:3] if kind == _SEQ else node[1] if kind == _ALT else node[1:2] if kind == _REP else ()

    def make(x: int) -> int:
        if largest_counter(pool, x) <= n:
            return x  # (nothing to cut: the same term, not rebuilt part by part)
        node = pool.node(x)
        kind = node[0]

        def done(p: int) -> int:
            return table[key_of(p)]

        if kind == _SEQ:
            return pool.seq(done(node[1]), done(node[2]))
        if kind == _ALT:
            return pool.alt([done(p) for p in node[1]])
        if kind == _REP:
            return _cut_repeat(pool, done(node[1]), node[2], node[3], n)
        if kind == _AND:
            string = string_of(x)
            return x if string is None else done(string)
        return x

    return _children_first(table, e, key_of, parts_of, make)


def _cut_repeat(pool: ExprPool, x: int, lo: int, hi: int, n: int) -> int:
    """``x{lo,hi}`` (``hi`` -1: unbounded) as :func:`clamp` cuts it for ``n`` bytes: within ``n``
    bytes at most ``n`` repetitions complete, so a lower bound above ``n + 1`` and an upper bound
    above ``n`` are indistinguishable from ``n + 1`` and "unbounded"."""
    return pool.repeat(x, min(lo, n + 1), None if hi < 0 or hi > n else hi)


def clampable_string(pool: ExprPool, members: tuple[int, ...], n: int) -> Optional[int]:
    """The string of an intersection with its length ``unit{0,hi}"`` (the minimum reached),
    ``hi`` at least ``n`` plus the longest shortest completion of any term the string leads to
    (:func:`_longest_shortest`): for a token of at most ``n`` bytes the length cannot be what kills the
    string, so its tokens, and whether they end it, are the string's own. Else ``None``."""
    found = pool.string_with_length(members)
    if found is None:
        return None
    string, _, hi = found
    return string if hi < 0 or hi >= n + _longest_shortest(pool, string) else None  # type: ignore[no-any-return]


def _longest_shortest(pool: ExprPool, e: int) -> int:
    """An upper bound on the shortest completion (bytes) of every term ``e`` leads to, from its
    structure: a concatenation's is its first part's plus the second's shortest string (or the
    second's own), a repetition's one more pass than it still needs, an embedded automaton's its
    farthest state's. Terms with algebra or symbols: :data:`_INF`. Memoised in the pool."""
    memo = _memo(pool, 'longest_shortest')
    got = memo.get(e)
    if got is not None:
        return got
    shortest = pool.min_length
    node = pool.node(e)
    kind = node[0]
    if kind == _SEQ:  # (a chain of concatenations is read in a loop: a long literal is a deep one)
        parts, rest = [], e
        while pool.node(rest)[0] == _SEQ:
            parts.append(pool.node(rest)[1])
            rest = pool.node(rest)[2]
        got = _longest_shortest(pool, rest)
        after = shortest(rest)
        for p in reversed(parts):
            got = max(got, _longest_shortest(pool, p) + after)
            after = min(_INF, after + shortest(p))
    elif kind == _ALT:
        got = max(_longest_shortest(pool, p) for p in node[1])
    elif kind == _REP:
        x, lo = node[1], node[2]
        got = max(lo * shortest(x), _longest_shortest(pool, x) + max(lo - 1, 0) * shortest(x))
    elif kind == _DFA:
        got = max((n for n in pool.embedded(node[1]).min_lengths({}) if n < _INF), default=0)
    elif kind in (_AND, _NOT, _SYM):
        got = _INF
    else:  # (bytes, the empty string, nothing)
        got = min(1, shortest(e))
    got = min(got, _INF)
    memo[e] = got
    return got
