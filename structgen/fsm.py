"""Byte-level DFAs: UTF-8 lowering of a character FSM, trimming, byte classes, minimisation.

A :class:`ByteDFA` reads raw bytes, so a token that holds half of a multi-byte character ends in an
intermediate state instead of breaking the walk. Its states are *useful* (reachable from the
start and able to reach a final state), so a transition to ``-1`` means "this output can no longer
be completed". States are numbered canonically (breadth first from the start state, bytes in
order), so equal languages give equal tables.
"""

from __future__ import annotations

import bisect
from collections import deque
from dataclasses import dataclass
from typing import Iterable

import numpy as np
from interegular.fsm import FSM, anything_else

from .errors import CompileBudgetExceeded

__all__ = ["ByteDFA", "DEFAULT_MAX_STATES"]

#: Default bound on the number of DFA states one constraint may compile to.
DEFAULT_MAX_STATES = 200_000

_MAX_CP = 0x10FFFF
_SURROGATES = (0xD800, 0xDFFF)
# Smallest code point that needs n bytes (anything below is an overlong encoding).
_MIN_CP = {1: 0, 2: 0x80, 3: 0x800, 4: 0x10000}


@dataclass(frozen=True, eq=False)
class ByteDFA:
    """A deterministic automaton over bytes, as numpy tables.

    ``transitions[s, byte_classes[b]]`` is the state after reading byte ``b`` in state ``s``, or
    ``-1`` if no accepted string continues that way. The start state is 0.

    Example:
        >>> dfa = ByteDFA.from_regex("é|e")
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
        return _canonical(*_minimise(*_trim(table, self.finals)))

    @property
    def is_empty(self) -> bool:
        """Whether the automaton accepts nothing at all."""
        return not self.finals.any()

    @classmethod
    def from_regex(cls, pattern: str, *, max_states: int = DEFAULT_MAX_STATES) -> "ByteDFA":
        from .regex import regex_to_char_fsm

        return cls.from_char_fsm(regex_to_char_fsm(pattern), max_states=max_states)

    @classmethod
    def from_char_fsm(cls, fsm: FSM, *, max_states: int = DEFAULT_MAX_STATES) -> "ByteDFA":
        """Lower an interegular character FSM to a minimal, canonical byte DFA."""
        rows, finals = _lower_to_bytes(fsm, max_states)
        return cls.from_rows(rows, finals, max_states=max_states)

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
        return _canonical(*_minimise(*_trim(table, fin)))


def _char_intervals(fsm: FSM) -> dict[object, list[tuple[int, int]]]:
    """Code-point intervals (inclusive) of each transition key of the FSM's alphabet."""
    explicit: list[int] = []
    by_key: dict[object, list[int]] = {}
    other_key = None
    for symbol, key in fsm.alphabet._symbol_mapping.items():
        if symbol is anything_else:
            other_key = key
            continue
        cp = ord(symbol)
        explicit.append(cp)
        by_key.setdefault(key, []).append(cp)
    out: dict[object, list[tuple[int, int]]] = {}
    for key, cps in by_key.items():
        cps.sort()
        ivs: list[tuple[int, int]] = []
        for cp in cps:
            if ivs and ivs[-1][1] == cp - 1:
                ivs[-1] = (ivs[-1][0], cp)
            else:
                ivs.append((cp, cp))
        out.setdefault(key, []).extend(ivs)
    if other_key is not None:
        ivs = []
        prev = 0
        for cp in sorted(set(explicit)):
            if cp > prev:
                ivs.append((prev, cp - 1))
            prev = cp + 1
        if prev <= _MAX_CP:
            ivs.append((prev, _MAX_CP))
        out.setdefault(other_key, []).extend(ivs)
    return out


class _Targets:
    """Piecewise-constant map code point -> target state (or -1) of one character state."""

    __slots__ = ("starts", "ends", "targets")

    def __init__(self, intervals: list[tuple[int, int, int]]) -> None:
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


def _lower_to_bytes(fsm: FSM, max_states: int) -> tuple[list[dict[int, int]], list[int]]:
    """UTF-8 lowering: each character transition becomes a path of bytes.

    Intermediate states that mean "k more continuation bytes, then state t" are shared across the
    whole automaton, so "any character" costs a handful of states, not thousands.
    """
    keys = _char_intervals(fsm)
    order = [fsm.initial] + [s for s in fsm.states if s != fsm.initial]
    index = {s: i for i, s in enumerate(order)}
    rows: list[dict[int, int]] = [dict() for _ in order]
    finals = [index[s] for s in fsm.finals]
    shared: dict[tuple[int, int], int] = {}

    def new_state() -> int:
        rows.append({})
        if len(rows) > max_states:
            raise CompileBudgetExceeded(f"more than {max_states} byte-level states", max_states)
        return len(rows) - 1

    def cont(target: int, k: int) -> int:
        """State that reads k continuation bytes (any of 0x80-0xBF) then is at ``target``."""
        if k == 0:
            return target
        key = (target, k)
        s = shared.get(key)
        if s is None:
            s = new_state()
            shared[key] = s
            nxt = cont(target, k - 1)
            rows[s].update(dict.fromkeys(range(0x80, 0xC0), nxt))
        return s

    def node(tg: _Targets, lo: int, k: int, nbytes: int) -> int | None:
        """State reading the k continuation bytes of code points [lo, lo + 64**k)."""
        size = 64**k
        hi = lo + size - 1
        vlo = max(lo, _MIN_CP[nbytes])
        vhi = min(hi, _MAX_CP)
        if vlo > vhi:
            return None
        u = tg.uniform(vlo, vhi)
        if u == -1:
            return None
        if u is not None and vlo == lo and vhi == hi and not (lo <= _SURROGATES[1] and hi >= _SURROGATES[0]):
            return cont(u, k)
        s = new_state()
        sub = size // 64
        for c in range(64):
            clo = lo + c * sub
            if k == 1:
                if clo < vlo or clo > vhi:
                    continue
                t = tg.at(clo)
                if t >= 0:
                    rows[s][0x80 + c] = t
            else:
                child = node(tg, clo, k - 1, nbytes)
                if child is not None:
                    rows[s][0x80 + c] = child
        return s if rows[s] else None

    for q in order:
        qi = index[q]
        intervals: list[tuple[int, int, int]] = []
        for key, target in fsm.map.get(q, {}).items():
            for a, b in keys.get(key, ()):
                intervals.append((a, b, index[target]))
        if not intervals:
            continue
        tg = _Targets(intervals)
        row = rows[qi]
        for b in range(0x80):
            t = tg.at(b)
            if t >= 0:
                row[b] = t
        for lead in range(0xC2, 0xF5):
            if lead < 0xE0:
                nb, base = 2, (lead & 0x1F) << 6
            elif lead < 0xF0:
                nb, base = 3, (lead & 0x0F) << 12
            else:
                nb, base = 4, (lead & 0x07) << 18
            s = node(tg, base, nb - 1, nb)
            if s is not None:
                row[lead] = s
    return rows, finals


