"""UTF-8 lowering: code-point maps → byte paths. The one place characters become bytes.

Both the character-FSM lowering (the tests' reference, ``tests/automata/reference/char_fsm.py``)
and the regex NFA (:mod:`structgen.automata.nfa`) write their byte edges with :class:`Utf8Writer`. Only valid UTF-8 is
produced: no overlong encodings, no surrogates (U+D800-U+DFFF), nothing above U+10FFFF.
"""

from __future__ import annotations

import bisect
from typing import Iterable, Protocol, Sequence

from ..errors import CompileBudgetExceeded

__all__ = [
    "MAX_CODE_POINT", "CodePointMap", "TermBuilder", "Utf8Writer", "code_points_expr", "code_points_rows", "complement_intervals",
    "intervals_of",
    "merge_intervals", "subtract_intervals", "utf8_sequences",
]

MAX_CODE_POINT = 0x10FFFF
_SURROGATES = (0xD800, 0xDFFF)
# Smallest code point that needs n bytes (anything below is an overlong encoding).
_MIN_CP = {1: 0, 2: 0x80, 3: 0x800, 4: 0x10000}


def merge_intervals(intervals: Iterable[tuple[int, int]]) -> list[tuple[int, int]]:
    """Inclusive ranges, sorted and merged (overlapping or touching ones joined).

    >>> merge_intervals([(5, 9), (1, 2), (3, 3), (8, 12)])
    [(1, 3), (5, 12)]
    """
    out: list[tuple[int, int]] = []
    for lo, hi in sorted(intervals):
        if out and lo <= out[-1][1] + 1:
            out[-1] = (out[-1][0], max(out[-1][1], hi))
        else:
            out.append((lo, hi))
    return out


def subtract_intervals(a: Iterable[tuple[int, int]], b: Iterable[tuple[int, int]]) -> list[tuple[int, int]]:
    """The points of ``a`` not in ``b`` (inclusive ranges, each sorted and disjoint).

    >>> subtract_intervals([(0, 9), (20, 29)], [(3, 4), (8, 21)])
    [(0, 2), (5, 7), (22, 29)]
    """
    holes = list(b)
    out: list[tuple[int, int]] = []
    j = 0
    for lo, hi in a:
        while j < len(holes) and holes[j][1] < lo:
            j += 1
        cur, k = lo, j
        while k < len(holes) and holes[k][0] <= hi:
            if holes[k][0] > cur:
                out.append((cur, holes[k][0] - 1))
            cur = max(cur, holes[k][1] + 1)
            k += 1
        if cur <= hi:
            out.append((cur, hi))
    return out


def complement_intervals(intervals: Iterable[tuple[int, int]]) -> tuple[tuple[int, int], ...]:
    """The code points not in sorted, disjoint, inclusive ``intervals``.

    >>> complement_intervals([(0, 9), (11, 0x10FFFE)])
    ((10, 10), (1114111, 1114111))
    """
    out: list[tuple[int, int]] = []
    nxt = 0
    for a, b in intervals:
        if a > nxt:
            out.append((nxt, a - 1))
        nxt = b + 1
    if nxt <= MAX_CODE_POINT:
        out.append((nxt, MAX_CODE_POINT))
    return tuple(out)


def intervals_of(code_points: Iterable[int]) -> list[tuple[int, int]]:
    """Sorted, maximal inclusive intervals covering ``code_points``.

    >>> intervals_of([3, 1, 2, 7])
    [(1, 3), (7, 7)]
    """
    out: list[tuple[int, int]] = []
    for cp in sorted(set(code_points)):
        if out and out[-1][1] == cp - 1:
            out[-1] = (out[-1][0], cp)
        else:
            out.append((cp, cp))
    return out


