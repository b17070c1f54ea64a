"""Byte-level DFAs: UTF-8 lowering of a character FSM, trimming, byte classes, minimisation.

A :class:`ByteDFA` reads raw bytes, so a token that holds half of a multi-byte character ends in an
intermediate state instead of breaking the walk. Its states are *useful* (reachable from the
start and able to reach a final state), so a transition to ``-1`` means "this output can no longer
be completed". States are numbered canonically (breadth first from the start state, bytes in
order), so equal languages give equal tables.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

import numpy as np

from .. import _engine
from ..errors import CompileBudgetExceeded

__all__ = ["ByteDFA", "DEFAULT_MAX_STATES", "canonical_dfa", "distances_to_final", "minimal_dfa"]

#: Default bound on the number of DFA states one constraint may compile to.
DEFAULT_MAX_STATES = 200_000


@dataclass(frozen=True, eq=False)
class ByteDFA:
    """A deterministic automaton over bytes, as numpy tables.

    ``transitions[s, byte_classes[b]]`` is the state after reading byte ``b`` in state ``s``, or
    ``-1`` if no accepted string continues that way. The start state is 0.

    Example:
        >>> dfa = ByteDFA.from_rows([{0xC3: 1}, {0xA9: 2}, {}], finals=[2])   # "é" is C3 A9
        >>> dfa.accepts("é".encode()), dfa.accepts(b"\\xc3")
        (True, False)
    """

    transitions: np.ndarray  # int32 [n_states, n_classes]
    byte_classes: np.ndarray  # int32 [256]: byte -> class
    finals: np.ndarray  # bool [n_states]

    @property
    def num_states(self) -> int:
        return int(self.transitions.shape[0])

    @property
    def num_classes(self) -> int:
        return int(self.transitions.shape[1])

    def step(self, state: int, data: bytes) -> int:
        """The state after reading ``data`` from ``state``, or -1."""
        t, c = self.transitions, self.byte_classes
        for b in data:
            if state < 0:
                return -1
            state = int(t[state, c[b]])
        return state

    def accepts(self, data: bytes) -> bool:
        s = self.step(0, data)
        return s >= 0 and bool(self.finals[s])

    def without_bytes(self, missing: Iterable[int]) -> "ByteDFA":
        """The same automaton with no transition on the ``missing`` bytes (re-trimmed).

        Used for vocabularies that cannot spell some bytes at all (SmolLM2 has no token holding
        0x04), so that generation is never led into a state it cannot leave.
        """
        table = self.transitions[:, self.byte_classes].copy()
        table[:, list(missing)] = -1
        return minimal_dfa(table, self.finals)

    @property
    def distances(self) -> np.ndarray:
        """For every state, the fewest bytes that lead from it to a final state (0 in final states).

        A reverse breadth-first search over ``transitions``, computed once per automaton and cached
        (read-only int32 array). Every state is useful, so every distance is finite.
        """
        cached = self.__dict__.get("_distances")
        if cached is None:
            cached = distances_to_final(self.transitions, self.finals)
            object.__setattr__(self, "_distances", cached)
        return cached

    @property
    def is_empty(self) -> bool:
        """Whether the automaton accepts nothing at all."""
        return not self.finals.any()

    @classmethod
    def from_rows(
        cls, rows: list[dict[int, int]], finals: Iterable[int], *, max_states: int = DEFAULT_MAX_STATES
    ) -> "ByteDFA":
        """Build from explicit rows (``rows[s][byte] = next``, start state 0)."""
        n = len(rows)
        if n > max_states:
            raise CompileBudgetExceeded(f"{n} automaton states", max_states)
        table = np.full((n, 256), -1, dtype=np.int32)
        for s, row in enumerate(rows):
            if row:
                table[s, list(row.keys())] = list(row.values())
        fin = np.zeros(n, dtype=bool)
        fin[list(finals)] = True
        return minimal_dfa(table, fin)


def _edges(table: np.ndarray, by: str = "src") -> tuple[list[int], list[int]]:
    """The edges as lists: ``out[first[s]:first[s + 1]]`` are the targets of ``s`` in column
    order (``by="src"``), or the sources of the edges into ``s`` (``by="dst"``)."""
    n = table.shape[0]
    src, col = np.nonzero(table >= 0)  # row-major: sources sorted, columns in order
    dst = table[src, col]
    if by == "src":
        key, out = src, dst
    else:
        order = np.argsort(dst, kind="stable")
        key, out = dst[order], src[order]
    return out.tolist(), np.searchsorted(key, np.arange(n + 1)).tolist()


def _search(starts: Iterable[int], out: list[int], first: list[int], n: int) -> list[int]:
    """Breadth first from ``starts`` over an edge list; the states in the order found."""
    seen = [False] * n
    order = []
    for s in starts:
        if not seen[s]:
            seen[s] = True
            order.append(s)
    for s in order:  # grows while we walk it
        for t in out[first[s] : first[s + 1]]:
            if not seen[t]:
                seen[t] = True
                order.append(t)
    return order


def _trim(table: np.ndarray, finals: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Keep the useful states: reachable from 0 and co-reachable to a final state."""
    n = table.shape[0]
    reach = np.zeros(n, dtype=bool)
    reach[_search([0], *_edges(table), n)] = True
    # Reverse reachability from the finals, over the edges of reachable states.
    coreach = np.zeros(n, dtype=bool)
    live = np.where(reach[:, None], table, -1)
    coreach[_search(np.flatnonzero(finals & reach).tolist(), *_edges(live, by="dst"), n)] = True
    useful = reach & coreach
    if not useful[0]:
        # The empty language: a single non-final start state with no way on.
        return np.full((1, table.shape[1]), -1, dtype=np.int32), np.zeros(1, dtype=bool)
    new_id = np.full(n, -1, dtype=np.int64)
    kept = np.flatnonzero(useful)
    new_id[kept] = np.arange(kept.size)
    t = table[kept]
    t = np.where(t >= 0, new_id[np.maximum(t, 0)], -1).astype(np.int32)
    return t, finals[kept]


