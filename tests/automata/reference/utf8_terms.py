"""The reference's UTF-8 lowering of a code-point class to a term (the one the package had in
Python before ``cpp/engine/code_points.cpp``): sequences of byte ranges, a trie on the lead byte
range. The reference pool (:mod:`.expr`) builds its classes with it, so the differential tests
compare two constructions."""

from __future__ import annotations

from typing import Iterable, Protocol, Sequence

__all__ = ["TermBuilder", "code_points_expr", "utf8_sequences"]


def utf8_sequences(lo: int, hi: int) -> list[list[tuple[int, int]]]:
    """The UTF-8 encodings of code points ``lo..hi`` as sequences of byte ranges (no surrogates,
    no overlong forms): every code point's bytes fall in exactly one sequence.

    >>> utf8_sequences(0x61, 0x62), utf8_sequences(0xE9, 0xE9)
    ([[(97, 98)]], [[(195, 195), (169, 169)]])
    """
    out: list[list[tuple[int, int]]] = []
    for a, b in ((lo, min(hi, 0xD7FF)), (max(lo, 0xE000), hi)):
        for start, end in ((0, 0x7F), (0x80, 0x7FF), (0x800, 0xFFFF), (0x10000, 0x10FFFF)):
            x, y = max(a, start), min(b, end)
            if x <= y:
                _split_same_length(x, y, out)
    return out


def _split_same_length(lo: int, hi: int, out: list[list[tuple[int, int]]]) -> None:
    n = len(chr(lo).encode("utf-8", "surrogatepass"))
    for i in range(1, n):
        m = (1 << (6 * i)) - 1
        if lo & ~m != hi & ~m:
            if lo & m:
                _split_same_length(lo, lo | m, out)
                _split_same_length((lo | m) + 1, hi, out)
                return
            if hi & m != m:
                _split_same_length(lo, (hi & ~m) - 1, out)
                _split_same_length(hi & ~m, hi, out)
                return
    a = chr(lo).encode("utf-8", "surrogatepass")
    b = chr(hi).encode("utf-8", "surrogatepass")
    out.append([(a[i], b[i]) for i in range(n)])


class TermBuilder(Protocol):
    """What :func:`code_points_expr` needs of an expression pool (:class:`~.expr.ExprPool`)."""

    def bytes_of(self, mask: int) -> int: ...
    def byte_range(self, lo: int, hi: int) -> int: ...
    def seq(self, a: int, b: int) -> int: ...
    def concat(self, parts: Sequence[int]) -> int: ...
    def alt(self, parts: Iterable[int]) -> int: ...


def code_points_expr(pool: TermBuilder, intervals: Iterable[tuple[int, int]]) -> int:
    """One character whose code point is in ``intervals`` (inclusive), as UTF-8 bytes.

    >>> from tests.automata.reference.expr import ExprPool
    >>> pool = ExprPool()
    >>> e = code_points_expr(pool, [(0xE9, 0xE9), (0x61, 0x61)])
    >>> pool.nullable(pool.derive(pool.derive(e, 0xC3), 0xA9)), pool.nullable(pool.derive(e, 0x61))
    (True, True)
    """
    seqs: list[list[tuple[int, int]]] = []
    for lo, hi in intervals:
        seqs.extend(utf8_sequences(lo, hi))
    # a trie on the leading byte range, so that sequences sharing it share one branch
    by_lead: dict[tuple[int, int], list[list[tuple[int, int]]]] = {}
    for s in seqs:
        by_lead.setdefault(s[0], []).append(s[1:])
    parts = []
    singles = 0
    for (a, b), rests in by_lead.items():
        head = ((1 << (b + 1)) - 1) & ~((1 << a) - 1)
        if all(not r for r in rests):
            singles |= head
            continue
        tails = pool.alt([pool.concat([pool.byte_range(x, y) for x, y in r]) for r in rests])
        parts.append(pool.seq(pool.bytes_of(head), tails))
    return pool.alt([pool.bytes_of(singles), *parts])
