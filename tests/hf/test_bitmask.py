"""Packed bitmasks applied to logits (structgen.hf.bitmask), against a bit-by-bit reference."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import structgen  # noqa: E402
from structgen import Matcher  # noqa: E402
from structgen.hf.bitmask import (  # noqa: E402
    _unpack_numpy, _unpack_torch, apply_token_bitmask_, unpack_token_bitmask,
)


def reference(logits: Any, bitmask: np.ndarray, indices: list[int]) -> Any:
    out = logits.clone()
    for i, row in enumerate(indices):
        for t in range(out.shape[1]):
            word = t // 32
            allowed = word < bitmask.shape[1] and (int(bitmask[i, word]) >> (t % 32)) & 1
            if not allowed:
                out[row, t] = float("-inf")
    return out


@pytest.mark.parametrize("indices", [[0, 1, 2], [2, 3], [4, 1, 3], [3]])
def test_random_bitmasks_against_the_reference(indices: list[int]) -> None:
    rng = np.random.default_rng(len(indices) * 10 + indices[0])
    logits = torch.randn(5, 100)
    bitmask = rng.integers(-(2**31), 2**31, size=(len(indices), 4), dtype=np.int64).astype(np.int32)
    expected = reference(logits, bitmask, indices)
    got = apply_token_bitmask_(logits, torch.from_numpy(bitmask), indices)
    assert got is logits and torch.equal(logits, expected)


def test_both_unpackers_agree_and_pad() -> None:
    bitmask = torch.from_numpy(np.random.default_rng(1).integers(-(2**31), 2**31, size=(3, 7)).astype(np.int32))
    assert torch.equal(_unpack_numpy(bitmask), _unpack_torch(bitmask))
    wide = unpack_token_bitmask(bitmask, 7 * 32 + 5)
    assert wide.shape == (3, 229) and not wide[:, 224:].any()
    assert unpack_token_bitmask(bitmask, 50).shape == (3, 50)


def test_bfloat16_and_default_rows() -> None:
    logits = torch.zeros(2, 40, dtype=torch.bfloat16)
    bitmask = torch.tensor([[1 << 3, 1]], dtype=torch.int32)  # tokens 3 and 32
    apply_token_bitmask_(logits, bitmask)
    assert torch.isfinite(logits[0]).nonzero().flatten().tolist() == [3, 32]
    assert torch.isfinite(logits[1]).all()
    assert apply_token_bitmask_(logits, bitmask[:0]) is logits
    with pytest.raises(ValueError, match="1 bitmask rows for 2 indices"):
        apply_token_bitmask_(logits, bitmask, [0, 1])


def test_matcher_rows_mask_exactly_the_guide(smollm2_vocabulary: Any) -> None:
    vocab = smollm2_vocabulary
    guide = structgen.compile_json_schema({"type": "object", "properties": {"a": {"type": "integer"}}}, vocab)
    m = Matcher(guide)
    bitmask = Matcher.allocate_token_bitmask(2, vocab.size)
    s1 = guide.advance(guide.initial_state, [vocab.tokens.index(b"{")])
    m.fill_next_token_bitmask(guide.initial_state, bitmask, 0)
    m.fill_next_token_bitmask(s1, bitmask, 1)
    logits = torch.randn(3, vocab.size)
    before = logits.clone()
    apply_token_bitmask_(logits, torch.from_numpy(bitmask), [2, 0])
    for row, state in ((2, guide.initial_state), (0, s1)):
        allowed = torch.from_numpy(guide.token_mask(state).copy())
        assert torch.equal(torch.isfinite(logits[row]), allowed)
        assert torch.equal(logits[row][allowed], before[row][allowed])
    assert torch.equal(logits[1], before[1])
