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

from typing import Callable

import numpy as np

from .._engine import or_token_bits, set_token_bits
from .token_walks import made

__all__ = ["PACKED_FROM", "FrameTokens", "ids_of_words"]

#: Frames with this many tokens keep them as packed words too.
PACKED_FROM = 2048


class FrameTokens:
    """The tokens of a frame from a trie node (see the module docstring)."""

    __slots__ = ("_ids", "size", "pops", "umax", "_words")

    def __init__(self, ids: np.ndarray | Callable[[], np.ndarray], pops: tuple[int, ...], umax: int, *,
                 size: int | None = None, words: Callable[[], np.ndarray] | None = None) -> None:
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

    def or_into(self, words: np.ndarray) -> None:
        """Set this frame's tokens in the packed mask ``words`` (int32, bit ``t % 32`` of word
        ``t // 32``; native): a large set is packed once and OR-ed a word at a time."""
        if self.size < PACKED_FROM:
            set_token_bits(words, self.ids)
            return
        packed = self._words
        if not isinstance(packed, np.ndarray):
            if packed is None:
                packed = np.zeros(words.size, dtype=np.int32)
                set_token_bits(packed, self.ids)
            else:
                packed = packed()
            packed.flags.writeable = False
            self._words = packed
        or_token_bits(words, packed)


def ids_of_words(words: np.ndarray, size: int) -> np.ndarray:
    """The token ids set in packed ``words`` (ascending)."""
    bits = np.unpackbits(words.view(np.uint8), bitorder="little")[:size]
    return np.flatnonzero(bits)
