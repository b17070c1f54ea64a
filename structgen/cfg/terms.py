"""Grammar algebra on the terms of an :class:`~structgen.automata.expr.ExprPool` whose symbols
stand for nonterminals: the parts of a term a grammar transformation splits off.

A rule's term reads bytes and *symbols* (a call of another rule's automaton). Every symbol stands
for a language without the empty string (the nonterminal's non-empty strings: a rule that may be
empty is referred to as ``symbol | ε``), so "what a term reads first" and "what it reads last"
are decided on its structure alone:

- :func:`nonempty`: the term without the empty string (a called automaton may not accept it);
- :func:`strip_first`: the term's paths that do not start with symbol ``k``. With the pool's
  :meth:`~structgen.automata.expr.ExprPool.derive_symbol` (what follows a leading ``k``), a term
  is ``k · derive_symbol(e, k) | strip_first(e, k)``: the split that removes left recursion;
- :func:`split_last`: ``(γ, δ)`` with ``e = γ · k | δ`` where no path of ``δ`` ends with ``k``:
  the split that turns right recursion into repetition;
- :func:`last_symbols`: the symbols a term may read last.

Only the pool's public constructors are used; an embedded automaton, an intersection or a
complement holds no symbol (the grammar front end builds them from terminals alone), so each is
kept whole. Long concatenations (a literal is a chain of thousands of links) are walked along
their spine without recursion.

Example:
    >>> from structgen.automata.expr import ExprPool
    >>> pool = ExprPool()
    >>> a, k = pool.literal(b"a"), pool.symbol(1)
    >>> e = pool.alt([pool.seq(k, a), pool.literal(b"b")])          # E -> E a | b
    >>> strip_first(pool, e, 1) == pool.literal(b"b"), pool.derive_symbol(e, 1) == a
    (True, True)
    >>> gamma, delta = split_last(pool, pool.alt([pool.seq(a, k), EPSILON]), 1)   # L -> a L | ε
    >>> gamma == a and delta == EPSILON
    True
"""

from __future__ import annotations

from ..automata.expr import ALL_BYTES, EPSILON, KINDS, NOTHING, ExprPool

__all__ = ["TermAlgebra", "last_symbols", "nonempty", "split_last", "strip_first"]

_BYTES, _SEQ, _ALT, _REP, _SYM = KINDS["bytes"], KINDS["seq"], KINDS["alt"], KINDS["rep"], KINDS["sym"]
_EPS, _NOTHING = KINDS["epsilon"], KINDS["nothing"]


