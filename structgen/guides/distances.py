"""How many tokens it takes, at most, to finish an output from each automaton state.

Budget-aware masking (:meth:`Guide.token_mask` with ``budget=``) needs, for every state ``s``, a
number ``D(s)`` of tokens that is *guaranteed* to finish the output from ``s``, and that is
*consistent*: from every non-final state some token leads to a state ``s'`` with
``D(s') <= D(s) - 1``. Consistency is what makes the masking sound: if ``D(s) <= budget`` there is
always an allowed token (the witness) after which ``D(s') <= budget - 1`` still holds, so a
generation started with ``budget >= D(0)`` ends in a final state.

:func:`token_distances` builds such a ``D``:

- When every byte the automaton can read is a single-byte token of the vocabulary (true of
  byte-level BPE and of SentencePiece with byte fallback, once the bytes no token holds are cut out
  of the automaton at compile time, which the compiler does): take, for every state, one shortest
  byte path to a final state (the BFS tree of :attr:`ByteDFA.distances`) and let ``D(s)`` be the
  fewest tokens that spell a prefix of that path followed by ``D`` of where the prefix ends. The
  single byte is always a token, so ``D(s) <= distance in bytes``; the path's first token is the
  witness, so ``D`` is consistent. It is exact on literal stretches (property names, brackets,
  where the vocabulary has the multi-byte tokens) and an upper bound in general.
- Otherwise (some byte is only ever part of longer tokens): the exact fewest tokens, by a
  shortest-path search over the token transitions of every state, for small automata and
  vocabularies only; beyond :data:`EXACT_LIMIT` states × tokens it raises :class:`VocabularyError`.

A pushdown guide's automata call one another, so their distances are a fixpoint over the call
graph (:class:`NetworkDistances`): bytes first (Dijkstra, a call weighing its callee's shortest
string), then tokens along those shortest byte paths, a call weighing its callee's tokens; an
object with required keys is searched over (state, keys written). Both guides spell their
shortest byte paths in tokens with one routine, :func:`spell_along_steps`.
"""

from __future__ import annotations

import heapq
import threading
from typing import Callable, Sequence

import numpy as np

from ..automata.dfa import ByteDFA, distances_to_final
from ..automata.markers import CLOSE_GUARD
from ..errors import CompileBudgetExceeded, VocabularyError
from ..vocab.index import VocabularyIndex, index_of
from ..vocab.trie import walk_state
from ..vocab.vocabulary import Vocabulary
from .network_view import AutomatonView, NetworkView
from .stacks import StackTable

__all__ = ["EXACT_LIMIT", "NetworkDistances", "spell_along_steps", "spells_every_byte", "token_distances"]

#: Most states × tokens for the exact search (vocabularies without a token for every byte).
EXACT_LIMIT = 20_000_000
#: "Cannot finish" in the network distances (larger than any real count, small enough to add).
INF = 1 << 40
#: A shortest step from a state: (its byte, as a one-byte string; the next state).
Step = tuple[bytes, int]


def spells_every_byte(dfa: ByteDFA, vocabulary: Vocabulary) -> bool:
    """Whether every byte ``dfa`` can read is a single-byte token of ``vocabulary``."""
    singles = index_of(vocabulary).single_bytes
    readable = (dfa.transitions >= 0).any(axis=0)
    return all(b in singles for b in range(256) if readable[dfa.byte_classes[b]])


def token_distances(dfa: ByteDFA, vocabulary: Vocabulary) -> np.ndarray:
    """A consistent upper bound on the tokens needed to finish from each state (see module doc).

    Returns a read-only int32 array over the states, 0 exactly in final states.
    """
    out = _along_shortest_paths(dfa, vocabulary) if spells_every_byte(dfa, vocabulary) else _exact(dfa, vocabulary)
    out.flags.writeable = False
    return out


def spell_along_steps(
    order: Sequence[int], steps: Sequence[Step | None], words: frozenset[bytes], prefixes: frozenset[bytes],
    out: list[int], otherwise: Callable[[int], int] | None = None,
) -> None:
    """Tokens to finish from each state, along one shortest byte path per state (in place).

    ``steps[s]`` is the first step of ``s``'s shortest byte path (``None`` where there is none:
    a final state, or a call on the way). For each state of ``order`` (by ascending byte
    distance, so every state along a path comes before it) with a step, ``out[s]`` becomes the
    fewest of ``1 + out[t]`` over the tokens (``words``, with every non-empty prefix in
    ``prefixes``) that spell the path from ``s`` to ``t``: the single byte is a token (the caller
    checks), so the path's first token is the witness that makes the result consistent. States
    without a step take ``otherwise(s)`` when given, else keep ``out[s]``.
    """
    for s in order:
        step = steps[s]
        if step is None:
            if otherwise is not None:
                out[s] = otherwise(s)
            continue
        spelled, cur = step
        best = 1 + out[cur]
        nxt = steps[cur]
        while nxt is not None:
            b, cur = nxt
            spelled += b
            if spelled not in prefixes:
                break
            if spelled in words and 1 + out[cur] < best:
                best = 1 + out[cur]
            nxt = steps[cur]
        out[s] = best


