"""Masks across frames: the tokens a pushdown guide allows, computed per frame and shared.

For a frame ``(a, q)`` (automaton ``a`` in state ``q``, with frame data) and a trie node ``n``
(the prefix of a token read so far), :meth:`FrameMasks.frame` is

- the tokens below ``n`` that are accepted *without leaving frame a*: read by ``a``'s own byte
  edges, or entering callees (and returning) on the way, and
- the trie nodes where ``a`` can return to its caller with bytes of the token still unread.

Both depend only on ``(a, q, n, data)``, never on the stack below, so they are computed once and
shared by every state of the guide (XGrammar's context-independent tokens, llguidance's trie
walk); a state's mask is the union of its top frame's tokens and, for each return node, the
caller's frame tokens from that node (a token like ``"},`` returns twice): :meth:`FrameMasks.collect`.

A frame's tokens come from a walk of the token trie inside one automaton
(:class:`~.token_walks.TokenWalk`): through a string slice where every slice character leads one
way, else depth-first through the trie (one native walk, :func:`structgen.vocab.trie.walk_frame`).
"""

from __future__ import annotations

from bisect import bisect_right
from typing import Callable, Sequence, TypeVar

import numpy as np

from .._engine import FrameSolver, NeedsFrameData, set_token_bits
from ..vocab.index import VocabularyIndex
from ..vocab.slices import MIXED, SLICES, StringSlice, counted_run, slice_chain
from ..vocab.trie import TokenTrie, walk_frame
from .distances import NetworkDistances
from .frame_tokens import FrameTokens, ids_of_words, united
from .item_frames import ItemFrames, PopSplit
from . import native_stacks
from .native_stacks import FRAME_CACHE, frame_data_automata, guarded_automata, held_automata, solved
from .network_view import AutomatonView, NetworkView
from .stacks import StackTable
from .token_walks import TokenWalk, distinct, stepped_chain

__all__ = ["FrameMasks"]

#: A frame that may return at this many trie nodes or more has its caller's tokens from all of
#: them cached as one (see :meth:`FrameMasks.returns`).
RETURNS_FROM = 8
_EMPTY_IDS = np.empty(0, dtype=np.int64)
_T = TypeVar("_T")


