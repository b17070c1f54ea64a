"""The matcher interface that serving engines expect: packed int32 token bitmasks over a guide.

Serving engines (vLLM's structured-output backends, SGLang's grammar backends, XGrammar and
llguidance themselves) exchange a token mask as a *packed bitmask*: ``ceil(V / 32)`` ``int32``
words per sequence, token ``t`` allowed iff bit ``t % 32`` of word ``t // 32`` is set, one row per
sequence of a batch, filled on the CPU and applied to the logits on the device. A
:class:`Matcher` gives a :class:`~.base.Guide` that interface, with no torch: states stay plain
``int`` s, so a sequence's matcher state is one int and **rollback is keeping an earlier state**.

================================  ==============================================================
``fill_next_token_bitmask``       one row of a bitmask: the tokens allowed next
``fill_next_token_bitmasks``      the batch form (one pass over many rows, any mix of guides)
``accept_token(s)``               the state after a token (or tokens); -1 if one is refused
``validate_tokens``               how many of a draft's tokens are accepted (speculative decoding)
``is_terminated``                 the output is complete and only EOS may follow
``forced_tokens``                 the tokens the guide forces (fast-forward), cached per state
================================  ==============================================================

:meth:`Matcher.of` is the matcher of a guide at a width, shared by every caller (its caches
with it): a :class:`~.cursor.Cursor`, the per-row step every integration drives, takes it.

Every call takes ``budget=`` (the tokens still allowed, the one being chosen included), with
:meth:`.Guide.token_mask`'s semantics: a token is allowed only if the output can still finish
within the budget after it.

Example:
    >>> import structgen
    >>> vocab = structgen.Vocabulary.from_bytes([b"1", b"2", b"-", None], eos_token_ids=[3])
    >>> m = Matcher(structgen.compile_regex(r"1-2", vocab))
    >>> bitmask = Matcher.allocate_token_bitmask(2, m.vocab_size)
    >>> m.fill_next_token_bitmask(m.initial_state, bitmask, 1)
    >>> bitmask.tolist()    # row 0 untouched (every bit set), row 1: only token 0
    [[-1], [1]]
    >>> s = m.accept_tokens(m.initial_state, [0, 2, 1])
    >>> m.is_terminated(s), m.validate_tokens(m.initial_state, [0, 2, 2])
    (True, 2)
"""

from __future__ import annotations

import threading
import weakref
from collections import OrderedDict
from typing import Any, Callable, ClassVar, Iterable, Sequence

import numpy as np

from .._engine import fill_rows
from ..errors import VocabularyError
from .base import NO_WORK, Guide, NativeRow, NativeWork

__all__ = ["DEFAULT_PACKED_CACHE_SIZE", "Matcher", "bitmask_words", "pack_mask"]

#: Packed masks a matcher keeps (least recently used dropped first): 4,096 masks over Llama-3's
#: 128k tokens are 64 MiB.
DEFAULT_PACKED_CACHE_SIZE = 4096


def bitmask_words(vocab_size: int) -> int:
    """The ``int32`` words of one bitmask row: ``ceil(vocab_size / 32)``.

    >>> bitmask_words(49152), bitmask_words(33)
    (1536, 2)
    """
    if vocab_size < 1:
        raise ValueError(f"vocab_size must be positive, got {vocab_size}")
    return (vocab_size + 31) // 32


#: Rounds of a batch's native fill: a row stopped for want of an automaton not made yet is asked
#: again once its guide made it (a callee's callee may stop it again).
FILL_ROUNDS = 4


def native_bitmask(bitmask: np.ndarray) -> bool:
    """Whether ``bitmask`` can be filled natively in place (a C-contiguous int32 matrix)."""
    return bitmask.ndim == 2 and bitmask.dtype == np.int32 and bool(bitmask.flags.c_contiguous)


