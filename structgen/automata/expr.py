"""Byte regular expressions as hash-consed terms, and their derivatives: automata built lazily.

An :class:`ExprPool` holds expressions over bytes as integer ids (``NOTHING`` = 0 is the empty
language, ``EPSILON`` = 1 the empty string). Constructors simplify as they build (``∅·x = ∅``,
``ε·x = x``, alternatives flattened, sorted and deduplicated, byte sets merged), so two equal
expressions built twice are one id, and an expression is ``NOTHING`` exactly when its language is
empty. The *derivative* of an expression by a byte (Brzozowski) is the expression of what may
follow that byte; the states of an automaton are expressions, and a state's transitions are
computed the first time a walk needs them (:mod:`.lazy`): nothing is built for a part of the
language that generation never reaches, and no whole automaton is ever determinised or minimised.

Kinds of terms:

- a byte set (one byte of a 256-bit mask);
- concatenation, alternation;
- bounded repetition ``x{lo,hi}`` as **one term with counters**: its derivative is
  ``d(x)·x{lo-1,hi-1}``, so ``maxLength: 1024`` is a number in a term, not 1,024 copies;
- a *symbol* ``k`` (a call of automaton ``k`` of a network, or a guard: zero-width steps a
  pushdown guide takes, see :mod:`.markers`), read by :meth:`ExprPool.derive_symbol`;
- an embedded :class:`~.dfa.ByteDFA` at one of its states (look-arounds, algebra results,
  document spans: automata built eagerly elsewhere).

Example:
    >>> pool = ExprPool()
    >>> digit = pool.byte_range(ord("0"), ord("9"))
    >>> e = pool.seq(pool.repeat(digit, 1, 3), pool.literal(b"!"))   # [0-9]{1,3}!
    >>> for b in b"12!":
    ...     e = pool.derive(e, b)
    >>> pool.nullable(e), pool.derive(pool.derive(pool.derive(pool.derive(
    ...     pool.seq(pool.repeat(digit, 1, 3), pool.literal(b"!")), 49), 50), 51), 52) == NOTHING
    (True, True)
"""

from __future__ import annotations

import threading
from typing import Iterable, Sequence

import numpy as np

from .dfa import ByteDFA

__all__ = ["ALL_BYTES", "EPSILON", "NOTHING", "ExprPool", "byte_mask"]

NOTHING = 0
EPSILON = 1
#: Every byte, as a 256-bit mask.
ALL_BYTES = (1 << 256) - 1

# term kinds (the first item of a node tuple)
_NOTHING, _EPSILON, _BYTES, _SEQ, _ALT, _REP, _SYM, _DFA = range(8)
_INF = 1 << 60


def byte_mask(data: Iterable[int]) -> int:
    """The 256-bit mask of some bytes.

    >>> byte_mask(b"ab") == (1 << 97) | (1 << 98)
    True
    """
    m = 0
    for b in data:
        m |= 1 << b
    return m


class _Embedded:
    """An eager automaton as the pool reads it: transitions per byte, finals, byte partitions."""

    __slots__ = ("dfa", "rows", "finals", "_classes")

    def __init__(self, dfa: ByteDFA) -> None:
        self.dfa = dfa
        self.rows: list[list[int]] = dfa.transitions[:, dfa.byte_classes].tolist()
        self.finals: list[bool] = dfa.finals.tolist()
        self._classes: dict[int, tuple[int, ...]] = {}

    def classes(self, q: int) -> tuple[int, ...]:
        got = self._classes.get(q)
        if got is None:
            by_target: dict[int, int] = {}
            for b, t in enumerate(self.rows[q]):
                by_target[t] = by_target.get(t, 0) | 1 << b
            got = self._classes[q] = tuple(by_target.values())
        return got


