"""The Guide: a constraint lifted to a vocabulary. Immutable, shared by every sequence.

A sequence's state is a plain ``int``; the guide answers, for a state, which tokens may come next
(:meth:`Guide.token_mask`), where a token leads (:meth:`Guide.next_state`) and whether the output
may end there (:meth:`Guide.is_final`). Masks are computed on first use and cached, so only the
states that generation visits cost anything; computing one twice from two threads is harmless.

Token budgets (never truncated output): :meth:`Guide.token_mask` takes ``budget=``, the number of
tokens that may still be generated *including the one being chosen*. With it, a token is allowed
only if the output can still reach a final state within the budget after it, so a generation that
starts with ``budget >= guide.min_length()`` always ends complete. See :meth:`Guide.token_mask`.

:class:`Guide` is the abstract base of the two kinds of guide, which are siblings: a
:class:`~.dfa_guide.DfaGuide` walks one byte automaton, a :class:`~.pushdown.PushdownGuide` a
network of automata that call one another. The base holds what they share: the bounded mask
caches, budget dispatch, forced text and forced tokens; each kind says how to compute a mask, a
budget mask, a distance and forced bytes.
"""

from __future__ import annotations

import threading
from abc import ABC, abstractmethod
from collections import OrderedDict
from typing import Any, Callable, Iterable, Literal, NamedTuple, Sequence, TypeVar

import numpy as np

from ..errors import UnsatisfiableConstraint, VocabularyError
from ..vocab.index import index_of
from ..vocab.vocabulary import Vocabulary

__all__ = ["DEFAULT_MASK_CACHE_BYTES", "NO_WORK", "Guide", "NativeRow", "NativeWork"]

#: Default bound on the masks one guide caches, in bytes (one byte per token per mask): 256 MiB is
#: 2,000 masks over Llama-3's 128k tokens. Past it the oldest mask is dropped and recomputed if
#: generation comes back to its state.
DEFAULT_MASK_CACHE_BYTES = 256 * 2**20
#: Most (state, budget) masks a guide keeps for tight budgets (the last steps of generations).
TIGHT_CACHE_SIZE = 1024

_G = TypeVar("_G", bound="Guide")


class NativeRow(NamedTuple):
    """How a batch fills a guide's rows natively (:func:`structgen._engine.fill_rows`): the guide's
    native core (a pushdown guide's ``FrameSolver``, a ``DfaGuideCore``); ``need(k)``, which makes
    automaton ``k`` and hands it to the core where a mask stopped for want of it (``False``: no
    such automaton); and ``prepare()``, called once per batch before the core's threads run (it
    hands over the automata made since). ``None`` where the core needs neither.

    Example:
        >>> import structgen
        >>> vocab = structgen.Vocabulary.from_bytes([b"a", b"b", b""], eos_token_ids=[2])
        >>> row = structgen.compile_regex("ab", vocab)._native_row(0)
        >>> type(row.core).__name__, row.need, row.prepare
        ('DfaGuideCore', None, None)
    """

    core: Any
    need: Callable[[int], bool] | None = None
    prepare: Callable[[], None] | None = None


class NativeWork(NamedTuple):
    """What a state's plain mask asks of the native engine first where its row is not filled
    natively whole (:class:`NativeRow`), in the forms :func:`structgen._engine.prefetch` takes (a
    batch runs its rows' work on native threads before its serial fill): frames ``(solver,
    automaton, state, node)`` and DFA masks ``(core, state)``.

    Example:
        >>> NO_WORK.frames, len(NO_WORK)
        ((), 2)
    """

    frames: Sequence[tuple[Any, ...]]
    masks: Sequence[tuple[Any, ...]]


#: No native work (a cached mask, a guide without a native core).
NO_WORK = NativeWork((), ())


