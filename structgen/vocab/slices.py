"""String slices: the free-text tokens of a vocabulary, sorted out once instead of walked per state.

Inside a JSON string almost every token is allowed, so walking the whole token trie there costs
milliseconds per state (128k tokens on Llama-3). But most tokens are *slice tokens*: whole UTF-8
characters none of which is ``"``, ``\\`` or a control character. From a state whose every such
character leads to one same next state (a string body, possibly length-bounded), a slice token of
``c`` characters is allowed exactly when the chain of next states survives ``c`` characters. So
a mask there is: the slice tokens of at most ``m`` characters (one precomputed mask per ``m``,
per vocabulary) plus a walk of the few *rest* tokens (quotes, escapes, partial characters) through
their own small trie. This is XGrammar's "context-independent tokens" and llguidance's "slicer"
idea, on a byte DFA:

1. per vocabulary (:class:`StringSlice`, kept by the vocabulary's
   :class:`~.index.VocabularyIndex`): which tokens are slice tokens, their lengths in characters,
   and the trie of the rest;
2. per state (:func:`char_successor`, as generation reaches it): the state every slice character
   leads to, or -1 if every one dies, or -2 if they disagree (then the slice does not apply and
   the guide walks the full trie).

All of it is native (``cpp/engine/slices.cpp``); the slices' one-character automata are generated
from :data:`SLICES` by the regex front end into ``cpp/engine/slice_tables.h``
(``tools/gen_slice_tables.py``; a test checks the header is current).

Example:
    >>> import structgen
    >>> from structgen.vocab.index import index_of
    >>> vocab = structgen.Vocabulary.from_bytes([b"a", b"ab", b'"', b"\\xc3", b""], eos_token_ids=[4])
    >>> sl = index_of(vocab).string_slice(0)
    >>> sl.is_slice.tolist(), sl.rest.token_ids.tolist()
    ([True, True, False, False, False], [2, 3])
"""

from __future__ import annotations

import threading
from typing import Sequence

import numpy as np

from .. import _engine
from ..automata.expr import ExprPool
from ..automata.lazy import LazyAutomaton
from .trie import TokenTrie

__all__ = [
    "CLOSURE_SLICES", "MIXED", "SLICES", "SLICE_CHAR", "StringSlice", "char_successor", "counted_body", "counted_run", "ends_along",
    "slice_chain", "uniform_successor",
]

#: The slices, widest first, as one-character regexes: any character of a JSON string but
#: ``"``, ``\`` and C0 controls; the same but U+2028 and U+2029 (what a pattern's ``.`` reads
#: there: ``^arn:.*$``); then the classes names, identifiers, slugs and codes are made of (names:
#: words and spaces, ``[\w -]``, ``[a-zA-Z0-9 ]``: 72-78k of Llama-3's tokens against 29-35k
#: without the space).
SLICES = (
    '[^"\\\\\\x00-\\x1f]',
    '[^"\\\\\\x00-\\x1f\\u2028\\u2029]',
    "[ A-Za-z0-9_]",
    "[ A-Za-z0-9]",
    "[A-Za-z0-9_]",
    "[A-Za-z0-9]",
    "[a-z0-9]",
    "[a-z]",
)
#: The first slice, a JSON string's raw characters.
SLICE_CHAR = SLICES[0]
#: The slices whose closure the native engine tries where their characters lead different ways
#: (a key's first characters beside any other key: ``slice_closure``). Not the spaced ones: their
#: longest tokens are runs of spaces (Llama-3: 128 characters), which a string under a length
#: bound does not read whole, so their closure would derive level after level before it failed;
#: where their characters lead one way they are taken as any other slice is.
CLOSURE_SLICES = frozenset({0, 1, 4, 5, 6, 7})
#: Where a slice's characters do not all lead one way.
MIXED: int = _engine.MIXED
#: The most nodes of a rest trie that is cut by token length (see :attr:`StringSlice.cuttable`).
REST_CUT_NODES = 65_536
#: Cuts of a rest trie below the vocabulary's (its tries are small): the last positions of a
#: string under a length share walks too.
REST_CUTS_BELOW = (12, 8, 4)


