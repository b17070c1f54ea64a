"""structgen.LogitsProcessor with transformers' generate, on a tiny random-weight Llama.

A random model picks arbitrary tokens among the allowed ones, so every output must still be
accepted by the guide token by token: it either ends with EOS in a final state (then only padding
follows) or runs into max_new_tokens in a live state.
"""

from __future__ import annotations

from typing import Any

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

import structgen  # noqa: E402
from structgen import LogitsProcessor, StructgenError, TokenRejected, VocabularyError  # noqa: E402
from structgen.hf.models import eos_token_ids, vocabulary_for  # noqa: E402

PATTERNS = [
    r"\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])",
    r"(yes|no|maybe)",
    r"[a-z]+( [a-z]+){0,3}\.",
    r'\{"name": "[A-Za-z ]{1,12}", "age": (0|[1-9]\d?)\}',
    r"(\+|-)?(0|[1-9][0-9]*)(\.[0-9]+)?",
    r"héllo wörld|日本語|🙂+",
]
PAD = 2  # the tiny model's pad_token_id (= EOS, <|im_end|>)


@pytest.fixture(scope="module")
def vocab(tiny_llama: Any) -> structgen.Vocabulary:
    model, tokenizer = tiny_llama
    return vocabulary_for(tokenizer, eos_token_ids=eos_token_ids(model, tokenizer))


def _prompt(tokenizer: Any, texts: list[str]) -> tuple[torch.Tensor, torch.Tensor]:
    """Left-padded batch built by hand (the SmolLM2 tokenizer has no pad token set)."""
    encoded = [tokenizer(t)["input_ids"] for t in texts]
    width = max(len(e) for e in encoded)
    ids = torch.full((len(encoded), width), PAD, dtype=torch.long)
    mask = torch.zeros((len(encoded), width), dtype=torch.long)
    for i, e in enumerate(encoded):
        ids[i, width - len(e) :] = torch.tensor(e)
        mask[i, width - len(e) :] = 1
    return ids, mask


def _check_row(guide: structgen.Guide, generated: list[int], max_new_tokens: int) -> bytes:
    """Walk one generated row through the guide; return the bytes before EOS."""
    state = guide.initial_state
    for i, token in enumerate(generated):
        if token in guide.vocabulary.eos_token_ids and guide.is_final(state):
            assert all(t == PAD for t in generated[i + 1 :]), f"non-padding after EOS: {generated}"
            return guide.vocabulary.decode(generated[:i])
        state = guide.next_state(state, token)
        assert state >= 0, f"token {token} at position {i} is not allowed: {generated}"
    assert len(generated) == max_new_tokens, f"stopped early without EOS: {generated}"
    return guide.vocabulary.decode(generated)


def _generate(model: Any, ids: torch.Tensor, mask: torch.Tensor, processor: LogitsProcessor, **kwargs: Any) -> torch.Tensor:
    kwargs.setdefault("max_new_tokens", 12)
    with torch.inference_mode():
        out = model.generate(
            input_ids=ids,
            attention_mask=mask,
            logits_processor=transformers.LogitsProcessorList([processor]),
            eos_token_id=sorted(processor.guide.vocabulary.eos_token_ids),
            pad_token_id=PAD,
            **kwargs,
        )
    return out[:, ids.shape[1] :]


@pytest.mark.parametrize("pattern", PATTERNS)
def test_batch_greedy_outputs_follow_the_guide(tiny_llama: Any, vocab: structgen.Vocabulary, pattern: str) -> None:
    model, tokenizer = tiny_llama
    guide = structgen.compile_regex(pattern, vocab)
    ids, mask = _prompt(tokenizer, ["A date:", "Tell me something longer, please:", "x"])
    out = _generate(model, ids, mask, LogitsProcessor(guide), do_sample=False, max_new_tokens=24)
    assert out.shape[0] == 3
    for row in out.tolist():
        _check_row(guide, row, 24)


