"""structgen.hf.steps: the torch side of a step (sampling, logit adjustments, logprobs) that the
LogitsProcessor, decode() and the server share; the step itself is the cursor's
(tests/guides/test_cursor.py). Small byte vocabularies and hand-made scores: no model is needed.
"""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

import structgen  # noqa: E402
from structgen.hf.steps import (  # noqa: E402
    LogitAdjustments,
    TokenHistory,
    adjust_logits,
    sample_token,
    token_logprobs,
)

CPU = torch.device("cpu")
NEG = float("-inf")


def _abc() -> structgen.Vocabulary:
    return structgen.Vocabulary.from_bytes([b"a", b"b", b"c", None], eos_token_ids=[3])


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


# -- logit adjustments (penalties, logit_bias) and logprobs ----------------------------------------


def test_frequency_and_presence_penalties_follow_openais_formula() -> None:
    adj = LogitAdjustments(frequency_penalty=0.5, presence_penalty=0.25)
    history = adj.history([0, 0, 3], width=5, device=CPU)  # the prompt does not count for these two
    for token in (1, 1, 1, 2):
        history.add(token)
    scores = torch.tensor([[1.0, 2.0, -1.0, 0.5, 3.0]])
    counts = torch.tensor([0.0, 3.0, 1.0, 0.0, 0.0])
    expected = scores - counts * 0.5 - (counts > 0).float() * 0.25
    assert torch.equal(adjust_logits(scores, [adj], [history]), expected)


def test_repetition_penalty_divides_positive_and_multiplies_negative_logits_of_seen_tokens() -> None:
    adj = LogitAdjustments(repetition_penalty=2.0)
    history = adj.history([0, 2], width=4, device=CPU)  # prompt tokens count here (vLLM's rule)
    history.add(3)
    scores = torch.tensor([[4.0, 4.0, -4.0, -1.0]])
    assert adjust_logits(scores, [adj], [history]).tolist() == [[2.0, 4.0, -8.0, -2.0]]


def test_logit_bias_is_added_and_ids_past_the_logits_are_ignored() -> None:
    adj = LogitAdjustments.from_bias({1: -100.0, 2: 7.5, 9: 50.0})
    history = adj.history([], width=3, device=CPU)
    out = adjust_logits(torch.zeros(2, 3), [adj, LogitAdjustments()], [history, None])
    assert out.tolist() == [[0.0, -100.0, 7.5], [0.0, 0.0, 0.0]]


def test_the_bias_comes_before_the_penalties() -> None:
    # vLLM's order: a biased logit is then penalised (so a penalty can still break a biased loop).
    adj = LogitAdjustments(repetition_penalty=2.0, frequency_penalty=1.0, logit_bias=((0, 6.0),))
    history = adj.history([], width=2, device=CPU)
    history.add(0)
    assert adjust_logits(torch.tensor([[2.0, 0.0]]), [adj], [history]).tolist() == [[(2.0 + 6.0) / 2 - 1.0, 0.0]]


def test_identity_adjustments_leave_scores_alone_and_others_need_a_history() -> None:
    scores = torch.tensor([[1.0, 2.0]])
    assert LogitAdjustments(logit_bias=((0, 0.0),)).is_identity
    assert torch.equal(adjust_logits(scores, [LogitAdjustments()], [None]), scores)
    with pytest.raises(ValueError, match="no token history"):
        adjust_logits(scores, [LogitAdjustments(presence_penalty=1.0)], [None])


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"repetition_penalty": 0.0}, "repetition_penalty must be positive"),
        ({"frequency_penalty": float("nan")}, "frequency_penalty must be a finite number"),
        ({"logit_bias": ((-1, 1.0),)}, "logit_bias: token -1"),
    ],
)
def test_bad_adjustments_are_refused(options: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        LogitAdjustments(**options)


def test_token_history_counts_only_ids_inside_the_logits() -> None:
    history = TokenHistory(3, CPU)
    for token in (0, 0, 5):
        history.add(token)
    assert history.counts.tolist() == [2.0, 0.0, 0.0] and history.seen.tolist() == [True, False, False]


def test_logprobs_are_of_the_distribution_the_mask_leaves() -> None:
    masked = torch.tensor([1.0, NEG, 3.0, 0.0, NEG])
    entry = token_logprobs(masked, 3, top=10)
    allowed = torch.tensor([1.0, 3.0, 0.0])
    expected = torch.log_softmax(allowed, -1)
    assert entry.logprob == pytest.approx(float(expected[2]))
    assert [t for t, _ in entry.top] == [2, 0, 3]  # only allowed tokens, best first, at most the allowed count
    assert [p for _, p in entry.top] == pytest.approx(sorted(expected.tolist(), reverse=True))
    assert token_logprobs(torch.tensor([NEG, 5.0]), 1, top=2).top == ((1, 0.0),)  # one way on: probability 1
    assert token_logprobs(masked, 2).top == ()