class TermAlgebra:
    """The splits of one pool's terms, memoised (one instance per grammar compile)."""

    def __init__(self, pool: ExprPool) -> None:
        self.pool = pool
        self._nonempty: dict[int, int] = {NOTHING: NOTHING, EPSILON: NOTHING}
        self._strip: dict[tuple[int, int], int] = {}
        self._last: dict[int, frozenset[int]] = {}
        self._split: dict[tuple[int, int], tuple[int, int, int]] = {}
        self._plus = pool.repeat(pool.bytes_of(ALL_BYTES), 1, None)

    def _spine(self, e: int) -> tuple[list[int], int]:
        """A concatenation as its heads (none a concatenation) and its last part."""
        heads = []
        node = self.pool.node(e)
        while node[0] == _SEQ:
            heads.append(node[1])
            e = node[2]
            node = self.pool.node(e)
        return heads, e

    def _rest(self, heads: list[int], tail: int) -> list[int]:
        """``rests[i]``: the concatenation of ``heads[i:]`` then ``tail`` (``rests[len] = tail``)."""
        rests = [tail]
        for h in reversed(heads):
            rests.append(self.pool.seq(h, rests[-1]))
        rests.reverse()
        return rests

    # -- the empty string ------------------------------------------------------------------------

    def nonempty(self, e: int) -> int:
        """The non-empty strings of ``e`` (``e`` itself when it is not nullable)."""
        got = self._nonempty.get(e)
        if got is not None:
            return got
        pool = self.pool
        if not pool.nullable(e):
            got = e
        else:
            node = pool.node(e)
            kind = node[0]
            if kind == _SEQ:
                heads, tail = self._spine(e)
                rests = self._rest(heads, tail)
                got = self.nonempty(tail)  # (every head nullable here: e is)
                for i in range(len(heads) - 1, -1, -1):
                    got = pool.alt([pool.seq(self.nonempty(heads[i]), rests[i + 1]), got])
            elif kind == _ALT:
                got = pool.alt([self.nonempty(p) for p in node[1]])
            elif kind == _REP:
                x, lo, hi = node[1], node[2], node[3]
                got = pool.seq(self.nonempty(x), pool.repeat(x, max(lo - 1, 0), None if hi < 0 else hi - 1))
            else:  # an embedded automaton, an intersection, a complement: no symbol inside
                got = pool.both((e, self._plus))
        self._nonempty[e] = got
        return got

    # -- what comes first ------------------------------------------------------------------------

    def strip_first(self, e: int, k: int) -> int:
        """The paths of ``e`` that do not start with symbol ``k`` (the empty one kept)."""
        pool = self.pool
        if k not in pool.first_symbols(e):
            return e
        key = (e, k)
        got = self._strip.get(key)
        if got is not None:
            return got
        node = pool.node(e)
        kind = node[0]
        if kind == _SYM:
            got = NOTHING  # (k itself: a symbol's first symbol is itself)
        elif kind == _SEQ:
            heads, tail = self._spine(e)
            rests = self._rest(heads, tail)
            got = self.strip_first(tail, k)
            for i in range(len(heads) - 1, -1, -1):
                h = heads[i]
                first = pool.seq(self.nonempty(self.strip_first(h, k)), rests[i + 1])
                got = pool.alt([first, got]) if pool.nullable(h) else first
        elif kind == _ALT:
            got = pool.alt([self.strip_first(p, k) for p in node[1]])
        elif kind == _REP:
            x, lo, hi = node[1], node[2], node[3]
            more = pool.seq(self.nonempty(self.strip_first(x, k)), pool.repeat(x, max(lo - 1, 0), None if hi < 0 else hi - 1))
            got = pool.alt([more, EPSILON]) if lo == 0 else more
        else:
            got = e
        self._strip[key] = got
        return got

    # -- what comes last -------------------------------------------------------------------------

    def last_symbols(self, e: int) -> frozenset[int]:
        """The symbols ``e`` may read last."""
        got = self._last.get(e)
        if got is not None:
            return got
        pool = self.pool
        if not pool.symbols_in(e):
            got = frozenset()
        else:
            node = pool.node(e)
            kind = node[0]
            if kind == _SYM:
                got = frozenset((node[1],))
            elif kind == _SEQ:
                heads, tail = self._spine(e)
                got = self.last_symbols(tail)
                nullable = pool.nullable(tail)
                for h in reversed(heads):
                    if not nullable:
                        break
                    got = got | self.last_symbols(h)
                    nullable = pool.nullable(h)
            elif kind == _ALT:
                got = frozenset().union(*(self.last_symbols(p) for p in node[1]))
            elif kind == _REP:
                got = self.last_symbols(node[1])
            else:
                got = frozenset()
        self._last[e] = got
        return got

    def split_last(self, e: int, k: int) -> tuple[int, int]:
        """``(γ, δ)`` with ``e = γ · k | δ``, where no path of ``δ`` ends with symbol ``k``."""
        gamma, delta, _ = self._split_last(e, k)
        return gamma, delta

    def _split_last(self, e: int, k: int) -> tuple[int, int, int]:
        """:meth:`split_last`, and the non-empty part of ``δ``."""
        pool = self.pool
        if k not in self.last_symbols(e):
            return NOTHING, e, self.nonempty(e)
        key = (e, k)
        got = self._split.get(key)
        if got is not None:
            return got
        node = pool.node(e)
        kind = node[0]
        if kind == _SYM:
            got = (EPSILON, NOTHING, NOTHING)
        elif kind == _SEQ:
            heads, tail = self._spine(e)
            rests = self._rest(heads, tail)
            gamma, delta, delta_plus = self._split_last(tail, k)
            for i in range(len(heads) - 1, -1, -1):
                h = heads[i]
                # a path of h·rest ends with k where rest's non-empty part does, or where rest's
                # part is empty and h's part does
                gamma, delta_plus = pool.seq(h, gamma), pool.seq(h, delta_plus)
                delta = delta_plus
                if pool.nullable(rests[i + 1]):
                    hg, hd, hd_plus = self._split_last(h, k)
                    gamma, delta, delta_plus = pool.alt([gamma, hg]), pool.alt([delta_plus, hd]), pool.alt([delta_plus, hd_plus])
            got = (gamma, delta, delta_plus)
        elif kind == _ALT:
            parts = [self._split_last(p, k) for p in node[1]]
            got = (pool.alt([g for g, _, _ in parts]), pool.alt([d for _, d, _ in parts]), pool.alt([d for _, _, d in parts]))
        elif kind == _REP:
            x, lo, hi = node[1], node[2], node[3]
            before = pool.repeat(x, max(lo - 1, 0), None if hi < 0 else hi - 1)
            xg, _, xd_plus = self._split_last(x, k)
            gamma = pool.seq(before, xg)
            delta_plus = pool.seq(before, xd_plus)
            got = (gamma, pool.alt([delta_plus, EPSILON]) if pool.nullable(e) else delta_plus, delta_plus)
        else:
            got = (NOTHING, e, self.nonempty(e))
        self._split[key] = got
        return got


def nonempty(pool: ExprPool, e: int) -> int:
    """:meth:`TermAlgebra.nonempty` with a fresh memo."""
    return TermAlgebra(pool).nonempty(e)


def strip_first(pool: ExprPool, e: int, k: int) -> int:
    """:meth:`TermAlgebra.strip_first` with a fresh memo."""
    return TermAlgebra(pool).strip_first(e, k)


def split_last(pool: ExprPool, e: int, k: int) -> tuple[int, int]:
    """:meth:`TermAlgebra.split_last` with a fresh memo."""
    return TermAlgebra(pool).split_last(e, k)


def last_symbols(pool: ExprPool, e: int) -> frozenset[int]:
    """:meth:`TermAlgebra.last_symbols` with a fresh memo."""
    return TermAlgebra(pool).last_symbols(e)