@pytest.mark.parametrize("pattern", PATTERNS)
def test_sampling_many_seeds(tiny_llama: Any, vocab: structgen.Vocabulary, pattern: str) -> None:
    model, tokenizer = tiny_llama
    guide = structgen.compile_regex(pattern, vocab)
    ids, mask = _prompt(tokenizer, ["Go:"])
    processor = LogitsProcessor(guide)  # one processor across all the calls
    finished = 0
    for seed in range(12):
        torch.manual_seed(seed)
        out = _generate(model, ids, mask, processor, do_sample=True, temperature=2.0, top_k=0, num_return_sequences=2)
        assert out.shape[0] == 2
        for row in out.tolist():
            text = _check_row(guide, row, 12)
            if PAD in row:
                finished += 1
                assert guide.accepts_bytes(text)
    if pattern == r"(yes|no|maybe)":
        assert finished == 24  # at most 3 tokens then EOS: always complete


def test_finite_language_always_completes(tiny_llama: Any, vocab: structgen.Vocabulary) -> None:
    model, tokenizer = tiny_llama
    pattern = PATTERNS[0]
    guide = structgen.compile_regex(pattern, vocab)
    ids, mask = _prompt(tokenizer, ["a", "bb"])
    for seed in range(6):
        torch.manual_seed(seed)
        out = _generate(model, ids, mask, LogitsProcessor(guide), do_sample=True, num_return_sequences=3, max_new_tokens=16)
        for row in out.tolist():
            text = _check_row(guide, row, 16).decode()
            assert len(text) == 10 and text[4] == "-" and text[7] == "-"


def test_beam_search(tiny_llama: Any, vocab: structgen.Vocabulary) -> None:
    model, tokenizer = tiny_llama
    guide = structgen.compile_regex(PATTERNS[3], vocab)
    ids, mask = _prompt(tokenizer, ["JSON:", "Another prompt here:"])
    out = _generate(model, ids, mask, LogitsProcessor(guide), num_beams=4, num_return_sequences=2, max_new_tokens=20)
    assert out.shape[0] == 4
    for row in out.tolist():
        _check_row(guide, row, 20)


def test_logits_wider_than_the_vocabulary(
    smollm2_tokenizer: Any, make_tiny_llama: Any, vocab: structgen.Vocabulary
) -> None:
    extra = 37
    model = make_tiny_llama(smollm2_tokenizer, extra_columns=extra, seed=1)
    guide = structgen.compile_regex(r"[a-z ]{3,30}", vocab)

    def boost_padding_columns(module: Any, inputs: Any, output: torch.Tensor) -> torch.Tensor:
        output = output.clone()
        output[..., vocab.size :] += 100.0
        return output

    model.lm_head.register_forward_hook(boost_padding_columns)
    ids, mask = _prompt(smollm2_tokenizer, ["abc"])
    with torch.inference_mode():  # without the processor greedy decoding picks a padding column
        plain = model.generate(input_ids=ids, attention_mask=mask, max_new_tokens=1, do_sample=False, pad_token_id=PAD)
    assert plain[0, -1].item() >= vocab.size
    out = _generate(model, ids, mask, LogitsProcessor(guide), do_sample=False, max_new_tokens=8)
    assert out.max().item() < vocab.size
    _check_row(guide, out[0].tolist(), 8)

    processor = LogitsProcessor(guide)
    scores = torch.zeros((2, vocab.size + extra))
    masked = processor(torch.tensor([[5, 6], [5, 7]]), scores)
    assert masked.shape == scores.shape
    assert torch.isinf(masked[:, vocab.size :]).all()
    assert torch.isfinite(masked[:, : vocab.size]).any(dim=1).all()


def test_scores_are_not_edited_in_place_and_dtype_is_kept(vocab: structgen.Vocabulary) -> None:
    guide = structgen.compile_regex(r"(yes|no)", vocab)
    processor = LogitsProcessor(guide)
    scores = torch.randn((3, vocab.size), dtype=torch.float16)
    before = scores.clone()
    out = processor(torch.tensor([[7], [8], [9]]), scores)
    assert torch.equal(scores, before)
    assert out.dtype == torch.float16 and out is not scores
    allowed = torch.isfinite(out[0]).nonzero().flatten().tolist()
    assert allowed == guide.allowed_token_ids(guide.initial_state).tolist()


