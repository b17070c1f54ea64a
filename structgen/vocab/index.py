"""Everything derived from one vocabulary, owned in one place (XGrammar's ``TokenizerInfo``).

A :class:`VocabularyIndex` holds what guides need from a :class:`~.vocabulary.Vocabulary` beyond
its token bytes: the token trie (with its lookups: which byte strings are tokens or prefixes of
one), the string slices, the single-byte tokens, the tokens' lengths, the longest token (the
bytes no token holds are the vocabulary's own :attr:`~.vocabulary.Vocabulary.missing_bytes`). Each part is built on first use,
once, under the index's lock, and then shared by every guide over that vocabulary;
:func:`prepare_vocabulary` builds them all now (servers call it at start-up, so that no request
pays for them mid-generation). :func:`index_of` is the one cache of per-tokenizer data: one index
per vocabulary object, dropped with it.

Example:
    >>> import structgen
    >>> vocab = structgen.Vocabulary.from_bytes([b"a", b"ab", b'"', b""], eos_token_ids=[3])
    >>> index = index_of(vocab)
    >>> index is index_of(vocab), index.trie.num_nodes, index.longest_token
    (True, 4, 2)
    >>> index.trie.node_of(b"a") > 0, index.trie.node_of(b"b"), sorted(index.single_bytes)
    (True, -1, [34, 97])
"""

from __future__ import annotations

import threading
import weakref
from typing import Any, Callable, TypeVar

import numpy as np

from .. import _engine
from ..automata.byte_masks import bytes_of_mask
from .slices import SLICES, StringSlice
from .trie import TokenTrie
from .vocabulary import Vocabulary

__all__ = ["SHORT_TOKEN_CUTS", "VocabularyIndex", "index_of", "prepare_vocabulary", "string_slice", "token_trie"]

#: Where masks may split a vocabulary into short and long tokens (bytes, longest first): a state
#: that clamps for tokens of ``n`` bytes takes their mask from its clamped state and walks only
#: the longer tokens (:meth:`VocabularyIndex.long_tokens`) itself. (The native index keeps the
#: same list: ``cpp/engine/vocab.cpp``.)
SHORT_TOKEN_CUTS = (96, 64, 48, 32, 24, 16)

_T = TypeVar("_T")