class StringSlice:
    """The slice tokens of one vocabulary (see the module docstring): a view of the native
    slice, which the vocabulary's :class:`~.index.VocabularyIndex` owns."""

    __slots__ = ("native", "is_slice", "by_length", "lengths", "rest", "length_starts", "_up_to", "_packed_up_to", "_cuts", "_lock")

    def __init__(self, native: _engine.StringSlice) -> None:
        self.native = native
        #: bool [V]: whether each token is a slice token (read-only)
        self.is_slice: np.ndarray = native.is_slice.view(bool)
        #: int64: ids of slice tokens, sorted by their length in characters
        self.by_length: np.ndarray = native.by_length
        #: int64: the sorted lengths
        self.lengths: np.ndarray = native.lengths
        #: the trie of the walkable tokens that are not slice tokens (its ``origin``: the vocabulary's trie)
        self.rest = TokenTrie(native.rest)
        #: ``[L]``: how many slice tokens have fewer than ``L`` characters (``L`` up to :attr:`longest` + 1)
        self.length_starts: np.ndarray = native.length_starts
        self._up_to: dict[int, np.ndarray] = {}
        self._packed_up_to: dict[int, np.ndarray] = {}
        self._cuts: dict[int, tuple[TokenTrie, TokenTrie]] = {}
        self._lock = threading.Lock()

    @property
    def longest(self) -> int:
        """The most characters in one slice token."""
        return int(self.native.longest)

    def up_to(self, m: int) -> np.ndarray:
        """Read-only bool mask of the slice tokens of at most ``m`` characters (cached)."""
        if m >= self.longest:
            return self.is_slice
        mask = self._up_to.get(m)
        if mask is None:
            mask = np.zeros(self.is_slice.size, dtype=bool)
            mask[self.by_length[: self.native.count_up_to(m)]] = True
            mask.flags.writeable = False
            with self._lock:
                if len(self._up_to) > 256:  # bounded: a few hundred masks of one byte per token
                    self._up_to.clear()
                self._up_to[m] = mask
        return mask

    def packed_up_to(self, m: int) -> np.ndarray:
        """:meth:`up_to` as packed int32 words (bit ``t % 32`` of word ``t // 32``, ``ceil(V /
        32)`` words; read-only, cached)."""
        words = self._packed_up_to.get(m)
        if words is None:
            size = (self.is_slice.size + 31) // 32
            packed = np.zeros(size * 4, dtype=np.uint8)
            bits = np.packbits(self.up_to(m), bitorder="little")
            packed[: bits.size] = bits
            words = packed.view("<i4").astype(np.int32, copy=False)
            words.flags.writeable = False
            with self._lock:
                if len(self._packed_up_to) > 256:  # bounded as up_to
                    self._packed_up_to.clear()
                self._packed_up_to[m] = words
        return words

    @property
    def cuttable(self) -> bool:
        """Whether the rest trie is small enough to be cut by token length (:meth:`rest_cut`):
        a JSON string's rest is a few thousand tokens; an identifier class's is most of the
        vocabulary, whose cuts would cost tens of megabytes."""
        return self.rest.num_nodes <= REST_CUT_NODES

    def cuts(self, lengths: Sequence[int]) -> list[int]:
        """The ``lengths`` (token lengths in bytes, longest first), then :data:`REST_CUTS_BELOW`,
        that are shorter than the longest rest token."""
        top = int(self.rest.height[0])
        return [n for n in (*lengths, *(c for c in REST_CUTS_BELOW if c < min(lengths, default=top + 1))) if n < top]

    def rest_cut(self, n: int) -> tuple[TokenTrie, TokenTrie]:
        """The rest trie's tokens of at most ``n`` bytes, and those of more, as two tries cut out
        of the vocabulary's (their ``origin``: nodes of the vocabulary's trie) (cached)."""
        got = self._cuts.get(n)
        if got is None:
            near, far = self.native.rest_cut(n)
            with self._lock:
                got = self._cuts.setdefault(n, (TokenTrie(near), TokenTrie(far)))
        return got

    def ends_along(self, chain: Sequence[int], count: int, rest_ends: np.ndarray) -> np.ndarray:
        """The state each of the first ``count`` slice tokens (by length) ends in along ``chain``
        (see :func:`ends_along`), then ``rest_ends``."""
        return ends_along(self.length_starts, chain, count, rest_ends)