def test_rows_advance_independently_and_finished_rows_pass_through(vocab: structgen.Vocabulary) -> None:
    guide = structgen.compile_regex(r"(yes|no)", vocab)
    eos = min(vocab.eos_token_ids)
    yes, no = (vocab.tokens.index(b"yes"), vocab.tokens.index(b"no"))
    processor = LogitsProcessor(guide)
    prompt = [[11, 12], [11, 13]]
    width = vocab.size
    processor(torch.tensor(prompt), torch.zeros((2, width)))
    out = processor(torch.tensor([prompt[0] + [yes], prompt[1] + [no]]), torch.zeros((2, width)))
    # Both rows are complete: only EOS is allowed.
    for row in out:
        assert torch.isfinite(row).nonzero().flatten().tolist() == sorted(vocab.eos_token_ids)
    # Row 0 ends; row 1 too; then transformers pads: finished rows let everything through.
    out = processor(torch.tensor([prompt[0] + [yes, eos], prompt[1] + [no, eos]]), torch.zeros((2, width)))
    assert torch.isfinite(out).all()
    out = processor(torch.tensor([prompt[0] + [yes, eos, PAD], prompt[1] + [no, eos, PAD]]), torch.zeros((2, width)))
    assert torch.isfinite(out).all()


def test_beams_that_swap_rows_keep_their_own_state(vocab: structgen.Vocabulary) -> None:
    guide = structgen.compile_regex(r"ab|ba", vocab)
    a, b = vocab.tokens.index(b"a"), vocab.tokens.index(b"b")
    processor = LogitsProcessor(guide)
    width = vocab.size
    processor(torch.tensor([[1], [1]]), torch.zeros((2, width)))
    processor(torch.tensor([[1, a], [1, b]]), torch.zeros((2, width)))
    out = processor(torch.tensor([[1, b, a], [1, a, b]]), torch.zeros((2, width)))  # rows swapped
    assert torch.isfinite(out).sum().item() == 2 * len(vocab.eos_token_ids)


def test_reused_across_generate_calls(tiny_llama: Any, vocab: structgen.Vocabulary) -> None:
    model, tokenizer = tiny_llama
    guide = structgen.compile_regex(PATTERNS[0], vocab)
    processor = LogitsProcessor(guide)
    first_ids, first_mask = _prompt(tokenizer, ["First prompt", "and its neighbour"])
    for row in _generate(model, first_ids, first_mask, processor, max_new_tokens=16).tolist():
        _check_row(guide, row, 16)
    # A different batch size and a prompt that merely extends the first one's first row.
    second_ids, second_mask = _prompt(tokenizer, ["First prompt and more words"])
    for row in _generate(model, second_ids, second_mask, processor, max_new_tokens=16).tolist():
        _check_row(guide, row, 16)
    # Same shapes as the first call, sampling this time.
    torch.manual_seed(3)
    for row in _generate(model, first_ids, first_mask, processor, max_new_tokens=16, do_sample=True).tolist():
        _check_row(guide, row, 16)


def test_prompt_extending_the_previous_one_starts_afresh(vocab: structgen.Vocabulary) -> None:
    guide = structgen.compile_regex(r"ab", vocab)
    a = vocab.tokens.index(b"a")
    processor = LogitsProcessor(guide)
    width = vocab.size
    processor(torch.tensor([[1, 2]]), torch.zeros((1, width)))
    processor(torch.tensor([[1, 2, a]]), torch.zeros((1, width)))
    # A new generate whose prompt is the old prompt plus unrelated tokens: initial state again.
    out = processor(torch.tensor([[1, 2, 500, 600]]), torch.zeros((1, width)))
    assert torch.isfinite(out[0]).nonzero().flatten().tolist() == guide.allowed_token_ids(0).tolist()
    processor.reset()
    out = processor(torch.tensor([[1, 2, a]]), torch.zeros((1, width)))
    assert torch.isfinite(out[0]).nonzero().flatten().tolist() == guide.allowed_token_ids(0).tolist()


