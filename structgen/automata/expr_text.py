"""Expressions as text, and their lengths: what an :class:`~.expr.ExprPool` term looks like as a
regex (for messages and debugging), and the fewest bytes of its strings.

Example:
    >>> from structgen.automata.expr import ExprPool
    >>> pool = ExprPool()
    >>> e = pool.seq(pool.literal(b"a"), pool.repeat(pool.byte_range(48, 57), 2, 5))
    >>> describe(pool, e), MinLength(pool, {}).of(e)
    ('a(?:[0-9]){2,5}', 3)
"""

from __future__ import annotations

from .expr import ALL_BYTES, EPSILON, NOTHING, KINDS, ExprPool

__all__ = ["MaxObligation", "MinLength", "describe"]

_INF = 1 << 60
_BYTES, _SEQ, _ALT, _REP, _SYM, _DFA, _AND, _NOT = (
    KINDS["bytes"], KINDS["seq"], KINDS["alt"], KINDS["rep"], KINDS["sym"], KINDS["dfa"], KINDS["and"], KINDS["not"],
)


def describe(pool: ExprPool, e: int, limit: int = 200) -> str:
    """A regex-like text of ``e``, cut at ``limit`` characters."""
    out: list[str] = []
    _describe(pool, e, out, limit)
    text = "".join(out)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _describe(pool: ExprPool, e: int, out: list[str], limit: int) -> None:
    if sum(map(len, out)) > limit:
        return
    node = pool.node(e)
    kind = node[0]
    if e == NOTHING:
        out.append("∅")
    elif e == EPSILON:
        out.append("ε")
    elif kind == _BYTES:
        out.append(_describe_mask(node[1]))
    elif kind == _SEQ:
        _describe(pool, node[1], out, limit)
        _describe(pool, node[2], out, limit)
    elif kind == _ALT:
        out.append("(?:")
        for i, p in enumerate(node[1]):
            if i:
                out.append("|")
            _describe(pool, p, out, limit)
        out.append(")")
    elif kind == _REP:
        out.append("(?:")
        _describe(pool, node[1], out, limit)
        out.append(f"){{{node[2]},{'' if node[3] < 0 else node[3]}}}")
    elif kind == _SYM:
        out.append(f"<{node[1]}>")
    elif kind == _AND:
        out.append("(?&")
        for i, p in enumerate(node[1]):
            if i:
                out.append("&")
            _describe(pool, p, out, limit)
        out.append(")")
    elif kind == _NOT:
        out.append("(?!")
        _describe(pool, node[1], out, limit)
        out.append(")")
    else:
        out.append(f"<dfa{node[1]}@{node[2]}>")


class MinLength:
    """The fewest bytes of a string of each expression of a pool, a symbol ``k`` weighing
    ``weights.get(k, 0)`` bytes; memoised for one set of weights."""

    def __init__(self, pool: ExprPool, weights: dict[int, int]) -> None:
        self.pool = pool
        self.weights = weights
        self._memo: dict[int, int] = {NOTHING: _INF, EPSILON: 0}

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
        elif kind in (_AND, _NOT):  # (symbol-free: the shortest witness, searched)
            got = min(_INF, self.pool.witness_length(e))
        else:
            got = self.pool.embedded(node[1]).min_lengths(self.weights)[node[2]]
        self._memo[e] = got
        return got



def _describe_mask(mask: int) -> str:
    if mask == ALL_BYTES:
        return "."
    bits = [b for b in range(256) if mask >> b & 1]
    if len(bits) == 1:
        return _describe_byte(bits[0])
    ranges: list[tuple[int, int]] = []
    for b in bits:
        if ranges and ranges[-1][1] == b - 1:
            ranges[-1] = (ranges[-1][0], b)
        else:
            ranges.append((b, b))
    return "[" + "".join(_describe_byte(a) if a == b else f"{_describe_byte(a)}-{_describe_byte(b)}" for a, b in ranges) + "]"


def _describe_byte(b: int) -> str:
    c = chr(b)
    if 0x21 <= b < 0x7F and c not in "\\[]-^.()|*+?{}":
        return c
    return f"\\x{b:02x}"


class MaxObligation:
    """An upper bound, over every state a term's derivatives reach, on the fewest bytes still
    needed to finish there (the most a prefix can oblige one to write): ``x{lo,hi}`` obliges
    ``lo`` copies of ``x``; in ``a·b`` a state inside ``a`` still owes all of ``b``. A call of ``k``
    obliges ``callee[k]`` inside it (the callee's own bound) and weighs ``lengths[k]`` after it; a
    complement or an intersection has no bound here (``_INF``). Memoised for one set of weights.

    Example:
        >>> from structgen.automata.expr import ExprPool
        >>> pool = ExprPool()
        >>> e = pool.seq(pool.literal(b"["), pool.repeat(pool.literal(b"ab"), 3, 5))
        >>> MaxObligation(pool, {}, {}).of(e), MinLength(pool, {}).of(e)
        (7, 7)
    """

    def __init__(self, pool: ExprPool, lengths: dict[int, int], callee: dict[int, int]) -> None:
        self.pool = pool
        self.callee = callee
        self.minlen = MinLength(pool, lengths)
        self._memo: dict[int, int] = {NOTHING: 0, EPSILON: 0}

    def of(self, e: int) -> int:
        got = self._memo.get(e)
        if got is not None:
            return got
        node = self.pool.node(e)
        kind = node[0]
        ml = self.minlen.of
        if kind == _BYTES:
            got = 1
        elif kind == _SEQ:
            got = max(self.of(node[1]) + ml(node[2]), self.of(node[2]))
        elif kind == _ALT:
            got = max(self.of(p) for p in node[1])
        elif kind == _REP:
            lo = node[2]
            got = self.of(node[1]) + max(lo - 1, 0) * ml(node[1])
        elif kind == _SYM:
            got = self.callee.get(node[1], 0)
        elif kind == _DFA:
            lengths = self.pool.embedded(node[1]).min_lengths(self.minlen.weights)
            got = max((d for d in lengths if d < _INF), default=0)
        else:  # an intersection or a complement
            got = _INF
        got = min(got, _INF)
        self._memo[e] = got
        return got