class VocabularyIndex:
    """The per-tokenizer data of one vocabulary, built lazily and thread-safely (see the module
    docstring): the Python face of the native index (``cpp/engine/vocab.h``), which guides share.
    Get it with :func:`index_of`. It keeps the vocabulary's token tuple, not the vocabulary, so
    that the one cache of indexes (keyed weakly by vocabulary) never keeps a vocabulary alive.
    (:attr:`.Vocabulary.missing_bytes` is the vocabulary's own, computed once.)"""

    __slots__ = ("tokens", "native", "_name", "_lock", "_built", "_slices")

    def __init__(self, vocabulary: Vocabulary) -> None:
        self.tokens = vocabulary.tokens
        #: the native index (token bytes, EOS, the trie, the slices, the long-token tries)
        self.native = _engine.TokenIndex(vocabulary.tokens, sorted(vocabulary.eos_token_ids))
        self._name = vocabulary.name or "unnamed"
        self._lock = threading.RLock()
        self._built: dict[str, Any] = {}
        self._slices: dict[int, StringSlice] = {}

    def __repr__(self) -> str:
        built = ", ".join(sorted(self._built)) or "nothing built yet"
        return f"<VocabularyIndex of {self._name} ({len(self.tokens)} tokens): {built}>"

    def _once(self, name: str, build: Callable[[], _T]) -> _T:
        got = self._built.get(name)
        if got is None:
            with self._lock:
                got = self._built.get(name)
                if got is None:
                    got = self._built[name] = build()
        return got

    @property
    def trie(self) -> TokenTrie:
        """The breadth-first trie of every token with bytes."""
        return self._once("trie", lambda: TokenTrie(self.native.trie))

    def string_slice(self, k: int = 0) -> StringSlice:
        """The :class:`~.slices.StringSlice` of ``SLICES[k]``."""
        got = self._slices.get(k)
        if got is None:
            if not 0 <= k < len(SLICES):
                raise IndexError(f"no slice {k}: there are {len(SLICES)}")
            with self._lock:
                got = self._slices.get(k)
                if got is None:
                    got = self._slices[k] = StringSlice(self.native.slice(k))
        return got

    @property
    def single_bytes(self) -> frozenset[int]:
        """The bytes that are a token on their own."""
        return self._once("single_bytes", lambda: frozenset(bytes_of_mask(self.native.single_bytes)))

    @property
    def longest_token(self) -> int:
        """The most bytes in one token."""
        return self._once("longest_token", lambda: int(self.native.longest_token))

    @property
    def token_lengths(self) -> np.ndarray:
        """The bytes of each token (int64, 0 for a token without bytes; read-only)."""
        return self._once("token_lengths", lambda: self.native.token_lengths)

    @property
    def short_token_cuts(self) -> tuple[int, ...]:
        """The :data:`SHORT_TOKEN_CUTS` below the longest token."""
        return tuple(n for n in SHORT_TOKEN_CUTS if n < self.longest_token)

    def short_words(self, n: int) -> np.ndarray:
        """The tokens of at most ``n`` bytes as packed int32 words (bit ``t % 32`` of word ``t // 32``;
        read-only, cached): a string slice's tokens of a length, filtered by bytes with one AND."""
        def build() -> np.ndarray:
            lengths = self.token_lengths
            packed = np.zeros((lengths.size + 31) // 32 * 4, dtype=np.uint8)
            bits = np.packbits(lengths <= n, bitorder="little")
            packed[: bits.size] = bits
            words = packed.view("<i4").astype(np.int32, copy=False)
            words.flags.writeable = False
            return words
        return self._once(f"short_words {n}", build)

    def long_tokens(self, n: int) -> TokenTrie:
        """The trie of the tokens of more than ``n`` bytes, cut out of :attr:`trie`."""
        return self._once(f"long_tokens {n}", lambda: TokenTrie(self.native.long_tokens(n)))

    @property
    def memory_bytes(self) -> int:
        """Approximate bytes held by the native index (tokens, tries, slices, per-length masks)."""
        return int(self.native.memory_bytes)

    def prepare(self) -> "VocabularyIndex":
        """Build every part now (natively, the GIL released: well under a second for Llama-3's
        128k tokens); returns ``self``."""
        self.native.prepare()
        trie = self.trie
        trie.lookup, trie.num_children_list, trie.first_key, trie.depth_starts, trie.node_token  # noqa: B018  (the plain-Python walks' lookups)
        self.single_bytes, self.longest_token, self.token_lengths  # noqa: B018
        for n in self.short_token_cuts:
            self.long_tokens(n)
        for k in range(len(SLICES)):
            sl = self.string_slice(k)
            if sl.cuttable:
                for n in sl.cuts(self.short_token_cuts):
                    sl.rest_cut(n)
        return self


_INDEXES: "weakref.WeakKeyDictionary[Vocabulary, VocabularyIndex]" = weakref.WeakKeyDictionary()
_INDEXES_LOCK = threading.Lock()


def index_of(vocab: Vocabulary) -> VocabularyIndex:
    """The :class:`VocabularyIndex` of ``vocab``: one per vocabulary object, made on first use."""
    got = _INDEXES.get(vocab)
    if got is None:
        with _INDEXES_LOCK:
            got = _INDEXES.get(vocab)
            if got is None:
                got = _INDEXES[vocab] = VocabularyIndex(vocab)
    return got


def prepare_vocabulary(vocab: Vocabulary) -> VocabularyIndex:
    """Build everything derived from ``vocab`` now (:meth:`VocabularyIndex.prepare`, and the
    vocabulary's own :attr:`~.Vocabulary.missing_bytes`), so that no mask computation pays for it
    mid-generation. Servers call it at start-up."""
    vocab.missing_bytes  # noqa: B018  (computed once, kept by the vocabulary)
    return index_of(vocab).prepare()


def token_trie(vocab: Vocabulary) -> TokenTrie:
    """Shorthand for ``index_of(vocab).trie``."""
    return index_of(vocab).trie


def string_slice(vocab: Vocabulary, k: int = 0) -> StringSlice:
    """Shorthand for ``index_of(vocab).string_slice(k)``."""
    return index_of(vocab).string_slice(k)
