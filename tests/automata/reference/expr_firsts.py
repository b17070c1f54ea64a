"""What a term of an :class:`~.expr.ExprPool` may read first, memoised per pool (the pool holds
one :class:`Firsts`):

- its **byte classes**: a partition of the 256 bytes on each part of which the derivative is the
  same, so one derivative per part fills a state's whole row;
- its **first bytes**: a mask of the bytes it may start with, by which an alternation's parts are
  sorted, so that the derivative of a trie node or a long enumeration derives only the parts
  that go on with its byte (a 1,400-state enumeration's mask: 37 ms -> 25 ms);
- its **first symbols**: the calls and guards that may come first.

Example:
    >>> from structgen.automata.expr import ExprPool
    >>> pool = ExprPool()
    >>> e = pool.alt([pool.literal(b"ab"), pool.literal(b"b")])
    >>> sorted(bytes(bytes_of_mask(m)) for m in pool.firsts.byte_classes(e))[1:]   # (and every other byte)
    [b'a', b'b']
    >>> bytes(bytes_of_mask(pool.firsts.first_bytes(e)))
    b'ab'
"""

from __future__ import annotations

from typing import Any

from structgen.automata.byte_masks import ALL_BYTES, bytes_of_mask

__all__ = ["NO_SYMBOLS", "Firsts", "readable_bytes"]

#: The empty symbol set, shared by every term without calls (the pool's too: one object, not
#: one per term for the garbage collector to walk).
NO_SYMBOLS: frozenset[int] = frozenset()


class Firsts:
    """The first bytes, byte classes and first symbols of one pool's terms (``pool``: the
    :class:`~.expr.ExprPool` that holds it; ``kinds``: its :data:`~.expr.KINDS`)."""

    def __init__(self, pool: Any, kinds: dict[str, int]) -> None:
        self.pool = pool
        self.classes: dict[int, tuple[int, ...]] = {}
        self._bytes: dict[int, int] = {}
        self._by_byte: dict[int, dict[int, tuple[int, ...]]] = {}
        self._symbols: dict[int, frozenset[int]] = {}
        k = kinds
        self._kinds = (k["bytes"], k["seq"], k["alt"], k["rep"], k["sym"], k["dfa"], k["and"], k["not"])

    def byte_classes(self, e: int) -> tuple[int, ...]:
        """A partition of the 256 bytes (as masks) on each part of which :meth:`.ExprPool.derive`
        is the same: one derivative per part gives a state's whole row."""
        got = self.classes.get(e)
        return got if got is not None else self._classes_of(e)

    def _classes_of(self, e: int) -> tuple[int, ...]:
        _BYTES, _SEQ, _ALT, _REP, _SYM, _DFA, _AND, _NOT = self._kinds
        pool = self.pool
        node = pool.node(e)
        kind = node[0]
        if kind == _BYTES:
            got = (node[1], ALL_BYTES & ~node[1]) if node[1] != ALL_BYTES else (ALL_BYTES,)
        elif kind == _SEQ:
            got = self.byte_classes(node[1])
            if pool.nullable(node[1]):
                got = _refine(got, self.byte_classes(node[2]))
        elif kind == _ALT or kind == _AND:
            got = (ALL_BYTES,)
            for p in node[1]:
                got = _refine(got, self.byte_classes(p))
        elif kind == _REP or kind == _NOT:
            got = self.byte_classes(node[1])
        elif kind == _DFA:
            got = pool.embedded(node[1]).classes(node[2])
        else:
            got = (ALL_BYTES,)
        self.classes[e] = got
        return got

    def first_bytes(self, e: int) -> int:
        """A mask of the bytes ``e`` may read first: at least those whose derivative is not
        ``NOTHING`` (every byte for an embedded automaton or a complement)."""
        got = self._bytes.get(e)
        return got if got is not None else self._bytes_of(e)

    def _bytes_of(self, e: int) -> int:
        _BYTES, _SEQ, _ALT, _REP, _SYM, _DFA, _AND, _NOT = self._kinds
        pool = self.pool
        node = pool.node(e)
        kind = node[0]
        if kind == _BYTES:
            got = node[1]
        elif kind == _SEQ:
            got = self.first_bytes(node[1]) | (self.first_bytes(node[2]) if pool.nullable(node[1]) else 0)
        elif kind == _ALT:
            got = 0
            for p in node[1]:
                got |= self.first_bytes(p)
        elif kind == _AND:
            got = ALL_BYTES
            for p in node[1]:
                got &= self.first_bytes(p)
        elif kind == _REP:
            got = self.first_bytes(node[1])
        else:
            got = ALL_BYTES if kind == _DFA or kind == _NOT else 0
        self._bytes[e] = got
        return got

    def parts_by_byte(self, e: int, parts: tuple[int, ...]) -> dict[int, tuple[int, ...]]:
        """The parts of the alternation ``e`` (its parts: ``parts``) that may read each byte
        first, for the bytes some part reads (made once per alternation; tuples of ints, which
        the garbage collector stops walking, not 256 lists)."""
        got = self._by_byte.get(e)
        if got is None:
            lists: dict[int, list[int]] = {}
            for p in parts:
                for b in bytes_of_mask(self.first_bytes(p)):
                    lists.setdefault(b, []).append(p)
            got = self._by_byte[e] = {b: tuple(ps) for b, ps in lists.items()}
        return got

    def first_symbols(self, e: int) -> frozenset[int]:
        """The symbols that may come first in ``e``."""
        got = self._symbols.get(e)
        return got if got is not None else self._symbols_of(e)

    def _symbols_of(self, e: int) -> frozenset[int]:
        _BYTES, _SEQ, _ALT, _REP, _SYM, _DFA, _AND, _NOT = self._kinds
        pool = self.pool
        node = pool.node(e)
        kind = node[0]
        if kind == _SYM:
            got = frozenset((node[1],))
        elif kind == _SEQ:
            got = self.first_symbols(node[1])
            if pool.nullable(node[1]):
                got = got | self.first_symbols(node[2])
        elif kind == _ALT:
            got = frozenset().union(*(self.first_symbols(p) for p in node[1]))
        elif kind == _REP:
            got = self.first_symbols(node[1])
        elif kind == _DFA:
            got = frozenset(k for k, _ in pool.embedded(node[1]).symbols.get(node[2], ()))
        else:
            got = NO_SYMBOLS
        if not got:
            got = NO_SYMBOLS  # (one empty set shared, not one per term for the collector to walk)
        self._symbols[e] = got
        return got


