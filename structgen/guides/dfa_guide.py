"""The guide over one automaton: :class:`DfaGuide`, the flat sibling of the pushdown guide.

A state is a state of a :class:`~structgen.automata.lazy.LazyAutomaton` (built as generation
reaches it). A mask is a walk of the vocabulary's token trie from that state: through a string
slice where every slice character leads one way (a string body), else depth-first through the
trie (a compiled loop, :mod:`structgen.vocab.trie_walk`). A plain mask is computed for the
state with its counters clamped to what the longest token can tell apart, so a long string's
positions share one mask; nearer a length bound, the mask of the tokens short enough not to
reach it still comes from a clamped state, and only the long tokens are walked. The API (masks,
budgets, forced text) is :class:`~.base.Guide`'s.
"""

from __future__ import annotations

from typing import Iterable

import numpy as np

from ..automata.dfa import ByteDFA
from ..automata.expr import ALL_BYTES, ExprPool, byte_mask
from ..automata.expr_rewrite import readable_bytes, restrict
from ..automata.expr_text import MaxObligation
from ..automata.lazy import UNBUILT, LazyAutomaton
from ..vocab.slices import MIXED, SLICES, char_successor, slice_chain
from ..vocab.trie import walk_nodes, walk_tokens
from ..vocab.vocabulary import Vocabulary
from .base import DEFAULT_MASK_CACHE_BYTES, Guide
from .distances import INF, SpelledDistances, exact_token_distances

__all__ = ["DEFAULT_MASK_CACHE_BYTES", "EAGER_STATES", "DfaGuide"]

#: :meth:`DfaGuide.precompute` builds at most this many states (breadth first from the start).
EAGER_STATES = 256


