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

from .dfa import ByteDFA
from .markers import CALL_BYTES, call_edges

__all__ = ["EmbeddedDfa"]

_INF = 1 << 60


class EmbeddedDfa:
    """An eager automaton as the pool reads it: transitions per byte, finals, byte partitions, and
    its calls (paths of reserved bytes, :func:`.markers.call_edges`) read back as symbols."""

    __slots__ = ("rows", "finals", "symbols", "_classes", "_minlen")

    def __init__(self, rows: list[list[int]], finals: list[bool], symbols: dict[int, tuple[tuple[int, int], ...]]) -> None:
        self.rows = rows
        self.finals = finals
        #: state -> ((symbol, state after it), ...): calls and guards, taken as symbols
        self.symbols = symbols
        self._classes: dict[int, tuple[int, ...]] = {}
        self._minlen: dict[tuple[tuple[int, int], ...], list[int]] = {}

    @classmethod
    def of(cls, dfa: ByteDFA) -> "EmbeddedDfa":
        table = dfa.transitions[:, dfa.byte_classes].copy()
        symbols = call_edges(dfa)
        table[:, sorted(CALL_BYTES)] = -1  # (no text reads a call path: bytes UTF-8 never uses)
        return cls(table.tolist(), dfa.finals.tolist(), symbols)

    def state(self) -> tuple[list[list[int]], list[bool], dict[int, tuple[tuple[int, int], ...]]]:
        return self.rows, self.finals, self.symbols

    def is_dead(self, q: int) -> bool:
        """Whether nothing can follow in state ``q`` (not final, no byte, no symbol)."""
        return not self.finals[q] and q not in self.symbols and all(t < 0 for t in self.rows[q])

    def classes(self, q: int) -> tuple[int, ...]:
        got = self._classes.get(q)
        if got is None:
            by_target: dict[int, int] = {}
            for b, t in enumerate(self.rows[q]):
                by_target[t] = by_target.get(t, 0) | 1 << b
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
