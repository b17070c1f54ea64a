"""The matcher interface (structgen.Matcher): packed int32 bitmasks checked bit by bit against the
guide's bool masks, the batch form, accepting and validating tokens (drafts), rollback by keeping
states, ``is_terminated``, budgets, and widths other than the vocabulary's."""

from __future__ import annotations

import json
import random
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import structgen
from structgen import Matcher
from structgen.errors import UnsatisfiableConstraint, VocabularyError
from structgen.guides.matcher import bitmask_words

SCHEMA = {
    "type": "object",
    "properties": {"name": {"type": "string", "maxLength": 12}, "tags": {"type": "array", "items": {"enum": ["a", "b"]}},
                   "age": {"type": "integer", "minimum": 0}},
    "required": ["name", "age"],
}


def unpack(row: np.ndarray, width: int) -> np.ndarray:
    """A bitmask row as bools, bit by bit (the slow obvious way, as a reference)."""
    words = row.astype(np.int64) & 0xFFFFFFFF
    return np.array([bool((int(words[t // 32]) >> (t % 32)) & 1) for t in range(width)])


def random_walk(guide: structgen.Guide, rng: random.Random, steps: int) -> list[tuple[int, int]]:
    """(state, token) pairs of a random walk that follows the guide's masks."""
    s, out = guide.initial_state, []
    for _ in range(steps):
        allowed = np.flatnonzero(guide.token_mask(s))
        t = int(rng.choice(allowed.tolist()))
        out.append((s, t))
        s = guide.next_state(s, t)
        if t in guide.vocabulary.eos_token_ids:
            break
    return out


def test_bitmask_words() -> None:
    assert [bitmask_words(n) for n in (1, 32, 33, 49152, 128256)] == [1, 1, 2, 1536, 4008]
    with pytest.raises(ValueError, match="vocab_size must be positive"):
        bitmask_words(0)


@given(st.lists(st.booleans(), min_size=1, max_size=120))
@settings(max_examples=60)
def test_packing_is_bit_t_mod_32_of_word_t_div_32(bits: list[bool]) -> None:
    """Any mask over a vocabulary of single bytes packs to the bits a reader of XGrammar's layout expects."""
    n = len(bits)
    tokens = [bytes([i % 256]) * (1 + i // 256) for i in range(n)] + [None]
    vocab = structgen.Vocabulary.from_bytes(tokens, eos_token_ids=[n])
    allowed = [tokens[i] for i in range(n) if bits[i]]
    pattern = "|".join(f"\\x{t[0]:02x}" * len(t) for t in allowed) or "\\x00\\x00\\x00"  # (no one-token output)
    guide = structgen.compile_regex(f"({pattern})", vocab) if allowed else None
    if guide is None:
        return
    m = Matcher(guide)
    row = m.packed_mask(guide.initial_state)
    assert row.dtype == np.int32 and row.shape == (bitmask_words(n + 1),)
    assert unpack(row, n + 1).tolist() == guide.token_mask(guide.initial_state).tolist()


@pytest.mark.parametrize("kind", ["regex", "schema", "pushdown", "unique"])
def test_every_row_matches_the_bool_mask(smollm2_vocabulary: Any, kind: str) -> None:
    vocab = smollm2_vocabulary
    if kind == "regex":
        guide = structgen.compile_regex(r"[A-Z][a-z]{1,8}( [A-Z][a-z]{1,8})?, \d{4}", vocab)
    elif kind == "schema":
        guide = structgen.compile_json_schema({"type": "object", "properties": {"d": {"format": "date", "type": "string"}},
                                               "required": ["d"]}, vocab)
    elif kind == "pushdown":
        guide = structgen.compile_json_schema(SCHEMA, vocab, key_order="any")
    else:  # (uniqueItems over free strings: frame data that follows the items written)
        guide = structgen.compile_json_schema({"type": "array", "items": {"type": "string", "maxLength": 3},
                                               "uniqueItems": True, "minItems": 8}, vocab)
    m = Matcher(guide)
    walk = random_walk(guide, random.Random(7), 40)
    bitmask = Matcher.allocate_token_bitmask(len(walk), vocab.size)
    Matcher.fill_next_token_bitmasks([(m, s, None) for s, _ in walk], bitmask)
    for i, (s, t) in enumerate(walk):
        expected = guide.token_mask(s)
        assert np.array_equal(np.unpackbits(bitmask[i].view(np.uint8), bitorder="little")[: vocab.size].astype(bool), expected)
        assert np.array_equal(m.token_mask(s), expected)
        assert m.accept_token(s, t) == guide.next_state(s, t)
    # spot-check the packing itself with the slow reference on a few rows
    for i in (0, len(walk) // 2, len(walk) - 1):
        assert np.array_equal(unpack(bitmask[i], vocab.size), guide.token_mask(walk[i][0]))


def test_batch_form_mixes_guides_and_leaves_other_rows(smollm2_vocabulary: Any) -> None:
    vocab = smollm2_vocabulary
    a = Matcher(structgen.compile_regex(r"yes|no", vocab))
    b = Matcher(structgen.compile_json_schema(SCHEMA, vocab))
    bitmask = Matcher.allocate_token_bitmask(4, vocab.size)
    Matcher.fill_next_token_bitmasks([(a, a.initial_state, None), (b, b.initial_state, 12)], bitmask, indices=[3, 1])
    assert (bitmask[0] == -1).all() and (bitmask[2] == -1).all()  # untouched: every token allowed
    assert np.array_equal(bitmask[3], a.packed_mask(a.initial_state))
    assert np.array_equal(bitmask[1], b.packed_mask(b.initial_state, budget=12))
    with pytest.raises(ValueError, match=r"int32 array of shape \[batch, 1536\]"):
        a.fill_next_token_bitmask(a.initial_state, np.zeros((1, 10), dtype=np.int32))


def test_native_fills_are_the_packed_masks_in_any_bitmask(smollm2_vocabulary: Any) -> None:
    """The fills go native where the bitmask allows it in place (a C-contiguous int32 matrix and a
    row in it), on threads for the batch form; elsewhere (a negative row, a strided view) the
    packed masks are written as before; a bitmask of another width is refused either way."""
    vocab = smollm2_vocabulary
    a = Matcher(structgen.compile_regex(r"yes|no", vocab))
    tree = {"$defs": {"n": {"type": "object", "properties": {"v": {"type": "integer"}, "c": {"type": "array", "items": {
        "$ref": "#/$defs/n"}}}, "required": ["v"]}}, "$ref": "#/$defs/n"}
    b = Matcher(structgen.compile_json_schema(tree, vocab))  # (a pushdown guide without frame data)
    walk = random_walk(b.guide, random.Random(3), 12)
    rows = [(a, a.initial_state, None)] + [(b, s, None) for s, _ in walk]
    bitmask = Matcher.allocate_token_bitmask(len(rows), vocab.size)
    Matcher.fill_next_token_bitmasks(rows, bitmask, threads=2)
    assert b.guide._frames.solver.num_masks > 0  # (made natively, and kept there)
    for i, (m, s, _) in enumerate(rows):
        assert np.array_equal(unpack(bitmask[i], vocab.size), m.guide.token_mask(s)), i
    last = Matcher.allocate_token_bitmask(2, vocab.size)
    b.fill_next_token_bitmask(walk[-1][0], last, -1)
    assert np.array_equal(last[1], bitmask[-1]) and (last[0] == -1).all()
    strided = Matcher.allocate_token_bitmask(4, vocab.size)[::2]
    Matcher.fill_next_token_bitmasks(rows[:2], strided, threads=2)
    assert np.array_equal(strided, bitmask[:2])
    with pytest.raises(ValueError, match=r"int32 array of shape \[batch, 1536\]"):
        Matcher.fill_next_token_bitmasks(rows[:1], np.zeros((1, 10), dtype=np.int32), threads=2)


def test_accept_validate_and_rollback_by_keeping_states(smollm2_tokenizer: Any, smollm2_vocabulary: Any) -> None:
    vocab = smollm2_vocabulary
    m = Matcher(structgen.compile_json_schema(SCHEMA, vocab))
    text = json.dumps({"name": "Ada", "age": 36}, separators=(",", ":"))
    ids = smollm2_tokenizer.encode(text, add_special_tokens=False)
    eos = sorted(vocab.eos_token_ids)[0]
    assert m.validate_tokens(m.initial_state, ids + [eos]) == len(ids) + 1
    end = m.accept_tokens(m.initial_state, ids)
    assert end >= 0 and m.is_final(end) and m.is_terminated(end)
    assert m.accept_token(end, eos) == end  # EOS in a final state leaves it unchanged
    assert m.accept_tokens(m.initial_state, ids + [eos, eos]) == -1  # nothing after an EOS
    assert m.validate_tokens(m.initial_state, ids + [eos, eos]) == len(ids) + 1
    # a draft that goes wrong half-way: the accepted prefix, and the state stays where it was
    bad = ids[:2] + smollm2_tokenizer.encode("}", add_special_tokens=False) + ids[2:]  # '{"name' then '}'
    assert m.validate_tokens(m.initial_state, bad) == 2
    # rollback = keep the earlier state: walking on from it again gives the same states
    states = [m.initial_state]
    for t in ids:
        states.append(m.accept_token(states[-1], t))
    k = 4
    assert m.accept_tokens(states[k], ids[k:]) == end
    assert not m.is_terminated(states[k]) and not m.is_final(states[k])
    assert m.accept_token(m.initial_state, smollm2_tokenizer.encode("]", add_special_tokens=False)[0]) == -1
    assert m.accept_token(-1, ids[0]) == -1


def test_budgets(smollm2_vocabulary: Any) -> None:
    vocab = smollm2_vocabulary
    guide = structgen.compile_json_schema({"type": "array", "items": {"type": "integer"}, "maxItems": 50}, vocab)
    m = Matcher(guide)
    s0 = guide.initial_state
    need = guide.min_length()
    for budget in (need, need + 1, need + 3, 1000, None):
        assert np.array_equal(m.token_mask(s0, budget=budget), guide.token_mask(s0, budget=budget))
    with pytest.raises(UnsatisfiableConstraint, match="needs at least"):
        m.packed_mask(s0, budget=need - 1)
    # accept/validate under a budget follow the budget-aware mask exactly
    rng = random.Random(3)
    s, budget = s0, need + 4
    while budget > 0 and not m.is_terminated(s):
        mask = guide.token_mask(s, budget=budget)
        for t in rng.sample(range(vocab.size), 300) + np.flatnonzero(mask).tolist()[:50]:
            assert (m.accept_token(s, t, budget=budget) >= 0) == bool(mask[t]), (s, t, budget)
        t = int(rng.choice(np.flatnonzero(mask).tolist()))
        s, budget = m.accept_token(s, t, budget=budget), budget - 1
    assert guide.is_final(s)


def test_wider_logits_and_a_narrower_width(smollm2_vocabulary: Any) -> None:
    vocab = smollm2_vocabulary
    guide = structgen.compile_regex(r"[a-z]+", vocab)
    wide = Matcher(guide, vocab_size=vocab.size + 70)
    assert wide.words == bitmask_words(vocab.size + 70)
    row = wide.token_mask(guide.initial_state)
    assert not row[vocab.size:].any() and np.array_equal(row[: vocab.size], guide.token_mask(guide.initial_state))
    narrow = Matcher(guide, vocab_size=100)
    with pytest.raises(VocabularyError, match="the logits have 100 columns"):
        narrow.packed_mask(guide.initial_state)
    with pytest.raises(TypeError, match="Matcher needs a structgen Guide"):
        Matcher("[a-z]+")  # type: ignore[arg-type]


def test_cache_is_bounded(smollm2_vocabulary: Any) -> None:
    guide = structgen.compile_regex(r"[0-9]{20}", smollm2_vocabulary)
    m = Matcher(guide, cache_size=3)
    s = guide.initial_state
    seen = []
    for _ in range(6):
        seen.append(m.packed_mask(s))
        s = guide.next_state(s, smollm2_vocabulary.tokens.index(b"1"))
    assert len(m._packed) == 3  # noqa: SLF001
    assert repr(m).startswith("Matcher(")


def test_a_shared_matcher_keeps_neither_itself_nor_its_guide_once_no_one_holds_it() -> None:
    """``Matcher.of`` shares one matcher per guide and width while a caller holds it (a cursor does);
    it kept every matcher, and through it its guide, for good (its value held its own weak key): a
    server or a LogitsProcessor kept every guide it had used, 3 MB a schema walked on Llama-3."""
    import gc
    import weakref

    from structgen.guides.cursor import Cursor

    vocab = structgen.Vocabulary.from_bytes([b"a", b"b", b"ab", None], eos_token_ids=[3])
    guide = structgen.compile_regex("a+b", vocab)
    cursor = Cursor(Matcher.of(guide), max_tokens=8)
    assert Matcher.of(guide) is cursor.matcher and Matcher.of(guide, 64) is not cursor.matcher
    assert cursor.accept(0) and cursor.accept(2) and cursor.accept(3)  # a, ab, EOS
    gone = weakref.ref(guide)
    del guide, cursor
    structgen.clear_cache()  # (the compile cache holds the guide too)
    gc.collect()
    assert gone() is None  # (and so is the matcher: it holds its guide)
