"""How many tokens it takes, at most, to finish an output from a state: the budgets of never-truncated output.

Budget-aware masking (:meth:`Guide.token_mask` with ``budget=``) needs, for every state ``s``, a
number ``D(s)`` of tokens that is *guaranteed* to finish the output from ``s``, and that is
*consistent*: from every non-final state some token leads to a state ``s'`` with
``D(s') <= D(s) - 1``. Consistency is what makes the masking sound: if ``D(s) <= budget`` there is
always an allowed token (the witness) after which ``D(s') <= budget - 1`` still holds, so a
generation started with ``budget >= D(0)`` ends in a final state.

Everything here is computed per state, on demand, as the automata are (:mod:`structgen.automata.lazy`):

- **Bytes.** The fewest bytes to a final state is read off a state's expression
  (:class:`~structgen.automata.expr.MinLength`: ``x{lo,hi}`` needs ``lo`` times ``x``), a call
  weighing its callee's shortest string.
- **Tokens** (:class:`SpelledDistances`). When every byte the automaton can read is a single-byte
  token of the vocabulary (true of byte-level BPE and of SentencePiece with byte fallback, once the
  bytes no token holds are cut out): follow one shortest byte path and let ``D(s)`` be the fewest
  tokens that spell a prefix of that path followed by ``D`` of where the prefix ends. The single
  byte is always a token, so ``D(s) <= distance in bytes``; the path's first token is the
  witness, so ``D`` is consistent. Exact on literal stretches, an upper bound in general.
- Otherwise (some byte is only ever part of longer tokens): the exact fewest tokens, by a
  shortest-path search over the token transitions of every state, for small automata only;
  beyond :data:`EXACT_LIMIT` states × tokens it raises :class:`VocabularyError`.

A pushdown guide's automata call one another (:class:`NetworkDistances`): a fixpoint over the
call graph gives each automaton's shortest string, in bytes then in tokens; an object with
required keys is searched over (state, keys written).
"""

from __future__ import annotations

import heapq
import threading
from typing import Callable

import numpy as np

from .. import _engine
from ..automata.expr_text import MaxObligation, MinLength
from ..automata.lazy import LazyAutomaton
from ..automata.expr import NOTHING
from ..automata.expr_rewrite import readable_bytes
from ..automata.markers import CLOSE_GUARD, GUARD_FIRST
from ..errors import VocabularyError
from ..vocab.index import VocabularyIndex
from ..vocab.trie import TokenTrie, walk_nodes
from .network_view import NetworkView
from .stacks import StackTable

__all__ = ["EXACT_LIMIT", "INF", "NetworkDistances", "SpelledDistances", "exact_token_distances"]

#: Most states × tokens for the exact search (vocabularies without a token for every byte).
EXACT_LIMIT = 20_000_000
#: "Cannot finish" (larger than any real count, small enough to add).
INF = 1 << 40
#: Most states the exact search builds (an automaton must be built whole to be searched).
EXACT_STATES = 20_000

class SpelledDistances(_engine.SpelledDistances):
    """Tokens to finish from each state of one automaton, along one shortest byte path (see the
    module docstring); memoised per state (native: ``cpp/engine/distances.cpp``).

    ``calls``: whether the automaton's calls (symbols below
    :data:`~structgen.automata.markers.GUARD_FIRST`) are followed; a call of ``k`` weighs
    ``byte_weights[k]`` bytes and ``token_weights[k]`` tokens (the callee's shortest string).
    ``trie`` is the vocabulary's token trie (which byte strings are tokens, or prefixes of one).
    Methods: ``bytes_to_end(q)``, ``tokens_to_end(q)`` (``D(q)``).
    """

    def __init__(
        self, auto: LazyAutomaton, trie: TokenTrie, *,
        calls: bool | Callable[[int], tuple[tuple[int, int], ...]] = False,
        byte_weights: dict[int, int] | None = None, token_weights: dict[int, int] | None = None,
    ) -> None:
        super().__init__(auto, trie.native, calls=bool(calls), byte_weights=byte_weights or {},
                         token_weights=token_weights or {}, guard_first=GUARD_FIRST)