def minimal_dfa(table: np.ndarray, finals: np.ndarray, class_of: np.ndarray | None = None) -> ByteDFA:
    """Trim, minimise and number canonically. ``table`` has one column per byte, or per class
    with ``class_of[byte]`` its column."""
    cols, inverse = _distinct_columns(table)
    class_of = inverse if class_of is None else inverse[class_of]
    t, f, start = _minimise(*_trim(cols, finals))
    return canonical_dfa(t, f, start, class_of)


def _distinct_columns(table: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct columns of ``table`` (first appearances, in order) and where each column went.

    Hashing the columns' bytes: ``np.unique(axis=1)`` sorts them and is 100x slower here.
    """
    tt = np.ascontiguousarray(table.T)
    seen: dict[bytes, int] = {}
    inverse = np.array([seen.setdefault(tt[j].tobytes(), len(seen)) for j in range(tt.shape[0])], dtype=np.int64)
    first = np.full(len(seen), -1, dtype=np.int64)
    first[inverse[::-1]] = np.arange(inverse.size - 1, -1, -1)
    return np.ascontiguousarray(table[:, first]), inverse


def _minimise(table: np.ndarray, finals: np.ndarray) -> tuple[np.ndarray, np.ndarray, int]:
    """Hopcroft partition refinement on the (trimmed, partial) table: ``O(E log n)``.

    A splitter block refines by every class at once (a state's signature is the bit set of the
    classes that lead into the splitter). Moore's rounds would number one per repetition of
    ``x{0,1000}``; this does not. Returns the quotient table, its finals and its start state.
    """
    n = table.shape[0]
    src, cls = np.nonzero(table >= 0)
    dst = table[src, cls]
    by_dst = np.argsort(dst, kind="stable")
    pred_state, pred_class = src[by_dst].tolist(), cls[by_dst].tolist()
    first_pred = np.searchsorted(dst[by_dst], np.arange(n + 1)).tolist()
    block_of = finals.astype(np.int64).tolist()
    if not any(block_of):  # one block (no finals, or all of them)
        block_of = [0] * n
    elif all(block_of):
        block_of = [0] * n
    blocks: list[set[int]] = [set() for _ in range(max(block_of) + 1)]
    for s, b in enumerate(block_of):
        blocks[b].add(s)
    work = list(range(len(blocks)))  # partial transitions: every initial block is a splitter
    in_work = [True] * len(blocks)
    while work:
        a = work.pop()
        in_work[a] = False
        into: dict[int, int] = {}  # predecessor -> bit set of the classes leading into block a
        for t in blocks[a]:
            for i in range(first_pred[t], first_pred[t + 1]):
                s = pred_state[i]
                into[s] = into.get(s, 0) | (1 << pred_class[i])
        touched: dict[int, dict[int, list[int]]] = {}
        for s, bits in into.items():
            touched.setdefault(block_of[s], {}).setdefault(bits, []).append(s)
        for y, groups in touched.items():
            members = blocks[y]
            pieces = list(groups.values())
            if sum(map(len, pieces)) == len(members):  # no untouched rest: the largest piece stays y
                if len(pieces) == 1:
                    continue
                pieces.remove(max(pieces, key=len))
            new = []
            for piece in pieces:
                b = len(blocks)
                members.difference_update(piece)
                blocks.append(set(piece))
                in_work.append(False)
                for s in piece:
                    block_of[s] = b
                new.append(b)
            if not in_work[y]:  # y was already used: all its pieces but the largest will do
                new.append(y)
                new.remove(max(new, key=lambda b: len(blocks[b])))
            for b in new:
                in_work[b] = True
                work.append(b)
    num = len(blocks)
    if num == n:
        return table, finals, 0
    part = np.array(block_of, dtype=np.int64)
    rep = np.zeros(num, dtype=np.int64)
    rep[part[::-1]] = np.arange(n)[::-1]  # first member of each block
    quotient = table[rep]
    quotient = np.where(quotient >= 0, part[np.maximum(quotient, 0)], -1).astype(np.int32)
    return quotient, finals[rep], int(part[0])


def canonical_dfa(table: np.ndarray, finals: np.ndarray, start: int, class_of: np.ndarray) -> ByteDFA:
    """Renumber breadth first from the start state (a state's targets in byte order) and number
    the byte classes by their first byte: the states the start reaches, the columns as they read
    them (equal ones made one). A function of the automaton alone, not of its numbering (states
    are not merged: :func:`minimal_dfa` minimises first). ``class_of[byte]`` is the column of
    ``table`` a byte reads. Native (``cpp/engine/utf8_dfa.cpp``)."""
    trans, kept, classes = _engine.canonical_dfa(
        np.ascontiguousarray(table, dtype=np.int32), np.ascontiguousarray(finals, dtype=bool), int(start),
        np.ascontiguousarray(class_of, dtype=np.int32))
    return ByteDFA(trans, classes, kept)


def distances_to_final(table: np.ndarray, finals: np.ndarray) -> np.ndarray:
    """Reverse BFS from the final states over the edges of ``table`` (-1 where unreachable)."""
    n = table.shape[0]
    src, cls = np.nonzero(table >= 0)
    dst = table[src, cls].astype(np.int64)
    # Edges grouped by destination: the predecessors of state t are pred[start[t]:start[t + 1]].
    order = np.argsort(dst, kind="stable")
    pred = src[order].astype(np.int64)
    start = np.searchsorted(dst[order], np.arange(n + 1), side="left")
    dist = np.full(n, -1, dtype=np.int32)
    frontier = np.flatnonzero(finals)
    dist[frontier] = 0
    level = 0
    while frontier.size:
        level += 1
        counts = start[frontier + 1] - start[frontier]
        total = int(counts.sum())
        if total == 0:
            break
        ends = np.cumsum(counts)
        idx = np.repeat(start[frontier] - (ends - counts), counts) + np.arange(total, dtype=np.int64)
        cand = np.unique(pred[idx])
        frontier = cand[dist[cand] < 0]
        dist[frontier] = level
    dist.flags.writeable = False
    return dist