class CodePointMap:
    """Piecewise-constant map code point → target state (-1: unmapped); surrogates unmapped."""

    __slots__ = ("starts", "ends", "targets")

    def __init__(self, intervals: Iterable[tuple[int, int, int]]) -> None:
        lo, hi = _SURROGATES
        pieces: list[tuple[int, int, int]] = []
        for a, b, t in sorted(intervals):
            # Surrogates cannot be encoded in UTF-8: cut them out.
            if a <= hi and b >= lo:
                if a < lo:
                    pieces.append((a, lo - 1, t))
                if b > hi:
                    pieces.append((hi + 1, b, t))
            else:
                pieces.append((a, b, t))
        merged: list[tuple[int, int, int]] = []
        for a, b, t in pieces:
            if merged and merged[-1][2] == t and merged[-1][1] == a - 1:
                merged[-1] = (merged[-1][0], b, t)
            else:
                merged.append((a, b, t))
        self.starts = [a for a, _, _ in merged]
        self.ends = [b for _, b, _ in merged]
        self.targets = [t for _, _, t in merged]

    def at(self, cp: int) -> int:
        i = bisect.bisect_right(self.starts, cp) - 1
        if i >= 0 and cp <= self.ends[i]:
            return self.targets[i]
        return -1

    def uniform(self, lo: int, hi: int) -> int | None:
        """The single target of all of [lo, hi] (-1 if none of it is mapped), or None if mixed."""
        i = bisect.bisect_right(self.starts, lo) - 1
        if i >= 0 and lo <= self.ends[i]:
            return self.targets[i] if hi <= self.ends[i] else None
        # lo unmapped: uniform (-1) only if no interval starts inside [lo, hi]
        j = i + 1
        if j < len(self.starts) and self.starts[j] <= hi:
            return None
        return -1


class Utf8Writer:
    """Writes deterministic UTF-8 byte paths into ``rows`` (``rows[s][byte] = next``).

    Intermediate states that mean "k more continuation bytes, then state t" are shared across
    every call on one writer, so "any character" costs a handful of states, not thousands. New
    states are appended to ``rows``; going past ``limit`` rows raises
    :class:`CompileBudgetExceeded`.

    Example:
        >>> rows = [{}, {}]
        >>> Utf8Writer(rows, limit=100).write(0, [(0xE9, 0xE9, 1)])   # "é" is C3 A9
        >>> rows[0], rows[2]
        ({195: 2}, {169: 1})
    """

    def __init__(self, rows: list[dict[int, int]], *, limit: int) -> None:
        self.rows = rows
        self.limit = limit
        self._shared: dict[tuple[int, int], int] = {}

    def write(self, state: int, intervals: Iterable[tuple[int, int, int]]) -> None:
        """Add to ``rows[state]`` the byte paths of ``(lo, hi, target)`` code-point intervals.

        The intervals must not overlap (a character has one target: the result is deterministic).
        """
        cmap = CodePointMap(intervals)
        row = self.rows[state]
        for a, b, t in zip(cmap.starts, cmap.ends, cmap.targets):
            if a >= 0x80:
                break
            for byte in range(a, min(b, 0x7F) + 1):
                row[byte] = t
        if not cmap.ends or cmap.ends[-1] < 0x80:
            return
        for lead in range(0xC2, 0xF5):
            if lead < 0xE0:
                nb, base = 2, (lead & 0x1F) << 6
            elif lead < 0xF0:
                nb, base = 3, (lead & 0x0F) << 12
            else:
                nb, base = 4, (lead & 0x07) << 18
            s = self._node(cmap, base, nb - 1, nb)
            if s is not None:
                row[lead] = s

    def _new_state(self) -> int:
        self.rows.append({})
        if len(self.rows) > self.limit:
            raise CompileBudgetExceeded(f"more than {self.limit} byte-level states", self.limit)
        return len(self.rows) - 1

    def _cont(self, target: int, k: int) -> int:
        """State that reads k continuation bytes (any of 0x80-0xBF) then is at ``target``."""
        if k == 0:
            return target
        key = (target, k)
        s = self._shared.get(key)
        if s is None:
            s = self._new_state()
            self._shared[key] = s
            nxt = self._cont(target, k - 1)
            self.rows[s].update(dict.fromkeys(range(0x80, 0xC0), nxt))
        return s

    def _node(self, cmap: CodePointMap, lo: int, k: int, nbytes: int) -> int | None:
        """State reading the k continuation bytes of code points [lo, lo + 64**k)."""
        size = 64**k
        hi = lo + size - 1
        vlo = max(lo, _MIN_CP[nbytes])
        vhi = min(hi, MAX_CODE_POINT)
        if vlo > vhi:
            return None
        u = cmap.uniform(vlo, vhi)
        if u == -1:
            return None
        if u is not None and vlo == lo and vhi == hi and not (lo <= _SURROGATES[1] and hi >= _SURROGATES[0]):
            return self._cont(u, k)
        s = self._new_state()
        row = self.rows[s]
        sub = size // 64
        for c in range(64):
            clo = lo + c * sub
            if k == 1:
                if clo < vlo or clo > vhi:
                    continue
                t = cmap.at(clo)
                if t >= 0:
                    row[0x80 + c] = t
            else:
                child = self._node(cmap, clo, k - 1, nbytes)
                if child is not None:
                    row[0x80 + c] = child
        return s if row else None


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

    >>> from structgen.automata.expr import ExprPool
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


