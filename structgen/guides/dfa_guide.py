"""The guide over one byte DFA: :class:`DfaGuide`, the flat sibling of the pushdown guide.

A state is a state of the automaton. A mask is a walk of the vocabulary's token trie from that
state: through a string slice where every slice character leads one way (a string body), by a
sparse depth-first walk where the state has few ways on, else level by level with numpy. The API
(masks, budgets, forced text) is :class:`~.base.Guide`'s.
"""

from __future__ import annotations

from typing import Iterable

import numpy as np

from ..automata.dfa import ByteDFA
from ..vocab.slices import MIXED, SLICES, char_successors
from ..vocab.trie import SparseWalker, TokenTrie, walk_state
from ..vocab.vocabulary import Vocabulary
from .base import DEFAULT_MASK_CACHE_BYTES, Guide
from .distances import spells_every_byte, token_distances

__all__ = ["DEFAULT_MASK_CACHE_BYTES", "EAGER_SLICE_STATES", "DfaGuide"]

#: Automata this large compute every slice's successors when the guide is built (smaller ones on
#: first use, where it costs well under a millisecond).
EAGER_SLICE_STATES = 20_000


class DfaGuide(Guide):
    """A :class:`~.base.Guide` over one :class:`ByteDFA`: a state is an automaton state, and every
    int in ``range(num_states)`` is one.

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
        "dfa",
        "_flat",
        "_width",
        "_classes",
        "_finals",
        "_trie",
        "_node_classes",
        "_spells_bytes",
        "_token_dist",
        "_live_bytes",
        "_char_next",
        "_rest_classes",
        "_sparse",
    )

    def __init__(
        self, dfa: ByteDFA, vocabulary: Vocabulary, *, description: str = "",
        mask_cache_bytes: int = DEFAULT_MASK_CACHE_BYTES,
    ) -> None:
        super().__init__(vocabulary, description=description, mask_cache_bytes=mask_cache_bytes)
        self.dfa = dfa
        # one flat list (state * width + class): a list per state would put num_states objects
        # under the garbage collector, whose full passes then stall a token for tens of ms
        self._flat: list[int] = dfa.transitions.ravel().tolist()
        self._width: int = dfa.transitions.shape[1]
        self._classes: list[int] = dfa.byte_classes.tolist()
        self._finals: list[bool] = dfa.finals.tolist()
        self._trie: TokenTrie | None = None  # the vocabulary's, fetched on the first walk
        self._node_classes: np.ndarray | None = None
        self._spells_bytes = spells_every_byte(dfa, vocabulary)
        self._token_dist: np.ndarray | None = None
        self._live_bytes: np.ndarray | None = None
        # string slices (see structgen.vocab.slices): per state, where every slice character leads
        self._char_next: dict[int, list[int]] = {}  # slice -> successor per state
        self._rest_classes: dict[int, np.ndarray] = {}
        self._sparse: SparseWalker | None = None  # built on the first full walk
        if dfa.num_states >= EAGER_SLICE_STATES:
            # ~25 ms per slice at 100k states: paid here (compile) rather than by one unlucky token
            for k in range(len(SLICES)):
                self._char_next[k] = char_successors(dfa, k).tolist()

    def __repr__(self) -> str:
        what = f" {self.description}" if self.description else ""
        return f"<Guide{what}: {self.num_states} states over {self.vocabulary!r}>"

    def __reduce__(self) -> tuple[object, ...]:
        return (_rebuild, (self.dfa, self.vocabulary, self.description, self._mask_cache_bytes))

    @property
    def memory_bytes(self) -> int:
        """Approximate bytes this guide holds: its automaton (numpy tables and their Python row
        lists) and the masks cached so far. Bounded: at most ``mask_cache_bytes`` of masks
        (default :data:`DEFAULT_MASK_CACHE_BYTES`), oldest dropped first."""
        d = self.dfa
        table = d.transitions.nbytes + d.byte_classes.nbytes + d.finals.nbytes
        rows = d.num_states * (64 + 8 * d.num_classes)  # list of lists of (cached small) ints
        masks = (len(self._masks) + len(self._tight)) * self.vocabulary.size
        sparse = 0 if self._sparse is None else 40 * (len(self._sparse.byte) + len(self._sparse.first))
        return int(2 * table + rows + masks + sparse + sum(len(b) + 40 for b in self._forced.values()))

    @property
    def num_states(self) -> int:
        """Number of automaton states (every int in ``range(num_states)`` is a valid state)."""
        return len(self._finals)

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
        flat, cls, width = self._flat, self._classes, self._width
        for b in tok:
            state = flat[state * width + cls[b]]
            if state < 0:
                return -1
        return state

    def accepts_bytes(self, data: bytes) -> bool:
        """Whether ``data`` (as a whole) is in the constraint's language."""
        s = self.dfa.step(0, data)
        return s >= 0 and self._finals[s]

    def distance(self, state: int) -> int:
        """Tokens that are guaranteed to take ``state`` to a final state (see
        :meth:`.Guide.distance`): :func:`.distances.token_distances` of the automaton."""
        return int(self._distances()[state])

    def _byte_distance(self, state: int) -> int:
        return int(self.dfa.distances[state])

    @property
    def spells_every_byte(self) -> bool:
        """Whether every byte the automaton reads is a single-byte token (see :meth:`min_length`)."""
        return self._spells_bytes

    def _farthest_after(self, state: int) -> int:
        reached = self._walk(state)
        return int(self._distances()[reached[reached >= 0]].max(initial=0))

    def _find_forced_bytes(self, state: int) -> bytes:
        live = self._live_bytes
        if live is None:
            # per state: the one byte that leads on when exactly one does, else -1
            alive = self.dfa.transitions[:, self.dfa.byte_classes] >= 0
            only = np.where(alive.sum(axis=1) == 1, alive.argmax(axis=1), -1)
            only[self.dfa.finals] = -1
            live = self._live_bytes = only.astype(np.int32)
        chain: list[int] = []  # states along the forced chain, their forced bytes not yet known
        out = bytearray()
        s = state
        # Every state can reach a final state, so a chain of single-byte, non-final states cannot
        # loop; the bound is only a guard.
        for _ in range(len(self._finals) + 1):
            known = self._forced.get(s)
            if known is not None:
                out += known
                break
            b = int(live[s])
            if b < 0:
                break
            chain.append(s)
            out.append(b)
            s = self._flat[s * self._width + self._classes[b]]
        tail = bytes(out)
        for i, s in enumerate(chain):
            self._forced.setdefault(s, tail[i:])
        return tail if chain else self._forced.setdefault(state, b"")

    def _eager_states(self) -> Iterable[int]:
        return range(self.num_states)

    def _distances(self) -> np.ndarray:
        dist = self._token_dist
        if dist is None:
            dist = token_distances(self.dfa, self.vocabulary)
            self._token_dist = dist
        return dist

    def _full_trie(self) -> TokenTrie:
        trie = self._trie
        if trie is None:
            trie = self._trie = self._index.trie
        return trie

    def _walk(self, state: int) -> np.ndarray:
        trie = self._full_trie()
        if self._node_classes is None:
            self._node_classes = self.dfa.byte_classes[trie.byte]
        return walk_state(self.dfa, self._node_classes, trie, state)

    def _budget_token_set(self, state: int, budget: int) -> np.ndarray:
        trie = self._full_trie()
        reached = self._walk(state)
        dist = self._distances()
        ok = reached >= 0
        ok[ok] = dist[reached[ok]] <= budget - 1
        mask = np.zeros(self.vocabulary.size, dtype=bool)
        mask[trie.token_ids[ok]] = True
        return mask

    def _token_set(self, state: int) -> np.ndarray:
        mask = self._slice_mask(state) if self._token_dist is None else None
        if mask is None:
            mask = self._walk_mask(state)
        return mask

    def _slice_mask(self, state: int) -> np.ndarray | None:
        """The mask from a vocabulary slice plus a walk of the tokens outside it, or ``None``
        where no slice's characters all lead one way (see :mod:`structgen.vocab.slices`).

        The first slice (a JSON string's characters) applies whenever its characters agree, even
        if they all die (its rest trie is small); a narrower one only where they lead on."""
        flat, cls, base = self._flat, self._classes, state * self._width
        probe = [flat[base + cls[b]] for b in b"a0 {"]  # characters of the first slice; "a" of every slice
        for k in range(len(SLICES)):
            if (k == 0 and probe.count(probe[0]) < len(probe)) or (k and probe[0] < 0):
                continue  # cheaper than the slice's successors: they cannot all agree here
            succ = self._char_next.get(k)
            if succ is None:
                succ = self._char_next[k] = char_successors(self.dfa, k).tolist()
            first = succ[state]
            if first == MIXED or (k and first < 0):
                continue
            sl = self._index.string_slice(k)
            # How many slice characters in a row survive from here (up to the longest slice token).
            q, m, longest = state, 0, sl.longest
            while m < longest:
                nxt = succ[q]
                if nxt < 0:
                    break
                m += 1
                if nxt == q:  # a loop on every slice character: any number of them
                    m = longest
                    break
                q = nxt
            if m < longest and succ[q] == MIXED:
                continue
            mask = sl.up_to(m).copy() if m else np.zeros(self.vocabulary.size, dtype=bool)
            classes = self._rest_classes.get(k)
            if classes is None:
                classes = self._rest_classes[k] = self.dfa.byte_classes[sl.rest.byte]
            reached = walk_state(self.dfa, classes, sl.rest, state)
            mask[sl.rest.token_ids[reached >= 0]] = True
            return mask
        return None

    def _walk_mask(self, state: int) -> np.ndarray:
        """The mask from a walk of the whole token trie (also noting, once budgets are in use,
        the farthest distance its tokens lead to)."""
        trie = self._full_trie()
        if self._sparse is None:
            self._sparse = SparseWalker(self.dfa, trie)
        found = self._sparse.walk(state)
        if found is None:
            if self._node_classes is None:
                self._node_classes = self.dfa.byte_classes[trie.byte]
            reached = walk_state(self.dfa, self._node_classes, trie, state)
            found = trie.token_ids[reached >= 0], reached[reached >= 0]
        mask = np.zeros(self.vocabulary.size, dtype=bool)
        mask[found[0]] = True
        if self._token_dist is not None:
            # Once budgets are in use, note this here: a budget far from the end then reuses this
            # mask without walking the trie again.
            self._max_next[state] = int(self._distances()[found[1]].max(initial=0))
        return mask


def _rebuild(dfa: ByteDFA, vocabulary: Vocabulary, description: str, mask_cache_bytes: int = 0) -> DfaGuide:
    return DfaGuide(dfa, vocabulary, description=description, mask_cache_bytes=mask_cache_bytes or DEFAULT_MASK_CACHE_BYTES)
