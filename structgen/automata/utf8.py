"""UTF-8 lowering: code-point maps → byte paths. The one place characters become bytes.

Both the character-FSM lowering (the tests' reference, ``tests/automata/reference/char_fsm.py``)
and the regex NFA (:mod:`structgen.automata.nfa`) write their byte edges with :class:`Utf8Writer`. Only valid UTF-8 is
produced: no overlong encodings, no surrogates (U+D800-U+DFFF), nothing above U+10FFFF.
"""

from __future__ import annotations

import bisect
from typing import Iterable

import numpy as np

from .. import _engine
from ..errors import CompileBudgetExceeded

__all__ = [
    "MAX_CODE_POINT", "CodePointMap", "Utf8Writer", "code_points_rows", "complement_intervals", "intervals_of",
    "merge_intervals", "subtract_intervals",
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


def code_points_rows(intervals: Iterable[tuple[int, int]]) -> tuple[np.ndarray, np.ndarray]:
    """``(rows, finals)`` (``[states, 256]`` int32, ``-1``: no move; ``[states]`` bool) of the
    minimal automaton (start state 0, not numbered canonically) of one character whose code point
    is in ``intervals`` (inclusive), as UTF-8 bytes.

    Minimal by construction: after a lead byte a state has ``j`` continuation bytes to read, and
    its language is the set of values those ``6 * j`` bits may still spell, kept as intervals.
    Two states are the same state exactly when both are equal, so no minimisation is needed.
    Native (``cpp/engine/utf8_dfa.cpp``): a Unicode category spelled out (700 ranges, 297
    states) takes 0.5-0.9 ms from Python, where this construction in Python took 2.7 ms.

    >>> rows, finals = code_points_rows([(0x61, 0x62), (0xE9, 0xE9)])
    >>> bool(rows[0][0x61] == rows[0][0x62] > 0), bool(finals[rows[rows[0][0xC3]][0xA9]]), int(rows[0][0x63])
    (True, True, -1)
    """
    return _engine.code_points_rows([(int(a), int(b)) for a, b in intervals])