class FrameMasks(ItemFrames):
    """The walks and frame tokens of one pushdown guide, cached. Callers hold the guide's lock
    (``busy``): frames under computation are tracked to cut call cycles that read no byte."""

    __slots__ = (
        "view", "stacks", "distances", "index", "_trie", "_walks", "_frames", "_active", "_walk_bytes", "_frame_bytes", "_returns",
        "_solver", "_native", "_native_bytes", "_held", "_refused", "_needing", "_pop_splits", "_strings",
        "_data_frames", "_data_held", "_data_clamped",
    )

    def __init__(self, view: NetworkView, stacks: StackTable, distances: NetworkDistances, index: VocabularyIndex,
                 solver: FrameSolver | None = None) -> None:
        self.view = view
        self.stacks = stacks
        self.distances = distances
        self.index = index
        self._trie: TokenTrie | None = None
        self._walks: dict[tuple[int, ...], TokenWalk | None] = {}  # (None: no clamped walk)
        self._frames: dict[tuple[int, int, int, int, bool], FrameTokens] = {}
        self._active: set[tuple[int, int, int, int, bool]] = set()
        self._returns: dict[tuple[int, tuple[int, ...]], FrameTokens] = {}  # see returns()
        self._walk_bytes = self._frame_bytes = 0  # (kept as they are cached: a compile cache reads them often)
        # the native frames (False: none); the automata whose frames carry frame data stay here
        self._solver: FrameSolver | bool = solver if solver is not None else False
        self._held = frame_data_automata(view, held=True) if solver is not None and solver.has_frame_data else frozenset()
        self._native: dict[tuple[int, ...], FrameTokens] = {}  # (a, q, node), or with data (a, q, node, data)
        self._refused: set[tuple[int, ...]] = set()  # (native frames that need frame data: made here)
        self._needing: dict[tuple[int, int, int], tuple[int, ...] | None] = {}  # (see _free_of_items)
        self._pop_splits: dict[tuple[int, int, tuple[int, ...]], PopSplit | None] = {}  # (see _pops_split)
        self._strings: dict[int, bool] = {}  # (see _spells_strings)
        self._native_bytes = 0  # (the Python copies of native frames)
        # (unique arrays nested in items: the solver makes the frames with data but the held automata's, FrameSolver.data_frame)
        self._data_frames = solver is not None and solver.frames_only
        self._data_held = held_automata(view) if self._data_frames else frozenset()
        self._data_clamped = guarded_automata(view) if self._data_frames else frozenset()  # (their states clamped, as the solver's)

    @property
    def memory_bytes(self) -> int:
        """Approximate bytes held by the cached frames and walks."""
        solver = self._solver
        native = solver.memory_bytes if isinstance(solver, FrameSolver) else 0
        return self._frame_bytes + self._walk_bytes + native + self._native_bytes

    def _native_frame(self, a: int, q: int, node: int) -> FrameTokens | None:
        """The plain frame ``(a, q)`` from ``node`` made natively (cached), or ``None`` where
        it needs frame data (it enters a unique array or an object with key guards): see
        ``cpp/engine/frames.h``."""
        solver = self.solver
        if solver is None:
            return None
        q = self.view.auto(a).auto.clamped(q, self.index.longest_token)  # (as the solver keys it: states alike share one copy)
        key = (a, q, node)
        got = self._native.get(key)
        if got is None:
            if key in self._refused:
                return None
            try:
                ids, pops, words, size = self.solved(solver, lambda: solver.frame(a, q, node))
            except NeedsFrameData:
                self._refused.add(key)
                return None
            got = self._kept_native(key, ids, pops, words, size)
        return got

    def _kept_native(self, key: tuple[int, ...], ids: np.ndarray, pops: np.ndarray, words: np.ndarray | None, size: int) -> FrameTokens:
        """A native frame (``FrameSolver.frame``'s or ``data_frame``'s answer) as frame tokens, cached under ``key``."""
        if words is None:
            got = FrameTokens(ids, tuple(pops.tolist()), 0)
        else:  # (a string slice's tokens: packed, listed only if read)
            words.flags.writeable = False
            packed = words
            got = FrameTokens(lambda: ids_of_words(packed, len(self.index.tokens)), tuple(pops.tolist()), 0, size=size,
                              words=lambda: packed)
        if len(self._native) + len(self._refused) >= FRAME_CACHE:
            self._native.clear()
            self._refused.clear()
            self._native_bytes = 0
        self._native_bytes += got.size * 8 + 16 * len(got.pops) + 64
        self._native[key] = got
        return got

    def _native_data_frame(self, a: int, q: int, node: int, data: int) -> FrameTokens | None:
        """The frame ``(a, q, data)`` from ``node`` made natively with its data (``DataMasks::frame_of``, cached) where the
        solver shares the data for the frames only; ``None`` where it is a held automaton's or enters one (made here)."""
        solver = self.solver
        assert solver is not None
        if not data or a in self._data_clamped:  # (as the solver keys it: states alike share one copy)
            q = self.view.auto(a).auto.clamped(q, self.index.longest_token)
        key = (a, q, node, data)
        got = self._native.get(key)
        if got is None:
            if key in self._refused:
                return None
            try:
                ids, pops, words, size = self.solved(solver, lambda: solver.data_frame(a, q, node, data))
            except NeedsFrameData:
                self._refused.add(key)
                return None
            got = self._kept_native(key, ids, pops, words, size)
        return got

    def unmade_roots(self, tops: Sequence[tuple[int, int, int, int]]) -> list[tuple[int, int]]:
        """Of stacks ``tops`` (``(a, q, parent, data)``), the root frames ``(a, q)`` (``q`` clamped) that
        the solver would make and that are not cached here: a batch makes them on native threads first."""
        longest = self.index.longest_token
        out = []
        for a, q, _, data in tops:
            if data or a in self._held:
                continue
            q = self.view.auto(a).auto.clamped(q, longest)
            if (a, q, 0) not in self._native:
                out.append((a, q))
        return out

    @property
    def solver(self) -> FrameSolver | None:
        """The native frames (:func:`.native_stacks.native_solver`), or ``None`` (the Python
        engine: ``pushdown.NATIVE`` off)."""
        solver = self._solver
        return solver if isinstance(solver, FrameSolver) else None

    def solved(self, solver: FrameSolver, ask: Callable[[], _T]) -> _T:
        """``ask()`` of the solver, handing it the automata it reaches first (:func:`.native_stacks.solved`)."""
        return solved(solver, self.view, ask)

    def _keep_walk(self, key: tuple[int, ...], got: TokenWalk | None) -> None:
        if len(self._walks) >= FRAME_CACHE:
            self._walks.clear()
            self._walk_bytes = 0
        if got is not None and key not in self._walks:
            self._walk_bytes += got.size * 16 + 64
        self._walks[key] = got

    @property
    def trie(self) -> TokenTrie:
        """The vocabulary's token trie."""
        trie = self._trie
        if trie is None:
            trie = self._trie = self.index.trie
        return trie

    # -- walks inside one automaton ------------------------------------------------------------

    def walk(self, a: int, q: int, node: int, exact: bool = True) -> TokenWalk:
        """The tokens below ``node`` read by automaton ``a`` from state ``q`` (cached). Not ``exact`` (a plain frame's
        walk; a distance needs the exact one): where ``q`` is a string body, from ``q`` with its counters clamped to
        what the tokens below ``node`` can tell apart (:meth:`.LazyAutomaton.clamped_head`, the node's
        :attr:`~.TokenTrie.height`): the same tokens, and the states they end in read those tokens' bytes alike. The
        positions of a string under a length bound then share walks (see :meth:`rest_walk`)."""
        auto = self.view.auto(a)
        if not exact and node:
            q = auto.auto.clamped_head(q, int(self.trie.height[node]))
        key = (a, q, node, exact)
        got = self._walks.get(key)
        if got is None:
            got = None
            if not node and self._wide(auto, q):  # (a wide state may be a string's body)
                got = self.sliced_walk(a, auto, q, exact)
            if got is None:
                got = self.trie_walk(auto, q, node)
            self._keep_walk(key, got)
        return got

    @staticmethod
    def _wide(auto: AutomatonView, q: int) -> bool:
        """Whether ``q`` may read more than 16 distinct first bytes (read off its expression,
        an over-approximation: no row is built for it)."""
        pool = auto.auto.pool
        return pool.firsts.first_bytes(auto.auto.exprs[q]).bit_count() > 16

    def trie_walk(self, auto: AutomatonView, q: int, node: int | tuple[int, ...], trie: TokenTrie | None = None,
                  clamp: bool = False) -> TokenWalk:
        """Depth-first from ``node`` in state ``q`` (:func:`~structgen.vocab.trie.walk_frame`,
        native); ``node`` may be several nodes, none below another. ``trie``: the
        vocabulary's, or a trie cut out of it (its nodes, not the vocabulary's, are in the
        branches). ``clamp``: a walk of long tokens, not exact (see
        :func:`~structgen.vocab.trie.walk_trie`)."""
        trie = trie or self.trie
        ids, ends, bnodes, bstates = walk_frame(auto.auto, trie, node, q, clamp)
        roots = [node] if isinstance(node, int) else node
        branches = [(m, q) for m in roots if trie.num_children[m]] if auto.branching(q) else []
        return TokenWalk(ids, ends, branches, inner=(bnodes, bstates))

    def sliced_walk(self, a: int, auto: AutomatonView, q: int, exact: bool = True) -> TokenWalk | None:
        """A root walk from a state where every character of a slice leads one way (a string
        body): the slice tokens from the vocabulary's precomputed slice, the rest walked in its
        own small trie (see :mod:`structgen.vocab.slices`). ``None`` where no slice applies, or
        where a state along the slice's chain may call or return. Not ``exact``: the rest is
        walked from ``q`` clamped to the rest trie's height, so the positions of a long string
        share that walk (see :meth:`walk`)."""
        for k in range(len(SLICES)):
            first = auto.slice_successor(q, k)
            if first == MIXED or first < 0:
                continue
            sl = self.index.string_slice(k)
            run = counted_run(auto.auto, q, k, sl.longest)  # (a string body: read off its counters)
            if run is not None:
                m, branches_on_the_way = run
                if branches_on_the_way:
                    continue

                def chain_of(q: int = q, k: int = k, sl: StringSlice = sl) -> list[int]:
                    return slice_chain(auto.auto, q, k, sl.longest)  # type: ignore[return-value]
            else:
                stepped = stepped_chain(auto, q, k, sl.longest)
                if not stepped:
                    continue
                m = sl.longest if len(stepped) > 1 and stepped[-1] == stepped[-2] else len(stepped) - 1

                def chain_of(stepped: list[int] = stepped) -> list[int]:
                    return stepped
            count = int(np.searchsorted(sl.lengths, m, side="right"))
            rest = self.rest_walk(a, auto, q, k, exact)

            def ends(sl: StringSlice = sl, count: int = count, rest: TokenWalk = rest) -> np.ndarray:
                return sl.ends_along(chain_of(), count, rest.ends)

            def ids(sl: StringSlice = sl, count: int = count, rest: TokenWalk = rest) -> np.ndarray:
                return np.concatenate([sl.by_length[:count], rest.ids])

            def words(sl: StringSlice = sl, m: int = m, rest: TokenWalk = rest) -> np.ndarray:
                out = sl.packed_up_to(m).copy()
                set_token_bits(out, rest.ids)
                return out

            return TokenWalk(ids, ends, [], (rest,), size=count + rest.size, words=words, sliced=(sl, m, rest))
        return None

    def rest_walk(self, a: int, auto: AutomatonView, q: int, k: int, exact: bool, cut: int = 0) -> TokenWalk:
        """The tokens of slice ``k``'s rest trie (``cut``: its tokens of at most, or for ``-cut``
        more than, ``cut`` bytes) read from ``q`` (cached); their branches as nodes of the
        vocabulary's trie. Not ``exact`` (see :meth:`walk`): from ``q`` clamped to what the
        trie's tokens can tell apart, and where ``q`` is a string's position nearer its length
        bound than the longest rest token, the short rest tokens from ``q`` clamped for them (a
        walk shared by the positions) and only the long ones from ``q`` itself."""
        sl = self.index.string_slice(k)
        trie = sl.rest if not cut else sl.rest_cut(abs(cut))[cut < 0]
        if not exact:
            q = auto.auto.clamped_head(q, int(trie.height[0]))
            if not cut and sl.cuttable:
                n, short = auto.auto.head_cut(q, sl.cuts(self.index.short_token_cuts))
                if n:
                    near = self.rest_walk(a, auto, short, k, exact, n)
                    far = self.rest_walk(a, auto, q, k, exact, -n)
                    root = [(0, q)] if auto.branching(q) else []
                    return TokenWalk(np.concatenate([near.ids, far.ids]), lambda: np.concatenate([near.ends, far.ends]), root, (near, far))
        key = (a, q, -2 - k, exact, cut)  # (node -2 - k: the rest of slice k, from the root)
        got = self._walks.get(key)
        if got is None:
            assert trie.origin is not None  # (the rest trie is cut out of the full one)
            ids, ends, bnodes, bstates = walk_frame(auto.auto, trie, 0, q, cut < 0 and not exact, self.trie)
            branches = [(0, q)] if auto.branching(q) and not cut else []
            got = TokenWalk(ids, ends, branches, inner=(bnodes, bstates))
            self._keep_walk(key, got)
        return got

    def full_walk(self, auto: AutomatonView, q: int, trie: TokenTrie | None = None) -> TokenWalk:
        """Every token of ``trie`` (default: the vocabulary's) read from ``q`` (a root walk)."""
        return self.trie_walk(auto, q, 0, trie)

    def clamped_walk(self, a: int, q: int) -> TokenWalk | None:
        """The root walk of ``q`` where what ``q`` reads first (a string under a length bound, an intersection with its
        length term, or a counted repetition such as a pattern's ``{2,62}``) has a counter that a token of ``n`` bytes
        cannot reach but the longest could, ``n`` the longest of :data:`~structgen.vocab.index.SHORT_TOKEN_CUTS` for
        which :meth:`.LazyAutomaton.head_cut` cuts it (and the next position shares the cut, where one does): the
        tokens of at most ``n`` bytes from the clamped state's walk (shared by the positions), the longer ones walked
        from ``q`` in their own trie. Past the head, the clamped state goes on in ``q``'s own states, so the calls and
        returns within ``n`` bytes are ``q``'s. ``None`` where nothing is cut (cached)."""
        key = (a, q, -1, False)  # (node -1: this walk, from the root)
        if key in self._walks:
            return self._walks[key]
        auto = self.view.auto(a)
        got: TokenWalk | None = None
        n, clamped = auto.auto.head_cut(q, self.index.short_token_cuts)
        if n:
            got = self._with_long_tokens(auto, q, n, self._short_walk(a, clamped, n))
        self._keep_walk(key, got)
        return got

    def _short_walk(self, a: int, clamped: int, n: int) -> TokenWalk:
        """The tokens of at most ``n`` bytes of the root walk of ``clamped`` (a string's state with its bound cut for
        them), with the branch points within ``n`` bytes: shared by every position of the string whose state clamps to
        ``clamped`` (cached: the filter reads every token of the walk)."""
        key = (a, clamped, -3 - n, False)  # (node -3 - n: the short tokens of this root walk)
        got = self._walks.get(key)
        if got is None:
            short = self.walk(a, clamped, 0, exact=False)
            starts = self.trie.depth_starts
            near = [(m, p) for m, p in short.branches if bisect_right(starts, m) - 1 <= n]
            lengths = self.index.token_lengths

            def listed() -> TokenWalk:
                keep = np.flatnonzero(lengths.take(short.ids) <= n)  # (see tokens_at)
                return TokenWalk(short.ids.take(keep), lambda: short.ends.take(keep), near)

            if short.sliced is None:
                got = listed()
            else:  # (a string slice's hundred thousand tokens: packed, filtered by one AND, listed only if read)
                sl, m, rest = short.sliced
                words = sl.packed_up_to(m) & self.index.short_words(n)
                set_token_bits(words, rest.ids[lengths.take(rest.ids) <= n])
                words.flags.writeable = False
                whole: list[TokenWalk] = []

                def one() -> TokenWalk:
                    if not whole:
                        whole.append(listed())
                    return whole[0]

                got = TokenWalk(lambda: one().ids, lambda: one().ends, near, size=int(np.bitwise_count(words.view(np.uint32)).sum()),
                                words=lambda: words)
            self._keep_walk(key, got)
        return got

    def _with_long_tokens(self, auto: AutomatonView, q: int, n: int, short: TokenWalk) -> TokenWalk:
        """``short`` and the tokens of more than ``n`` bytes read from ``q`` (their own trie)."""
        trie = self.index.long_tokens(n)
        long = self.trie_walk(auto, q, 0, trie, clamp=True)
        assert trie.origin is not None  # (cut out of the vocabulary's trie)
        starts = self.trie.depth_starts
        far = [(m, p) for m, p in ((int(trie.origin[m]), p) for m, p in long.branches) if bisect_right(starts, m) - 1 > n]
        ends = lambda: np.concatenate([short.ends, long.ends])  # noqa: E731
        packed = short.words
        if packed is None:
            return TokenWalk(np.concatenate([short.ids, long.ids]), ends, short.branches + far)

        def words(packed: Callable[[], np.ndarray] = packed) -> np.ndarray:
            out = packed().copy()
            set_token_bits(out, long.ids)
            return out

        return TokenWalk(lambda: np.concatenate([short.ids, long.ids]), ends, short.branches + far,
                         size=short.size + long.size, words=words)

    # -- frames --------------------------------------------------------------------------------

    def frame(self, a: int, q: int, node: int | tuple[int, ...], data: int = 0, bounded: bool = False) -> FrameTokens:
        """The tokens of frame ``(a, q, data)`` from trie node ``node`` (cached).

        A plain frame is computed for ``q`` with its counters clamped to what the longest token can
        tell apart (:meth:`.LazyAutomaton.clamped`): its tokens are ``q``'s, and states that differ
        only in large counters (a long string's length so far) share one frame. A ``bounded``
        frame also carries the farthest distance its tokens lead to (``umax``), so it is computed
        for ``q`` itself; only budgets near their end need one (see :meth:`farthest`). ``node``
        may be several nodes, none below another (not for a bounded frame): the frame's tokens
        from each of them, walked at once."""
        if not (bounded or data) and type(node) is int and self._solver is not False and a not in self._held:
            native = self._native_frame(a, q, node)
            if native is not None:
                return native
        recording = a in self.view.recording
        if recording:  # (an item's text changes where it may return; its tokens, only in danger)
            key = self.view.unique.mask_key(data)  # type: ignore[union-attr]
            if data and not key and not bounded:
                return self.frame(a, q, node)  # (out of danger: the plain frame, natively where the item calls nothing)
            data = key
        if self._data_frames and not bounded and type(node) is int and a not in self._data_held and native_stacks.NATIVE_DATA:
            native = self._native_data_frame(a, q, node, data)
            if native is not None:
                return native
        if not recording and data and not bounded and type(node) is int and a in self.view.arrays and self._free_of_items(a, q, node, data):
            data = 0  # (the frame of no item written: shared by the sets, one per item text where an item returns mid-token)
        if not bounded and not data:
            q = self.view.auto(a).auto.clamped(q, self.index.longest_token)
        key = (a, q, node, data, bounded)
        got = self._frames.get(key)
        if got is not None:
            return got
        if key in self._active:  # a call cycle that reads no byte: nothing new down this way
            return FrameTokens(_EMPTY_IDS, (), 0)
        self._active.add(key)
        try:
            got = self._frame(a, q, node, data, bounded)
        finally:
            self._active.discard(key)
        if len(self._frames) >= FRAME_CACHE:
            self._frames.clear()
            self._frame_bytes = 0
        if key not in self._frames:
            self._frame_bytes += got.size * 8 + 64
        self._frames[key] = got
        return got

    def _frame(self, a: int, q: int, node: int | tuple[int, ...], data: int, bounded: bool) -> FrameTokens:
        view, dist = self.view, self.distances
        if data and a in view.recording:
            return self.item_in_danger(a, q, node, data, bounded)
        if isinstance(node, tuple):  # (several nodes at once: see returns())
            walk = self.trie_walk(view.auto(a), q, node)
        else:
            walk = (not (node or data or bounded) and self.clamped_walk(a, q)) or self.walk(a, q, node, exact=bounded)
        auto = view.auto(a)
        ids: np.ndarray | None = None  # (the walk's tokens, read only where some are dropped: a slice's are many)
        array = a in view.arrays
        if (auto.has_guards or array and data) and walk.size:
            # (a token may not end where only written keys, or only items written before, go on)
            ids, ends = walk.ids, walk.ends
            unique, inverse = distinct(ends)
            dead = np.array([self.no_item_left(a, e, data) if array else view.is_dead(a, e, data) for e in unique], dtype=bool)
            if dead.any():
                keep = ~dead[inverse]
                ids, ends = ids[keep], ends[keep]
        else:
            ends = walk.ends if bounded else None
        parts: list[FrameTokens | np.ndarray] = []  # (frames stay frames: a packed one is OR-ed, never listed)
        umax = int(dist.dists(a, data, ends).max(initial=0)) if bounded else 0
        split = walk.split(auto)
        pops: list[int] = list(split.pops)
        calls = split.calls
        solver = None if bounded or data or array or split.guards or a in self._held else self.solver
        if solver is not None and calls:
            # (the callees below the root and the returns after them, natively: a grammar's root
            # walk calls at thousands of nodes; the pops come back each once)
            deep = [c for c in calls if c[0] > 0]
            if deep:
                nodes, callees, rets = [m for m, _, _ in deep], [k for _, k, _ in deep], [r for _, _, r in deep]
                try:
                    more, pops_once = self.solved(solver, lambda: solver.expand(a, pops, nodes, callees, rets))
                except NeedsFrameData:  # (a callee with frame data, or one that enters one: each below)
                    pass
                else:
                    if more.size:
                        parts.append(more)
                    pops = pops_once.tolist()
                    calls = [c for c in calls if c[0] <= 0]
        for m, k, r in calls:
            callee = self.frame(k, 0, m, view.callee_data(a, data) if array else 0, bounded)
            parts.append(callee)
            back = dist.dist(a, r, data) if bounded else 0
            umax = max(umax, callee.umax + back) if callee.size else umax
            for m2 in callee.pops:
                after = view.unique.after_item(data, self.trie.bytes_between(m, m2)) if array else data  # type: ignore[union-attr]
                if after < 0:
                    continue
                rest = self.frame(a, r, m2, after, bounded)
                parts.append(rest)
                if rest.size:
                    umax = max(umax, rest.umax)
                pops.extend(rest.pops)
        for m, g, r in split.guards:
            passed = view.pass_guard(a, g, data)
            if passed is not None:  # (zero-width: the same frame goes on with new data)
                rest = self.frame(a, r, m, passed, bounded)
                parts.append(rest)
                if rest.size:
                    umax = max(umax, rest.umax)
                pops.extend(rest.pops)
        if not parts and ids is None and walk.words is not None:
            return FrameTokens(lambda: walk.ids, tuple(dict.fromkeys(pops)), umax, size=walk.size, words=walk.words)
        own: FrameTokens | np.ndarray = ids if ids is not None else (
            walk.ids if walk.words is None else FrameTokens(lambda: walk.ids, (), 0, size=walk.size, words=walk.words))
        return united([own, *parts], len(self.index.tokens), tuple(dict.fromkeys(pops)), umax)

    def collect(self, sid: int, node: int, parts: list[FrameTokens], seen: set[tuple[int, int]]) -> None:
        """Add to ``parts`` the frames whose tokens make up stack ``sid``'s mask from ``node``:
        its top frame's, and its caller's from every node where the top frame may return."""
        if (sid, node) in seen:
            return
        seen.add((sid, node))
        a, q, parent, data = self.stacks.stacks[sid]
        frame = self.frame(a, q, node, data)
        parts.append(frame)
        if parent < 0 or not frame.pops:
            return
        pops: Sequence[int] = frame.pops
        if len(pops) >= RETURNS_FROM:
            if a not in self.view.recording:
                if not self.stacks.nested:
                    parts.append(self.returns(parent, frame.pops))
                    return
            else:
                returned = self._new_values_return(sid, frame.pops, RETURNS_FROM)  # (a string item: its value at each pop is new)
                if returned is not None:
                    shared, pops = returned  # (the caller's own from the other pops, below)
                    parts.append(shared)
        for m in pops:
            caller = self.caller(sid, node, m)
            if caller >= 0:
                self.collect(caller, m, parts, seen)

    def returns(self, parent: int, pops: tuple[int, ...]) -> FrameTokens:
        """The tokens of stack ``parent`` (with what it returns to) from each of the trie nodes ``pops``, as one frame (cached):
        where a frame may return at many nodes (a string's closing quote inside many tokens), every position of the string
        returns at the same nodes, and the union is made once instead of once per mask."""
        key = (parent, pops)
        got = self._returns.get(key)
        if got is None:
            parts: list[FrameTokens] = []
            seen: set[tuple[int, int]] = set()
            a, q, grand, data = self.stacks.stacks[parent]
            if a in self.view.recording:
                for m in pops:
                    self.collect(parent, m, parts, seen)
            else:  # (the caller's frame from every node at once: one walk, not one per node)
                frame = self.frame(a, q, pops, data)
                parts.append(frame)
                if grand >= 0 and frame.pops:
                    if len(frame.pops) >= RETURNS_FROM:
                        parts.append(self.returns(grand, frame.pops))
                    else:
                        for m in frame.pops:
                            self.collect(grand, m, parts, seen)
            got = united(parts, len(self.index.tokens), (), 0)
            if len(self._returns) >= FRAME_CACHE:
                self._returns.clear()
            self._returns[key] = got
        return got

    def caller(self, sid: int, node: int, m: int) -> int:
        """The stack below ``sid`` once its top frame returns at trie node ``m`` of a token read
        from ``node`` on: the parent, or for an item of a unique array the array with the item's
        value added (-1: a value written before)."""
        a, _, parent, data = self.stacks.stacks[sid]
        if a not in self.view.recording:
            return self.stacks.read_below(parent, self.trie.bytes_between(node, m)) if self.stacks.nested else parent
        return self.stacks.returned(parent, a, data, self.trie.bytes_between(node, m))

    def farthest(self, sid: int, node: int, seen: dict[tuple[int, int], int]) -> int:
        """An upper bound on the distance after any token read from stack ``sid`` from ``node``."""
        key = (sid, node)
        if key in seen:
            return seen[key]
        seen[key] = 0
        a, q, parent, data = self.stacks.stacks[sid]
        frame = self.frame(a, q, node, data, bounded=True)
        below = 0 if parent < 0 else self.distances.tail(parent)
        out = frame.umax + below if frame.size else 0
        if parent >= 0:
            for m in frame.pops:
                caller = self.caller(sid, node, m)
                if caller >= 0:
                    out = max(out, self.farthest(caller, m, seen))
        seen[key] = out
        return out

    def single_path_tokens(self, walk: TokenWalk) -> np.ndarray:
        """Per token of ``walk`` (from the root): whether no branch node lies strictly above its
        end, so that reading it inside the automaton is its only path."""
        if not walk.branches:
            return np.ones(walk.ids.size, dtype=bool)
        trie = self.trie
        branch = np.zeros(trie.num_nodes, dtype=bool)
        branch[[m for m, _ in walk.branches]] = True
        tainted = np.zeros(trie.num_nodes, dtype=bool)
        depth_start = trie.depth_starts
        for d in range(1, len(depth_start) - 1):
            lo, hi = depth_start[d], depth_start[d + 1]
            par = trie.parent[lo:hi]
            tainted[lo:hi] = tainted[par] | branch[par]
        where = np.full(int(trie.token_ids.max(initial=-1)) + 1, -1, dtype=np.int64)
        where[trie.token_ids] = trie.token_nodes
        return ~tainted[where[walk.ids]]
