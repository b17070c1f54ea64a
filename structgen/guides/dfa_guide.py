"""The Guide: a constraint lifted to a vocabulary. Immutable, shared by every sequence.

A sequence's state is a plain ``int``; the guide answers, for a state, which tokens may come next
(:meth:`Guide.token_mask`), where a token leads (:meth:`Guide.next_state`) and whether the output
may end there (:meth:`Guide.is_final`). Masks are computed on first use and cached, so only the
states that generation visits cost anything; computing one twice from two threads is harmless.

Token budgets (never truncated output): :meth:`Guide.token_mask` takes ``budget=``, the number of
tokens that may still be generated *including the one being chosen*. With it, a token is allowed
only if the output can still reach a final state within the budget after it, so a generation that
starts with ``budget >= guide.min_length()`` always ends complete. See :meth:`Guide.token_mask`.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any, Iterable, Literal

import numpy as np

from ..errors import UnsatisfiableConstraint, VocabularyError
from ..automata.dfa import ByteDFA
from .distances import spells_every_byte, token_distances
from ..vocab.trie import SparseWalker, token_trie, walk_state
from ..vocab.slices import MIXED, SLICES, char_successors, string_slice
from ..vocab.vocabulary import Vocabulary

__all__ = ["DEFAULT_MASK_CACHE_BYTES", "Guide"]

#: Default bound on the masks one guide caches, in bytes (one byte per token per mask): 256 MiB is
#: 2,000 masks over Llama-3's 128k tokens. Past it the oldest mask is dropped and recomputed if
#: generation comes back to its state.
DEFAULT_MASK_CACHE_BYTES = 256 * 2**20
#: Automata this large compute every slice's successors when the guide is built (smaller ones on
#: first use, where it costs well under a millisecond).
EAGER_SLICE_STATES = 20_000


class Guide:
    """Which tokens may follow, state by state, for one constraint over one vocabulary.

    EOS is allowed exactly in final states; a final state with no other way on allows only EOS.
    Reading EOS in a final state leaves the state unchanged.

    Example:
        >>> import structgen
        >>> vocab = structgen.Vocabulary.from_bytes([b"1", b"2", b"-", b""], eos_token_ids=[3])
        >>> guide = structgen.compile_regex(r"1-2", vocab)
        >>> s = guide.initial_state
        >>> guide.allowed_token_ids(s).tolist()
        [0]
        >>> s = guide.next_state(s, 0); s = guide.next_state(s, 2); s = guide.next_state(s, 1)
        >>> guide.is_final(s), guide.allowed_token_ids(s).tolist()
        (True, [3])
    """

    __slots__ = (
        "dfa",
        "vocabulary",
        "description",
        "_flat",
        "_width",
        "_classes",
        "_finals",
        "_node_classes",
        "_masks",
        "_lock",
        "_eos",
        "_spells_bytes",
        "_token_dist",
        "_max_next",
        "_tight",
        "_forced",
        "_live_bytes",
        "_char_next",
        "_rest_classes",
        "_max_masks",
        "_sparse",
        "__weakref__",
    )

    initial_state: int = 0

    def __init__(
        self, dfa: ByteDFA, vocabulary: Vocabulary, *, description: str = "",
        mask_cache_bytes: int = DEFAULT_MASK_CACHE_BYTES,
    ) -> None:
        self.dfa = dfa
        self.vocabulary = vocabulary
        self.description = description
        # one flat list (state * width + class): a list per state would put num_states objects
        # under the garbage collector, whose full passes then stall a token for tens of ms
        self._flat: list[int] = dfa.transitions.ravel().tolist()
        self._width: int = dfa.transitions.shape[1]
        self._classes: list[int] = dfa.byte_classes.tolist()
        self._finals: list[bool] = dfa.finals.tolist()
        self._node_classes: np.ndarray | None = None
        self._masks: dict[int, np.ndarray] = {}
        # the cache of masks is bounded: past this many, the oldest is dropped (recomputed if needed)
        self._max_masks = max(16, mask_cache_bytes // max(vocabulary.size, 1))
        self._lock = threading.Lock()
        self._eos = np.array(sorted(vocabulary.eos_token_ids), dtype=np.int64)
        self._spells_bytes = spells_every_byte(dfa, vocabulary)
        self._token_dist: np.ndarray | None = None
        # state -> the largest token distance over the next states of its allowed tokens
        self._max_next: dict[int, int] = {}
        # (state, budget) -> mask, for the few budgets tight enough to change a state's mask
        self._tight: OrderedDict[tuple[int, int], np.ndarray] = OrderedDict()
        # state -> forced bytes from it (see forced_bytes); filled lazily
        self._forced: dict[int, bytes] = {}
        self._live_bytes: np.ndarray | None = None
        # string slices (see structgen.slices): per state, where every slice character leads
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
        return (_rebuild, (self.dfa, self.vocabulary, self.description, self._max_masks * max(self.vocabulary.size, 1)))

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

    def advance(self, state: int, token_ids: Iterable[int]) -> int:
        """The state after a sequence of tokens (-1 as soon as one is not allowed)."""
        for t in token_ids:
            state = self.next_state(state, t)
            if state < 0:
                return -1
        return state

    def accepts_bytes(self, data: bytes) -> bool:
        """Whether ``data`` (as a whole) is in the constraint's language."""
        s = self.dfa.step(0, data)
        return s >= 0 and self._finals[s]

    def token_mask(self, state: int, *, budget: int | None = None) -> np.ndarray:
        """Read-only bool array over the vocabulary: ``True`` where the token may come next.

        ``budget`` (default ``None``: no limit) is the number of tokens that may still be
        generated, *counting the token this mask is for*: ``max_new_tokens - tokens generated so
        far``. With a budget, semantics are::

            allowed(t) = next_state(state, t) >= 0 and distance(next_state(state, t)) <= budget - 1
            allowed(EOS) = is_final(state)

        where ``distance`` is :meth:`distance` (tokens to a final state). The mask only forbids
        what can no longer finish in time: far from the end it equals the plain mask; as the budget
        tightens, tokens that open something new (another array item, another optional key) drop
        out once their shortest completion no longer fits, while closing tokens stay allowed, so
        sampling picks the model's favourite among the continuations that still finish. Output
        that reaches a final state with the budget spent is complete without an EOS.

        Raises :class:`UnsatisfiableConstraint` when ``budget`` cannot finish from ``state`` at all
        (``budget < distance(state)``, or a non-final state with ``budget < 1``).
        """
        if budget is not None:
            tight = self.effective_budget(state, budget)
            if tight is not None:
                return self._budget_mask(state, tight)
        mask = self._masks.get(state)
        if mask is None:
            mask = self._compute_mask(state)
        return mask

    def effective_budget(self, state: int, budget: int | None) -> int | None:
        """``budget`` if it makes ``state``'s mask narrower than the plain one, else ``None``.

        Callers that cache masks (the LogitsProcessor, the server) key them by
        ``(state, effective_budget(state, budget))``; the plain mask is used whenever this is
        ``None``, which is every step except the last few of a generation.
        """
        if budget is None:
            return None
        if not 0 <= state < len(self._finals):
            raise ValueError(f"{state} is not a state of this guide (it has {len(self._finals)})")
        need = self.distance(state)
        if budget < need or (budget < 1 and not self._finals[state]):
            raise UnsatisfiableConstraint(
                f"{self!r} needs at least {need} more tokens from state {state} to complete, "
                f"but the budget leaves {budget}; raise max_new_tokens"
            )
        largest = self._max_next.get(state)
        if largest is None:
            reached = self._walk(state)
            largest = self._max_next[state] = int(self._distances()[reached[reached >= 0]].max(initial=0))
        return None if budget - 1 >= largest else budget

    def distance(self, state: int) -> int:
        """Tokens that are guaranteed to take ``state`` to a final state (0 in a final state).

        Not always the fewest possible, but always achievable, and consistent: from a non-final
        state some token leads to a state whose distance is at most one less. That is what makes
        budget-aware masking sound; :mod:`structgen.distance` explains how it is computed.
        """
        return int(self._distances()[state])

    def min_length(self, state: int = 0, *, unit: Literal["tokens", "bytes"] = "tokens") -> int:
        """Length of the shortest complete output from ``state``, in tokens (default) or bytes.

        In bytes it is exact (:attr:`ByteDFA.distances`). In tokens it is :meth:`distance`, the
        budget that surely suffices (the exact fewest tokens, or an upper bound on it when it is
        read off a shortest byte path), and the budget that budget-aware masking needs: ``max_new_tokens >= guide.min_length()``
        guarantees a complete output. Why a byte path can always be spelled in tokens: the
        guide's automaton has no transition on a byte that no token contains (the compiler cuts
        those out), and when the guide checks, at construction, that every byte the automaton
        reads is also a token of its own (:attr:`spells_every_byte`: true for the SmolLM2,
        Llama-3 and Mistral vocabularies), every byte path of length ``d`` to a final state is
        spelled by ``d`` single-byte tokens, so ``distance(s) <= min_length(s, unit="bytes")``;
        multi-byte tokens along the path make it shorter. Without that property the exact token
        distance is searched over every state's token transitions (small guides only; larger ones
        raise :class:`VocabularyError` when a budget is used).
        """
        if not 0 <= state < len(self._finals):
            raise ValueError(f"{state} is not a state of this guide (it has {len(self._finals)})")
        if unit == "bytes":
            return int(self.dfa.distances[state])
        if unit != "tokens":
            raise ValueError(f"unit must be 'tokens' or 'bytes', not {unit!r}")
        return self.distance(state)

    @property
    def spells_every_byte(self) -> bool:
        """Whether every byte the automaton reads is a single-byte token (see :meth:`min_length`)."""
        return self._spells_bytes

    def check_budget(self, budget: int) -> None:
        """Raise :class:`UnsatisfiableConstraint` if no output fits in ``budget`` tokens."""
        need = self.min_length()
        if budget < need:
            raise UnsatisfiableConstraint(
                f"the shortest output of {self.description or 'this guide'} takes {need} tokens "
                f"({self.min_length(unit='bytes')} bytes), more than max_new_tokens={budget}: "
                f"raise the token budget to at least {need}"
            )

    def forced_bytes(self, state: int) -> bytes:
        """The longest byte string that every accepted continuation of ``state`` starts with.

        Computed on the automaton: a state is *forced* when it is not final and exactly one byte
        leads on from it; the forced bytes follow that chain of forced states and stop before the
        first final state or the first state with a choice. Cached per state. ``b""`` when the
        state itself is final or branches. The bytes may end (or, from a state inside a
        multi-byte character, start) in the middle of a UTF-8 character; see :meth:`forced_text`.

        Example:
            >>> import structgen
            >>> vocab = structgen.Vocabulary.from_bytes([b"a", b"b", b"c", b""], eos_token_ids=[3])
            >>> guide = structgen.compile_regex(r"abc(a|b)", vocab)
            >>> guide.forced_bytes(guide.initial_state)
            b'abc'
        """
        if not 0 <= state < len(self._finals):
            raise ValueError(f"{state} is not a state of this guide (it has {len(self._finals)})")
        cached = self._forced.get(state)
        if cached is not None:
            return cached
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

    def forced_text(self, state: int) -> str:
        """The longest *complete* UTF-8 prefix of :meth:`forced_bytes`, decoded.

        After ``{`` in a JSON Schema whose first key is required, this is the key and what
        follows it up to the first choice (``"apiVersion": "``). ``""`` from a state inside a
        multi-byte character.
        """
        data = self.forced_bytes(state)
        for cut in range(len(data), max(len(data) - 4, -1), -1):
            try:
                return data[:cut].decode("utf-8")
            except UnicodeDecodeError:
                continue
        return ""

    def forced_tokens(self, state: int, tokenizer_or_encode: Any) -> list[int]:
        """Tokens the engine may append from ``state`` without asking the model (fast-forward).

        ``tokenizer_or_encode`` is the tokenizer this guide's vocabulary was built from, or a
        function ``str -> list[int]`` that encodes the way it does. The rule (llguidance's):

        1. ``text = forced_text(state)``, tokenized canonically by the tokenizer itself
           (``tokenizer.encode(text, add_special_tokens=False)``); leading tokens whose bytes do
           not spell a prefix of ``text`` (a tokenizer that normalises text) end the list there.
        2. Drop trailing tokens that a longer token could have merged across the end of the
           forced text with what comes next: for the smallest ``i`` such that the bytes of
           ``tokens[i:]`` are a *proper* prefix of some vocabulary token, keep ``tokens[:i]``.
           (After ``"kind": "`` the model may want the token ``"Dep`` rather than ``"``; the
           trailing ``"`` is left for the model to choose.)
        3. Every returned token is allowed in sequence from ``state`` (checked: an
           ``AssertionError`` means a bug).

        The boundary *before* the forced text (the last sampled token could have merged with
        the first forced one) is not re-tokenized: the sampled token stays as the model chose it.
        """
        text = self.forced_text(state)
        if not text:
            return []
        encode = getattr(tokenizer_or_encode, "encode", tokenizer_or_encode)
        if hasattr(tokenizer_or_encode, "encode"):
            ids = list(encode(text, add_special_tokens=False))
        else:
            ids = list(encode(text))
        want = text.encode("utf-8")
        toks = self.vocabulary.tokens
        kept: list[int] = []
        pos = 0
        for t in ids:
            tb = toks[t] if 0 <= t < len(toks) else None
            if not tb or want[pos : pos + len(tb)] != tb:
                break
            kept.append(t)
            pos += len(tb)
        # Step 2: could a longer token start with the bytes of kept[i:]?
        extends = _proper_prefixes(self.vocabulary)
        suffix = b""
        longest = _longest_token(self.vocabulary)
        cut = len(kept)
        for i in range(len(kept) - 1, -1, -1):
            suffix = (toks[kept[i]] or b"") + suffix
            if len(suffix) >= longest:
                break
            if suffix in extends:
                cut = i
        kept = kept[:cut]
        s = state
        for t in kept:
            s = self.next_state(s, t)
            assert s >= 0, f"forced token {t} is not allowed by {self!r} from state {state}"
        return kept

    def _distances(self) -> np.ndarray:
        dist = self._token_dist
        if dist is None:
            dist = token_distances(self.dfa, self.vocabulary)
            self._token_dist = dist
        return dist

    def _walk(self, state: int) -> np.ndarray:
        trie = token_trie(self.vocabulary)
        if self._node_classes is None:
            self._node_classes = self.dfa.byte_classes[trie.byte]
        return walk_state(self.dfa, self._node_classes, trie, state)

    def _tight_cached(self, key: tuple[int, int]) -> np.ndarray | None:
        """The cached mask of ``(state, budget)``, if any (most recently used last)."""
        with self._lock:
            mask = self._tight.get(key)
            if mask is not None:
                self._tight.move_to_end(key)
            return mask

    def _tight_store(self, key: tuple[int, int], mask: np.ndarray) -> None:
        with self._lock:
            self._tight[key] = mask
            while len(self._tight) > _TIGHT_CACHE_SIZE:
                self._tight.popitem(last=False)

    def _budget_mask(self, state: int, budget: int) -> np.ndarray:
        key = (state, budget)
        mask = self._tight_cached(key)
        if mask is not None:
            return mask
        trie = token_trie(self.vocabulary)
        reached = self._walk(state)
        dist = self._distances()
        ok = reached >= 0
        ok[ok] = dist[reached[ok]] <= budget - 1
        mask = np.zeros(self.vocabulary.size, dtype=bool)
        mask[trie.token_ids[ok]] = True
        if self._finals[state]:
            mask[self._eos] = True
        mask.flags.writeable = False
        self._tight_store(key, mask)
        return mask

    def allowed_token_ids(self, state: int) -> np.ndarray:
        """The ids allowed in ``state``, ascending."""
        return np.flatnonzero(self.token_mask(state))

    def precompute(self, states: Iterable[int] | None = None) -> "Guide":
        """Compute masks eagerly (all states by default); returns ``self``."""
        for s in range(self.num_states) if states is None else states:
            self.token_mask(s)
        return self

    def _compute_mask(self, state: int) -> np.ndarray:
        if not 0 <= state < len(self._finals):
            raise ValueError(f"{state} is not a state of this guide (it has {len(self._finals)})")
        mask = self._slice_mask(state) if self._token_dist is None else None
        if mask is None:
            mask = self._walk_mask(state)
        if self._finals[state]:
            mask[self._eos] = True
        elif not mask.any():
            raise VocabularyError(
                f"no token of {self.vocabulary!r} can continue from state {state} of {self!r}: "
                "the vocabulary cannot spell the bytes the constraint needs next"
            )
        mask.flags.writeable = False
        with self._lock:
            if len(self._masks) >= self._max_masks:
                self._masks.pop(next(iter(self._masks)), None)  # the oldest
            self._masks.setdefault(state, mask)
        return mask

    def _slice_mask(self, state: int) -> np.ndarray | None:
        """The mask from a vocabulary slice plus a walk of the tokens outside it, or ``None``
        where no slice's characters all lead one way (see :mod:`structgen.slices`).

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
            sl = string_slice(self.vocabulary, k)
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
        trie = token_trie(self.vocabulary)
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


#: Most (state, budget) masks a guide keeps for tight budgets (the last steps of generations).
_TIGHT_CACHE_SIZE = 1024


def _proper_prefixes(vocab: Vocabulary) -> frozenset[bytes]:
    """Byte strings that are a proper prefix of some token of ``vocab`` (cached per vocabulary)."""
    cached = vocab.__dict__.get("_proper_prefixes")
    if cached is None:
        out: set[bytes] = set()
        for tok in vocab.tokens:
            if tok:
                out.update(tok[:k] for k in range(1, len(tok)))
        cached = frozenset(out)
        object.__setattr__(vocab, "_proper_prefixes", cached)
    return cached  # type: ignore[no-any-return]


def _longest_token(vocab: Vocabulary) -> int:
    cached = vocab.__dict__.get("_longest_token")
    if cached is None:
        cached = max((len(t) for t in vocab.tokens if t), default=0)
        object.__setattr__(vocab, "_longest_token", cached)
    return int(cached)


def _rebuild(dfa: ByteDFA, vocabulary: Vocabulary, description: str, mask_cache_bytes: int = 0) -> Guide:
    return Guide(dfa, vocabulary, description=description, mask_cache_bytes=mask_cache_bytes or DEFAULT_MASK_CACHE_BYTES)
