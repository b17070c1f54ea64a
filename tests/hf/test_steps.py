"""structgen.hf.steps: the one decoding step the LogitsProcessor, decode() and the server share.

Small byte vocabularies and hand-made scores: no model is needed.
"""

from __future__ import annotations

import pickle

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

import structgen  # noqa: E402
from structgen.hf.steps import (  # noqa: E402
    DeviceMasks,
    all_allowed,
    completes,
    forced_within,
    sample_token,
)

CPU = torch.device("cpu")
NEG = float("-inf")


def _abc() -> structgen.Vocabulary:
    return structgen.Vocabulary.from_bytes([b"a", b"b", b"c", None], eos_token_ids=[3])


def _encode(text: str) -> list[int]:
    """The byte vocabulary's tokenizer: one token per letter."""
    return [b"abc".index(ch.encode()) for ch in text]


# -- masks on the device -------------------------------------------------------------------------


def test_mask_is_the_guides_with_the_extra_columns_masked() -> None:
    guide = structgen.compile_regex("a|b", _abc())
    s = guide.initial_state
    mask = DeviceMasks().mask(guide, s, None, CPU, 6)
    assert mask.dtype == torch.bool and mask.device == CPU
    assert mask.tolist() == guide.token_mask(s).tolist() + [False, False]


def test_narrower_scores_are_fine_unless_the_guide_allows_a_token_past_them() -> None:
    vocab = _abc()
    ab = structgen.compile_regex("a|b", vocab)
    assert DeviceMasks().mask(ab, ab.initial_state, None, CPU, 2).tolist() == [True, True]
    c = structgen.compile_regex("c", vocab)
    with pytest.raises(structgen.VocabularyError, match="scores have 2 columns .* built for another tokenizer"):
        DeviceMasks().mask(c, c.initial_state, None, CPU, 2)


def test_masks_are_keyed_by_the_effective_budget() -> None:
    guide = structgen.compile_regex("a(bc)?", _abc())
    masks = DeviceMasks()
    s = guide.initial_state
    far = masks.mask(guide, s, 50, CPU, 4)
    assert masks.mask(guide, s, None, CPU, 4) is far  # a budget that narrows nothing shares the plain mask
    assert len(masks) == 1
    one = guide.next_state(s, 0)
    assert masks.mask(guide, one, 2, CPU, 4).tolist() == [False, True, False, True]
    tight = masks.mask(guide, one, 1, CPU, 4)  # one token left: "b" could not be closed, only EOS
    assert tight.tolist() == guide.token_mask(one, budget=1).tolist() == [False, False, False, True]
    assert len(masks) == 3
    with pytest.raises(structgen.UnsatisfiableConstraint):
        masks.mask(guide, s, 0, CPU, 4)


def test_masks_are_bounded_per_guide_and_pickle_empty() -> None:
    guide = structgen.compile_regex("abcabc", _abc())
    masks = DeviceMasks(capacity=2)
    s = guide.initial_state
    for token in [0, 1, 2, 0]:
        masks.mask(guide, s, None, CPU, 4)
        s = guide.next_state(s, token)
    assert len(masks) == 2
    copy = pickle.loads(pickle.dumps(masks))
    assert isinstance(copy, DeviceMasks) and len(copy) == 0 and copy.capacity == 2


def test_all_allowed() -> None:
    assert all_allowed(3, CPU).tolist() == [True, True, True]
    assert all_allowed(3, CPU) is all_allowed(3, CPU)


# -- the end of the output ---------------------------------------------------------------------------


def test_completes_only_where_eos_alone_may_follow() -> None:
    guide = structgen.compile_regex("ab?", _abc())
    s = guide.initial_state
    a = guide.next_state(s, 0)
    assert not completes(guide, s)  # not final
    assert not completes(guide, a)  # final, but "b" may follow
    assert completes(guide, guide.next_state(a, 1))


# -- choosing a token --------------------------------------------------------------------------------


def test_greedy_is_the_argmax_of_the_allowed_tokens() -> None:
    scores = torch.tensor([5.0, 1.0, 3.0]).masked_fill(torch.tensor([True, False, False]), NEG)
    assert sample_token(scores) == 2
    assert sample_token(scores, temperature=0.0, top_p=0.1) == 2


def _kept_by_transformers(scores: torch.Tensor, top_p: float) -> set[int]:
    warped = transformers.TopPLogitsWarper(top_p)(None, scores[None, :])[0]
    return set(torch.isfinite(warped).nonzero().flatten().tolist())


def _kept_by_mass(scores: torch.Tensor, top_p: float) -> set[int]:
    """The smallest set of most likely tokens whose mass reaches top_p (the old engine's way)."""
    probs, order = scores.softmax(-1).sort(descending=True)
    before = probs.cumsum(-1) - probs
    return set(order[before < top_p].tolist())


@pytest.mark.parametrize("top_p", [0.05, 0.3, 0.5, 0.9, 0.999])
def test_top_p_keeps_transformers_set(top_p: float) -> None:
    gen = torch.Generator().manual_seed(0)
    for _ in range(20):
        scores = torch.randn(40, generator=gen) * 3
        scores[torch.randperm(40, generator=gen)[:10]] = NEG  # masked tokens
        kept = _kept_by_transformers(scores, top_p)
        assert kept == _kept_by_mass(scores, top_p)
        drawn = {sample_token(scores, temperature=1.0, top_p=top_p, generator=gen) for _ in range(200)}
        assert drawn <= kept


def test_top_k_and_masked_tokens_are_never_drawn() -> None:
    scores = torch.tensor([0.0, 0.5, 1.0, NEG, 0.2])
    gen = torch.Generator().manual_seed(1)
    drawn = {sample_token(scores, temperature=5.0, top_k=2, generator=gen) for _ in range(300)}
    assert drawn == {1, 2}


def test_sampling_is_reproducible_with_a_seeded_generator() -> None:
    scores = torch.randn(100, generator=torch.Generator().manual_seed(2))

    def draws(seed: int) -> list[int]:
        gen = torch.Generator().manual_seed(seed)
        return [sample_token(scores, temperature=0.8, top_p=0.9, generator=gen) for _ in range(30)]

    assert draws(7) == draws(7)
    assert len(set(draws(7))) > 1


# -- fast-forward --------------------------------------------------------------------------------------


def test_forced_tokens_are_taken_only_when_they_fit_the_budget() -> None:
    guide = structgen.compile_regex("abc(a|b)", _abc())
    s = guide.initial_state
    after = guide.advance(s, [0, 1, 2])
    assert forced_within(guide, _encode, s, 10, budget_aware=True) == ([0, 1, 2], after)
    # exactly enough: three forced tokens and the one the model chooses after them
    assert forced_within(guide, _encode, s, 4, budget_aware=True) == ([0, 1, 2], after)
    # three fit but nothing is left to finish: sample instead (unless the budget is not enforced)
    assert forced_within(guide, _encode, s, 3, budget_aware=True) == ([], s)
    assert forced_within(guide, _encode, s, 3, budget_aware=False) == ([0, 1, 2], after)
    assert forced_within(guide, _encode, s, 2, budget_aware=False) == ([], s)
    assert forced_within(guide, _encode, s, 0, budget_aware=False) == ([], s)
    assert forced_within(guide, _encode, after, 10, budget_aware=True) == ([], after)  # a choice: nothing forced
