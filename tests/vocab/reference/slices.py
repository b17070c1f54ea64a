"""The reference (pure Python) string slices the native ones replaced: kept only for the differential
tests (tests/vocab/test_native_vocab.py). The memo that lived in the pool lives in a table here."""
from __future__ import annotations

import dataclasses
import re
import threading
from dataclasses import dataclass, field
from functools import cache
from typing import Sequence

import numpy as np

import weakref

from structgen.automata.dfa import ByteDFA
from structgen.automata.expr import EPSILON, KINDS, NOTHING, ExprPool, byte_mask
from structgen.automata.lazy import LazyAutomaton
from structgen.automata.regex import regex_to_dfa

from .trie import TokenTrie

_SUCCESSORS: "weakref.WeakKeyDictionary[ExprPool, dict[tuple[int, int], int]]" = weakref.WeakKeyDictionary()

__all__ = [
    "MIXED", "SLICES", "SLICE_CHAR", "StringSlice", "char_successor", "counted_body", "counted_run", "slice_automaton", "slice_chain", "uniform_successor",
]

#: The slices, widest first, as one-character regexes: any character of a JSON string but
#: ``"``, ``\`` and C0 controls; the same but U+2028 and U+2029 (a pattern's ``.``); then the
#: classes names, identifiers, slugs and codes are made of.
SLICES = (
    '[^"\\\\\\x00-\\x1f]',
    '[^"\\\\\\x00-\\x1f\\u2028\\u2029]',
    "[ A-Za-z0-9_]",
    "[ A-Za-z0-9]",
    "[A-Za-z0-9_]",
    "[A-Za-z0-9]",
    "[a-z0-9]",
    "[a-z]",
)
#: The first slice, a JSON string's raw characters.
SLICE_CHAR = SLICES[0]
MIXED = -2
#: The most nodes of a rest trie that is cut by token length (see :attr:`StringSlice.cuttable`).
REST_CUT_NODES = 65_536
#: Cuts of a rest trie below the vocabulary's (its tries are small): the last positions of a
#: string under a length share walks too.
REST_CUTS_BELOW = (12, 8, 4)


@dataclass(frozen=True, eq=False)
class StringSlice:
    """The slice tokens of one vocabulary (see the module docstring)."""

    is_slice: np.ndarray  # bool [V]
    by_length: np.ndarray  # int64: ids of slice tokens, sorted by their length in characters
    lengths: np.ndarray  # int64: the sorted lengths
    rest: TokenTrie  # trie of the walkable tokens that are not slice tokens
    _up_to: dict[int, np.ndarray] = field(default_factory=dict)
    _cuts: dict[int, tuple[TokenTrie, TokenTrie]] = field(default_factory=dict)
    _starts: list[np.ndarray] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def longest(self) -> int:
        """The most characters in one slice token."""
        return int(self.lengths[-1]) if self.lengths.size else 0

    def up_to(self, m: int) -> np.ndarray:
        """Read-only bool mask of the slice tokens of at most ``m`` characters (cached)."""
        if m >= self.longest:
            return self.is_slice
        mask = self._up_to.get(m)
        if mask is None:
            mask = np.zeros(self.is_slice.size, dtype=bool)
            mask[self.by_length[: np.searchsorted(self.lengths, m, side="right")]] = True
            mask.flags.writeable = False
            with self._lock:
                if len(self._up_to) > 256:  # bounded: a few hundred masks of one byte per token
                    self._up_to.clear()
                self._up_to[m] = mask
        return mask

    @property
    def cuttable(self) -> bool:
        """Whether the rest trie is small enough to be cut by token length (:meth:`rest_cut`):
        a JSON string's rest is a few thousand tokens; an identifier class's is most of the
        vocabulary, whose cuts would cost tens of megabytes."""
        return self.rest.num_nodes <= REST_CUT_NODES

    def cuts(self, lengths: Sequence[int]) -> list[int]:
        """The ``lengths`` (token lengths in bytes, longest first), then :data:`REST_CUTS_BELOW`,
        that are shorter than the longest rest token."""
        top = int(self.rest.height[0])
        return [n for n in (*lengths, *(c for c in REST_CUTS_BELOW if c < min(lengths, default=top + 1))) if n < top]

    def rest_cut(self, n: int) -> tuple[TokenTrie, TokenTrie]:
        """The rest trie's tokens of at most ``n`` bytes, and those of more, as two tries cut out
        of the vocabulary's (their ``origin``: nodes of the vocabulary's trie) (cached)."""
        got = self._cuts.get(n)
        if got is None:
            rest = self.rest
            assert rest.origin is not None
            lengths = rest.depth_of(rest.token_nodes)
            parts = []
            for keep in (lengths <= n, lengths > n):
                part = rest.restrict(rest.token_ids[keep])
                assert part.origin is not None
                parts.append(dataclasses.replace(part, origin=rest.origin[part.origin]))
            with self._lock:
                got = self._cuts.setdefault(n, (parts[0], parts[1]))
        return got

    @property
    def length_starts(self) -> np.ndarray:
        """``[L]``: how many slice tokens have fewer than ``L`` characters (``L`` up to :attr:`longest` + 1)."""
        if not self._starts:
            self._starts.append(np.searchsorted(self.lengths, np.arange(self.longest + 2), side="left"))
        return self._starts[0]

    def ends_along(self, chain: Sequence[int], count: int, rest_ends: np.ndarray) -> np.ndarray:
        """The state each of the first ``count`` slice tokens (by length) ends in along ``chain``
        (``chain[c]``: the state after ``c`` characters; its last state for longer tokens), then
        ``rest_ends`` (int32): runs of equal lengths repeated, not indexed one by one."""
        starts = self.length_starts
        n = len(chain)
        bounds = np.minimum(starts[np.minimum(np.arange(n + 1), starts.size - 1)], count)
        bounds[0], bounds[n] = 0, count
        out = np.empty(count + rest_ends.size, dtype=np.int32)
        out[:count] = np.repeat(np.array(chain, dtype=np.int32), np.diff(bounds))
        out[count:] = rest_ends
        return out

    @classmethod
    def build(cls, tokens: Sequence[bytes | None], trie: TokenTrie, char_class: str = SLICE_CHAR) -> "StringSlice":
        """The tokens (a vocabulary's) made of whole characters of ``char_class`` (a regex class);
        ``trie`` is the trie of all of them, the rest trie is cut out of it."""
        is_slice = np.zeros(len(tokens), dtype=bool)
        lengths = np.zeros(len(tokens), dtype=np.int64)
        whole = re.compile(f"(?:{char_class})+")
        for i, tok in enumerate(tokens):
            if not tok:
                continue
            try:
                text = tok.decode("utf-8")
            except UnicodeDecodeError:
                continue
            if whole.fullmatch(text):
                is_slice[i] = True
                lengths[i] = len(text)
        ids = np.flatnonzero(is_slice)
        order = np.argsort(lengths[ids], kind="stable")
        is_slice.flags.writeable = False
        rest = [i for i, t in enumerate(tokens) if t and not is_slice[i]]
        return cls(is_slice, ids[order], lengths[ids][order], trie.restrict(np.array(rest, dtype=np.int64)))