class ExprPool:
    """Hash-consed byte expressions and their derivatives (see the module docstring).

    Thread-safe: interning is locked; memo tables may be filled twice by racing threads with the
    same ids. Everything a pool builds stays until the pool is dropped (a guide holds its pool).
    """

    def __init__(self) -> None:
        self._nodes: list[tuple] = []
        self._ids: dict[tuple, int] = {}
        self._nullable: list[bool] = []
        self._lock = threading.Lock()
        self._derived: dict[int, int] = {}  # e << 8 | byte -> derivative
        self._derived_sym: dict[tuple[int, int], int] = {}
        self._classes: dict[int, tuple[int, ...]] = {}
        self._firsts: dict[int, frozenset[int]] = {}
        self._embedded: list[_Embedded] = []
        self._embedded_ids: dict[int, int] = {}  # id(dfa) -> index (the dfa is held by _Embedded)
        self._restricted: dict[tuple[int, int, frozenset[int]], int] = {}
        self._clamped: dict[tuple[int, int], int] = {}
        self._code_points: dict[tuple[tuple[int, int], ...], int] = {}
        self._symbols_in: dict[int, frozenset[int]] = {}
        self._readable: dict[int, int] = {}
        self._intern((_NOTHING,), False)
        self._intern((_EPSILON,), True)

    def __len__(self) -> int:
        return len(self._nodes)

    def __getstate__(self) -> dict[str, object]:
        # the terms and the embedded automata; memo tables are rebuilt on use, the lock anew
        return {"nodes": self._nodes, "nullable": self._nullable, "dfas": [e.dfa for e in self._embedded]}

    def __setstate__(self, state: dict[str, object]) -> None:
        self.__init__()  # type: ignore[misc]
        self._nodes = list(state["nodes"])  # type: ignore[call-overload]
        self._nullable = list(state["nullable"])  # type: ignore[call-overload]
        self._ids = {key: i for i, key in enumerate(self._nodes)}
        for dfa in state["dfas"]:  # type: ignore[attr-defined]
            self._embedded_ids[id(dfa)] = len(self._embedded)
            self._embedded.append(_Embedded(dfa))

    @property
    def memory_bytes(self) -> int:
        """Approximate bytes held by the terms, the memo tables and the embedded automata."""
        memo = len(self._derived) + len(self._derived_sym) + len(self._classes) + len(self._restricted)
        dfas = sum(e.dfa.transitions.nbytes + 8 * 256 * len(e.rows) for e in self._embedded)
        return int(150 * len(self._nodes) + 100 * memo + dfas)

    def _intern(self, key: tuple, nullable: bool) -> int:
        got = self._ids.get(key)
        if got is not None:
            return got
        with self._lock:
            got = self._ids.get(key)
            if got is None:
                got = len(self._nodes)
                self._nodes.append(key)
                self._nullable.append(nullable)
                self._ids[key] = got
        return got

    # -- constructors ---------------------------------------------------------------------------

    def bytes_of(self, mask: int) -> int:
        """One byte of ``mask`` (a 256-bit int); ``NOTHING`` for the empty mask."""
        if not mask:
            return NOTHING
        return self._intern((_BYTES, mask), False)

    def byte_range(self, lo: int, hi: int) -> int:
        """One byte in ``lo..hi`` (inclusive)."""
        return self.bytes_of(((1 << (hi + 1)) - 1) & ~((1 << lo) - 1))

    def code_points(self, intervals: Sequence[tuple[int, int]]) -> int:
        """One character whose code point is in ``intervals`` (inclusive), as UTF-8 bytes (cached)."""
        key = tuple(intervals)
        got = self._code_points.get(key)
        if got is None:
            got = self._code_points[key] = code_points_expr(self, key)
        return got

    def literal(self, data: bytes) -> int:
        """Exactly the bytes ``data``."""
        out = EPSILON
        for b in reversed(data):
            out = self.seq(self.bytes_of(1 << b), out)
        return out

    def seq(self, a: int, b: int) -> int:
        """``a`` then ``b``."""
        if a == NOTHING or b == NOTHING:
            return NOTHING
        if a == EPSILON:
            return b
        if b == EPSILON:
            return a
        node = self._nodes[a]
        if node[0] == _SEQ:  # kept right-nested: (x·y)·b = x·(y·b)
            return self.seq(node[1], self.seq(node[2], b))
        return self._intern((_SEQ, a, b), self._nullable[a] and self._nullable[b])

    def concat(self, parts: Sequence[int]) -> int:
        """The concatenation of ``parts`` in order."""
        out = EPSILON
        for p in reversed(parts):
            out = self.seq(p, out)
        return out

    def alt(self, parts: Iterable[int]) -> int:
        """Any of ``parts`` (flattened, deduplicated; byte sets merged)."""
        flat: set[int] = set()
        nodes = self._nodes
        for p in parts:
            node = nodes[p]
            if node[0] == _ALT:
                flat.update(node[1])
            elif p != NOTHING:
                flat.add(p)
        if not flat:
            return NOTHING
        if len(flat) > 1:
            byte_sets = [p for p in flat if nodes[p][0] == _BYTES]
            if len(byte_sets) > 1:
                mask = 0
                for p in byte_sets:
                    mask |= nodes[p][1]
                    flat.discard(p)
                flat.add(self.bytes_of(mask))
            if EPSILON in flat and any(self._nullable[p] for p in flat if p != EPSILON):
                flat.discard(EPSILON)  # (already in a nullable alternative)
        if len(flat) == 1:
            return next(iter(flat))
        members = tuple(sorted(flat))
        return self._intern((_ALT, members), any(self._nullable[p] for p in members))

    def optional(self, x: int) -> int:
        """``x`` or nothing at all."""
        return self.alt((x, EPSILON))

    def repeat(self, x: int, lo: int, hi: int | None) -> int:
        """``x{lo,hi}`` (``hi=None``: unbounded), one term whose counters count down."""
        if lo < 0 or (hi is not None and hi < lo):
            raise ValueError(f"a repetition {{{lo},{hi}}} is not a range")
        if hi == 0 or x == EPSILON:
            return EPSILON
        if x == NOTHING:
            return EPSILON if lo == 0 else NOTHING
        if self._nullable[x]:
            lo = 0  # x{lo,hi} = x{0,hi} when x matches the empty string
        if lo == 1 and hi == 1:
            return x
        node = self._nodes[x]
        if node[0] == _REP and node[2] == 0 and node[3] == -1 and lo <= 1:
            return x if lo == 0 else self._intern((_REP, node[1], 1, -1), False)  # (y*)* = y*
        return self._intern((_REP, x, lo, -1 if hi is None else hi), lo == 0)

    def star(self, x: int) -> int:
        """``x*``."""
        return self.repeat(x, 0, None)

    def symbol(self, k: int) -> int:
        """The symbol ``k`` (a call or a guard of a pushdown guide), read only by
        :meth:`derive_symbol`."""
        return self._intern((_SYM, k), False)

    def embed(self, dfa: ByteDFA, state: int = 0) -> int:
        """The language of ``dfa`` from ``state`` (an eager automaton inside an expression)."""
        if state < 0:
            return NOTHING
        index = self._embedded_ids.get(id(dfa))
        if index is None:
            with self._lock:
                index = self._embedded_ids.get(id(dfa))
                if index is None:
                    index = len(self._embedded)
                    self._embedded.append(_Embedded(dfa))
                    self._embedded_ids[id(dfa)] = index
        return self._dfa_node(index, state)

    def _dfa_node(self, index: int, state: int) -> int:
        if state < 0:
            return NOTHING
        emb = self._embedded[index]
        if not emb.finals[state] and all(t < 0 for t in emb.rows[state]):
            return NOTHING
        return self._intern((_DFA, index, state), emb.finals[state])

    # -- reading --------------------------------------------------------------------------------

    def nullable(self, e: int) -> bool:
        """Whether ``e`` matches the empty string (a final state)."""
        return self._nullable[e]

    def derive(self, e: int, b: int) -> int:
        """What may follow byte ``b`` in ``e`` (memoised)."""
        key = e << 8 | b
        got = self._derived.get(key)
        if got is not None:
            return got
        node = self._nodes[e]
        kind = node[0]
        if kind == _BYTES:
            got = EPSILON if node[1] >> b & 1 else NOTHING
        elif kind == _SEQ:
            got = self.seq(self.derive(node[1], b), node[2])
            if self._nullable[node[1]]:
                got = self.alt((got, self.derive(node[2], b)))
        elif kind == _ALT:
            got = self.alt([self.derive(p, b) for p in node[1]])
        elif kind == _REP:
            x, lo, hi = node[1], node[2], node[3]
            dx = self.derive(x, b)
            got = NOTHING if dx == NOTHING else self.seq(dx, self.repeat(x, max(lo - 1, 0), None if hi < 0 else hi - 1))
        elif kind == _DFA:
            got = self._dfa_node(node[1], self._embedded[node[1]].rows[node[2]][b])
        else:  # nothing, the empty string, a symbol
            got = NOTHING
        self._derived[key] = got
        return got

    def derive_symbol(self, e: int, k: int) -> int:
        """What may follow symbol ``k`` in ``e`` (``NOTHING`` if ``k`` cannot come first)."""
        key = (e, k)
        got = self._derived_sym.get(key)
        if got is not None:
            return got
        node = self._nodes[e]
        kind = node[0]
        if kind == _SYM:
            got = EPSILON if node[1] == k else NOTHING
        elif kind == _SEQ:
            got = self.seq(self.derive_symbol(node[1], k), node[2])
            if self._nullable[node[1]]:
                got = self.alt((got, self.derive_symbol(node[2], k)))
        elif kind == _ALT:
            got = self.alt([self.derive_symbol(p, k) for p in node[1]])
        elif kind == _REP:
            x, lo, hi = node[1], node[2], node[3]
            dx = self.derive_symbol(x, k)
            got = NOTHING if dx == NOTHING else self.seq(dx, self.repeat(x, max(lo - 1, 0), None if hi < 0 else hi - 1))
        else:
            got = NOTHING
        self._derived_sym[key] = got
        return got

    def first_symbols(self, e: int) -> frozenset[int]:
        """The symbols that may come first in ``e``."""
        got = self._firsts.get(e)
        if got is not None:
            return got
        node = self._nodes[e]
        kind = node[0]
        if kind == _SYM:
            got = frozenset((node[1],))
        elif kind == _SEQ:
            got = self.first_symbols(node[1])
            if self._nullable[node[1]]:
                got = got | self.first_symbols(node[2])
        elif kind == _ALT:
            got = frozenset().union(*(self.first_symbols(p) for p in node[1]))
        elif kind == _REP:
            got = self.first_symbols(node[1])
        else:
            got = frozenset()
        self._firsts[e] = got
        return got

    def symbols_in(self, e: int) -> frozenset[int]:
        """Every symbol anywhere in ``e`` (the automata it may call, its guards)."""
        got = self._symbols_in.get(e)
        if got is not None:
            return got
        node = self._nodes[e]
        kind = node[0]
        if kind == _SYM:
            got = frozenset((node[1],))
        elif kind == _SEQ:
            got = self.symbols_in(node[1]) | self.symbols_in(node[2])
        elif kind == _ALT:
            got = frozenset().union(*(self.symbols_in(p) for p in node[1]))
        elif kind == _REP:
            got = self.symbols_in(node[1])
        else:
            got = frozenset()
        self._symbols_in[e] = got
        return got

    def readable_bytes(self, e: int) -> int:
        """Every byte ``e`` may read anywhere (a 256-bit mask)."""
        got = self._readable.get(e)
        if got is not None:
            return got
        node = self._nodes[e]
        kind = node[0]
        if kind == _BYTES:
            got = node[1]
        elif kind == _SEQ:
            got = self.readable_bytes(node[1]) | self.readable_bytes(node[2])
        elif kind == _ALT:
            got = 0
            for p in node[1]:
                got |= self.readable_bytes(p)
        elif kind == _REP:
            got = self.readable_bytes(node[1])
        elif kind == _DFA:
            dfa = self._embedded[node[1]].dfa
            used = (dfa.transitions >= 0).any(axis=0)
            got = byte_mask(b for b in range(256) if used[dfa.byte_classes[b]])
        else:
            got = 0
        self._readable[e] = got
        return got

    def byte_classes(self, e: int) -> tuple[int, ...]:
        """A partition of the 256 bytes (as masks) on each part of which :meth:`derive` is the
        same: one derivative per part gives a state's whole row."""
        got = self._classes.get(e)
        if got is not None:
            return got
        node = self._nodes[e]
        kind = node[0]
        if kind == _BYTES:
            got = (node[1], ALL_BYTES & ~node[1]) if node[1] != ALL_BYTES else (ALL_BYTES,)
        elif kind == _SEQ:
            got = self.byte_classes(node[1])
            if self._nullable[node[1]]:
                got = _refine(got, self.byte_classes(node[2]))
        elif kind == _ALT:
            got = (ALL_BYTES,)
            for p in node[1]:
                got = _refine(got, self.byte_classes(p))
        elif kind == _REP:
            got = self.byte_classes(node[1])
        elif kind == _DFA:
            got = self._embedded[node[1]].classes(node[2])
        else:
            got = (ALL_BYTES,)
        self._classes[e] = got
        return got

    def row(self, e: int) -> list[int]:
        """``[derive(e, b) for b in range(256)]``, one derivative per byte class."""
        out = [NOTHING] * 256
        for mask in self.byte_classes(e):
            low = mask & -mask
            d = self.derive(e, low.bit_length() - 1)
            if d != NOTHING:
                while mask:
                    low = mask & -mask
                    out[low.bit_length() - 1] = d
                    mask ^= low
        return out

    def min_length(self, e: int, weights: dict[int, int] | None = None) -> int:
        """The fewest bytes of a string of ``e`` (a symbol weighs ``weights[k]``, default 0;
        ``_INF`` when ``e`` is empty). Not memoised across calls: pass the same weights to a
        :class:`MinLength` for repeated queries."""
        return MinLength(self, weights or {}).of(e)

    # -- rewriting ------------------------------------------------------------------------------

    def restrict(self, e: int, allowed: int, dead: frozenset[int] = frozenset()) -> int:
        """``e`` read only through the bytes of ``allowed`` (a mask), and with the symbols of
        ``dead`` (calls of automata that accept nothing) taken away: what a vocabulary that cannot
        spell the other bytes can still produce. Empty parts become ``NOTHING``."""
        if allowed == ALL_BYTES and not dead:
            return e
        key = (e, allowed, dead)
        got = self._restricted.get(key)
        if got is not None:
            return got
        node = self._nodes[e]
        kind = node[0]
        if kind == _BYTES:
            got = self.bytes_of(node[1] & allowed)
        elif kind == _SEQ:
            got = self.seq(self.restrict(node[1], allowed, dead), self.restrict(node[2], allowed, dead))
        elif kind == _ALT:
            got = self.alt([self.restrict(p, allowed, dead) for p in node[1]])
        elif kind == _REP:
            got = self.repeat(self.restrict(node[1], allowed, dead), node[2], None if node[3] < 0 else node[3])
        elif kind == _DFA:
            got = self._dfa_node(self._restricted_dfa(node[1], allowed), node[2])
        elif kind == _SYM:
            got = NOTHING if node[1] in dead else e
        else:
            got = e
        self._restricted[key] = got
        return got

    def _restricted_dfa(self, index: int, allowed: int) -> int:
        """The embedded automaton ``index`` without the bytes outside ``allowed``, its states kept
        (their numbers unchanged) and the ones that can no longer finish cut off."""
        key = (-1 - index, allowed, frozenset())
        got = self._restricted.get(key)
        if got is None:
            dfa = self._embedded[index].dfa
            table = dfa.transitions[:, dfa.byte_classes].copy()
            table[:, [b for b in range(256) if not allowed >> b & 1]] = -1
            live = _co_reachable(table, dfa.finals)
            table[(table >= 0) & ~live[np.maximum(table, 0)]] = -1
            cut = ByteDFA(table.astype(np.int32), np.arange(256, dtype=np.int32), dfa.finals & live)
            with self._lock:
                got = len(self._embedded)
                self._embedded.append(_Embedded(cut))
            self._restricted[key] = got
        return got

    def clamp(self, e: int, n: int) -> int:
        """``e`` with every repetition's counters cut to what ``n`` bytes can tell apart: for every
        string ``w`` of at most ``n`` bytes, ``w`` leads somewhere in ``e`` iff it does in the
        result, and to a final state iff it does there. States that differ only in large counters
        then share one token mask (a token of at most ``n`` bytes cannot see the difference)."""
        key = (e, n)
        got = self._clamped.get(key)
        if got is not None:
            return got
        node = self._nodes[e]
        kind = node[0]
        if kind == _SEQ:
            got = self.seq(self.clamp(node[1], n), self.clamp(node[2], n))
        elif kind == _ALT:
            got = self.alt([self.clamp(p, n) for p in node[1]])
        elif kind == _REP:
            x, lo, hi = self.clamp(node[1], n), node[2], node[3]
            # Within n bytes at most n repetitions complete: a lower bound above n + 1 and an upper
            # bound above n are indistinguishable from n + 1 and "unbounded".
            got = self.repeat(x, min(lo, n + 1), None if hi < 0 or hi > n else hi)
        else:
            got = e
        self._clamped[key] = got
        return got

    def describe(self, e: int, limit: int = 200) -> str:
        """A regex-like text of ``e`` (for messages and debugging), cut at ``limit`` characters."""
        out: list[str] = []
        self._describe(e, out, limit)
        text = "".join(out)
        return text if len(text) <= limit else text[: limit - 3] + "..."

    def _describe(self, e: int, out: list[str], limit: int) -> None:
        if sum(map(len, out)) > limit:
            return
        node = self._nodes[e]
        kind = node[0]
        if kind == _NOTHING:
            out.append("∅")
        elif kind == _EPSILON:
            out.append("ε")
        elif kind == _BYTES:
            out.append(_describe_mask(node[1]))
        elif kind == _SEQ:
            self._describe(node[1], out, limit)
            self._describe(node[2], out, limit)
        elif kind == _ALT:
            out.append("(?:")
            for i, p in enumerate(node[1]):
                if i:
                    out.append("|")
                self._describe(p, out, limit)
            out.append(")")
        elif kind == _REP:
            out.append("(?:")
            self._describe(node[1], out, limit)
            out.append(f"){{{node[2]},{'' if node[3] < 0 else node[3]}}}")
        elif kind == _SYM:
            out.append(f"<{node[1]}>")
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
        node = self.pool._nodes[e]
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
        else:
            d = int(self.pool._embedded[node[1]].dfa.distances[node[2]])
            got = _INF if d < 0 else d
        self._memo[e] = got
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


def _co_reachable(table: np.ndarray, finals: np.ndarray) -> np.ndarray:
    """States of ``table`` (one column per byte) that can reach a final state."""
    n = table.shape[0]
    src, col = np.nonzero(table >= 0)
    dst = table[src, col]
    preds: list[list[int]] = [[] for _ in range(n)]
    for s, t in zip(src.tolist(), dst.tolist()):
        preds[t].append(s)
    live = finals.copy()
    todo = np.flatnonzero(finals).tolist()
    while todo:
        t = todo.pop()
        for s in preds[t]:
            if not live[s]:
                live[s] = True
                todo.append(s)
    return live


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


def code_points_expr(pool: ExprPool, intervals: Iterable[tuple[int, int]]) -> int:
    """One character whose code point is in ``intervals`` (inclusive), as UTF-8 bytes.

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