class DfaGuide(Guide):
    """A :class:`~.base.Guide` over one automaton (a :class:`LazyAutomaton`, or a
    :class:`ByteDFA` that is wrapped into one): a state is an automaton state, and every int
    in ``range(num_states)`` is one (states are numbered as generation reaches them).

    Example:
        >>> import structgen
        >>> from structgen.automata.regex import regex_to_dfa
        >>> vocab = structgen.Vocabulary.from_bytes([b"ab", b"a", b"b", b""], eos_token_ids=[3])
        >>> guide = DfaGuide(regex_to_dfa("(ab)+"), vocab)
        >>> guide.allowed_token_ids(guide.initial_state).tolist()
        [0, 1]
        >>> s = guide.next_state(guide.initial_state, 0)
        >>> guide.is_final(s), guide.allowed_token_ids(s).tolist()
        (True, [0, 1, 3])
    """

    __slots__ = (
        "automaton", "_flat", "_finals", "_spells_bytes", "_dists", "_exact", "_succ", "_runs", "_obligation",
    )

    _STATES_NOTE = " so far"

    def __init__(
        self, automaton: LazyAutomaton | ByteDFA, vocabulary: Vocabulary, *, description: str = "",
        mask_cache_bytes: int = DEFAULT_MASK_CACHE_BYTES,
    ) -> None:
        super().__init__(vocabulary, description=description, mask_cache_bytes=mask_cache_bytes)
        if isinstance(automaton, ByteDFA):
            pool = ExprPool()
            automaton = LazyAutomaton(pool, pool.embed(automaton))
        missing = vocabulary.missing_bytes
        if missing:  # bytes no token holds: cut out, with every way that needs them
            pool = automaton.pool
            root = restrict(pool, automaton.root, ALL_BYTES & ~byte_mask(missing))
            if root != automaton.root:
                automaton = LazyAutomaton(pool, root)
        self.automaton = automaton
        self._flat = automaton.flat  # (the automaton's own array: it grows in place)
        self._finals = automaton.finals
        single = self._index.single_bytes
        read = readable_bytes(automaton.pool, automaton.root)
        self._spells_bytes = all(b in single for b in range(256) if read >> b & 1)
        self._dists: SpelledDistances | None = None
        self._exact: dict[int, int] | None = None
        self._succ: dict[tuple[int, int], int] = {}  # (state, slice) -> where every slice character leads
        self._runs: dict[tuple[int, int], int] = {}  # (state, slice) -> slice characters in a row that survive
        self._obligation: MaxObligation | None = None

    def __repr__(self) -> str:
        what = f" {self.description}" if self.description else ""
        return f"<Guide{what}: {self.num_states} states so far over {self.vocabulary!r}>"

    def __reduce__(self) -> tuple[object, ...]:
        return (_rebuild, (self.automaton.pool, self.automaton.root, self.vocabulary, self.description, self._mask_cache_bytes))

    @property
    def memory_bytes(self) -> int:
        """Approximate bytes this guide holds: its automaton as built so far and the masks cached
        so far. Bounded: at most ``mask_cache_bytes`` of masks (default
        :data:`DEFAULT_MASK_CACHE_BYTES`), oldest dropped first."""
        masks = (len(self._masks) + len(self._tight)) * self.vocabulary.size
        return int(self.automaton.memory_bytes + masks + sum(len(b) + 40 for b in self._forced.values()))

    @property
    def num_states(self) -> int:
        """Number of states built so far (every int in ``range(num_states)`` is a valid state)."""
        return self.automaton.num_states

    @property
    def is_empty(self) -> bool:
        """Whether no output at all is accepted (over this vocabulary)."""
        return self.automaton.is_empty

    def is_final(self, state: int) -> bool:
        """Whether the output may end in ``state``."""
        return 0 <= state < len(self._finals) and self._finals[state]

    def next_state(self, state: int, token_id: int) -> int:
        """The state after ``token_id``, or -1 if the token is not allowed in ``state``."""
        if state < 0 or state >= len(self._finals):
            return -1
        tok = self.vocabulary.tokens[token_id] if 0 <= token_id < self.vocabulary.size else None
        if tok is None:
            if token_id in self.vocabulary.eos_token_ids and self._finals[state]:
                return state
            return -1
        flat = self._flat
        for b in tok:
            t = flat[state * 256 + b]
            if t == UNBUILT:
                t = self.automaton.step(state, b)
            if t < 0:
                return -1
            state = t
        return state

    def accepts_bytes(self, data: bytes) -> bool:
        """Whether ``data`` (as a whole) is in the constraint's language."""
        return self.automaton.accepts(data)

    # -- distances -----------------------------------------------------------------------------

    def _spelled(self) -> SpelledDistances:
        got = self._dists
        if got is None:
            got = self._dists = SpelledDistances(self.automaton, self._index.trie)
        return got

    def distance(self, state: int) -> int:
        """Tokens that are guaranteed to take ``state`` to a final state (see
        :meth:`.Guide.distance` and :mod:`.distances`)."""
        if self._spells_bytes:
            return self._spelled().tokens_to_end(state)
        exact = self._exact
        if exact is None:
            exact = self._exact = exact_token_distances(self.automaton, self._index, repr(self))
        return exact.get(state, INF)

    def _byte_distance(self, state: int) -> int:
        return self._spelled().bytes_to_end(state)

    @property
    def spells_every_byte(self) -> bool:
        """Whether every byte the automaton reads is a single-byte token (see :meth:`min_length`)."""
        return self._spells_bytes

    def _distances_of(self, states: np.ndarray) -> np.ndarray:
        if states.size == 0:
            return np.zeros(0, dtype=np.int64)
        unique, inverse = np.unique(states, return_inverse=True)
        return np.array([self.distance(q) for q in unique.tolist()], dtype=np.int64)[inverse]

    def _farthest_bound(self, state: int) -> int | None:
        """The most bytes any state after ``state`` may still need (:class:`MaxObligation`): a
        token's distance is at most its bytes."""
        bound = self._obligation
        if bound is None:
            bound = self._obligation = MaxObligation(self.automaton.pool, {}, {})
        got = bound.of(self.automaton.exprs[state])
        return got if got < INF else None

    def _farthest_after(self, state: int) -> int:
        _, ends = self._walk(state)
        return int(self._distances_of(ends).max(initial=0))

    # -- forced text ---------------------------------------------------------------------------

    def _find_forced_bytes(self, state: int) -> bytes:
        auto = self.automaton
        chain: list[int] = []  # states along the forced chain, their forced bytes not yet known
        out = bytearray()
        s = state
        # Every state can reach a final state, so a chain of single-byte, non-final states cannot
        # loop; the bound is only a guard.
        for _ in range(1 << 20):
            known = self._forced.get(s)
            if known is not None:
                out += known
                break
            if self._finals[s]:
                break
            row = auto.row(s)
            alive = [b for b, t in enumerate(row) if t >= 0]
            if len(alive) != 1:
                break
            chain.append(s)
            out.append(alive[0])
            s = row[alive[0]]
        tail = bytes(out)
        for i, s in enumerate(chain):
            self._forced.setdefault(s, tail[i:])
        return tail if chain else self._forced.setdefault(state, b"")

    def _eager_states(self) -> Iterable[int]:
        """Breadth first from the start, at most :data:`EAGER_STATES` states."""
        auto = self.automaton
        order, seen = [0], {0}
        for q in order:
            if len(order) >= EAGER_STATES:
                break
            for t in auto.row(q):
                if t >= 0 and t not in seen and len(order) < EAGER_STATES:
                    seen.add(t)
                    order.append(t)
        return order

    # -- masks ---------------------------------------------------------------------------------

    def _compute_mask(self, state: int) -> np.ndarray:
        self._check_state(state)
        clamped = self.automaton.clamped(state, self._index.longest_token)
        if clamped != state:
            mask = self.token_mask(clamped)  # (the same tokens, EOS included: finality is kept)
        else:
            n, clamped = self.automaton.clamped_below(state, self._index.short_token_cuts)
            if not n:
                return super()._compute_mask(state)
            # the tokens of at most n bytes as from the clamped state, the longer ones walked
            mask = self.token_mask(clamped) & (self._index.token_lengths <= n)
            trie = self._index.long_tokens(n)
            mask[trie.token_ids[walk_nodes(self.automaton, trie, state)[trie.token_nodes] >= 0]] = True
            mask.flags.writeable = False
        with self._lock:
            if len(self._masks) >= self._max_masks:
                self._masks.pop(next(iter(self._masks)), None)
            self._masks.setdefault(state, mask)
        return mask

    def _walk(self, state: int) -> tuple[np.ndarray, np.ndarray]:
        """``(token ids, next states)`` of every token allowed from ``state`` (one compiled walk
        of the trie, :func:`~structgen.vocab.trie.walk_tokens`)."""
        return walk_tokens(self.automaton, self._index.trie, state)

    def _budget_token_set(self, state: int, budget: int) -> np.ndarray:
        ids, ends = self._walk(state)
        ok = self._distances_of(ends) <= budget - 1
        mask = np.zeros(self.vocabulary.size, dtype=bool)
        mask[ids[ok]] = True
        return mask

    def _token_set(self, state: int) -> np.ndarray:
        mask = self._slice_mask(state)
        if mask is None:
            mask = np.zeros(self.vocabulary.size, dtype=bool)
            mask[self._walk(state)[0]] = True
        return mask

    def _successor(self, q: int, k: int) -> int:
        key = (q, k)
        got = self._succ.get(key)
        if got is None:
            got = self._succ[key] = char_successor(self.automaton, q, k)
        return got

    def _run(self, q: int, k: int, longest: int) -> int:
        """How many slice-``k`` characters in a row survive from ``q`` (up to ``longest``), or -1
        when a state along the way does not lead one way on them."""
        key = (q, k)
        got = self._runs.get(key)
        if got is not None:
            return got
        symbolic = slice_chain(self.automaton, q, k, longest)
        if symbolic is not None:
            looping = len(symbolic) > 1 and symbolic[-1] == symbolic[-2]
            got = self._runs[key] = longest if looping else len(symbolic) - 1
            return got
        chain = [q]
        m = 0
        while m < longest:
            nxt = self._successor(chain[-1], k)
            if nxt == MIXED:
                m = -1
                break
            if nxt < 0:
                break
            m += 1
            if nxt == chain[-1]:  # a loop on every slice character: any number of them
                m = longest
                break
            known = self._runs.get((nxt, k))
            if known is not None:
                m = -1 if known < 0 else min(longest, m + known)
                break
            chain.append(nxt)
        self._runs[key] = m
        return m

    def _slice_mask(self, state: int) -> np.ndarray | None:
        """The mask from a vocabulary slice plus a walk of the tokens outside it, or ``None``
        where no slice's characters all lead one way (see :mod:`structgen.vocab.slices`).

        The first slice (a JSON string's characters) applies whenever its characters agree, even
        if they all die (its rest trie is small); a narrower one only where they lead on."""
        auto = self.automaton
        probe = [auto.step(state, b) for b in b"a0 {"]  # characters of the first slice; "a" of every slice
        for k in range(len(SLICES)):
            if (k == 0 and probe.count(probe[0]) < len(probe)) or (k and probe[0] < 0):
                continue  # cheaper than the slice's successors: they cannot all agree here
            first = self._successor(state, k)
            if first == MIXED or (k and first < 0):
                continue
            sl = self._index.string_slice(k)
            m = self._run(state, k, sl.longest)
            if m < 0:
                continue
            mask = sl.up_to(m).copy() if m else np.zeros(self.vocabulary.size, dtype=bool)
            reached = walk_nodes(auto, sl.rest, state)[sl.rest.token_nodes]
            mask[sl.rest.token_ids[reached >= 0]] = True
            return mask
        return None


def _rebuild(pool: ExprPool, root: int, vocabulary: Vocabulary, description: str, mask_cache_bytes: int = 0) -> DfaGuide:
    return DfaGuide(
        LazyAutomaton(pool, root), vocabulary, description=description,
        mask_cache_bytes=mask_cache_bytes or DEFAULT_MASK_CACHE_BYTES,
    )
