"""Pushdown guides: byte automata that call one another (a recursive transition network).

A flat automaton copies a sub-schema at every place it is used and unrolls recursion; a
:class:`Network` keeps one automaton per shared piece (a ``$ref`` target, a large repeated
sub-schema, "any JSON value") and lets an automaton *call* another (see :func:`.nfa.call_marker`):
reaching a call edge ``q --k--> r`` enters automaton ``k`` at its start, and when ``k`` reaches a
final state it may *return* to ``r``. Recursion is a cycle of calls, so a recursive schema is
exact (up to a nesting bound, :data:`DEFAULT_MAX_DEPTH`).

A guide state is a set of *stacks* (the run is followed like a pushdown automaton; a set because
a byte may both continue a number and end it, or start two ``anyOf`` branches that call
different automata). A stack is a persistent linked list of frames ``(automaton, state)``,
hash-consed so equal stacks are one ``int``, and a set of stacks is hash-consed again into the
``int`` the public API hands out: the :class:`PushdownGuide` answers the same questions as a
:class:`.guide.Guide` (``token_mask``, ``next_state``, ``is_final``, budgets, forced text).

**Masks across frames** (XGrammar's context-independent tokens, llguidance's trie walk). For a
frame ``(a, q)`` and a trie node ``n`` (the prefix of a token read so far), ``_ci(a, q, n)`` is

- the tokens below ``n`` that are accepted *without leaving frame a* — read by ``a``'s own byte
  edges, or entering callees (and returning) on the way — and
- the trie nodes where ``a`` can return to its caller with bytes of the token still unread.

Both depend only on ``(a, q, n)``, never on the stack below, so they are computed once and shared
by every state of the guide; a state's mask is the union of its top frame's tokens and, for each
return node, the caller's ``_ci`` from that node (a token like ``"},`` returns twice).
"""

from __future__ import annotations

import heapq
import threading
from bisect import bisect_left
from collections import OrderedDict
from typing import Iterable, Sequence

import numpy as np

from ..errors import CompileBudgetExceeded, UnsatisfiableConstraint, VocabularyError
from ..automata.dfa import ByteDFA, distances_to_final
from .dfa_guide import DEFAULT_MASK_CACHE_BYTES, Guide
from .distances import _single_bytes, _token_sets
from ..vocab.trie import TokenTrie, _expand, _trie_lookup, token_trie
from ..automata.markers import CALL_BYTES, CLOSE_GUARD, GUARD_FIRST, call_edges
from ..automata.network import Network
from ..vocab.slices import MIXED, SLICES, char_successors, string_slice
from ..vocab.vocabulary import Vocabulary

__all__ = ["DEFAULT_MAX_DEPTH", "PushdownGuide"]

#: Default bound on the frames of a stack (the nesting depth of called automata). A call that
#: would go deeper is not taken: output never nests deeper than this.
DEFAULT_MAX_DEPTH = 128
#: A root walk in plain Python gives up (for the numpy walk) past this many trie nodes.
_SPARSE_ROOT_LIMIT = 2048
#: Cached frame analyses per guide before the cache is cleared.
_CI_CACHE = 200_000
#: Cached (state, token) -> state transitions per guide before the cache is cleared.
_NEXT_CACHE = 100_000
_INF = 1 << 40


class _Auto:
    """One automaton of a network, ready to walk: its byte table without the call paths, its
    calls, and which states may branch off (call or return)."""

    __slots__ = (
        "dfa", "table", "flat", "width", "cls", "cls_np", "finals", "calls", "guards", "branching", "_edges",
        "_bytes", "_succ", "_preds",
    )

    def __init__(self, dfa: ByteDFA, missing: frozenset[int] = frozenset()) -> None:
        self.dfa = dfa
        table = dfa.transitions.copy()
        marker_classes = sorted({int(dfa.byte_classes[b]) for b in CALL_BYTES})
        table[:, marker_classes] = -1  # no token walks a call path: calls are taken by the guide
        self.cls_np = dfa.byte_classes.astype(np.int64)
        edges = call_edges(dfa)
        self.calls = {q: c for q, es in edges.items() if (c := tuple(e for e in es if e[0] < GUARD_FIRST))}
        self.guards = {q: g for q, es in edges.items() if (g := tuple((k - GUARD_FIRST, r) for k, r in es if k >= GUARD_FIRST))}
        if missing:  # bytes no token holds: a column of their own, dead, then trim what dies with it
            table = np.concatenate([table, np.full((table.shape[0], 1), -1, dtype=table.dtype)], axis=1)
            self.cls_np = self.cls_np.copy()
            self.cls_np[sorted(missing)] = table.shape[1] - 1
            table = _trim_live(table[:, self.cls_np], dfa.finals, edges)
            self.cls_np = np.arange(256, dtype=np.int64)
        self.table = table
        self.flat: list[int] = table.ravel().tolist()
        self.width = int(table.shape[1])
        self.cls: list[int] = self.cls_np.tolist()
        self.finals: list[bool] = dfa.finals.tolist()
        branching = dfa.finals.copy()
        branching[list(self.calls)] = True
        branching[list(self.guards)] = True
        self.branching: list[bool] = branching.tolist()
        self._preds: list[list[tuple[int, int]]] | None = None
        self._edges: dict[int, dict[int, int]] = {}
        self._bytes: dict[int, int] = {}
        self._succ: dict[int, list[int]] = {}

    def preds(self) -> list[list[tuple[int, int]]]:
        """Per state, its predecessors ``(state, guard)`` (guard -1: a byte or a call)."""
        got = self._preds
        if got is None:
            got = [[] for _ in range(self.dfa.num_states)]
            src, col = np.nonzero(self.table >= 0)
            for s, t in set(zip(src.tolist(), self.table[src, col].tolist())):
                got[t].append((s, -1))
            for q, cs in self.calls.items():
                for _, r in cs:
                    got[r].append((q, -1))
            for q, gs in self.guards.items():
                for g, r in gs:
                    got[r].append((q, g))
            self._preds = got
        return got

    def slice_successors(self, k: int) -> list[int]:
        """Per state, where every character of slice ``k`` leads (see :mod:`.slices`)."""
        got = self._succ.get(k)
        if got is None:
            view = ByteDFA(self.table, self.cls_np.astype(np.int32), self.dfa.finals)
            got = self._succ[k] = char_successors(view, k).tolist()
        return got

    def edges(self, q: int) -> dict[int, int]:
        """``{byte: next state}`` of ``q`` (call paths left out)."""
        got = self._edges.get(q)
        if got is None:
            row = self.table[q][self.cls_np]
            nz = np.flatnonzero(row >= 0)
            got = self._edges[q] = dict(zip(nz.tolist(), row[nz].tolist()))
        return got

    def byte_set(self, q: int) -> int:
        """The bytes ``q`` reads, as a 256-bit int."""
        got = self._bytes.get(q)
        if got is None:
            got = 0
            for b in self.edges(q):
                got |= 1 << b
            self._bytes[q] = got
        return got