def _refine(p: tuple[int, ...], q: tuple[int, ...]) -> tuple[int, ...]:
    if len(p) == 1:
        return q
    if len(q) == 1:
        return p
    out = []
    for a in p:
        for b in q:
            c = a & b
            if c:
                out.append(c)
    return tuple(out)


def readable_bytes(pool: Any, e: int, memo: dict[int, int]) -> int:
    """Every byte ``e`` may read anywhere (a 256-bit mask), as the Python pool's rewrites read it
    (``memo``: term -> mask, kept by the caller)."""
    if e in memo:
        return memo[e]
    kinds = dict(zip(("bytes", "seq", "alt", "rep", "sym", "dfa", "and", "not"), pool.firsts._kinds))
    node = pool.node(e)
    kind = node[0]
    if kind == kinds["bytes"]:
        got = node[1]
    elif kind == kinds["seq"]:  # (a chain read in a loop: a long literal is a deep one)
        got = 0
        while node[0] == kinds["seq"]:
            got |= readable_bytes(pool, node[1], memo)
            tail = node[2]
            node = pool.node(tail)
        got |= readable_bytes(pool, tail, memo)
    elif kind == kinds["alt"] or kind == kinds["and"]:
        got = 0 if kind == kinds["alt"] else ALL_BYTES
        for p in node[1]:
            got = got | readable_bytes(pool, p, memo) if kind == kinds["alt"] else got & readable_bytes(pool, p, memo)
    elif kind == kinds["rep"]:
        got = readable_bytes(pool, node[1], memo)
    elif kind == kinds["dfa"]:
        got = pool.embedded(node[1]).readable_bytes()
    else:
        got = ALL_BYTES if kind == kinds["not"] else 0
    memo[e] = got
    return got