def _along_shortest_paths(dfa: ByteDFA, vocabulary: Vocabulary) -> np.ndarray:
    dist = dfa.distances.astype(np.int64)
    n = dfa.num_states
    trans = dfa.transitions
    # One step of a shortest path from every non-final state: the class whose successor is one
    # byte closer, and the smallest byte of that class.
    big = np.int64(1 << 40)
    succ_dist = np.where(trans >= 0, dist[np.maximum(trans, 0)], big)
    cls = succ_dist.argmin(axis=1)
    succ = trans[np.arange(n), cls].tolist()
    first_byte = np.full(dfa.num_classes, -1, dtype=np.int64)
    for b in range(255, -1, -1):
        first_byte[dfa.byte_classes[b]] = b
    step_byte = [bytes([int(first_byte[c])]) for c in cls.tolist()]
    d = dist.tolist()
    steps: list[Step | None] = [(step_byte[s], succ[s]) if d[s] > 0 else None for s in range(n)]
    index = index_of(vocabulary)
    out = list(d)  # (final states stay 0)
    spell_along_steps(np.argsort(dist, kind="stable").tolist(), steps, index.token_bytes, index.token_prefixes, out)
    return np.array(out, dtype=np.int32)


def _exact(dfa: ByteDFA, vocabulary: Vocabulary) -> np.ndarray:
    trie = index_of(vocabulary).trie
    n, walkable = dfa.num_states, len(trie.token_ids)
    if n * walkable > EXACT_LIMIT:
        raise VocabularyError(
            f"{vocabulary!r} lacks single-byte tokens for some bytes the constraint uses, so token "
            f"distances must be searched exactly, and {n} states x {walkable} tokens is over the "
            f"limit of {EXACT_LIMIT}; turn budget-aware masking off for this constraint"
        )
    node_classes = dfa.byte_classes[trie.byte]
    nxt = np.stack([walk_state(dfa, node_classes, trie, s) for s in range(n)]) if walkable else np.full((n, 0), -1)
    big = np.int64(1 << 40)
    dist = np.where(dfa.finals, 0, big).astype(np.int64)
    while True:
        via = np.where(nxt >= 0, dist[np.maximum(nxt, 0)], big).min(axis=1, initial=big) + 1
        new = np.minimum(dist, via)
        if np.array_equal(new, dist):
            break
        dist = new
    if (dist >= big).any():
        raise VocabularyError(f"some states of the automaton cannot be completed with the tokens of {vocabulary!r}")
    return dist.astype(np.int32)