def fill_native_rows(rows: list[tuple[Any, int, int]], natives: Sequence[NativeRow], bitmask: np.ndarray,
                     threads: int) -> list[int]:
    """Fill ``rows`` ``(core, state, bitmask row)`` (``natives[i]``: row ``i``'s :class:`.NativeRow`)
    with :func:`structgen._engine.fill_rows` (the whole masks; the cold ones made on ``threads``
    native threads) in up to :data:`FILL_ROUNDS` rounds (a row stopped at an automaton not made
    yet is asked again once its ``need`` made it); answers the positions in ``rows`` left to the
    caller's serial fill."""
    if not rows:
        return []
    if len(natives) == 1:  # (one row: nothing to share a preparation with)
        if natives[0].prepare is not None:
            natives[0].prepare()
    else:
        prepared: set[int] = set()
        for native in natives:
            if native.prepare is not None and id(native.core) not in prepared:
                prepared.add(id(native.core))
                native.prepare()
    stopped = fill_rows(rows, bitmask, threads)
    if not stopped:  # (the common case: every row filled in the first round)
        return []
    left: list[int] = []
    at = list(range(len(rows)))
    for i in range(FILL_ROUNDS):
        if i:
            if not at:
                break
            stopped = fill_rows([rows[j] for j in at], bitmask, threads)
        again: list[int] = []
        for k, missing in stopped:
            need = natives[at[k]].need
            (again if missing >= 0 and need is not None and _made(need, missing) else left).append(at[k])
        at = again
    return sorted(left + at)


def _made(need: Callable[[int], bool], k: int) -> bool:
    """``need(k)``; ``False`` where it fails (the serial fill meets the error and fails that row)."""
    try:
        return bool(need(k))
    except Exception:  # noqa: BLE001 - one row's problem must not stop the batch
        return False


def pack_mask(allowed: np.ndarray, words: int) -> np.ndarray:
    """A bool mask as ``words`` little-endian int32 words (bit ``t % 32`` of word ``t // 32``),
    read-only; tokens past ``32 * words`` are dropped.

    >>> pack_mask(np.array([True, False, True]), 2).tolist()
    [5, 0]
    """
    allowed = allowed[: words * 32]
    packed = np.zeros(words * 4, dtype=np.uint8)
    bits = np.packbits(allowed, bitorder="little")
    packed[: len(bits)] = bits
    out = packed.view("<i4").astype(np.int32, copy=False)
    out.flags.writeable = False
    return out


