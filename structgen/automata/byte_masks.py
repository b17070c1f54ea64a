"""Sets of bytes as 256-bit ints (bit ``b`` set: byte ``b`` is in the set), the currency of
:mod:`.expr`'s byte-set terms and of the automata built from them."""

from __future__ import annotations

import functools
from typing import Iterable

__all__ = ["ALL_BYTES", "byte_mask", "bytes_of_mask"]

#: Every byte, as a 256-bit mask.
ALL_BYTES = (1 << 256) - 1


@functools.lru_cache(maxsize=4096)
def bytes_of_mask(mask: int) -> tuple[int, ...]:
    """The bytes of a 256-bit mask, ascending (cached: masks repeat across states).

    >>> bytes_of_mask(byte_mask(b"ba"))
    (97, 98)
    """
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return tuple(out)


def byte_mask(data: Iterable[int]) -> int:
    """The 256-bit mask of some bytes.

    >>> byte_mask(b"ab") == (1 << 97) | (1 << 98)
    True
    """
    m = 0
    for b in data:
        m |= 1 << b
    return m