class _ForceToken(transformers.LogitsProcessor):
    """Makes ``token`` the only choice from ``after`` generated tokens on (a hostile processor)."""

    def __init__(self, token: int, prompt_len: int, after: int = 1) -> None:
        self.token, self.prompt_len, self.after = token, prompt_len, after

    def __call__(self, input_ids: torch.Tensor, scores: torch.Tensor) -> torch.Tensor:
        if input_ids.shape[1] - self.prompt_len >= self.after:
            scores = torch.full_like(scores, float("-inf"))
            scores[:, self.token] = 0.0
        return scores


def test_rejects_a_forced_invalid_token(tiny_llama: Any, vocab: structgen.Vocabulary) -> None:
    model, tokenizer = tiny_llama
    guide = structgen.compile_regex(r"\d{4}", vocab)
    letter = vocab.tokens.index(b"x")
    ids, mask = _prompt(tokenizer, ["Year:"])
    processors = transformers.LogitsProcessorList([LogitsProcessor(guide), _ForceToken(letter, ids.shape[1])])
    with pytest.raises(TokenRejected, match=r"generated token \d+ \(b'x'\), which <Guide regex .* does not allow") as info:
        model.generate(input_ids=ids, attention_mask=mask, logits_processor=processors, max_new_tokens=4, pad_token_id=PAD)
    assert info.value.token_id == letter and isinstance(info.value, StructgenError)


def test_rejects_eos_before_the_output_is_complete(vocab: structgen.Vocabulary) -> None:
    guide = structgen.compile_regex(r"\d{4}", vocab)
    one = vocab.tokens.index(b"1")
    eos = min(vocab.eos_token_ids)
    processor = LogitsProcessor(guide)
    processor(torch.tensor([[9]]), torch.zeros((1, vocab.size)))
    processor(torch.tensor([[9, one]]), torch.zeros((1, vocab.size)))
    with pytest.raises(TokenRejected, match=r"token \d+ \(EOS\).* after '1'"):
        processor(torch.tensor([[9, one, eos]]), torch.zeros((1, vocab.size)))


def test_a_state_no_token_can_continue_raises() -> None:
    # "ab" is a token, but then no token starts with "c" ("bc" does not fit): a token-level dead
    # end. The guide raises for that state and the processor lets the error through.
    vocab = structgen.Vocabulary.from_bytes([b"ab", b"bc", None], eos_token_ids=[2])
    guide = structgen.compile_regex(r"abc", vocab)
    processor = LogitsProcessor(guide)
    out = processor(torch.tensor([[1]]), torch.zeros((1, 3)))
    assert torch.isfinite(out[0]).tolist() == [True, False, False]
    with pytest.raises(StructgenError, match="no token .* can continue"):
        processor(torch.tensor([[1, 0]]), torch.zeros((1, 3)))


def test_narrower_logits_than_a_guide_needs_raise() -> None:
    vocab = structgen.Vocabulary.from_bytes([b"a", b"b", b"c", None], eos_token_ids=[3])
    guide = structgen.compile_regex(r"c", vocab)
    with pytest.raises(VocabularyError, match="logits have 2 columns"):
        LogitsProcessor(guide)(torch.tensor([[0]]), torch.zeros((1, 2)))


def test_needs_a_guide() -> None:
    with pytest.raises(TypeError, match="structgen.Guide"):
        LogitsProcessor(r"\d+")  # type: ignore[arg-type]


def test_masks_are_cached_per_state_and_width(vocab: structgen.Vocabulary) -> None:
    structgen.clear_cache()  # (a new guide: its matchers hold no mask yet)
    guide = structgen.compile_regex(r"(yes|no)", vocab)
    processor = LogitsProcessor(guide)
    scores = torch.zeros((1, vocab.size))
    processor(torch.tensor([[5]]), scores)
    processor.reset()
    processor(torch.tensor([[6]]), scores)
    # one state: one packed mask, kept by the guide's native core and shared by every caller (and
    # every width: the words past the vocabulary's are zeroed as a row is filled)
    assert guide._core.num_masks == 1 and not structgen.Matcher.of(guide, vocab.size)._packed
    wide = processor(torch.tensor([[6]]), torch.zeros((1, vocab.size + 5)))
    assert guide._core.num_masks == 1 and not torch.isfinite(wide[0, vocab.size:]).any()
