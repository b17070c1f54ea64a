"""Eager automata inside expressions: a :class:`~.dfa.ByteDFA` as an :class:`~.expr.ExprPool`
reads it (per-state byte rows and partitions, calls read back as symbols, shortest lengths).

Example:
    >>> from structgen.automata.regex import regex_to_dfa
    >>> emb = EmbeddedDfa.of(regex_to_dfa("ab|c"))
    >>> emb.min_lengths({})[0], emb.is_dead(0)
    (1, False)
"""

from __future__ import annotations

import heapq
import weakref
from array import array
from typing import Sequence

from structgen.automata.dfa import ByteDFA
from structgen.automata.markers import CALL_BYTES, call_edges

__all__ = ["EmbeddedDfa", "spelled_as"]


def _mask(bs: list[int]) -> int:
    """The 256-bit mask of ascending bytes, built from runs (one shift per run, not per byte)."""
    out, i, n = 0, 0, len(bs)
    while i < n:
        j = i
        while j + 1 < n and bs[j + 1] == bs[j] + 1:
            j += 1
        out |= ((1 << (bs[j] + 1)) - 1) & ~((1 << bs[i]) - 1)
        i = j + 1
    return out

_INF = 1 << 60
#: The embedded form of each automaton embedded so far (:meth:`EmbeddedDfa.of`), while it lives.
_OF: "weakref.WeakKeyDictionary[ByteDFA, EmbeddedDfa]" = weakref.WeakKeyDictionary()
#: The regex that spells an automaton, where one does (a slot of a pattern: see :func:`spelled_as`).
_SPELLED: "weakref.WeakKeyDictionary[ByteDFA, str]" = weakref.WeakKeyDictionary()


def spelled_as(dfa: ByteDFA, regex: str) -> ByteDFA:
    """Note that ``regex`` (interegular syntax, an atom: a group or a class) spells ``dfa`` from its
    start: where ``dfa`` is embedded, a term holding it can still be printed as a regex
    (:func:`.expr_text.to_regex`). Returns ``dfa``."""
    _SPELLED[dfa] = regex
    return dfa