@cache
def slice_automaton(k: int) -> tuple[ByteDFA, list[list[tuple[np.ndarray, int]]]]:
    """The one-character automaton R of ``SLICES[k]`` and, per R state, its edges as (bytes, target)
    (built once per process)."""
    r = regex_to_dfa(SLICES[k])
    table = r.transitions[:, r.byte_classes]  # [R state, byte]
    edges = []
    for row in table:
        targets = np.unique(row[row >= 0])
        edges.append([(np.flatnonzero(row == t), int(t)) for t in targets])
    return r, edges


@cache
def _slice_order(k: int) -> tuple[int, ...]:
    """The states of slice ``k``'s one-character automaton in topological order (it is acyclic)."""
    r, edges = slice_automaton(k)
    indegree = [0] * r.num_states
    for out in edges:
        for _, t in out:
            indegree[t] += 1
    order, ready = [], [0]
    while ready:
        s = ready.pop()
        order.append(s)
        for _, t in edges[s]:
            indegree[t] -= 1
            if indegree[t] == 0:
                ready.append(t)
    return tuple(order)


def char_successor(auto: LazyAutomaton, q: int, k: int = 0) -> int:
    """Where every character of ``SLICES[k]`` leads from state ``q`` of ``auto`` (one state), -1 if
    every one dies, or ``MIXED`` (-2) if they disagree."""
    pool = auto.pool
    got = uniform_successor(pool, auto.exprs[q], k)
    if got == MIXED:
        return MIXED
    if got == NOTHING or pool.is_algebraic(got) and not pool.is_live(got):
        return -1  # (an intersection or complement with no string left is dead, as in LazyAutomaton.build)
    return auto.state_of(got)