class NetworkDistances:
    """Token (and byte) distances of a pushdown guide: per automaton state, per frame data, per
    stack. Computed once, on first use, as a fixpoint over the call graph (see the module
    docstring); ``busy`` is the guide's lock for its frame caches, held while computing."""

    __slots__ = (
        "view", "stacks", "index", "_busy", "_tokens", "_bytes", "_shortest", "_bshortest", "_guarded", "_vecs",
        "_tails", "_spelled",
    )

    def __init__(self, view: NetworkView, stacks: StackTable, index: VocabularyIndex, busy: threading.RLock) -> None:
        self.view = view
        self.stacks = stacks
        self.index = index
        self._busy = busy
        self._tokens: dict[int, np.ndarray] | None = None  # automaton -> tokens to finish, per state
        self._bytes: dict[int, np.ndarray] = {}  # automaton -> bytes to finish, per state
        self._shortest: dict[int, int] = {}  # automaton -> tokens of its shortest string
        self._bshortest: dict[int, int] = {}  # automaton -> bytes of its shortest string
        self._guarded: dict[tuple[int, int, int, str], int] = {}
        self._vecs: dict[tuple[int, int], np.ndarray] = {}
        self._tails: dict[int, int] = {}
        self._spelled = True  # (checked when distances are computed)

    @property
    def ready(self) -> bool:
        """Whether the distances are computed (frame masks then carry distance bounds)."""
        return self._tokens is not None

    @property
    def spells_every_byte(self) -> bool:
        """Whether every byte the reachable automata read is a single-byte token."""
        self.per_automaton()
        return self._spelled

    def per_automaton(self) -> dict[int, np.ndarray]:
        """Per automaton (every one the root reaches), tokens that surely take each state to a
        final state (a shortest byte path spelled with the longest tokens along it), a call
        costing its callee's; a fixpoint over the call graph. The same in bytes is kept for
        ``min_length(unit="bytes")``."""
        dists = self._tokens
        if dists is not None:
            return dists
        with self._busy:
            if self._tokens is None:
                self._tokens = self._compute()
            return self._tokens

    def _compute(self) -> dict[int, np.ndarray]:
        view = self.view
        reach = view.reachable()
        callers: dict[int, set[int]] = {}
        for k in reach:
            for calls in view.auto(k).calls.values():
                for j, _ in calls:
                    callers.setdefault(j, set()).add(k)
        shortest = {k: INF for k in reach}
        out: dict[int, np.ndarray] = {}
        work = list(reach)
        queued = set(work)
        rounds = 0
        while work:
            k = work.pop()
            queued.discard(k)
            rounds += 1
            if rounds > 50 * len(reach) + 1000:
                raise CompileBudgetExceeded("rounds of the distance fixpoint", 50 * len(reach) + 1000)
            auto = view.auto(k)
            d = _dijkstra(auto, shortest)
            out[k] = d
            start = int(d[0]) if not auto.guards else self.guarded_search(k, 0, 0, shortest)
            if start < shortest[k]:
                shortest[k] = start
                for c in callers.get(k, ()):
                    if c not in queued:
                        queued.add(c)
                        work.append(c)
        self._spelled = _reads_spelled([view.auto(k) for k in reach], self.index.single_bytes)
        for d in out.values():  # (states inside call paths are never reached: their distance stays INF)
            d.flags.writeable = False
        self._bytes, self._bshortest = out, shortest
        tokens = dict(shortest)
        refined: dict[int, np.ndarray] = {}
        for _ in range(64):  # (token counts only go down from the byte counts: a few rounds)
            changed = False
            for k in reach:
                auto = view.auto(k)
                if auto.guards:
                    refined[k] = out[k]
                    start = self.guarded_search(k, 0, 0, tokens)
                else:
                    refined[k] = self._spelled_distances(auto, out[k], shortest, tokens)
                    start = int(refined[k][0])
                if start < tokens[k]:
                    tokens[k] = start
                    changed = True
            if not changed:
                break
        for d in refined.values():
            d.flags.writeable = False
        self._shortest = tokens
        return refined

    def _spelled_distances(
        self, auto: AutomatonView, dist: np.ndarray, shortest: dict[int, int], tokens: dict[int, int]
    ) -> np.ndarray:
        """Tokens to finish from each state: along one shortest byte path (``dist``, calls weighing
        ``shortest[callee]`` bytes), the longest tokens that spell a stretch of it within this
        automaton, a call weighing ``tokens[callee]``. Consistent as the module docstring
        requires: the path's first token (or the callee's own first token) is a witness."""
        d = dist.tolist()
        n = len(d)
        order: list[int] = []
        steps: list[Step | None] = [None] * n  # (byte, next state) of a shortest byte step
        for s in np.argsort(dist, kind="stable").tolist():
            if d[s] >= INF:
                break
            order.append(s)
            if not auto.finals[s]:
                here = d[s]
                steps[s] = next(((bytes([b]), t) for b, t in sorted(auto.edges(s).items()) if d[t] == here - 1), None)
        out = [INF] * n

        def no_byte_step(s: int) -> int:  # a final state, or a call on the way
            if auto.finals[s]:
                return 0
            here = d[s]
            call = next(((k, r) for k, r in auto.calls.get(s, ()) if shortest.get(k, INF) + d[r] == here), None)
            return here if call is None else tokens[call[0]] + out[call[1]]

        spell_along_steps(order, steps, self.index.token_bytes, self.index.token_prefixes, out, no_byte_step)
        return np.array(out, dtype=np.int64)

    def dist(self, a: int, q: int, data: int, unit: str = "tokens") -> int:
        """Tokens (or bytes) from state ``q`` of automaton ``a`` to a final state, given the
        frame data (an object's keys written: its required keys must be written before it closes)."""
        auto = self.view.auto(a)
        base = self.per_automaton()[a] if unit == "tokens" else self._bytes[a]
        if not auto.guards:
            return int(base[q])
        key = (a, q, data, unit)
        got = self._guarded.get(key)
        if got is None:
            shortest = self._shortest if unit == "tokens" else self._bshortest
            got = self._guarded[key] = self.guarded_search(a, q, data, shortest)
        return got

    def guarded_search(self, a: int, q: int, data: int, shortest: dict[int, int]) -> int:
        """Dijkstra over (state, data, passed a guard yet): an optional key is written only to
        finish the one being spelled (before any guard), never to get anywhere sooner. A call
        weighs ``shortest[callee]``."""
        view = self.view
        auto = view.auto(a)
        required = view.network.required.get(a, 0)
        heap = [(0, q, data, 0)]
        best: dict[tuple[int, int, int], int] = {(q, data, 0): 0}
        explored = 0
        while heap:
            cost, s, d, passed = heapq.heappop(heap)
            if best.get((s, d, passed), INF) < cost:
                continue
            if auto.finals[s]:
                return cost
            explored += 1
            if explored > 200_000:
                raise CompileBudgetExceeded("states searched for the distance of an object with required keys", 200_000)
            moves: list[tuple[int, int, int, int]] = [(cost + 1, t, d, passed) for t in set(auto.edges(s).values())]
            for k, r in auto.calls.get(s, ()):
                if shortest.get(k, INF) < INF:
                    moves.append((cost + shortest[k], r, d, passed))
            for g, r in auto.guards.get(s, ()):
                nd = view.pass_guard(a, g, d)
                if nd is None or (g != CLOSE_GUARD and not required >> g & 1 and passed):
                    continue
                moves.append((cost, r, nd, 1))
            for c, t, nd, np_ in moves:
                if c < best.get((t, nd, np_), INF):
                    best[(t, nd, np_)] = c
                    heapq.heappush(heap, (c, t, nd, np_))
        return INF

    def dist_vec(self, a: int, data: int) -> np.ndarray:
        """:meth:`dist` of every state of ``a`` (cached per frame data)."""
        auto = self.view.auto(a)
        if not auto.guards:
            return self.per_automaton()[a]
        key = (a, data)
        got = self._vecs.get(key)
        if got is None:
            got = self._vecs[key] = np.array([self.dist(a, s, data) for s in range(auto.dfa.num_states)], dtype=np.int64)
        return got

    def tail(self, sid: int, unit: str = "tokens") -> int:
        """Tokens (or bytes) the frames of stack ``sid`` need to finish (its top frame's too)."""
        key = sid if unit == "tokens" else ~sid
        got = self._tails.get(key)
        if got is None:
            a, q, parent, data = self.stacks.stacks[sid]
            got = self.dist(a, q, data, unit) + (0 if parent < 0 else self.tail(parent, unit))
            self._tails[key] = got
        return got