class _Walk:
    """Tokens below a trie node read inside one automaton from one state."""

    __slots__ = ("ids", "ends", "branches")

    def __init__(self, ids: np.ndarray, ends: np.ndarray, branches: list[tuple[int, int]]) -> None:
        self.ids = ids  # token ids accepted (their bytes all read by the automaton's own edges)
        self.ends = ends  # the state each ends in
        self.branches = branches  # (trie node, state) where a call or a return may start


class _Frame:
    """``_ci`` of a frame from a trie node (see the module docstring)."""

    __slots__ = ("ids", "pops", "umax", "_bools")

    def __init__(self, ids: np.ndarray, pops: tuple[int, ...], umax: int) -> None:
        self.ids = ids
        self.pops = pops  # trie nodes where the frame may return with bytes left
        self.umax = umax  # an upper bound on the distance (within the frame) after any of ids
        self._bools: np.ndarray | None = None

    def add_to(self, mask: np.ndarray) -> None:
        """Set this frame's tokens in ``mask`` (a large set is kept as a bool array: OR-ing
        128k bools beats scattering 100k ids)."""
        if self.ids.size < _BOOLS_FROM:
            mask[self.ids] = True
            return
        bools = self._bools
        if bools is None:
            bools = np.zeros(mask.shape[0], dtype=bool)
            bools[self.ids] = True
            self._bools = bools
        np.logical_or(mask, bools, out=mask)


#: Frames with this many tokens keep them as a bool array too.
_BOOLS_FROM = 2048


_EMPTY_IDS = np.empty(0, dtype=np.int64)