def uniform_successor(pool: ExprPool, e: int, k: int = 0) -> int:
    """The expression every character of ``SLICES[k]`` leads to from ``e``, ``NOTHING`` if every one
    dies, or ``MIXED``. The one-character automaton R of the slice is acyclic: its states are visited
    in topological order, carrying the expression reached so far; an R edge keeps one expression
    only if all its bytes agree there (read off the expression's byte classes: no state is built
    for the bytes inside a character). Memoised in the pool."""
    key = (e, k)
    got = _SUCCESSORS.setdefault(pool, {}).get(key)
    if got is not None:
        return got  # type: ignore[no-any-return]
    form = counted_body(pool, e, k) if e > 1 else None
    if form is not None:  # (a string body: one character fewer, read off the counters)
        x, lo, hi, rest = form
        got = NOTHING if hi == 0 else _counted(pool, x, max(lo - 1, 0), hi - 1 if hi > 0 else -1, rest)
        _SUCCESSORS.setdefault(pool, {})[key] = got
        return got
    r, _ = slice_automaton(k)
    value: dict[int, int] = {0: e}
    final = MIXED
    for s in _slice_order(k):
        v = value.get(s)
        if v is None:
            continue
        if r.finals[s]:
            final = v
        for mask, t in _edge_masks(k)[s]:
            if v == NOTHING or v == MIXED:
                got = v
            else:
                got = None
                for part in pool.byte_classes(v):
                    if part & mask:
                        d = pool.derive(v, (part & mask & -(part & mask)).bit_length() - 1)
                        if got is None:
                            got = d
                        elif got != d:
                            got = MIXED
                            break
                assert got is not None
            old = value.get(t)
            value[t] = got if old is None or old == got else MIXED
    _SUCCESSORS.setdefault(pool, {})[key] = final
    return final


def counted_body(pool: ExprPool, e: int, k: int) -> tuple[int, int, int, int] | None:
    """``(x, lo, hi, rest)`` where ``e`` is ``x{lo,hi}·rest`` with every character of
    ``SLICES[k]`` read by ``x`` as a whole (to the empty string) and by ``rest`` not at all (a
    string body under a length bound); ``None`` for any other form. ``hi`` is -1 when unbounded."""
    node = pool.node(e)
    if node[0] == KINDS["seq"] and pool.node(node[1])[0] == KINDS["rep"]:
        _, x, lo, hi = pool.node(node[1])
        rest = node[2]
    elif node[0] == KINDS["rep"]:
        _, x, lo, hi = node
        rest = EPSILON
    else:
        return None
    if uniform_successor(pool, x, k) != EPSILON or uniform_successor(pool, rest, k) != NOTHING:
        return None
    return x, lo, hi, rest


def _counted(pool: ExprPool, x: int, lo: int, hi: int, rest: int) -> int:
    """``x{lo,hi}·rest`` (``hi`` -1: unbounded): the positions of a string meet the same terms
    again from every position before them, found by the pool's hash-consing (native)."""
    return pool.seq(pool.repeat(x, lo, None if hi < 0 else hi), rest)


def counted_run(auto: LazyAutomaton, q: int, k: int, longest: int) -> tuple[int, bool] | None:
    """What :func:`slice_chain` tells of a string body, without making its states: ``(m,
    branches)``, ``m`` the most slice characters that survive from ``q`` (``longest`` where
    any number does), ``branches`` whether a state after one of them may return or call (where
    the repetition may end: the term after it is final or starts with a symbol). ``None`` where
    ``q``'s expression is not a counted body (then see :func:`slice_chain`)."""
    pool = auto.pool
    form = counted_body(pool, auto.exprs[q], k)
    if form is None:
        return None
    x, lo, hi, rest = form
    if pool.first_symbols(x):
        return None  # (a call inside the repeated part: step the chain)
    m = longest if hi < 0 else min(hi, longest)
    return m, m >= max(lo, 1) and (pool.nullable(rest) or bool(pool.first_symbols(rest)))


def slice_chain(auto: LazyAutomaton, q: int, k: int, longest: int) -> list[int] | None:
    """The states after 0, 1, ... ``longest`` characters of ``SLICES[k]`` from ``q``, read off the
    counters when ``q``'s expression is a counted repetition of a set that takes every slice
    character, followed by something that takes none (a string body ``x{lo,hi}"...``): nothing is
    walked, however long the string may be. The chain stops where slice characters die; it ends
    with its last state twice when every further length leads there. ``None`` when the expression
    has another form (then :func:`char_successor` steps one character at a time)."""
    pool = auto.pool
    form = counted_body(pool, auto.exprs[q], k)
    if form is None:
        return None
    x, lo, hi, rest = form
    chain = [q]
    state_of = auto.state_of
    for j in range(1, longest + 1):
        if 0 <= hi < j:
            break
        lo_j = max(lo - j, 0)
        chain.append(state_of(_counted(pool, x, lo_j, -1 if hi < 0 else hi - j, rest)))
        if hi < 0 and lo_j == 0:  # unbounded: from here every length leads to the same state
            chain.append(chain[-1])
            break
    return chain


@cache
def _edge_masks(k: int) -> list[list[tuple[int, int]]]:
    """Per state of slice ``k``'s one-character automaton: its edges as (byte mask, target)."""
    _, edges = slice_automaton(k)
    return [[(byte_mask(bs.tolist()), t) for bs, t in out] for out in edges]