def _trim(table: np.ndarray, finals: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Keep the useful states: reachable from 0 and co-reachable to a final state."""
    n = table.shape[0]
    reach = np.zeros(n, dtype=bool)
    reach[0] = True
    frontier = np.array([0])
    while frontier.size:
        nxt = np.unique(table[frontier])
        nxt = nxt[nxt >= 0]
        nxt = nxt[~reach[nxt]]
        reach[nxt] = True
        frontier = nxt
    # Reverse reachability from the finals, over the edges of reachable states.
    src, byte = np.nonzero(table >= 0)
    dst = table[src, byte]
    keep = reach[src]
    src, dst = src[keep], dst[keep]
    order = np.argsort(dst, kind="stable")
    src_sorted, dst_sorted = src[order], dst[order]
    starts = np.searchsorted(dst_sorted, np.arange(n + 1))
    coreach = finals & reach
    frontier = np.flatnonzero(coreach)
    while frontier.size:
        parts = [src_sorted[starts[d] : starts[d + 1]] for d in frontier]
        preds = np.unique(np.concatenate(parts)) if parts else np.array([], dtype=np.int64)
        preds = preds[~coreach[preds]]
        coreach[preds] = True
        frontier = preds
    useful = reach & coreach
    if not useful[0]:
        # The empty language: a single non-final start state with no way on.
        return np.full((1, 256), -1, dtype=np.int32), np.zeros(1, dtype=bool)
    new_id = np.full(n, -1, dtype=np.int64)
    kept = np.flatnonzero(useful)
    new_id[kept] = np.arange(kept.size)
    t = table[kept]
    t = np.where(t >= 0, new_id[np.maximum(t, 0)], -1).astype(np.int32)
    return t, finals[kept]


def _minimise(table: np.ndarray, finals: np.ndarray) -> tuple[np.ndarray, np.ndarray, int]:
    """Moore partition refinement on the (trimmed) byte table; -1 is its own implicit block."""
    n = table.shape[0]
    cols, inverse = np.unique(table, axis=1, return_inverse=True)  # byte classes shrink the work
    part = finals.astype(np.int64)
    num = int(part.max()) + 1 if n else 0
    while True:
        succ = np.where(cols >= 0, part[np.maximum(cols, 0)], -1)
        sig = np.concatenate([part[:, None], succ], axis=1)
        sig = np.ascontiguousarray(sig)
        view = sig.view(np.dtype((np.void, sig.dtype.itemsize * sig.shape[1]))).ravel()
        _, new_part = np.unique(view, return_inverse=True)
        new_num = int(new_part.max()) + 1
        part = new_part.astype(np.int64)
        if new_num == num:
            break
        num = new_num
    if num == n:
        return table, finals, 0
    rep = np.zeros(num, dtype=np.int64)
    rep[part[::-1]] = np.arange(n)[::-1]  # first member of each block
    t = table[rep]
    t = np.where(t >= 0, part[np.maximum(t, 0)], -1).astype(np.int32)
    return t, finals[rep], int(part[0])


def _canonical(table: np.ndarray, finals: np.ndarray, start: int) -> ByteDFA:
    """Renumber breadth first from the start state and compute byte classes."""
    n = table.shape[0]
    order = [start]
    seen = {start}
    q = deque([start])
    rows = table.tolist()
    while q:
        s = q.popleft()
        for t in rows[s]:
            if t >= 0 and t not in seen:
                seen.add(t)
                order.append(t)
                q.append(t)
    new_id = np.full(n, -1, dtype=np.int64)
    new_id[order] = np.arange(len(order))
    t = table[order]
    t = np.where(t >= 0, new_id[np.maximum(t, 0)], -1)
    cols, inverse = np.unique(t, axis=1, return_inverse=True)
    # Number classes by first byte so that the class of byte 0 is 0, etc. (stable, canonical).
    first_byte = np.full(cols.shape[1], 256)
    np.minimum.at(first_byte, inverse.ravel(), np.arange(256))
    rank = np.argsort(np.argsort(first_byte))
    classes = np.empty(cols.shape[1], dtype=np.int64)
    classes[rank] = np.arange(cols.shape[1])
    byte_classes = rank[inverse.ravel()].astype(np.int32)
    trans = np.empty((len(order), cols.shape[1]), dtype=np.int32)
    trans[:, rank] = cols
    return ByteDFA(trans, byte_classes, finals[order].copy())