def exact_token_distances(auto: LazyAutomaton, index: VocabularyIndex, description: str) -> dict[int, int]:
    """The exact fewest tokens to finish from every state of ``auto`` (built whole: small
    automata only), for vocabularies in which some byte the automaton reads is not a token."""
    trie = index.trie
    todo, seen = [0], {0}
    while todo:
        q = todo.pop()
        if len(seen) > EXACT_STATES:
            break
        for t in auto.row(q):
            if t >= 0 and t not in seen:
                seen.add(t)
                todo.append(t)
    n, walkable = auto.num_states, len(trie.token_ids)
    if len(seen) > EXACT_STATES or n * walkable > EXACT_LIMIT:
        raise VocabularyError(
            f"{description} reads bytes that are no single token of the vocabulary, so token distances "
            f"must be searched exactly, and {n} states x {walkable} tokens is over the limit of {EXACT_LIMIT}; "
            "turn budget-aware masking off for this constraint"
        )
    nxt = np.stack([walk_nodes(auto, trie, s)[trie.token_nodes] for s in range(n)]) if walkable else np.full((n, 0), -1)
    big = np.int64(INF)
    dist = np.where(np.array(auto.finals[:n]), 0, big).astype(np.int64)
    while True:
        via = np.where(nxt >= 0, dist[np.maximum(nxt, 0)], big).min(axis=1, initial=big) + 1
        new = np.minimum(dist, via)
        if np.array_equal(new, dist):
            break
        dist = new
    if (dist >= big).any():
        raise VocabularyError(f"some states of {description} cannot be completed with the tokens of the vocabulary")
    return dict(enumerate(dist.tolist()))