def code_points_rows(intervals: Iterable[tuple[int, int]]) -> tuple[list[list[int]], list[bool]]:
    """``(rows, finals)`` of the minimal automaton (start state 0, not numbered canonically) of
    one character whose code point is in ``intervals`` (inclusive), as UTF-8 bytes.

    Minimal by construction: after a lead byte a state has ``j`` continuation bytes to read, and
    its language is the set of values those ``6 * j`` bits may still spell, kept as intervals.
    Two states are the same state exactly when both are equal, so no minimisation is needed: a
    class of hundreds of ranges (a Unicode category spelled out) is read in about 2 ms, where
    sets of byte-range sequences and then Hopcroft took 23 ms.

    >>> rows, finals = code_points_rows([(0x61, 0x62), (0xE9, 0xE9)])
    >>> rows[0][0x61] == rows[0][0x62] > 0, finals[rows[rows[0][0xC3]][0xA9]], rows[0][0x63]
    (True, True, -1)
    """
    points = [(a, b) for a, b in merge_intervals(intervals) if a <= b]
    if points and points[-1][1] > MAX_CODE_POINT:
        points = [(a, min(b, MAX_CODE_POINT)) for a, b in points if a <= MAX_CODE_POINT]
    ids: dict[tuple[int, tuple[tuple[int, int], ...]], int] = {}
    rows: list[list[int]] = [[-1] * 256]
    finals: list[bool] = [False]
    todo: list[tuple[int, tuple[tuple[int, int], ...]]] = []

    def state_of(j: int, values: tuple[tuple[int, int], ...]) -> int:
        key = (j, values)
        got = ids.get(key)
        if got is None:
            got = ids[key] = len(rows)
            rows.append([-1] * 256)
            finals.append(j == 0)
            todo.append(key)
        return got

    def fill(row: list[int], first: int, j: int, values: Iterable[tuple[int, int]]) -> None:
        # byte ``first + c`` reads block c of ``values`` (blocks of 64 ** j values; a block
        # that one interval covers leads to the state of every value)
        shift = 6 * j
        size = 1 << shift
        blocks: dict[int, list[tuple[int, int]]] = {}
        for a, b in values:
            ca, cb = a >> shift, b >> shift
            if ca == cb:
                blocks.setdefault(ca, []).append((a - (ca << shift), b - (ca << shift)))
                continue
            blocks.setdefault(ca, []).append((a - (ca << shift), size - 1))
            if cb > ca + 1:
                row[first + ca + 1 : first + cb] = [state_of(j, ((0, size - 1),))] * (cb - ca - 1)
            blocks.setdefault(cb, []).append((0, b - (cb << shift)))
        for c, part in blocks.items():
            row[first + c] = state_of(j, tuple(part))

    start = rows[0]
    for n, (lo, hi) in enumerate(((0, 0x7F), (0x80, 0x7FF), (0x800, 0xFFFF), (0x10000, MAX_CODE_POINT))):
        band = [(max(a, lo), min(b, hi)) for a, b in points if a <= hi and b >= lo]
        if n == 2:  # (no surrogates)
            band = [(a, b) for x, y in band for a, b in ((x, min(y, _SURROGATES[0] - 1)), (max(x, _SURROGATES[1] + 1), y)) if a <= b]
        if band:
            fill(start, (0x00, 0xC0, 0xE0, 0xF0)[n], n, band)
    while todo:
        j, values = todo.pop()
        if j:
            fill(rows[ids[(j, values)]], 0x80, j - 1, values)
    return rows, finals