def ends_along(length_starts: np.ndarray, chain: Sequence[int], count: int, rest_ends: np.ndarray) -> np.ndarray:
    """The state each of the first ``count`` slice tokens (sorted by length; ``length_starts[L]``
    of them have fewer than ``L`` characters) ends in along ``chain`` (``chain[c]``: the state after
    ``c`` characters; its last state for longer tokens), then ``rest_ends`` (int32): runs of equal
    lengths repeated, not indexed one by one."""
    starts = length_starts
    n = len(chain)
    bounds = np.minimum(starts[np.minimum(np.arange(n + 1), starts.size - 1)], count)
    bounds[0], bounds[n] = 0, count
    out = np.empty(count + rest_ends.size, dtype=np.int32)
    out[:count] = np.repeat(np.array(chain, dtype=np.int32), np.diff(bounds))
    out[count:] = rest_ends
    return out


def char_successor(auto: LazyAutomaton, q: int, k: int = 0) -> int:
    """Where every character of ``SLICES[k]`` leads from state ``q`` of ``auto`` (one state), -1 if
    every one dies, or ``MIXED`` (-2) if they disagree."""
    return auto.char_successor(q, k)


def uniform_successor(pool: ExprPool, e: int, k: int = 0) -> int:
    """The expression every character of ``SLICES[k]`` leads to from ``e``, ``NOTHING`` if every one
    dies, or ``MIXED``: the slice's one-character automaton (acyclic) walked in topological order,
    carrying the expression reached so far; an edge keeps one expression only if all its bytes
    agree there (read off the expression's byte classes). Memoised in the pool."""
    return pool.uniform_successor(e, k)


def counted_body(pool: ExprPool, e: int, k: int) -> tuple[int, int, int, int] | None:
    """``(x, lo, hi, rest)`` where ``e`` is ``x{lo,hi}·rest`` with every character of
    ``SLICES[k]`` read by ``x`` as a whole (to the empty string) and by ``rest`` not at all (a
    string body under a length bound); ``None`` for any other form. ``hi`` is -1 when unbounded."""
    return pool.counted_body(e, k)


def counted_run(auto: LazyAutomaton, q: int, k: int, longest: int) -> tuple[int, bool] | None:
    """What :func:`slice_chain` tells of a string body, without making its states: ``(m,
    branches)``, ``m`` the most slice characters that survive from ``q`` (``longest`` where
    any number does), ``branches`` whether a state after one of them may return or call (where
    the repetition may end: the term after it is final or starts with a symbol). ``None`` where
    ``q``'s expression is not a counted body (then see :func:`slice_chain`)."""
    return auto.counted_run(q, k, longest)


def slice_chain(auto: LazyAutomaton, q: int, k: int, longest: int) -> list[int] | None:
    """The states after 0, 1, ... ``longest`` characters of ``SLICES[k]`` from ``q``, read off the
    counters when ``q``'s expression is a counted repetition of a set that takes every slice
    character, followed by something that takes none (a string body ``x{lo,hi}"...``): nothing is
    walked, however long the string may be. The chain stops where slice characters die; it ends
    with its last state twice when every further length leads there. ``None`` when the expression
    has another form (then :func:`char_successor` steps one character at a time)."""
    return auto.slice_chain(q, k, longest)