class NetworkDistances:
    """Token (and byte) distances of a pushdown guide: per automaton state, per frame data, per
    stack. The callees' shortest strings are a fixpoint over the call graph, computed on first use;
    the rest is per state, on demand. ``busy`` is the guide's lock, held while computing."""

    __slots__ = (
        "view", "stacks", "index", "_busy", "_ready", "_bshortest", "_tshortest", "_spelled_check", "_per",
        "_guarded", "_tails", "_obligation", "_bounds",
    )

    def __init__(self, view: NetworkView, stacks: StackTable, index: VocabularyIndex, busy: threading.RLock) -> None:
        self.view = view
        self.stacks = stacks
        self.index = index
        self._busy = busy
        self._ready = False
        self._bshortest: dict[int, int] = {}  # automaton -> bytes of its shortest string
        self._tshortest: dict[int, int] = {}  # automaton -> tokens of its shortest string
        self._spelled_check: bool | None = None
        self._per: dict[int, SpelledDistances] = {}
        self._guarded: dict[tuple[int, int, int, str], int] = {}
        self._tails: dict[int | tuple[int, str], int] = {}
        self._obligation: MaxObligation | None | bool = False  # (False: not set up yet; None: unbounded)
        self._bounds: dict[int, int | None] = {}

    @property
    def ready(self) -> bool:
        """Whether the distances are set up (frame masks then carry distance bounds)."""
        return self._ready

    @property
    def spells_every_byte(self) -> bool:
        """Whether every byte the reachable automata read is a single-byte token."""
        got = self._spelled_check
        if got is None:
            pool, roots = self.view.network.pool, self.view.roots
            read = 0
            for k in self.view.reachable():
                read |= readable_bytes(pool, roots[k])
            got = self._spelled_check = not read & ~self.index.native.single_bytes
        return got

    def prepare(self) -> None:
        """The callees' shortest strings, in bytes then in tokens (a fixpoint over the call graph)."""
        if self._ready:
            return
        with self._busy:
            if self._ready:
                return
            view = self.view
            reach = view.reachable()
            shortest = {k: INF for k in reach}
            for _ in range(len(reach) + 2):  # (Bellman-Ford: a shortest string nests at most len(reach) calls)
                changed = False
                for k in reach:
                    ml = MinLength(view.network.pool, shortest)
                    start = self._guarded_search(k, 0, 0, shortest, "bytes") if view.auto(k).has_guards else ml.of(view.roots[k])
                    if start < shortest[k]:
                        shortest[k], changed = start, True
                if not changed:
                    break
            self._bshortest = shortest
            tokens = dict(shortest)
            for _ in range(64):  # (token counts only go down from the byte counts: a few rounds)
                self._per = {}
                self._tshortest = tokens
                changed = False
                for k in reach:
                    auto = view.auto(k)
                    start = self._guarded_search(k, 0, 0, tokens, "tokens") if auto.has_guards else self._spelled(k).tokens_to_end(0)
                    if start < tokens[k]:
                        tokens = {**tokens, k: start}
                        changed = True
                if not changed:
                    break
            self._per = {}
            self._tshortest = tokens
            self._guarded.clear()
            self._ready = True

    def _spelled(self, a: int) -> SpelledDistances:
        got = self._per.get(a)
        if got is None:
            auto = self.view.auto(a)
            got = self._per[a] = SpelledDistances(
                auto.auto, self.index.trie, calls=auto.calls,
                byte_weights=self._bshortest, token_weights=self._tshortest,
            )
        return got

    def _item_dist(self, a: int, q: int, item: int, unit: str) -> int:
        """:meth:`dist` of an item frame with item id ``item``: while its text may still spell a
        value of its set, in the item automaton without the set's spellings."""
        unique = self.view.unique
        assert unique is not None
        written, left = unique.written(item), unique.left(item)
        if left == NOTHING:
            per = self._spelled(a)
        else:
            pool = unique.pool
            k = unique.item_automaton(a, written)
            q = self.view.auto(k).auto.state_of(pool.minus(unique.flat(self.view.auto(a).auto.exprs[q]), left))
            per = self._spelled(k)
        return per.tokens_to_end(q) if unit == "tokens" else per.bytes_to_end(q)

    def _unique_spelled(self, a: int, written: int) -> SpelledDistances:
        """The distances of unique array ``a`` once the item values ``written`` are written: each
        item weighs what its item automaton needs without the values written (the items after the
        next one are counted the same: a lower bound)."""
        key = ~((a << 32) | written)  # (apart from the automata's own keys)
        got = self._per.get(key)
        if got is None:
            view = self.view
            unique = view.unique
            assert unique is not None
            then = {i: self._spelled(unique.item_automaton(i, written)) for i in view.arrays[a]}
            got = self._per[key] = SpelledDistances(
                view.auto(a).auto, self.index.trie, calls=view.auto(a).calls,
                byte_weights={**self._bshortest, **{i: d.bytes_to_end(0) for i, d in then.items()}},
                token_weights={**self._tshortest, **{i: d.tokens_to_end(0) for i, d in then.items()}},
            )
        return got

    def dist(self, a: int, q: int, data: int, unit: str = "tokens") -> int:
        """Tokens (or bytes) from state ``q`` of automaton ``a`` to a final state, given the
        frame data (an object's keys written: its required keys must be written before it closes)."""
        self.prepare()
        auto = self.view.auto(a)
        if data and a in self.view.recording:  # (an item that may still spell a value written before)
            return self._item_dist(a, q, data, unit)
        if not auto.has_guards:
            per = self._spelled(a) if not data or a not in self.view.arrays else self._unique_spelled(a, data)
            return per.tokens_to_end(q) if unit == "tokens" else per.bytes_to_end(q)
        key = (a, q, data, unit)
        got = self._guarded.get(key)
        if got is None:
            weights = self._tshortest if unit == "tokens" else self._bshortest
            got = self._guarded[key] = self._guarded_search(a, q, data, weights, unit)
        return got

    def dists(self, a: int, data: int, states: np.ndarray) -> np.ndarray:
        """:meth:`dist` in tokens of each of ``states`` (an int array) of automaton ``a``."""
        if states.size == 0:
            return np.zeros(0, dtype=np.int64)
        unique, inverse = np.unique(states, return_inverse=True)
        values = np.array([self.dist(a, int(q), data) for q in unique.tolist()], dtype=np.int64)
        return values[inverse]

    def _guarded_search(self, a: int, q: int, data: int, weights: dict[int, int], unit: str) -> int:
        """Dijkstra over (state, data, passed a guard yet): an optional key is written only to
        finish the one being spelled (before any guard), never to get anywhere sooner. A byte
        weighs 1, a call ``weights[callee]``."""
        view = self.view
        auto = view.auto(a)
        required = view.network.required.get(a, 0)
        heap = [(0, q, data, 0)]
        best: dict[tuple[int, int, int], int] = {(q, data, 0): 0}
        while heap:
            cost, s, d, passed = heapq.heappop(heap)
            if best.get((s, d, passed), INF) < cost:
                continue
            if auto.finals[s]:
                return cost
            moves: list[tuple[int, int, int, int]] = [(cost + 1, t, d, passed) for t in set(auto.edges(s).values())]
            for k, r in auto.calls(s):
                if weights.get(k, INF) < INF:
                    moves.append((cost + weights[k], r, d, passed))
            for g, r in auto.guards(s):
                nd = view.pass_guard(a, g, d)
                if nd is None or (g != CLOSE_GUARD and not required >> g & 1 and passed):
                    continue
                moves.append((cost, r, nd, 1))
            for c, t, nd, np_ in moves:
                if c < best.get((t, nd, np_), INF):
                    best[(t, nd, np_)] = c
                    heapq.heappush(heap, (c, t, nd, np_))
        return INF

    def _obligations(self) -> MaxObligation | None:
        """The bound of :class:`MaxObligation` over the network: a call obliges its callee's own
        bound (a fixpoint over the call graph); ``None`` when a callee calls itself (unbounded
        nesting) or an automaton has guards (required keys the bound does not see)."""
        got = self._obligation
        if got is False:
            self.prepare()
            view = self.view
            reach = view.reachable()
            got = None
            if not any(view.auto(k).has_guards for k in reach):
                callee = {k: 0 for k in reach}
                for _ in range(len(reach) + 2):
                    bound = MaxObligation(view.network.pool, self._bshortest, callee)
                    now = {k: bound.of(view.roots[k]) for k in reach}
                    if now == callee:
                        got = bound
                        break
                    callee = now
            self._obligation = got
        return got  # type: ignore[return-value]

    def stack_bound(self, sid: int) -> int | None:
        """An upper bound on the tokens still needed after any one more token from stack ``sid``
        (``None``: no bound): the token may pop some frames and end in a lower one, which it may
        advance (at most that frame's obligation) while the frames below it keep their distances."""
        if sid in self._bounds:
            return self._bounds[sid]
        obligation = self._obligations()
        got: int | None = None
        if obligation is not None:
            a, q, parent, data = self.stacks.stacks[sid]
            view = self.view
            if data and (a in view.arrays or a in view.recording and view.unique.in_danger(data)):  # type: ignore[union-attr]
                obligation = None  # (the bound does not see the values written: no bound)
        if obligation is not None:
            here = obligation.of(self.view.auto(a).auto.exprs[q]) + (0 if parent < 0 else self.tail(parent))
            below = None if parent < 0 else self.stack_bound(parent)
            got = here if parent < 0 else (None if below is None else max(here, below))
            if got is not None and got >= INF:
                got = None
        self._bounds[sid] = got
        return got

    def tail(self, sid: int, unit: str = "tokens") -> int:
        """Tokens (or bytes) the frames of stack ``sid`` need to finish (its top frame's too)."""
        key = sid if unit == "tokens" else ~sid
        got = self._tails.get(key)
        if got is None:
            a, q, parent, data = self.stacks.stacks[sid]
            got = self.dist(a, q, data, unit) + (0 if parent < 0 else self._below(parent, unit))
            self._tails[key] = got
        return got

    def _below(self, sid: int, unit: str) -> int:
        """:meth:`tail` of a stack below another frame: an item frame there (a unique array nested
        in it is being written) counts its plain distance, the values written left aside (a lower
        bound): its spellings left have read the bytes of the frames above it, its state has not."""
        a, q, parent, data = self.stacks.stacks[sid]
        if not (data and a in self.view.recording):
            return self.tail(sid, unit)
        key = (sid, unit)
        got = self._tails.get(key)
        if got is None:
            got = self.dist(a, q, 0, unit) + (0 if parent < 0 else self._below(parent, unit))
            self._tails[key] = got
        return got