class Matcher:
    """A :class:`~.base.Guide` seen through packed int32 bitmasks, for serving engines.

    Args:
        guide: the compiled constraint (one per constraint x vocabulary, shared).
        vocab_size: the width of the logits the bitmask is applied to (models often pad their
            embedding matrix past the tokenizer); default the guide's vocabulary size. Columns
            past the vocabulary are never allowed. A width below the vocabulary is refused
            (:class:`VocabularyError`) as soon as a mask allows a token past it.
        cache_size: packed masks kept, keyed by (state, effective budget).

    A matcher is shared by every sequence of its guide and thread-safe; a sequence keeps its
    state, an ``int``. The states are the guide's (``matcher.guide.next_state`` and friends work
    on them too).
    """

    __slots__ = ("guide", "vocab_size", "words", "_packed", "_cache_size", "_lock", "_eos", "_terminated", "_forced",
                 "_eos_only", "_native", "__weakref__")

    # guide -> width -> matcher, both weak: a matcher holds its guide, so a strong value would keep
    # its own key alive (every guide a server or a LogitsProcessor had used stayed for good)
    _SHARED: ClassVar[weakref.WeakKeyDictionary[Guide, weakref.WeakValueDictionary[int, Matcher]]] = weakref.WeakKeyDictionary()
    _SHARED_LOCK: ClassVar[threading.Lock] = threading.Lock()

    def __init__(self, guide: Guide, *, vocab_size: int | None = None,
                 cache_size: int = DEFAULT_PACKED_CACHE_SIZE) -> None:
        if not isinstance(guide, Guide):
            raise TypeError(f"Matcher needs a structgen Guide, not {type(guide).__name__}")
        self.guide = guide
        self.vocab_size = guide.vocabulary.size if vocab_size is None else int(vocab_size)
        self.words = bitmask_words(self.vocab_size)
        self._packed: OrderedDict[tuple[int, int | None], np.ndarray] = OrderedDict()
        self._cache_size = max(1, cache_size)
        self._lock = threading.Lock()
        self._eos = frozenset(guide.vocabulary.eos_token_ids)
        self._terminated: dict[int, bool] = {}
        # (id(tokenizer), state) -> forced tokens; the tokenizer is held so its id is not reused
        self._forced: dict[tuple[int, int], tuple[Any, list[int]]] = {}
        self._eos_only: np.ndarray | None = None
        self._native: NativeRow | bool | None = None  # (the guide's native row, found on first use; False: none)

    @classmethod
    def of(cls, guide: Guide, vocab_size: int | None = None) -> Matcher:
        """The matcher of ``guide`` at the width ``vocab_size`` (default the vocabulary's), shared:
        every caller asking for the same pair gets the same matcher and its caches while one of
        them holds it (a cursor does). Neither the matcher nor its guide is kept beyond that.

        >>> import gc, weakref, structgen
        >>> vocab = structgen.Vocabulary.from_bytes([b"a", b"b", None], eos_token_ids=[2])
        >>> g = structgen.compile_regex("a+b", vocab)
        >>> m = Matcher.of(g)
        >>> m is Matcher.of(g)
        True
        >>> gone = weakref.ref(g)
        >>> del g, m
        >>> structgen.clear_cache()  # (the compile cache held the guide too)
        >>> _ = gc.collect()
        >>> gone() is None
        True
        """
        width = guide.vocabulary.size if vocab_size is None else int(vocab_size)
        with cls._SHARED_LOCK:
            per = cls._SHARED.get(guide)
            if per is None:
                per = cls._SHARED[guide] = weakref.WeakValueDictionary()
            found = per.get(width)
            if found is None:
                found = per[width] = cls(guide, vocab_size=width)
            return found

    def __repr__(self) -> str:
        return f"Matcher({self.guide!r}, vocab_size={self.vocab_size})"

    @property
    def initial_state(self) -> int:
        """The state before any token."""
        return self.guide.initial_state

    # -- bitmasks ------------------------------------------------------------------------------

    @staticmethod
    def allocate_token_bitmask(batch_size: int, vocab_size: int) -> np.ndarray:
        """A ``[batch_size, ceil(vocab_size / 32)]`` int32 array with every bit set (every token
        allowed): rows that no matcher fills leave their logits alone."""
        return np.full((batch_size, bitmask_words(vocab_size)), -1, dtype=np.int32)

    def packed_mask(self, state: int, *, budget: int | None = None) -> np.ndarray:
        """The tokens allowed in ``state`` as a read-only ``[words]`` int32 array, cached.

        ``budget`` as in :meth:`.Guide.token_mask`; it is part of the cache key only where it
        narrows the mask (:meth:`.Guide.effective_budget`), so all but the last steps of a
        generation share the plain mask. Raises :class:`UnsatisfiableConstraint` when the output
        cannot finish within ``budget``.
        """
        tight = self.guide.effective_budget(state, budget)
        key = (state, tight)
        with self._lock:
            packed = self._packed.get(key)
            if packed is not None:
                self._packed.move_to_end(key)
                return packed
        native = self.guide._packed(state) if tight is None and self.vocab_size >= self.guide.vocabulary.size else None
        if native is not None:  # (packed by the engine: padded to the logits' width)
            packed = native if native.size == self.words else np.concatenate(
                [native, np.zeros(self.words - native.size, dtype=np.int32)])
            packed.flags.writeable = False
            with self._lock:
                self._packed[key] = packed
                while len(self._packed) > self._cache_size:
                    self._packed.popitem(last=False)
            return packed
        allowed = self.guide.token_mask(state) if tight is None else self.guide.token_mask(state, budget=tight)
        if len(allowed) > self.vocab_size:
            if allowed[self.vocab_size:].any():
                raise VocabularyError(
                    f"the logits have {self.vocab_size} columns but {self.guide!r} allows tokens up to id "
                    f"{int(np.flatnonzero(allowed)[-1])}: the guide was built for another tokenizer"
                )
            allowed = allowed[: self.vocab_size]
        packed = pack_mask(allowed, self.words)
        with self._lock:
            self._packed[key] = packed
            while len(self._packed) > self._cache_size:
                self._packed.popitem(last=False)
        return packed

    def prefetch_work(self, state: int, *, budget: int | None = None) -> NativeWork:
        """The native work :meth:`packed_mask` would start with, where its mask is not cached
        (:class:`.NativeWork`: a batch runs it on native threads first); none where the mask is
        cached, narrowed by a budget, or not native."""
        if self.vocab_size < self.guide.vocabulary.size or self.guide.effective_budget(state, budget) is not None:
            return NO_WORK
        with self._lock:
            if (state, None) in self._packed:
                return NO_WORK
        return self.guide._prefetch(state)

    def native_row(self, state: int, *, budget: int | None = None) -> NativeRow | None:
        """How a batch fills the mask of ``state`` natively (:meth:`.Guide._native_row`), or
        ``None``: a mask narrowed by a budget, logits narrower than the vocabulary, a guide
        without a native core. (The rows' states are checked by the fill: a state that does not
        exist is left to :meth:`fill_next_token_bitmask`, which raises.)"""
        if budget is not None and self.guide.effective_budget(state, budget) is not None:
            return None
        native = self._native
        if native is None:
            native = self._native = (self.guide._native_row(self.guide.initial_state) or False
                                     if self.vocab_size >= self.guide.vocabulary.size else False)
        return native if isinstance(native, NativeRow) else None

    def fill_next_token_bitmask(self, state: int, bitmask: np.ndarray, row: int = 0, *,
                                budget: int | None = None) -> None:
        """Write the tokens allowed in ``state`` into row ``row`` of ``bitmask``
        (``[batch, words]`` int32, e.g. from :meth:`allocate_token_bitmask`, or the numpy view of
        a pinned torch tensor). ``budget`` as in :meth:`packed_mask`."""
        if bitmask.ndim != 2 or bitmask.shape[1] != self.words or bitmask.dtype != np.int32:
            raise ValueError(
                f"bitmask must be an int32 array of shape [batch, {self.words}] for {self.vocab_size} "
                f"tokens, not {bitmask.dtype} {tuple(bitmask.shape)}"
            )
        native = self.native_row(state, budget=budget) if native_bitmask(bitmask) and 0 <= row < len(bitmask) else None
        if native is None or fill_native_rows([(native.core, state, row)], [native], bitmask, 1):
            bitmask[row] = self.packed_mask(state, budget=budget)

    @staticmethod
    def fill_next_token_bitmasks(
        rows: Iterable[tuple[Matcher, int, int | None]], bitmask: np.ndarray, indices: Sequence[int] | None = None,
        *, threads: int = 1,
    ) -> None:
        """The batch form: ``rows``, each ``(matcher, state, budget)`` (``budget`` ``None``: no
        limit), row ``i`` written to ``bitmask[indices[i]]`` (default ``i``); the native rows in
        one call, their cold masks made on ``threads`` native threads (see
        :func:`.fill_next_token_bitmasks` for rows with their own state). The matchers may differ
        (one guide per request); they must share one width."""
        rows = list(rows)
        native: list[tuple[Any, int, int]] = []
        natives: list[NativeRow] = []
        where: list[int] = []
        serial: list[int] = []
        fits = native_bitmask(bitmask)
        for i, (matcher, state, budget) in enumerate(rows):
            row = i if indices is None else indices[i]
            got = None
            if fits and bitmask.shape[1] == matcher.words and 0 <= row < len(bitmask):
                got = matcher.native_row(state, budget=budget)
            if got is None:
                serial.append(i)  # (its fill raises where the bitmask does not fit)
            else:
                native.append((got.core, state, row))
                natives.append(got)
                where.append(i)
        serial += [where[j] for j in fill_native_rows(native, natives, bitmask, threads)]
        for i in sorted(serial):
            matcher, state, budget = rows[i]
            matcher.fill_next_token_bitmask(state, bitmask, i if indices is None else indices[i], budget=budget)

    def token_mask(self, state: int, *, budget: int | None = None) -> np.ndarray:
        """The bool view of :meth:`packed_mask` (``vocab_size`` entries), for checks and tests."""
        bits = np.unpackbits(self.packed_mask(state, budget=budget).view(np.uint8), bitorder="little")
        return bits[: self.vocab_size].astype(bool)

    def eos_only(self) -> np.ndarray:
        """The packed mask that allows EOS and nothing else (a row that must end now)."""
        if self._eos_only is None:
            allowed = np.zeros(self.words * 32, dtype=bool)
            allowed[[t for t in self._eos if t < self.vocab_size]] = True
            self._eos_only = pack_mask(allowed, self.words)
        return self._eos_only

    # -- tokens --------------------------------------------------------------------------------

    def _allows(self, state: int, token: int, budget: int | None) -> int:
        """The state after ``token`` if the budget-aware mask allows it, else -1."""
        nxt = self.guide.next_state(state, token)
        if nxt < 0 or budget is None:
            return nxt
        if token in self._eos:  # EOS ends the output: allowed in a final state, whatever the budget
            return nxt
        if budget < 1 or self.guide.distance(nxt) > budget - 1:
            return -1
        return nxt

    def accept_token(self, state: int, token: int, *, budget: int | None = None) -> int:
        """The state after ``token``, or -1 if the mask of ``state`` (with ``budget``) refuses it.
        EOS is accepted in a final state and leaves it unchanged."""
        if state < 0:
            return -1
        return self._allows(state, int(token), budget)

    def accept_tokens(self, state: int, tokens: Iterable[int], *, budget: int | None = None) -> int:
        """The state after ``tokens`` (-1 as soon as one is refused); ``budget`` is the budget
        before the first of them, one less for each next. Nothing is accepted after an EOS."""
        ended = False
        for i, t in enumerate(tokens):
            if ended or state < 0:
                return -1
            state = self._allows(state, int(t), None if budget is None else budget - i)
            ended = int(t) in self._eos
        return state

    def validate_tokens(self, state: int, tokens: Sequence[int], *, budget: int | None = None) -> int:
        """How many of ``tokens`` (a speculative draft, from ``state``) are accepted in a row: the
        length of the longest accepted prefix. The state stays as it was (states are ints: the
        caller advances with :meth:`accept_tokens` on the prefix it keeps)."""
        ended = False
        for i, t in enumerate(tokens):
            if ended:
                return i
            state = self._allows(state, int(t), None if budget is None else budget - i)
            if state < 0:
                return i
            ended = int(t) in self._eos
        return len(tokens)

    def is_final(self, state: int) -> bool:
        """Whether the output may end in ``state`` (EOS is allowed)."""
        return self.guide.is_final(state)

    def forced_tokens(self, state: int, tokenizer_or_encode: Any) -> list[int]:
        """:meth:`.Guide.forced_tokens` of ``state`` (encoded by ``tokenizer_or_encode``), cached."""
        key = (id(tokenizer_or_encode), state)
        found = self._forced.get(key)
        if found is None:
            found = self._forced[key] = (tokenizer_or_encode, self.guide.forced_tokens(state, tokenizer_or_encode))
        return found[1]

    def is_terminated(self, state: int) -> bool:
        """Whether the output is complete and nothing but EOS may follow: the engine can stop
        this sequence now (asking the model could only give EOS). Cached per state.

        States are ints, so "an EOS was accepted" is the caller's to remember: accepting EOS in
        a final state leaves the state unchanged.
        """
        done = self._terminated.get(state)
        if done is None:
            done = self.guide.is_final(state)
            if done:
                allowed = self.guide.token_mask(state)
                eos = sorted(self._eos)
                done = int(np.count_nonzero(allowed)) == int(np.count_nonzero(allowed[eos]))
            self._terminated[state] = done
        return done
