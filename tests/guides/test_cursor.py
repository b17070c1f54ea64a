"""The one step (structgen.guides.cursor.Cursor): the packed mask with the budget and the widths,
the end of the output, forced tokens within the budget, the thinking's budget, failing closed,
and the batch fill. Small byte vocabularies: no model, no torch."""

from __future__ import annotations

import numpy as np
import pytest

import structgen
from structgen.errors import TokenRejected, UnsatisfiableConstraint, VocabularyError
from structgen.guides.cursor import Cursor, fill_next_token_bitmasks
from structgen.guides.matcher import Matcher
from structgen.guides.text_budget import TextBudget


def _abc() -> structgen.Vocabulary:
    return structgen.Vocabulary.from_bytes([b"a", b"b", b"c", None], eos_token_ids=[3])


def _encode(text: str) -> list[int]:
    """The byte vocabulary's tokenizer: one token per letter."""
    return [b"abc".index(ch.encode()) for ch in text]


def bits(row: np.ndarray, width: int) -> list[bool]:
    """A packed row as bools, bit by bit (the slow obvious way)."""
    words = row.astype(np.int64) & 0xFFFFFFFF
    return [bool((int(words[t // 32]) >> (t % 32)) & 1) for t in range(width)]


def mask_of(cursor: Cursor) -> list[bool]:
    bitmask = Matcher.allocate_token_bitmask(1, cursor.matcher.vocab_size)
    cursor.fill(bitmask)
    return bits(bitmask[0], cursor.matcher.vocab_size)


def test_the_mask_is_the_guides_with_the_extra_columns_refused() -> None:
    guide = structgen.compile_regex("a|b", _abc())
    cursor = Cursor(Matcher.of(guide, 6))
    assert mask_of(cursor) == guide.token_mask(guide.initial_state).tolist() + [False, False]


def test_narrower_logits_are_fine_unless_the_guide_allows_a_token_past_them() -> None:
    vocab = _abc()
    assert mask_of(Cursor(Matcher.of(structgen.compile_regex("a|b", vocab), 2))) == [True, True]
    cursor = Cursor(Matcher.of(structgen.compile_regex("c", vocab), 2))
    assert mask_of(cursor) == [False, False]  # (EOS is past the width too: nothing is left)
    assert isinstance(cursor.error, VocabularyError) and "built for another tokenizer" in str(cursor.error)


def test_matchers_are_shared_per_guide_and_width() -> None:
    guide = structgen.compile_regex("a|b", _abc())
    assert Matcher.of(guide) is Matcher.of(guide, 4) is not Matcher.of(guide, 6)


def test_the_budget_narrows_the_mask_only_near_the_end() -> None:
    guide = structgen.compile_regex("a(bc)?", _abc())
    far = Cursor(Matcher.of(guide), max_tokens=50)
    assert mask_of(far) == guide.token_mask(guide.initial_state).tolist()
    cursor = Cursor(Matcher.of(guide), max_tokens=3)
    assert cursor.accept(0) and cursor.budget == 2
    assert mask_of(cursor) == [False, True, False, True]
    tight = Cursor(Matcher.of(guide), max_tokens=2)
    assert tight.accept(0) and tight.budget == 1
    assert mask_of(tight) == [False, False, False, True]  # "b" could not be closed in time: EOS only
    assert not tight.accept(1) and isinstance(tight.error, TokenRejected)  # the budget is enforced on accept too


def test_a_budget_below_the_shortest_output_is_refused_at_the_start() -> None:
    guide = structgen.compile_regex("abc", _abc())
    with pytest.raises(UnsatisfiableConstraint, match="takes 3 tokens"):
        Cursor(Matcher.of(guide), max_tokens=2)
    assert Cursor(Matcher.of(guide), max_tokens=2, budget_aware=False).budget is None


def test_done_only_where_eos_alone_may_follow_or_the_budget_is_spent() -> None:
    guide = structgen.compile_regex("ab?", _abc())
    cursor = Cursor(Matcher.of(guide))
    assert not cursor.is_done  # not final
    cursor.accept(0)
    assert not cursor.is_done and cursor.is_complete  # final, but "b" may follow
    cursor.accept(1)
    assert cursor.is_done and cursor.is_complete
    spent = Cursor(Matcher.of(structgen.compile_regex("a*", _abc())), max_tokens=2)
    spent.accept_all([0, 0])
    assert spent.is_done and spent.is_complete


def test_eos_ends_the_output_and_what_follows_is_padding() -> None:
    guide = structgen.compile_regex("a", _abc())
    cursor = Cursor(Matcher.of(guide))
    assert cursor.accept(0) and cursor.accept(3)
    assert cursor.ended and cursor.is_done and cursor.generated == 1
    assert mask_of(cursor) == [True] * 4
    assert not cursor.accept(0) and isinstance(cursor.error, TokenRejected)


def test_a_refused_token_fails_the_row_closed() -> None:
    guide = structgen.compile_regex("ab", _abc())
    cursor = Cursor(Matcher.of(guide))
    assert not cursor.accept(2)
    assert isinstance(cursor.error, TokenRejected) and cursor.error.token_id == 2
    assert "token 2 (b'c') is not allowed" in str(cursor.error)
    assert cursor.is_done and not cursor.is_complete
    assert mask_of(cursor) == [False, False, False, True]  # EOS only, from now on
    assert not cursor.accept(1)  # and nothing moves it again
    assert cursor.forced(_encode) == []


def test_eos_before_the_output_is_complete_is_refused() -> None:
    cursor = Cursor(Matcher.of(structgen.compile_regex("ab", _abc())))
    assert not cursor.accept(3)
    assert "EOS before the output is complete" in str(cursor.error)


def test_forced_tokens_are_taken_only_when_they_fit_the_budget() -> None:
    guide = structgen.compile_regex("abc(a|b)", _abc())

    def forced(max_tokens: int | None, budget_aware: bool = True) -> list[int]:
        return Cursor(Matcher.of(guide), max_tokens=max_tokens, budget_aware=budget_aware).forced(_encode)

    assert forced(None) == forced(10) == [0, 1, 2]
    assert forced(4) == [0, 1, 2]  # exactly enough: three forced tokens and the one the model chooses
    assert forced(3, budget_aware=False) == [0, 1, 2]
    assert forced(2, budget_aware=False) == []
    assert forced(0, budget_aware=False) == []
    cursor = Cursor(Matcher.of(guide), max_tokens=5)
    assert cursor.accept_all(cursor.forced(_encode)) and cursor.forced(_encode) == []  # a choice: nothing forced
    # a vocabulary with "abc" as one token: the output fits in 2 tokens, the forced 3 do not
    wide = structgen.Vocabulary.from_bytes([b"a", b"b", b"c", b"abc", None], eos_token_ids=[4])
    abc = structgen.compile_regex("abc(a|b)", wide)
    assert Cursor(Matcher.of(abc), max_tokens=2).forced(_encode) == []
    # three fit but nothing would be left to finish: the model chooses instead
    assert Cursor(Matcher.of(abc), max_tokens=3).forced(_encode) == []
    assert Cursor(Matcher.of(abc), max_tokens=4).forced(_encode) == [0, 1, 2]


def test_a_spent_thinking_allows_only_its_end() -> None:
    vocab = structgen.Vocabulary.from_bytes([b"a", b"</", b"t>", b"</t>", None], eos_token_ids=[4])
    guide = structgen.compile_regex("(a|</|t>)*</t>a", vocab)
    cursor = Cursor(Matcher.of(guide), text_budget=TextBudget(b"", b"</t>", 1))
    assert mask_of(cursor) == [True, True, True, True, False]
    assert cursor.accept(0)
    assert mask_of(cursor) == [False, True, False, True, False]  # the budget is spent: write "</t>"
    assert cursor.forced(_encode) == []  # (no fast-forward while closing)
    assert cursor.accept(1) and mask_of(cursor) == [False, False, True, False, False]
    assert cursor.accept(2) and cursor.thinking is not None and cursor.thinking.remaining is None
    assert mask_of(cursor) == guide.token_mask(cursor.state).tolist()  # closed: the guide's own mask again


def test_copies_go_separate_ways() -> None:
    guide = structgen.compile_regex("ab|ac", _abc())
    one = Cursor(Matcher.of(guide), text_budget=TextBudget(b"", b"</t>", 5))
    one.accept(0)
    two = one.copy()
    assert two.accept(1) and not one.is_done and one.generated == 1 and two.generated == 2
    assert one.thinking is not None and two.thinking is not None and one.thinking.count == 1 and two.thinking.count == 2


def test_the_batch_fill_leaves_unconstrained_rows_open_and_checks_the_width() -> None:
    vocab = _abc()
    a = Cursor(Matcher.of(structgen.compile_regex("a", vocab)))
    b = Cursor(Matcher.of(structgen.compile_regex("b|c", vocab)))
    bitmask = np.zeros((4, 1), dtype=np.int32)
    fill_next_token_bitmasks([a, None, b], bitmask, [3, 0, 1])
    assert bitmask[:, 0].tolist() == [-1, 0b0110, 0, 0b0001]
    with pytest.raises(ValueError, match="bitmask must be an int32 array of shape"):
        a.fill(np.zeros((1, 2), dtype=np.int32))


def test_a_guide_that_raises_fails_its_row_closed_and_only_it() -> None:
    vocab = _abc()
    good = structgen.compile_regex("ab", vocab)

    class Broken(type(good)):  # type: ignore[misc]
        __slots__ = ()

        def token_mask(self, state: int, *, budget: int | None = None) -> np.ndarray:
            raise RuntimeError("broken guide")

        def _packed(self, state: int) -> np.ndarray | None:  # (the matcher's way to the native mask)
            raise RuntimeError("broken guide")

        def _native_row(self, state: int) -> Any:  # (the batch's way to it)
            raise RuntimeError("broken guide")

    bad = Broken(good.automaton, vocab)
    rows = [Cursor(Matcher.of(good)), Cursor(Matcher(bad))]
    bitmask = np.zeros((2, 1), dtype=np.int32)
    fill_next_token_bitmasks(rows, bitmask)
    assert bitmask[:, 0].tolist() == [0b0001, 0b1000]  # the good row's "a"; the broken one: EOS only
    assert rows[0].error is None and isinstance(rows[1].error, RuntimeError)
