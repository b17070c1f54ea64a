"""The guide over one automaton: :class:`DfaGuide`, the flat sibling of the pushdown guide.

A state is a state of a :class:`~structgen.automata.lazy.LazyAutomaton` (built as generation
reaches it). A mask is a walk of the vocabulary's token trie from that state: through a string
slice where every slice character leads one way (a string body), else depth-first through the
trie. A plain mask is computed for the state with its counters clamped to what the longest token
can tell apart, so a long string's positions share one mask; nearer a length bound, the mask of
the tokens short enough not to reach it still comes from a clamped state, and only the long
tokens are walked. The masks (packed, cached with a byte bound), the state after a token and the
forced bytes are native (``cpp/engine/dfa_guide.cpp``); the API (masks, budgets, forced text) is
:class:`~.base.Guide`'s.
"""

from __future__ import annotations

from typing import Any, Iterable

import numpy as np

from .. import _engine
from ..automata.dfa import ByteDFA
from ..automata.expr import ALL_BYTES, ExprPool, byte_mask
from ..automata.expr_rewrite import readable_bytes, restrict
from ..automata.expr_text import MaxObligation
from ..automata.lazy import LazyAutomaton
from ..vocab.vocabulary import Vocabulary
from .base import DEFAULT_MASK_CACHE_BYTES, NO_WORK, Guide, NativeRow, NativeWork
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

    __slots__ = ("automaton", "_core", "_finals", "_spells_bytes", "_dists", "_exact", "_obligation")

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
        self._finals = automaton.finals
        # (the native guide: packed masks cached within mask_cache_bytes, next states, forced bytes)
        self._core = _engine.DfaGuideCore(automaton, self._index.native, mask_cache_bytes, description, repr(vocabulary))
        read = readable_bytes(automaton.pool, automaton.root)
        self._spells_bytes = not read & ~self._index.native.single_bytes  # (every byte it reads is a token)
        self._dists: SpelledDistances | None = None
        self._exact: dict[int, int] | None = None
        self._obligation: MaxObligation | None = None

    def __repr__(self) -> str:
        what = f" {self.description}" if self.description else ""
        return f"<Guide{what}: {self.num_states} states so far over {self.vocabulary!r}>"

    def __reduce__(self) -> tuple[object, ...]:
        return (_rebuild, (self.automaton.pool, self.automaton.root, self.vocabulary, self.description, self._mask_cache_bytes))

    @property
    def memory_bytes(self) -> int:
        """Approximate bytes this guide holds: its automaton as built so far, the native masks
        (packed) and the bool masks handed out, cached so far. Bounded: at most ``mask_cache_bytes``
        of each kind of mask (default :data:`DEFAULT_MASK_CACHE_BYTES`), oldest dropped first."""
        masks = (len(self._masks) + len(self._tight)) * self.vocabulary.size
        forced = sum(len(b) + 40 for b in self._forced.values())
        return int(self.automaton.memory_bytes + self._core.memory_bytes + masks + forced)

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
        """The state after ``token_id``, or -1 if the token is not allowed in ``state`` (one native
        call: the token's bytes stepped through the automaton, its rows built as needed)."""
        return self._core.next_state(state, token_id)

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
        got: bytes = self._core.forced_bytes(state)  # (native, the chain's states memoised there too)
        self._forced[state] = got
        return got

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
        mask = self._core.bools(state).view(bool)  # (the native mask, EOS included; VocabularyError at a dead end)
        mask.flags.writeable = False
        with self._lock:
            if len(self._masks) >= self._max_masks:
                self._masks.pop(next(iter(self._masks)), None)
            self._masks.setdefault(state, mask)
        return mask

    def _packed(self, state: int) -> np.ndarray | None:
        self._check_state(state)
        return self._core.packed(state)

    def _prefetch(self, state: int) -> NativeWork:
        if not 0 <= state < self.automaton.num_states or self._core.is_cached(state):
            return NO_WORK
        return NativeWork((), ((self._core, state),))

    def _native_row(self, state: int) -> NativeRow | None:
        return NativeRow(self._core) if 0 <= state < self.automaton.num_states else None

    def _walk(self, state: int) -> tuple[np.ndarray, np.ndarray]:
        """``(token ids, next states)`` of every token allowed from ``state`` (one native walk of
        the trie)."""
        return self._core.walk_tokens(state)

    def _budget_token_set(self, state: int, budget: int) -> np.ndarray:
        ids, ends = self._walk(state)
        ok = self._distances_of(ends) <= budget - 1
        mask = np.zeros(self.vocabulary.size, dtype=bool)
        mask[ids[ok]] = True
        return mask

    def _token_set(self, state: int) -> np.ndarray:
        mask: np.ndarray = self.token_mask(state).copy()
        mask[self._eos] = False
        return mask

    def _slice_mask(self, state: int) -> np.ndarray | None:
        """The mask from a vocabulary slice plus a walk of the tokens outside it (EOS left out),
        or ``None`` where no slice's characters all lead one way (see
        :mod:`structgen.vocab.slices`): what the native mask takes when a slice applies."""
        self._check_state(state)
        got = self._core.slice_mask(state)
        return None if got is None else got.view(bool)


def _rebuild(pool: ExprPool, root: int, vocabulary: Vocabulary, description: str, mask_cache_bytes: int = 0) -> DfaGuide:
    return DfaGuide(
        LazyAutomaton(pool, root), vocabulary, description=description,
        mask_cache_bytes=mask_cache_bytes or DEFAULT_MASK_CACHE_BYTES,
    )
