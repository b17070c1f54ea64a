"""A frame's tokens: the token ids a pushdown frame accepts from a trie node, and the trie nodes
where it may return (see :mod:`.frame_masks`), kept as a mask needs them: ids where they are few,
packed ``int32`` words (bit ``t % 32`` of word ``t // 32``) where they are many, made only when
read (a string body's hundred thousand slice tokens never become a list).

Example:
    >>> import numpy as np
    >>> frame = FrameTokens(np.array([1, 33]), (4,), 0)
    >>> words = np.zeros(2, dtype=np.int32); frame.or_into(words); words.tolist()
    [2, 2]
    >>> ids_of_words(words, 40).tolist()
    [1, 33]
"""

from __future__ import annotations

from typing import Callable, Sequence

import numpy as np

from .._engine import count_token_bits, or_token_bits, set_token_bits
from .token_walks import made

__all__ = ["PACKED_FROM", "FrameTokens", "ids_of_words", "packed_frame", "united"]

#: Frames with this many tokens keep them as packed words too.
PACKED_FROM = 2048
_EMPTY_IDS = np.empty(0, dtype=np.int64)


class FrameTokens:
    """The tokens of a frame from a trie node (see the module docstring)."""

    __slots__ = ("_ids", "size", "pops", "umax", "_words")

    def __init__(self, ids: np.ndarray | Callable[[], np.ndarray], pops: tuple[int, ...], umax: int, *,
                 size: int | None = None, words: np.ndarray | Callable[[], np.ndarray] | None = None) -> None:
        self._ids = ids  # (or how to make them, with their number as ``size``: a slice's tokens are made only if read)
        self.size: int = ids.size if size is None else size  # type: ignore[union-attr]
        self.pops = pops  # trie nodes where the frame may return with bytes left
        self.umax = umax  # an upper bound on the distance (within the frame) after any of ids
        self._words: np.ndarray | Callable[[], np.ndarray] | None = words  # (a large set, packed: see or_into)

    @property
    def ids(self) -> np.ndarray:
        """The token ids."""
        ids = self._ids = made(self._ids)
        return ids

    @property
    def packed(self) -> bool:
        """Whether the tokens are many and kept packed: a union with them ORs words, never lists them."""
        return self._words is not None and self.size >= PACKED_FROM

    def packed_words(self, width: int) -> np.ndarray:
        """The tokens as ``width`` packed words (read-only; made once, kept where the set is large)."""
        packed = self._words
        if isinstance(packed, np.ndarray):
            return packed
        if packed is None:
            packed = np.zeros(width, dtype=np.int32)
            set_token_bits(packed, self.ids)
        else:
            packed = packed()
        packed.flags.writeable = False
        if self.size >= PACKED_FROM:
            self._words = packed
        return packed

    def or_into(self, words: np.ndarray) -> None:
        """Set this frame's tokens in the packed mask ``words`` (int32, bit ``t % 32`` of word
        ``t // 32``; native): a large set is packed once and OR-ed a word at a time."""
        if self.size < PACKED_FROM:
            set_token_bits(words, self.ids)
        else:
            or_token_bits(words, self.packed_words(words.size))

    def with_umax(self, umax: int) -> "FrameTokens":
        """These tokens and returns with the distance bound ``umax`` (the tokens shared, not copied)."""
        if umax == self.umax:
            return self
        return FrameTokens(self._ids, self.pops, umax, size=self.size, words=self._words)

    def without(self, dead: Sequence[int] | np.ndarray, vocab_size: int, umax: int) -> "FrameTokens":
        """These tokens less ``dead``, with the distance bound ``umax``: a large set stays packed
        (its ids are not listed)."""
        if not self.packed:
            return FrameTokens(self.ids[~np.isin(self.ids, dead)], self.pops, umax)
        words = self.packed_words((vocab_size + 31) // 32)
        gone = np.zeros_like(words)
        set_token_bits(gone, np.asarray(dead, dtype=np.int64))
        return packed_frame(words & ~gone, vocab_size, self.pops, umax)


def packed_frame(words: np.ndarray, vocab_size: int, pops: tuple[int, ...], umax: int) -> FrameTokens:
    """A frame of the tokens set in ``words`` (kept, read-only), listed only where read."""
    words.flags.writeable = False
    return FrameTokens(lambda: ids_of_words(words, vocab_size), pops, umax, size=count_token_bits(words), words=words)


def united(parts: Sequence[FrameTokens | np.ndarray], vocab_size: int, pops: tuple[int, ...], umax: int) -> FrameTokens:
    """One frame of the tokens of every one of ``parts`` (frames, or arrays of ids), each once.
    Where a part is :attr:`~FrameTokens.packed`, the union is OR-ed into packed words (a string's
    hundred thousand slice tokens are never listed); else the ids, sorted (through a bool array
    over the vocabulary where they are many).

    >>> a = FrameTokens(np.array([3, 1]), (), 0)
    >>> united([a, np.array([1, 2])], 40, (7,), 0).ids.tolist()
    [1, 2, 3]
    >>> words = np.zeros(128, dtype=np.int32); words[:80] = -1   # tokens 0..2559 of 4,096
    >>> frame = united([packed_frame(words, 4096, (), 0), a, np.array([4000])], 4096, (), 0)
    >>> frame.packed, frame.size, frame.ids[-2:].tolist()
    (True, 2561, [2559, 4000])
    """
    ids: list[np.ndarray] = []
    for p in parts:
        if isinstance(p, FrameTokens):
            if p.packed:
                return _packed_union(parts, vocab_size, pops, umax)
            p = p.ids
        if p.size:
            ids.append(p)
    if len(ids) <= 1:
        return FrameTokens(ids[0] if ids else _EMPTY_IDS, pops, umax)
    if sum(p.size for p in ids) < PACKED_FROM:
        merged = np.sort(np.concatenate(ids))  # (each once: np.unique would import numpy.ma on its first call, 15 ms inside a step)
        return FrameTokens(merged[np.concatenate(([True], merged[1:] != merged[:-1]))], pops, umax)
    seen = np.zeros(vocab_size, dtype=bool)
    for p in ids:
        seen[p] = True
    return FrameTokens(np.flatnonzero(seen), pops, umax)


def _packed_union(parts: Sequence[FrameTokens | np.ndarray], vocab_size: int, pops: tuple[int, ...], umax: int) -> FrameTokens:
    words = np.zeros((vocab_size + 31) // 32, dtype=np.int32)
    for p in parts:
        if isinstance(p, FrameTokens):
            p.or_into(words)
        else:
            set_token_bits(words, p)
    return packed_frame(words, vocab_size, pops, umax)


def ids_of_words(words: np.ndarray, size: int) -> np.ndarray:
    """The token ids set in packed ``words`` (ascending)."""
    bits = np.unpackbits(words.view(np.uint8), bitorder="little")[:size]
    return np.flatnonzero(bits)