class Guide(ABC):
    """Which tokens may follow, state by state, for one constraint over one vocabulary.

    EOS is allowed exactly in final states; a final state with no other way on allows only EOS.
    Reading EOS in a final state leaves the state unchanged. This is the abstract base of
    :class:`~.dfa_guide.DfaGuide` and :class:`~.pushdown.PushdownGuide`; the compile functions
    build one or the other.

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
        "vocabulary",
        "description",
        "_index",
        "_masks",
        "_max_masks",
        "_lock",
        "_eos",
        "_max_next",
        "_tight",
        "_forced",
        "__weakref__",
    )

    initial_state: int = 0
    #: Said of ``num_states`` when a state is out of range ("so far": states are made lazily).
    _STATES_NOTE = ""

    def __init__(
        self, vocabulary: Vocabulary, *, description: str = "", mask_cache_bytes: int = DEFAULT_MASK_CACHE_BYTES
    ) -> None:
        self.vocabulary = vocabulary
        self.description = description
        self._index = index_of(vocabulary)  # the per-tokenizer data: trie, slices, token sets
        self._masks: dict[int, np.ndarray] = {}
        # the cache of masks is bounded: past this many, the oldest is dropped (recomputed if needed)
        self._max_masks = max(16, mask_cache_bytes // max(vocabulary.size, 1))
        self._lock = threading.Lock()
        self._eos = np.array(sorted(vocabulary.eos_token_ids), dtype=np.int64)
        # state -> the largest token distance over the next states of its allowed tokens
        self._max_next: dict[int, int] = {}
        # (state, budget) -> mask, for the few budgets tight enough to change a state's mask
        self._tight: OrderedDict[tuple[int, int], np.ndarray] = OrderedDict()
        # state -> forced bytes from it (see forced_bytes); filled lazily
        self._forced: dict[int, bytes] = {}

    @property
    def _mask_cache_bytes(self) -> int:
        """The ``mask_cache_bytes`` this guide was built with (for pickling)."""
        return self._max_masks * max(self.vocabulary.size, 1)

    # -- what each kind of guide says for itself -----------------------------------------------

    @abstractmethod
    def __reduce__(self) -> tuple[object, ...]:
        """Guides pickle as what they were built from; caches are rebuilt on use."""

    @property
    @abstractmethod
    def num_states(self) -> int:
        """Number of states (every int in ``range(num_states)`` is a valid state)."""

    @property
    @abstractmethod
    def memory_bytes(self) -> int:
        """Approximate bytes this guide holds: its automata and the masks cached so far. Bounded:
        at most ``mask_cache_bytes`` of masks (default :data:`DEFAULT_MASK_CACHE_BYTES`), oldest
        dropped first."""

    @abstractmethod
    def is_final(self, state: int) -> bool:
        """Whether the output may end in ``state``."""

    @abstractmethod
    def next_state(self, state: int, token_id: int) -> int:
        """The state after ``token_id``, or -1 if the token is not allowed in ``state``."""

    @abstractmethod
    def accepts_bytes(self, data: bytes) -> bool:
        """Whether ``data`` (as a whole) is in the constraint's language."""

    @abstractmethod
    def distance(self, state: int) -> int:
        """Tokens that are guaranteed to take ``state`` to a final state (0 in a final state).

        Not always the fewest possible, but always achievable, and consistent: from a non-final
        state some token leads to a state whose distance is at most one less. That is what makes
        budget-aware masking sound; :mod:`structgen.guides.distances` explains how it is computed.
        """

    @property
    @abstractmethod
    def spells_every_byte(self) -> bool:
        """Whether every byte the automaton reads is a single-byte token (see :meth:`min_length`)."""

    @abstractmethod
    def _token_set(self, state: int) -> np.ndarray:
        """A new, writable bool array: the tokens allowed in ``state`` (EOS left to the caller)."""

    @abstractmethod
    def _budget_token_set(self, state: int, budget: int) -> np.ndarray:
        """A new, writable bool array: the tokens allowed in ``state`` that still finish within
        ``budget`` (EOS left to the caller)."""

    @abstractmethod
    def _farthest_after(self, state: int) -> int:
        """An upper bound on :meth:`distance` after any token allowed in ``state``."""

    def _farthest_bound(self, state: int) -> int | None:
        """An upper bound on :meth:`_farthest_after`, cheap to compute (no walk), or ``None``:
        while the budget is above it, no token can fail to finish in time."""
        return None

    @abstractmethod
    def _byte_distance(self, state: int) -> int:
        """The length in bytes of the shortest complete output from ``state``."""

    @abstractmethod
    def _find_forced_bytes(self, state: int) -> bytes:
        """:meth:`forced_bytes` of a state not in the cache yet (the method stores it)."""

    @abstractmethod
    def _eager_states(self) -> Iterable[int]:
        """The states :meth:`precompute` computes by default (after any eager set-up)."""

    def _packed(self, state: int) -> np.ndarray | None:
        """The plain mask of ``state`` as packed int32 words (``ceil(V / 32)``, EOS included; a
        new array), where the guide makes it natively; ``None`` else (the matcher packs
        :meth:`token_mask`)."""
        return None

    def _prefetch(self, state: int) -> NativeWork:
        """The native work ``state``'s plain mask will ask for first and that is not cached yet
        (:class:`NativeWork`: a batch does it on native threads before its serial fill); none for
        a guide without a native core."""
        return NO_WORK

    def _native_row(self, state: int) -> NativeRow | None:
        """How a batch fills ``state``'s plain mask natively (:class:`NativeRow`), or ``None``: a
        guide without a native core, a state that does not exist."""
        return None

    def _dead_end(self) -> str:
        """Why a non-final state may allow no token (the end of the error message)."""
        return "the vocabulary cannot spell the bytes the constraint needs next"

    def _dead_end_error(self, state: int) -> VocabularyError:
        """The error of a non-final ``state`` that allows no token."""
        return VocabularyError(
            f"no token of {self.vocabulary!r} can continue from state {state} of {self!r}: {self._dead_end()}")

    # -- the shared API ------------------------------------------------------------------------

    def _check_state(self, state: int) -> None:
        if not 0 <= state < self.num_states:
            raise ValueError(f"{state} is not a state of this guide (it has {self.num_states}{self._STATES_NOTE})")

    def advance(self, state: int, token_ids: Iterable[int]) -> int:
        """The state after a sequence of tokens (-1 as soon as one is not allowed)."""
        for t in token_ids:
            state = self.next_state(state, t)
            if state < 0:
                return -1
        return state

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

    def allowed_token_ids(self, state: int) -> np.ndarray:
        """The ids allowed in ``state``, ascending."""
        return np.flatnonzero(self.token_mask(state))

    def precompute(self: _G, states: Iterable[int] | None = None) -> _G:
        """Compute masks eagerly; returns ``self``. By default: every state of a
        :class:`~.dfa_guide.DfaGuide`; for a :class:`~.pushdown.PushdownGuide`, every automaton
        the root reaches (built on first use otherwise: ~20 ms each, paid by the token that first
        enters one) and the initial state's mask (states are made lazily, so there is no "every
        state")."""
        for s in self._eager_states() if states is None else states:
            self.token_mask(s)
        return self

    def effective_budget(self, state: int, budget: int | None) -> int | None:
        """``budget`` if it makes ``state``'s mask narrower than the plain one, else ``None``.

        Callers that cache masks (the LogitsProcessor, the server) key them by
        ``(state, effective_budget(state, budget))``; the plain mask is used whenever this is
        ``None``, which is every step except the last few of a generation.
        """
        if budget is None:
            return None
        self._check_state(state)
        need = self.distance(state)
        if budget < need or (budget < 1 and not self.is_final(state)):
            raise UnsatisfiableConstraint(
                f"{self!r} needs at least {need} more tokens from state {state} to complete, "
                f"but the budget leaves {budget}; raise max_new_tokens"
            )
        largest = self._max_next.get(state)
        if largest is None:
            bound = self._farthest_bound(state)  # (cheap: read off the state, no walk)
            if bound is not None and budget - 1 >= bound:
                return None
            largest = self._max_next[state] = self._farthest_after(state)
        return None if budget - 1 >= largest else budget

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
        distance is searched instead (small automata only, see :mod:`structgen.guides.distances`).
        """
        self._check_state(state)
        if unit == "bytes":
            return self._byte_distance(state)
        if unit != "tokens":
            raise ValueError(f"unit must be 'tokens' or 'bytes', not {unit!r}")
        return self.distance(state)

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
        self._check_state(state)
        cached = self._forced.get(state)
        if cached is not None:
            return cached
        return self._find_forced_bytes(state)

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
        trie = self._index.trie
        suffix = b""
        longest = self._index.longest_token
        cut = len(kept)
        for i in range(len(kept) - 1, -1, -1):
            suffix = (toks[kept[i]] or b"") + suffix
            if len(suffix) >= longest:
                break
            node = trie.node_of(suffix)
            if node >= 0 and trie.num_children_list[node]:  # (a proper prefix of a token)
                cut = i
        kept = kept[:cut]
        s = state
        for t in kept:
            s = self.next_state(s, t)
            assert s >= 0, f"forced token {t} is not allowed by {self!r} from state {state}"
        return kept

    # -- the caches ----------------------------------------------------------------------------

    def _compute_mask(self, state: int) -> np.ndarray:
        self._check_state(state)
        mask = self._token_set(state)
        if self.is_final(state):
            mask[self._eos] = True
        elif not mask.any():
            raise self._dead_end_error(state)
        mask.flags.writeable = False
        with self._lock:
            if len(self._masks) >= self._max_masks:
                self._masks.pop(next(iter(self._masks)), None)  # the oldest
            self._masks.setdefault(state, mask)
        return mask

    def _budget_mask(self, state: int, budget: int) -> np.ndarray:
        key = (state, budget)
        with self._lock:
            mask = self._tight.get(key)
            if mask is not None:
                self._tight.move_to_end(key)  # (most recently used last)
                return mask
        mask = self._budget_token_set(state, budget)
        if self.is_final(state):
            mask[self._eos] = True
        mask.flags.writeable = False
        with self._lock:
            self._tight[key] = mask
            while len(self._tight) > TIGHT_CACHE_SIZE:
                self._tight.popitem(last=False)
        return mask