def _dijkstra(auto: AutomatonView, shortest: dict[int, int]) -> np.ndarray:
    """Bytes to a final state from each state of ``auto``, calls weighing ``shortest[callee]``."""
    n = auto.dfa.num_states
    if not auto.calls and not auto.guards:
        d = distances_to_final(auto.table, auto.dfa.finals).astype(np.int64)
        return np.where(d < 0, INF, d)
    src, col = np.nonzero(auto.table >= 0)
    dst = auto.table[src, col]
    preds: list[list[tuple[int, int]]] = [[] for _ in range(n)]
    for s, t in set(zip(src.tolist(), dst.tolist())):
        preds[t].append((s, 1))
    for q, calls in auto.calls.items():
        for k, r in calls:
            w = shortest.get(k, INF)
            if w < INF:
                preds[r].append((q, w))
    for q, guards in auto.guards.items():  # (zero-width; the frame data is left to NetworkDistances.dist)
        for _, r in guards:
            preds[r].append((q, 0))
    dist = [INF] * n
    heap = [(0, f) for f in np.flatnonzero(auto.dfa.finals).tolist()]
    for _, f in heap:
        dist[f] = 0
    heapq.heapify(heap)
    while heap:
        d, t = heapq.heappop(heap)
        if d > dist[t]:
            continue
        for s, w in preds[t]:
            nd = d + w
            if nd < dist[s]:
                dist[s] = nd
                heapq.heappush(heap, (nd, s))
    return np.array(dist, dtype=np.int64)


def _reads_spelled(autos: list[AutomatonView], single: frozenset[int]) -> bool:
    """Whether every byte the automata read is a single-byte token (see the module docstring)."""
    for auto in autos:
        read = (auto.table >= 0).any(axis=0)[auto.cls_np]  # per byte
        if any(read[b] and b not in single for b in range(256)):
            return False
    return True