class EmbeddedDfa:
    """An eager automaton as the pool reads it: transitions per byte, finals, byte partitions, and
    its calls (paths of reserved bytes, :func:`.markers.call_edges`) read back as symbols."""

    __slots__ = ("rows", "finals", "symbols", "regex", "_classes", "_minlen", "_columns", "_readable")

    def __init__(
        self, rows: Sequence[Sequence[int]], finals: list[bool], symbols: dict[int, tuple[tuple[int, int], ...]],
        column_classes: list[int] | None = None,
    ) -> None:
        # (int arrays, not lists: no reference per (state, byte) for the garbage collector to walk)
        self.rows = [r if isinstance(r, array) else array("i", r) for r in rows]
        self.finals = finals
        #: state -> ((symbol, state after it), ...): calls and guards, taken as symbols
        self.symbols = symbols
        #: the regex that spells the automaton from state 0, where one does (see :func:`spelled_as`)
        self.regex: str | None = None
        self._classes: dict[int, tuple[int, ...]] = {}
        self._minlen: dict[tuple[tuple[int, int], ...], list[int]] = {}
        # (a byte of each column class, its mask): bytes whose columns are equal in every state
        self._columns: tuple[list[int], list[int]] | None = None
        self._readable: int | None = None
        if column_classes is not None:
            self._columns = ([(m & -m).bit_length() - 1 for m in column_classes], list(column_classes))

    @classmethod
    def of(cls, dfa: ByteDFA) -> "EmbeddedDfa":
        """``dfa`` as the pool reads it: made once per automaton (pools share it: an embedded
        automaton is not changed after it is made, its rewrites are new ones), so an automaton
        shared by compiles (the canonical universe) is converted once per process."""
        got = _OF.get(dfa)
        if got is None:
            got = _OF[dfa] = cls._of(dfa)
        return got

    @classmethod
    def _of(cls, dfa: ByteDFA) -> "EmbeddedDfa":
        table = dfa.transitions[:, dfa.byte_classes].copy()
        symbols = call_edges(dfa)
        table[:, sorted(CALL_BYTES)] = -1  # (no text reads a call path: bytes UTF-8 never uses)
        groups: dict[int, list[int]] = {}
        for b, c in enumerate(dfa.byte_classes.tolist()):
            groups.setdefault(-1 if b in CALL_BYTES else c, []).append(b)
        got = cls(table.tolist(), dfa.finals.tolist(), symbols, [_mask(bs) for bs in groups.values()])
        got.regex = _SPELLED.get(dfa)
        return got

    @property
    def column_classes(self) -> list[int]:
        """Masks of the bytes whose columns are equal in every state."""
        if self._columns is None:
            self.classes(0)
        assert self._columns is not None
        return self._columns[1]

    def readable_bytes(self) -> int:
        """Every byte some state reads (a 256-bit mask), one byte per column class checked."""
        got = self._readable
        if got is None:
            self.column_classes  # noqa: B018  (computes the column classes if needed)
            assert self._columns is not None
            got = 0
            for b, m in zip(*self._columns):
                if any(row[b] >= 0 for row in self.rows):
                    got |= m
            self._readable = got
        return got

    def state(self) -> tuple[list[array], list[bool], dict[int, tuple[tuple[int, int], ...]]]:
        return self.rows, self.finals, self.symbols

    def is_dead(self, q: int) -> bool:
        """Whether nothing can follow in state ``q`` (not final, no byte, no symbol)."""
        return not self.finals[q] and q not in self.symbols and all(t < 0 for t in self.rows[q])

    def classes(self, q: int) -> tuple[int, ...]:
        """A partition of the bytes (as masks) by where they lead from ``q``: the automaton's own
        byte classes (bytes alike in every state, found once), grouped by target."""
        got = self._classes.get(q)
        if got is None:
            columns = self._columns
            if columns is None:
                seen: dict[tuple[int, ...], list[int]] = {}
                for b, column in enumerate(zip(*self.rows)):
                    seen.setdefault(column, []).append(b)
                columns = self._columns = ([bs[0] for bs in seen.values()], [_mask(bs) for bs in seen.values()])
            row = self.rows[q]
            by_target: dict[int, int] = {}
            for b, m in zip(*columns):
                t = row[b]
                by_target[t] = by_target.get(t, 0) | m
            got = self._classes[q] = tuple(by_target.values())
        return got

    def min_lengths(self, weights: dict[int, int]) -> list[int]:
        """Per state, the fewest bytes to a final state, a symbol ``k`` weighing ``weights.get(k, 0)``."""
        if not self.symbols:
            key: tuple[tuple[int, int], ...] = ()
        else:
            key = tuple(sorted((k, weights.get(k, 0)) for es in self.symbols.values() for k, _ in es))
        got = self._minlen.get(key)
        if got is None:
            n = len(self.rows)
            preds: list[list[tuple[int, int]]] = [[] for _ in range(n)]
            for q, row in enumerate(self.rows):
                for t in set(row):
                    if t >= 0:
                        preds[t].append((q, 1))
            for q, es in self.symbols.items():
                for k, r in es:
                    preds[r].append((q, weights.get(k, 0)))
            dist = [_INF] * n
            heap = [(0, q) for q in range(n) if self.finals[q]]
            for _, q in heap:
                dist[q] = 0
            heapq.heapify(heap)
            while heap:
                d, t = heapq.heappop(heap)
                if d > dist[t]:
                    continue
                for q, w in preds[t]:
                    if d + w < dist[q]:
                        dist[q] = d + w
                        heapq.heappush(heap, (d + w, q))
            got = self._minlen[key] = dist
        return got
