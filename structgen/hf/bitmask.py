"""Packed token bitmasks applied to logits (torch): the one mask format of every integration.

The bitmask is what a row's :class:`~structgen.guides.cursor.Cursor` fills: ``[rows, ceil(V / 32)]``
int32 words, token ``t`` allowed iff bit ``t % 32`` of word ``t // 32`` is set.
:func:`apply_token_bitmask_` sets the refused tokens of the chosen rows of the logits to ``-inf``
in place (other rows are not touched); :func:`masked_scores` returns new scores (a
``LogitsProcessor`` must not edit its input).

Example:
    >>> import torch
    >>> logits = torch.zeros(3, 5)
    >>> bitmask = torch.tensor([[0b00101]], dtype=torch.int32)   # tokens 0 and 2
    >>> apply_token_bitmask_(logits, bitmask, [1]).tolist()[1]
    [0.0, -inf, 0.0, -inf, -inf]
"""

from __future__ import annotations

import functools
from typing import Sequence

import numpy as np
import torch

__all__ = ["apply_token_bitmask_", "masked_scores", "unpack_token_bitmask"]


@functools.lru_cache(maxsize=8)
def _shifts(device: torch.device) -> torch.Tensor:
    return torch.arange(32, dtype=torch.int32, device=device)


def _unpack_numpy(bitmask: torch.Tensor) -> torch.Tensor:
    """numpy's unpackbits: one C loop (torch's shifts are several passes over the CPU)."""
    packed = bitmask.contiguous().numpy().view(np.uint8)
    return torch.from_numpy(np.unpackbits(packed, axis=1, bitorder="little")).view(torch.bool)


def _unpack_torch(bitmask: torch.Tensor) -> torch.Tensor:
    """Shifts on the bitmask's device (a GPU: no copy back to the host)."""
    rows, words = bitmask.shape
    return ((bitmask.unsqueeze(-1) >> _shifts(bitmask.device)) & 1).view(rows, words * 32).bool()


def unpack_token_bitmask(bitmask: torch.Tensor, width: int) -> torch.Tensor:
    """The ``[rows, width]`` bool tensor of the allowed tokens, on the bitmask's device. Columns
    past the bitmask's ``32 * words`` are refused."""
    bits = _unpack_numpy(bitmask) if bitmask.device.type == "cpu" else _unpack_torch(bitmask)
    if bits.shape[1] >= width:
        return bits[:, :width]
    padded = torch.zeros((bits.shape[0], width), dtype=torch.bool, device=bits.device)
    padded[:, : bits.shape[1]] = bits
    return padded


def apply_token_bitmask_(logits: torch.Tensor, bitmask: torch.Tensor,
                         indices: Sequence[int] | None = None) -> torch.Tensor:
    """Set to ``-inf`` the logits of the tokens ``bitmask`` refuses, in place; returns ``logits``.

    ``bitmask[i]`` masks row ``indices[i]`` of ``logits`` (default: row ``i``); the bitmask is
    moved to the logits' device (``non_blocking``: fill it in pinned memory). Rows not named are
    not touched; a contiguous run of rows is masked through a view, other rows gathered and
    written back.
    """
    count = bitmask.shape[0]
    if count == 0:
        return logits
    if bitmask.device != logits.device:
        bitmask = bitmask.to(logits.device, non_blocking=True)
    refused = ~unpack_token_bitmask(bitmask, logits.shape[-1])
    if indices is None:
        indices = range(count)
    if len(indices) != count:
        raise ValueError(f"{count} bitmask rows for {len(indices)} indices")
    first = indices[0]
    if all(index == first + i for i, index in enumerate(indices)):
        logits[first:first + count].masked_fill_(refused, float("-inf"))
        return logits
    where = torch.tensor(list(indices), dtype=torch.long, device=logits.device)
    rows = logits.index_select(0, where).masked_fill_(refused, float("-inf"))
    logits.index_copy_(0, where, rows)
    return logits


def masked_scores(scores: torch.Tensor, bitmask: np.ndarray | torch.Tensor) -> torch.Tensor:
    """New ``[rows, width]`` scores: ``scores`` with the tokens ``bitmask`` (``[rows, words]``)
    refuses at ``-inf`` (columns past the bitmask's ``32 * words`` are refused too).

    Example:
        >>> masked_scores(torch.zeros(1, 3), np.array([[0b101]], dtype=np.int32)).tolist()
        [[0.0, -inf, 0.0]]
    """
    packed = torch.from_numpy(bitmask) if isinstance(bitmask, np.ndarray) else bitmask
    if packed.device != scores.device:
        packed = packed.to(scores.device, non_blocking=True)
    return scores.masked_fill(~unpack_token_bitmask(packed, scores.shape[-1]), float("-inf"))