class PushdownGuide(Guide):
    """A :class:`.guide.Guide` over a :class:`Network`: same API, states are sets of stacks.

    Example:
        >>> import structgen
        >>> from structgen.automata.markers import call_marker
        >>> vocab = structgen.Vocabulary.from_bytes([b"[", b"]", b"[]", b""], eos_token_ids=[3])
        >>> net = Network([call_marker(1), rf"\\[{call_marker(1)}?\\]"], [])
        >>> guide = PushdownGuide(net, vocab)
        >>> s = guide.advance(guide.initial_state, [0, 0, 2, 1, 1])   # [[[]]]
        >>> guide.is_final(s), guide.allowed_token_ids(s).tolist()
        (True, [3])
    """

    __slots__ = (
        "network", "max_depth", "_autos", "_stacks", "_stack_ids", "_depths", "_configs", "_config_ids",
        "_walks", "_cis", "_ci_active", "_next", "_firsts", "_dists", "_tails", "_finals_memo", "_trie",
        "_nchild", "_busy", "_guard_dists", "_dist_vecs", "_shortest", "_bdists", "_bshortest", "_dead_memo",
    )

    def __init__(
        self, network: Network, vocabulary: Vocabulary, *, description: str = "",
        mask_cache_bytes: int = DEFAULT_MASK_CACHE_BYTES, max_depth: int = DEFAULT_MAX_DEPTH,
    ) -> None:
        self.network = network
        self.vocabulary = vocabulary
        self.description = description
        self.max_depth = max_depth
        self._lock = threading.Lock()
        # Mask, distance and budget computations share frame caches and a set of frames being
        # computed (to cut call cycles): one thread at a time (they hold the GIL anyway).
        self._busy = threading.RLock()
        self._autos: dict[int, _Auto] = {}
        self.dfa = network.dfa(0)
        self._stacks: list[tuple[int, int, int, int]] = []  # (automaton, state, parent stack, frame data)
        self._stack_ids: dict[tuple[int, int, int, int], int] = {}
        self._depths: list[int] = []
        self._configs: list[tuple[int, ...]] = []
        self._config_ids: dict[tuple[int, ...], int] = {}
        self._config([self._stack(0, 0, -1)])
        self._masks: dict[int, np.ndarray] = {}
        self._max_masks = max(16, mask_cache_bytes // max(vocabulary.size, 1))
        self._eos = np.array(sorted(vocabulary.eos_token_ids), dtype=np.int64)
        self._tight: OrderedDict[tuple[int, int], np.ndarray] = OrderedDict()
        self._forced: dict[int, bytes] = {}
        self._max_next: dict[int, int] = {}
        self._walks: dict[tuple[int, int, int], _Walk] = {}
        self._cis: dict[tuple[int, int, int, int], _Frame] = {}
        self._ci_active: set[tuple[int, int, int, int]] = set()
        self._guard_dists: dict[tuple[int, int, int, str], int] = {}
        self._shortest: dict[int, int] = {}
        self._bdists: dict[int, np.ndarray] = {}
        self._bshortest: dict[int, int] = {}
        self._dead_memo: dict[tuple[int, int], frozenset[int]] = {}
        self._dist_vecs: dict[tuple[int, int], np.ndarray] = {}
        self._next: dict[tuple[int, int], int] = {}
        self._firsts: dict[int, int] = {}
        self._dists: dict[int, np.ndarray] | None = None
        self._tails: dict[int, int] = {}
        self._finals_memo: dict[int, bool] = {}
        self._trie: TokenTrie | None = None
        self._nchild: list[int] | None = None
        self._spells_bytes = True  # (checked when distances are computed)

    def __repr__(self) -> str:
        what = f" {self.description}" if self.description else ""
        return f"<PushdownGuide{what}: {len(self.network)} automata over {self.vocabulary!r}>"

    def __reduce__(self) -> tuple[object, ...]:
        return (
            _rebuild_pushdown,
            (self.network, self.vocabulary, self.description, self._max_masks * max(self.vocabulary.size, 1), self.max_depth),
        )

    # -- stacks and states ---------------------------------------------------------------------

    def _auto(self, k: int) -> _Auto:
        got = self._autos.get(k)
        if got is None:
            got = self._autos[k] = _Auto(self.network.dfa(k), frozenset(self.vocabulary.missing_bytes))
        return got

    def _stack(self, a: int, q: int, parent: int, data: int = 0) -> int:
        """The id of the stack ``(a, q, data)`` on top of stack ``parent`` (-1: none)."""
        key = (a, q, parent, data)
        sid = self._stack_ids.get(key)
        if sid is None:
            sid = self._intern(self._stacks, self._stack_ids, key)
        return sid

    def _config(self, stacks: Iterable[int]) -> int:
        """The id of the state that is this set of stacks."""
        key = tuple(sorted(set(stacks)))
        cid = self._config_ids.get(key)
        if cid is None:
            cid = self._intern(self._configs, self._config_ids, key)
        return cid

    def _intern(self, items: list, ids: dict, key: tuple) -> int:
        with self._lock:
            got = ids.get(key)
            if got is None:
                got = ids[key] = len(items)
                items.append(key)
                if items is self._stacks:
                    parent = key[2]
                    self._depths.append(1 if parent < 0 else self._depths[parent] + 1)
        return got  # type: ignore[no-any-return]

    def _first(self, k: int) -> int:
        """The bytes a string of automaton ``k`` may start with (256-bit int)."""
        got = self._firsts.get(k)
        if got is None:
            self._firsts[k] = 0  # (a call cycle at the start state adds nothing new)
            auto = self._auto(k)
            got = 0
            todo, seen = [0], {0}
            while todo:  # (through guards: zero-width)
                q = todo.pop()
                got |= auto.byte_set(q)
                for j, _ in auto.calls.get(q, ()):
                    got |= self._first(j)
                for _, r in auto.guards.get(q, ()):
                    if r not in seen:
                        seen.add(r)
                        todo.append(r)
            self._firsts[k] = got
        return got

    def _step(self, stacks: Iterable[int], b: int) -> list[int]:
        """The stacks after reading byte ``b`` (calls and returns taken as needed)."""
        out: list[int] = []
        seen: set[int] = set()
        todo = list(stacks)
        bit = 1 << b
        while todo:
            sid = todo.pop()
            if sid in seen:
                continue
            seen.add(sid)
            a, q, parent, data = self._stacks[sid]
            auto = self._autos.get(a) or self._auto(a)
            t = auto.flat[q * auto.width + auto.cls[b]]
            if t >= 0:
                out.append(self._stack(a, t, parent, data))
            calls = auto.calls.get(q)
            if calls and self._depths[sid] < self.max_depth:
                for k, r in calls:
                    if self._first(k) & bit:
                        todo.append(self._stack(k, 0, self._stack(a, r, parent, data)))
            todo.extend(self._guarded(a, q, parent, data))
            if parent >= 0 and auto.finals[q]:
                todo.append(parent)
        return out

    def _guarded(self, a: int, q: int, parent: int, data: int) -> list[int]:
        """The stacks that the guards of state ``q`` pass to (zero-width steps, same frame)."""
        out = []
        for g, r in (self._autos.get(a) or self._auto(a)).guards.get(q, ()):
            passed = self._guard(a, g, data)
            if passed is not None:
                out.append(self._stack(a, r, parent, passed))
        return out

    def _guard(self, a: int, g: int, data: int) -> int | None:
        """The frame data after guard ``g`` of automaton ``a``, or ``None`` if it does not pass:
        a key already written, or a close before every required key is written."""
        if g == CLOSE_GUARD:
            return data if not self.network.required.get(a, 0) & ~data else None
        return None if data >> g & 1 else data | 1 << g

    def _stuck(self, sid: int) -> bool:
        """Whether the top frame of stack ``sid`` can no longer finish: every way on passes a
        guard for a key already written (a key half spelled that only a written key completes)."""
        a, q, _, data = self._stacks[sid]
        auto = self._autos.get(a) or self._auto(a)
        return bool(auto.guards) and q in self._dead(a, data)

    def _dead(self, a: int, data: int) -> frozenset[int]:
        """States of ``a`` that cannot finish with keys ``data`` written. Backward from the final
        states, a key guard passable only for a key not written yet. Exact for the objects the
        compiler writes: past a key's guard, the required keys not yet written can always be
        written and the object closed, so only the keys written so far block a way."""
        key = (a, data)
        got = self._dead_memo.get(key)
        if got is None:
            auto = self._auto(a)
            preds = auto.preds()
            live = set(np.flatnonzero(auto.dfa.finals).tolist())
            todo = list(live)
            while todo:
                t = todo.pop()
                for src, g in preds[t]:
                    if src not in live and (g < 0 or g == CLOSE_GUARD or not data >> g & 1):
                        live.add(src)
                        todo.append(src)
            got = self._dead_memo[key] = frozenset(range(auto.dfa.num_states)) - live
        return got

    @property
    def num_states(self) -> int:
        """The states made so far (states are made as generation reaches them)."""
        return len(self._configs)

    @property
    def num_automata(self) -> int:
        return len(self.network)

    @property
    def memory_bytes(self) -> int:
        masks = (len(self._masks) + len(self._tight)) * self.vocabulary.size
        autos = sum(a.table.nbytes * 3 + 64 * len(a._edges) for a in self._autos.values())
        frames = sum(f.ids.nbytes + 64 for f in self._cis.values()) + sum(w.ids.nbytes * 2 + 64 for w in self._walks.values())
        interned = 120 * (len(self._stacks) + len(self._configs)) + 80 * len(self._next)
        return int(self.network.memory_bytes + masks + autos + frames + interned)

    def is_final(self, state: int) -> bool:
        if not 0 <= state < len(self._configs):
            return False
        got = self._finals_memo.get(state)
        if got is None:
            got = self._finals_memo[state] = any(self._stack_final(s) for s in self._configs[state])
        return got

    def _stack_final(self, sid: int) -> bool:
        while True:
            a, q, parent, _ = self._stacks[sid]
            if not self._auto(a).finals[q]:
                return False
            if parent < 0:
                return True
            sid = parent

    def next_state(self, state: int, token_id: int) -> int:
        if not 0 <= state < len(self._configs):
            return -1
        tok = self.vocabulary.tokens[token_id] if 0 <= token_id < self.vocabulary.size else None
        if tok is None:
            if token_id in self.vocabulary.eos_token_ids and self.is_final(state):
                return state
            return -1
        key = (state, token_id)
        got = self._next.get(key)
        if got is not None:
            return got
        stacks: Sequence[int] = self._configs[state]
        got = 0
        for i, b in enumerate(tok):
            if len(stacks) == 1:  # the common case: one stack whose top frame reads the byte itself
                a, q, parent, data = self._stacks[stacks[0]]
                auto = self._autos.get(a) or self._auto(a)
                if not auto.branching[q]:
                    t = auto.flat[q * auto.width + auto.cls[b]]
                    if t < 0:
                        got = -1
                        break
                    stacks = (self._stack(a, t, parent, data),)
                    continue
            stacks = self._step(stacks, b)
            if not stacks:
                got = -1
                break
        if got == 0:
            stacks = [sid for sid in stacks if not self._stuck(sid)]
            got = self._config(stacks) if stacks else -1
        if len(self._next) >= _NEXT_CACHE:
            self._next.clear()
        self._next[key] = got
        return got

    def accepts_bytes(self, data: bytes) -> bool:
        stacks: Sequence[int] = self._configs[0]
        for b in data:
            stacks = self._step(stacks, b)
            if not stacks:
                return False
        return any(self._stack_final(s) for s in stacks)

    # -- masks ---------------------------------------------------------------------------------

    def _trie_parts(self) -> tuple[TokenTrie, list[int]]:
        trie = self._trie
        if trie is None:
            trie = self._trie = token_trie(self.vocabulary)
            cached = trie.__dict__.get("_nchild_list")
            if cached is None:
                cached = trie.num_children.tolist()
                object.__setattr__(trie, "_nchild_list", cached)
            self._nchild = cached
        assert self._nchild is not None
        return trie, self._nchild

    def _walk(self, a: int, q: int, node: int) -> _Walk:
        key = (a, q, node)
        got = self._walks.get(key)
        if got is None:
            auto = self._auto(a)
            got = None
            if node or len(auto.edges(q)) <= 16:
                got = self._walk_sparse(auto, q, node, 0 if node else _SPARSE_ROOT_LIMIT)
            if got is None:
                got = self._walk_sliced(auto, q)
            if got is None:
                got = self._walk_numpy(auto, q)
            if len(self._walks) >= _CI_CACHE:
                self._walks.clear()
            self._walks[key] = got
        return got

    def _walk_sparse(self, auto: _Auto, q: int, node: int, limit: int) -> _Walk | None:
        """Depth-first from ``node`` in state ``q``, looping over the fewer of a trie node's
        children and the state's edges (as :class:`.index.SparseWalker`); ``None`` past
        ``limit`` visited nodes (0: no limit)."""
        trie, nchild = self._trie_parts()
        keys, tok_first, tok_count, tok_ids = _trie_lookup(trie)
        branching = auto.branching
        nodes: list[int] = []
        states: list[int] = []
        branches: list[tuple[int, int]] = []
        if branching[q] and nchild[node]:
            branches.append((node, q))
        stack = [(node, q)]
        while stack:
            n, s = stack.pop()
            if not nchild[n]:
                continue
            base = n << 8
            lo = bisect_left(keys, base)
            hi = lo + nchild[n]
            edges = auto.edges(s)
            if not edges:
                continue
            found: list[tuple[int, int]] = []
            if hi - lo < len(edges):
                for j in range(lo, hi):
                    t = edges.get(keys[j] & 255)
                    if t is not None:
                        found.append((j + 1, t))
            else:
                for b, t in edges.items():
                    key = base | b
                    j = bisect_left(keys, key, lo, hi)
                    if j < hi and keys[j] == key:
                        found.append((j + 1, t))
            for child, t in found:
                nodes.append(child)
                states.append(t)
                stack.append((child, t))
                if branching[t] and nchild[child]:
                    branches.append((child, t))
            if limit and len(nodes) > limit:
                return None
        if not nodes:
            return _Walk(_EMPTY_IDS, np.empty(0, dtype=np.int32), branches)
        at = np.array(nodes, dtype=np.int64)
        cnt = tok_count[at]
        ids = tok_ids[_expand(tok_first[at], cnt)]
        return _Walk(ids, np.repeat(np.array(states, dtype=np.int32), cnt), branches)

    def _walk_sliced(self, auto: _Auto, q: int) -> _Walk | None:
        """A root walk from a state where every character of a slice leads one way (a string
        body): the slice tokens from the vocabulary's precomputed slice, the rest walked in its
        own small trie (the flat guide's slices, see :mod:`.slices`). ``None`` where no slice
        applies, or where a state along the slice's chain may call or return."""
        branching = auto.branching
        for k in range(len(SLICES)):
            succ = auto.slice_successors(k)
            first = succ[q]
            if first == MIXED or first < 0:
                continue
            sl = string_slice(self.vocabulary, k)
            chain = [q]  # chain[c]: the state after c slice characters
            while len(chain) <= sl.longest:
                nxt = succ[chain[-1]]
                if nxt < 0:
                    break
                if nxt == MIXED or branching[nxt]:
                    chain = []
                    break
                chain.append(nxt)
                if nxt == chain[-2]:  # a loop: every length leads here
                    break
            if not chain:
                continue
            looping = len(chain) > 1 and chain[-1] == chain[-2]
            m = sl.longest if looping else len(chain) - 1
            count = int(np.searchsorted(sl.lengths, m, side="right"))
            ids = sl.by_length[:count]
            lengths = np.minimum(sl.lengths[:count], len(chain) - 1)
            ends = np.array(chain, dtype=np.int32)[lengths]
            rest = sl.rest
            node_state = _node_states(auto, rest, q)
            at = node_state[rest.token_nodes]
            ok = at >= 0
            trie, _ = self._trie_parts()
            origin = rest.__dict__["origin"]
            alive = np.flatnonzero(node_state >= 0)
            full = origin[alive]
            br = np.asarray(branching)[node_state[alive]] & (trie.num_children[full] > 0)
            branches = list(zip(full[br].tolist(), node_state[alive[br]].tolist()))
            return _Walk(
                np.concatenate([ids, rest.token_ids[ok]]), np.concatenate([ends, at[ok]]).astype(np.int32), branches
            )
        return None

    def _walk_numpy(self, auto: _Auto, q: int) -> _Walk:
        """The whole trie, level by level (as :func:`.index.walk_state`)."""
        trie, _ = self._trie_parts()
        node_state = _node_states(auto, trie, q)
        at = node_state[trie.token_nodes]
        ok = at >= 0
        alive = np.flatnonzero(node_state >= 0)
        br = alive[np.asarray(auto.branching)[node_state[alive]] & (trie.num_children[alive] > 0)]
        return _Walk(trie.token_ids[ok], at[ok], list(zip(br.tolist(), node_state[br].tolist())))

    def _ci(self, a: int, q: int, node: int, data: int = 0) -> _Frame:
        key = (a, q, node, data)
        got = self._cis.get(key)
        if got is not None:
            return got
        if key in self._ci_active:  # a call cycle that reads no byte: nothing new down this way
            return _Frame(_EMPTY_IDS, (), 0)
        self._ci_active.add(key)
        try:
            walk = self._walk(a, q, node)
            auto = self._auto(a)
            dists = self._dists
            ids, ends = walk.ids, walk.ends
            if auto.guards and ids.size:  # (a token may not end where only written keys go on)
                dead = self._dead(a, data)
                if dead:
                    keep = ~np.isin(ends, list(dead))
                    ids, ends = ids[keep], ends[keep]
            parts = [ids]
            umax = int(self._dist_vec(a, data)[ends].max(initial=0)) if dists is not None else 0
            pops: list[int] = []
            for m, p in walk.branches:
                if auto.finals[p]:
                    pops.append(m)
                for k, r in auto.calls.get(p, ()):
                    callee = self._ci(k, 0, m)
                    parts.append(callee.ids)
                    back = self._dist(a, r, data) if dists is not None else 0
                    umax = max(umax, callee.umax + back) if callee.ids.size else umax
                    for m2 in callee.pops:
                        rest = self._ci(a, r, m2, data)
                        parts.append(rest.ids)
                        if rest.ids.size:
                            umax = max(umax, rest.umax)
                        pops.extend(rest.pops)
                for g, r in auto.guards.get(p, ()):
                    passed = self._guard(a, g, data)
                    if passed is not None:  # (zero-width: the same frame goes on with new data)
                        rest = self._ci(a, r, m, passed)
                        parts.append(rest.ids)
                        if rest.ids.size:
                            umax = max(umax, rest.umax)
                        pops.extend(rest.pops)
            ids = parts[0] if len(parts) == 1 else np.unique(np.concatenate(parts))
            got = _Frame(ids, tuple(dict.fromkeys(pops)), umax)
        finally:
            self._ci_active.discard(key)
        if len(self._cis) >= _CI_CACHE:
            self._cis.clear()
        self._cis[key] = got
        return got

    def _compute_mask(self, state: int) -> np.ndarray:
        with self._busy:
            return self._compute_mask_unlocked(state)

    def _compute_mask_unlocked(self, state: int) -> np.ndarray:
        if not 0 <= state < len(self._configs):
            raise ValueError(f"{state} is not a state of this guide (it has {len(self._configs)} so far)")
        parts: list[_Frame] = []
        seen: set[tuple[int, int]] = set()
        deep = False
        for sid in self._configs[state]:
            self._collect(sid, 0, parts, seen)
            # (one token pushes far fewer than max_depth // 2 frames: each push reads an opening byte)
            deep = deep or self._depths[sid] > self.max_depth // 2
        mask = np.zeros(self.vocabulary.size, dtype=bool)
        for frame in parts:
            frame.add_to(mask)
        if deep:  # near the nesting bound: the frames' tokens may push past it, so check each
            for t in np.flatnonzero(mask).tolist():
                if self.next_state(state, t) < 0:
                    mask[t] = False
        if self.is_final(state):
            mask[self._eos] = True
        elif not mask.any():
            raise VocabularyError(
                f"no token of {self.vocabulary!r} can continue from state {state} of {self!r}: "
                "the vocabulary cannot spell the bytes the constraint needs next, or the output "
                f"would nest deeper than max_depth={self.max_depth}"
            )
        mask.flags.writeable = False
        with self._lock:
            if len(self._masks) >= self._max_masks:
                self._masks.pop(next(iter(self._masks)), None)
            self._masks.setdefault(state, mask)
        return mask

    def _reachable(self) -> list[int]:
        """The automata the root reaches by calls (all built)."""
        reach = [0]
        seen = {0}
        for k in reach:
            for calls in self._auto(k).calls.values():
                for j, _ in calls:
                    if j not in seen:
                        seen.add(j)
                        reach.append(j)
        return reach

    def _collect(self, sid: int, node: int, parts: list[_Frame], seen: set[tuple[int, int]]) -> None:
        if (sid, node) in seen:
            return
        seen.add((sid, node))
        a, q, parent, data = self._stacks[sid]
        frame = self._ci(a, q, node, data)
        parts.append(frame)
        if parent >= 0:
            for m in frame.pops:
                self._collect(parent, m, parts, seen)

    def precompute(self, states: Iterable[int] | None = None) -> "PushdownGuide":
        """Compute masks eagerly: by default, build every automaton the root reaches (built on
        first use otherwise: ~20 ms each, paid by the token that first enters one) and the
        initial state's mask; states are made lazily, so there is no "every state"."""
        if states is None:
            self._reachable()
            states = (self.initial_state,)
        for s in states:
            self.token_mask(s)
        return self

    # -- distances and budgets -----------------------------------------------------------------

    def _distances_all(self) -> dict[int, np.ndarray]:
        """Per automaton (every one the root reaches), tokens that surely take each state to a
        final state (see :mod:`.distance`: a shortest byte path spelled with the longest tokens
        along it), a call costing its callee's; a fixpoint over the call graph. The same in
        bytes is kept for ``min_length(unit="bytes")``."""
        dists = self._dists
        if dists is not None:
            return dists
        with self._busy:
            if self._dists is None:
                self._dists = self._distances_unlocked()
            return self._dists

    def _distances_unlocked(self) -> dict[int, np.ndarray]:
        reach = self._reachable()
        callers: dict[int, set[int]] = {}
        for k in reach:
            for calls in self._auto(k).calls.values():
                for j, _ in calls:
                    callers.setdefault(j, set()).add(k)
        shortest = {k: _INF for k in reach}
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
            auto = self._auto(k)
            d = _dijkstra(auto, shortest)
            out[k] = d
            start = int(d[0]) if not auto.guards else self._guarded_search(k, 0, 0, shortest)
            if start < shortest[k]:
                shortest[k] = start
                for c in callers.get(k, ()):
                    if c not in queued:
                        queued.add(c)
                        work.append(c)
        self._spells_bytes = _reads_spelled([self._auto(k) for k in reach], _single_bytes(self.vocabulary))
        for d in out.values():  # (states inside call paths are never reached: their distance stays _INF)
            d.flags.writeable = False
        self._bdists, self._bshortest = out, shortest
        tokens = dict(shortest)
        refined: dict[int, np.ndarray] = {}
        for _ in range(64):  # (token counts only go down from the byte counts: a few rounds)
            changed = False
            for k in reach:
                auto = self._auto(k)
                if auto.guards:
                    refined[k] = out[k]
                    start = self._guarded_search(k, 0, 0, tokens)
                else:
                    refined[k] = _spelled_distances(auto, out[k], shortest, tokens, self.vocabulary)
                    start = int(refined[k][0])
                if start < tokens[k]:
                    tokens[k] = start
                    changed = True
            if not changed:
                break
        for d in refined.values():
            d.flags.writeable = False
        self._cis.clear()  # (frames computed without distances carry no bound)
        self._shortest = tokens
        return refined

    def _dist(self, a: int, q: int, data: int, unit: str = "tokens") -> int:
        """Tokens (or bytes) from state ``q`` of automaton ``a`` to a final state, given the
        frame data (an object's keys written: its required keys must be written before it closes)."""
        auto = self._auto(a)
        base = self._distances_all()[a] if unit == "tokens" else self._bdists[a]
        if not auto.guards:
            return int(base[q])
        key = (a, q, data, unit)
        got = self._guard_dists.get(key)
        if got is None:
            shortest = self._shortest if unit == "tokens" else self._bshortest
            got = self._guard_dists[key] = self._guarded_search(a, q, data, shortest)
        return got

    def _guarded_search(self, a: int, q: int, data: int, shortest: dict[int, int]) -> int:
        """Dijkstra over (state, data, passed a guard yet): an optional key is written only to
        finish the one being spelled (before any guard), never to get anywhere sooner. A call
        weighs ``shortest[callee]``."""
        auto = self._auto(a)
        required = self.network.required.get(a, 0)
        heap = [(0, q, data, 0)]
        best: dict[tuple[int, int, int], int] = {(q, data, 0): 0}
        explored = 0
        while heap:
            cost, s, d, passed = heapq.heappop(heap)
            if best.get((s, d, passed), _INF) < cost:
                continue
            if auto.finals[s]:
                return cost
            explored += 1
            if explored > 200_000:
                raise CompileBudgetExceeded("states searched for the distance of an object with required keys", 200_000)
            moves: list[tuple[int, int, int, int]] = [(cost + 1, t, d, passed) for t in set(auto.edges(s).values())]
            for k, r in auto.calls.get(s, ()):
                if shortest.get(k, _INF) < _INF:
                    moves.append((cost + shortest[k], r, d, passed))
            for g, r in auto.guards.get(s, ()):
                nd = self._guard(a, g, d)
                if nd is None or (g != CLOSE_GUARD and not required >> g & 1 and passed):
                    continue
                moves.append((cost, r, nd, 1))
            for c, t, nd, np_ in moves:
                if c < best.get((t, nd, np_), _INF):
                    best[(t, nd, np_)] = c
                    heapq.heappush(heap, (c, t, nd, np_))
        return _INF

    def _dist_vec(self, a: int, data: int) -> np.ndarray:
        """:meth:`_dist` of every state of ``a`` (cached per frame data)."""
        auto = self._auto(a)
        if not auto.guards:
            return self._distances_all()[a]
        key = (a, data)
        got = self._dist_vecs.get(key)
        if got is None:
            got = self._dist_vecs[key] = np.array(
                [self._dist(a, s, data) for s in range(auto.dfa.num_states)], dtype=np.int64
            )
        return got

    def _tail(self, sid: int, unit: str = "tokens") -> int:
        """Tokens (or bytes) the frames of stack ``sid`` need to finish (its top frame's too)."""
        key = sid if unit == "tokens" else ~sid
        got = self._tails.get(key)
        if got is None:
            a, q, parent, data = self._stacks[sid]
            got = self._dist(a, q, data, unit) + (0 if parent < 0 else self._tail(parent, unit))
            self._tails[key] = got
        return got

    def distance(self, state: int) -> int:
        """Tokens that surely finish ``state`` (bytes along a shortest completion, each byte a
        token: see :meth:`Guide.min_length`)."""
        if not 0 <= state < len(self._configs):
            raise ValueError(f"{state} is not a state of this guide (it has {len(self._configs)} so far)")
        self._check_spelled()
        return min(self._tail(s) for s in self._configs[state])

    def _check_spelled(self) -> None:
        self._distances_all()
        if not self._spells_bytes:
            raise VocabularyError(
                f"{self.vocabulary!r} has no single-byte token for some byte the constraint reads, "
                "so token budgets cannot be guaranteed for a pushdown guide"
            )

    def min_length(self, state: int = 0, *, unit: str = "tokens") -> int:  # type: ignore[override]
        if unit not in ("tokens", "bytes"):
            raise ValueError(f"unit must be 'tokens' or 'bytes', not {unit!r}")
        if unit == "bytes":
            self._distances_all()
            return min(self._tail(s, "bytes") for s in self._configs[state])
        return self.distance(state)

    @property
    def spells_every_byte(self) -> bool:
        self._distances_all()
        return self._spells_bytes

    def effective_budget(self, state: int, budget: int | None) -> int | None:
        if budget is None:
            return None
        if not 0 <= state < len(self._configs):
            raise ValueError(f"{state} is not a state of this guide (it has {len(self._configs)} so far)")
        need = self.distance(state)
        if budget < need or (budget < 1 and not self.is_final(state)):
            raise UnsatisfiableConstraint(
                f"{self!r} needs at least {need} more tokens from state {state} to complete, "
                f"but the budget leaves {budget}; raise max_new_tokens"
            )
        largest = self._max_next.get(state)
        if largest is None:
            seen: dict[tuple[int, int], int] = {}
            with self._busy:
                largest = max(self._largest(sid, 0, seen) for sid in self._configs[state])
            self._max_next[state] = largest
        return None if budget - 1 >= largest else budget

    def _largest(self, sid: int, node: int, seen: dict[tuple[int, int], int]) -> int:
        """An upper bound on the distance after any token read from stack ``sid`` from ``node``."""
        key = (sid, node)
        if key in seen:
            return seen[key]
        seen[key] = 0
        a, q, parent, data = self._stacks[sid]
        frame = self._ci(a, q, node, data)
        below = 0 if parent < 0 else self._tail(parent)
        out = frame.umax + below if frame.ids.size else 0
        if parent >= 0:
            for m in frame.pops:
                out = max(out, self._largest(parent, m, seen))
        seen[key] = out
        return out

    def _budget_mask(self, state: int, budget: int) -> np.ndarray:
        with self._busy:
            return self._budget_mask_unlocked(state, budget)

    def _budget_mask_unlocked(self, state: int, budget: int) -> np.ndarray:
        key = (state, budget)
        mask = self._tight_cached(key)
        if mask is not None:
            return mask
        plain = self.token_mask(state)
        self._distances_all()
        ok = np.zeros(self.vocabulary.size, dtype=bool)
        stacks = self._configs[state]
        decided = np.zeros(self.vocabulary.size, dtype=bool)
        for sid in stacks:
            a, q, parent, data = self._stacks[sid]
            walk = self._walk(a, q, 0)
            below = 0 if parent < 0 else self._tail(parent)
            fits = self._dist_vec(a, data)[walk.ends] + below <= budget - 1
            ok[walk.ids[fits]] = True  # (that path alone finishes in time)
            if len(stacks) == 1:
                clean = _clean_tokens(self, a, q, walk)
                decided[walk.ids[clean]] = True  # (no other path: too far means rejected)
        for t in np.flatnonzero(plain & ~ok & ~decided).tolist():
            if t in self.vocabulary.eos_token_ids and self.vocabulary.tokens[t] is None:
                continue
            nxt = self.next_state(state, t)
            if nxt >= 0 and self.distance(nxt) <= budget - 1:
                ok[t] = True
        ok &= plain
        if self.is_final(state):
            ok[self._eos] = True
        ok.flags.writeable = False
        self._tight_store(key, ok)
        return ok

    # -- forced text ---------------------------------------------------------------------------

    def _next_bytes(self, stacks: Sequence[int]) -> int:
        out = 0
        seen: set[int] = set()
        todo = list(stacks)
        while todo:
            sid = todo.pop()
            if sid in seen:
                continue
            seen.add(sid)
            a, q, parent, data = self._stacks[sid]
            auto = self._auto(a)
            out |= auto.byte_set(q)
            if self._depths[sid] < self.max_depth:
                for k, _ in auto.calls.get(q, ()):
                    out |= self._first(k)
            todo.extend(self._guarded(a, q, parent, data))
            if parent >= 0 and auto.finals[q]:
                todo.append(parent)
        return out

    def forced_bytes(self, state: int) -> bytes:
        if not 0 <= state < len(self._configs):
            raise ValueError(f"{state} is not a state of this guide (it has {len(self._configs)} so far)")
        cached = self._forced.get(state)
        if cached is not None:
            return cached
        out = bytearray()
        stacks: Sequence[int] = self._configs[state]
        for _ in range(4096):  # (a guard: a forced chain ends at a final state or a choice)
            if any(self._stack_final(s) for s in stacks):
                break
            nxt = self._next_bytes(stacks)
            if nxt == 0 or nxt & (nxt - 1):
                break
            b = nxt.bit_length() - 1
            out.append(b)
            stacks = self._step(stacks, b)
        result = bytes(out)
        self._forced[state] = result
        return result


def _trim_live(table: np.ndarray, finals: np.ndarray, calls: dict[int, tuple[tuple[int, int], ...]]) -> np.ndarray:
    """``table`` (one column per byte) without edges into states that can no longer reach a
    final state (by bytes, or by calls: a callee is taken to be able to finish)."""
    n = table.shape[0]
    preds: list[list[int]] = [[] for _ in range(n)]
    src, col = np.nonzero(table >= 0)
    for s, t in zip(src.tolist(), table[src, col].tolist()):
        preds[t].append(s)
    for q, cs in calls.items():
        for _, r in cs:
            preds[r].append(q)
    live = finals.copy()
    todo = np.flatnonzero(finals).tolist()
    while todo:
        t = todo.pop()
        for s in preds[t]:
            if not live[s]:
                live[s] = True
                todo.append(s)
    out = table.copy()
    out[(out >= 0) & ~live[np.maximum(out, 0)]] = -1
    return out


def _node_states(auto: _Auto, trie: TokenTrie, q: int) -> np.ndarray:
    """The state every trie node's prefix reaches from ``q`` in ``auto`` (-1: dead)."""
    trans = auto.table
    cls = auto.cls_np
    node_state = np.full(trie.num_nodes, -1, dtype=np.int32)
    node_state[0] = q
    frontier = np.array([0], dtype=np.int64)
    states = np.array([q], dtype=np.int32)
    first, count, byte = trie.first_child, trie.num_children, trie.byte
    while frontier.size:
        cnt = count[frontier]
        children = _expand(first[frontier], cnt)
        if children.size == 0:
            break
        nxt = trans[np.repeat(states, cnt), cls[byte[children]]]
        alive = nxt >= 0
        frontier = children[alive]
        states = nxt[alive]
        node_state[frontier] = states
    return node_state


def _clean_tokens(guide: PushdownGuide, a: int, q: int, walk: _Walk) -> np.ndarray:
    """Per token of ``walk`` (from the root): whether no branch node lies strictly above its end,
    so that reading it inside the automaton is its only path."""
    if not walk.branches:
        return np.ones(walk.ids.size, dtype=bool)
    trie, _ = guide._trie_parts()
    branch = np.zeros(trie.num_nodes, dtype=bool)
    branch[[m for m, _ in walk.branches]] = True
    tainted = np.zeros(trie.num_nodes, dtype=bool)
    depth_start = _depth_starts(trie)
    for d in range(1, len(depth_start) - 1):
        lo, hi = depth_start[d], depth_start[d + 1]
        par = trie.parent[lo:hi]
        tainted[lo:hi] = tainted[par] | branch[par]
    where = np.full(int(trie.token_ids.max(initial=-1)) + 1, -1, dtype=np.int64)
    where[trie.token_ids] = trie.token_nodes
    return ~tainted[where[walk.ids]]


def _depth_starts(trie: TokenTrie) -> list[int]:
    """Where each depth's nodes begin in the trie's breadth-first order (cached per trie)."""
    cached = trie.__dict__.get("_depth_starts")
    if cached is None:
        depth = np.zeros(trie.num_nodes, dtype=np.int64)
        while True:  # (one round per depth level)
            nxt = depth[trie.parent] + 1
            nxt[0] = 0
            if np.array_equal(nxt, depth):
                break
            depth = nxt
        cached = np.searchsorted(depth, np.arange(int(depth.max(initial=0)) + 2)).tolist()
        object.__setattr__(trie, "_depth_starts", cached)
    return cached  # type: ignore[no-any-return]


def _spelled_distances(
    auto: _Auto, dist: np.ndarray, shortest: dict[int, int], tokens: dict[int, int], vocab: Vocabulary
) -> np.ndarray:
    """Tokens to finish from each state: along one shortest byte path (``dist``, calls weighing
    ``shortest[callee]`` bytes), the longest tokens that spell a stretch of it within this
    automaton, a call weighing ``tokens[callee]``. Consistent as :mod:`.distance` requires:
    the path's first token (or the callee's own first token) is a witness."""
    d = dist.tolist()
    n = len(d)
    words, prefixes = _token_sets(vocab)
    step: list[tuple[int, int] | None] = [None] * n  # (byte, next state) of a shortest byte step
    out = [_INF] * n
    for s in np.argsort(dist, kind="stable").tolist():
        if d[s] >= _INF:
            break
        if auto.finals[s]:
            out[s] = 0
            continue
        here = d[s]
        edge = next(((b, t) for b, t in sorted(auto.edges(s).items()) if d[t] == here - 1), None)
        if edge is None:  # a call is on the way
            call = next(((k, r) for k, r in auto.calls.get(s, ()) if shortest.get(k, _INF) + d[r] == here), None)
            out[s] = here if call is None else tokens[call[0]] + out[call[1]]
            continue
        step[s] = edge
        best = 1 + out[edge[1]]
        spelled, cur = bytes([edge[0]]), edge[1]
        while step[cur] is not None:
            b, cur = step[cur]  # type: ignore[misc]
            spelled += bytes([b])
            if spelled not in prefixes:
                break
            if spelled in words and 1 + out[cur] < best:
                best = 1 + out[cur]
        out[s] = best
    return np.array(out, dtype=np.int64)


def _dijkstra(auto: _Auto, shortest: dict[int, int]) -> np.ndarray:
    """Bytes to a final state from each state of ``auto``, calls weighing ``shortest[callee]``."""
    n = auto.dfa.num_states
    if not auto.calls and not auto.guards:
        d = distances_to_final(auto.table, auto.dfa.finals).astype(np.int64)
        return np.where(d < 0, _INF, d)
    src, col = np.nonzero(auto.table >= 0)
    dst = auto.table[src, col]
    preds: list[list[tuple[int, int]]] = [[] for _ in range(n)]
    for s, t in set(zip(src.tolist(), dst.tolist())):
        preds[t].append((s, 1))
    for q, calls in auto.calls.items():
        for k, r in calls:
            w = shortest.get(k, _INF)
            if w < _INF:
                preds[r].append((q, w))
    for q, guards in auto.guards.items():  # (zero-width; the frame data is left to PushdownGuide._dist)
        for _, r in guards:
            preds[r].append((q, 0))
    dist = [_INF] * n
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


def _reads_spelled(autos: list[_Auto], single: frozenset[int]) -> bool:
    """Whether every byte the automata read is a single-byte token (see :mod:`.distance`)."""
    for auto in autos:
        read = (auto.table >= 0).any(axis=0)[auto.cls_np]  # per byte
        if any(read[b] and b not in single for b in range(256)):
            return False
    return True


def _rebuild_pushdown(
    network: Network, vocabulary: Vocabulary, description: str, mask_cache_bytes: int, max_depth: int
) -> PushdownGuide:
    return PushdownGuide(network, vocabulary, description=description, mask_cache_bytes=mask_cache_bytes, max_depth=max_depth)
