"""The vectorised trie index against an obviously-correct reference, and Guide semantics."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import structgen
from structgen.automata.regex import regex_to_dfa
from structgen.guides.dfa_guide import DfaGuide
from structgen.vocab.trie import TokenTrie

from ..support.reference import paired_states, reference_mask, restricted
from ..support.strategies import patterns


_BYTES = st.binary(min_size=1, max_size=4) | st.sampled_from(
    [b"a", b"b", b"ab", b"\xc3", b"\xa9", "é".encode(), "😀".encode()[:2], "😀".encode()[2:], b" ", b"0", b"-", b"\n"]
)


@settings(max_examples=150, deadline=None)
@given(pattern=patterns, tokens=st.lists(_BYTES, min_size=1, max_size=40))
def test_trie_walk_equals_reference(pattern: str, tokens: list[bytes]) -> None:
    vocab = structgen.Vocabulary.from_bytes([*tokens, None], eos_token_ids=[len(tokens)])
    dfa = restricted(regex_to_dfa(pattern), vocab)
    guide = DfaGuide(regex_to_dfa(pattern), vocab)
    for s, d in paired_states(guide, dfa):
        ref = reference_mask(dfa, vocab, d)
        if not ref.any():
            with pytest.raises(structgen.VocabularyError, match="no token"):
                guide.token_mask(s)
            continue
        assert (guide.token_mask(s) == ref).all(), (pattern, tokens, s)
        for t in np.flatnonzero(ref):
            nxt = guide.next_state(s, int(t))
            assert nxt >= 0
            if t < len(tokens):
                assert guide.accepts_bytes(b"") == bool(dfa.finals[0])
                assert guide.is_final(nxt) == bool(dfa.finals[dfa.step(d, tokens[t])])
        for t in np.flatnonzero(~ref):
            assert guide.next_state(s, int(t)) == -1


def test_trie_layout() -> None:
    vocab = structgen.Vocabulary.from_bytes([b"ab", b"a", b"abc", b"b", b"ab", None], eos_token_ids=[5])
    trie = TokenTrie.build(vocab)
    # root, a, b, ab, abc: duplicate token bytes share a node.
    assert trie.num_nodes == 5
    assert trie.byte.tolist() == [0, ord("a"), ord("b"), ord("b"), ord("c")]
    assert trie.num_children.tolist() == [2, 1, 0, 1, 0]
    nodes = dict(zip(trie.token_ids.tolist(), trie.token_nodes.tolist()))
    assert nodes == {0: 3, 1: 1, 2: 4, 3: 2, 4: 3}


def test_guide_semantics() -> None:
    vocab = structgen.Vocabulary.from_bytes([b"1", b"2", b"12", b"-", None, None], eos_token_ids=[4], special_token_ids=[5])
    guide = structgen.compile_regex(r"1(?:-2)?", vocab)
    s = guide.initial_state
    assert guide.allowed_token_ids(s).tolist() == [0, 2] or guide.allowed_token_ids(s).tolist() == [0]
    s1 = guide.next_state(s, 0)
    assert guide.is_final(s1)
    # final with a way on: EOS and "-"; the special token never.
    assert guide.allowed_token_ids(s1).tolist() == [3, 4]
    assert guide.next_state(s1, 4) == s1  # EOS keeps a final state
    assert guide.next_state(s, 4) == -1  # EOS not allowed before the end
    assert guide.next_state(s1, 5) == -1
    s2 = guide.advance(s1, [3, 1])
    assert guide.is_final(s2) and guide.allowed_token_ids(s2).tolist() == [4]  # only EOS
    mask = guide.token_mask(s2)
    assert mask.dtype == bool and mask.shape == (6,) and not mask.flags.writeable
    with pytest.raises(ValueError, match="not a state"):
        guide.token_mask(10_000)
    assert guide.next_state(-1, 0) == -1


def test_guide_pickles_and_is_cached() -> None:
    vocab = structgen.Vocabulary.from_bytes([b"a", b"b", None], eos_token_ids=[2])
    g1 = structgen.compile_regex("a+b", vocab)
    assert structgen.compile_regex("a+b", vocab) is g1
    g2 = pickle.loads(pickle.dumps(g1))
    assert g2.num_states == g1.num_states and (g2.token_mask(0) == g1.token_mask(0)).all()


def test_vocabulary_errors() -> None:
    with pytest.raises(structgen.VocabularyError, match="no EOS"):
        structgen.Vocabulary.from_bytes([b"a"], eos_token_ids=[])
    with pytest.raises(structgen.VocabularyError, match="outside"):
        structgen.Vocabulary.from_bytes([b"a"], eos_token_ids=[7])
    with pytest.raises(TypeError, match="Vocabulary"):
        structgen.compile_regex("a", object())  # type: ignore[arg-type]


def test_unspellable_state_is_a_clear_error() -> None:
    # "b" only occurs inside "cb": the byte exists, but not after "a".
    vocab = structgen.Vocabulary.from_bytes([b"a", b"cb", None], eos_token_ids=[2])
    guide = structgen.compile_regex("ab", vocab)
    s = guide.next_state(0, 0)
    with pytest.raises(structgen.VocabularyError, match="cannot spell"):
        guide.token_mask(s)


def test_bytes_no_token_holds_are_cut_out() -> None:
    vocab = structgen.Vocabulary.from_bytes([b"a", b"c", None], eos_token_ids=[2])
    assert b"b"[0] in vocab.missing_bytes
    guide = structgen.compile_regex("a(?:b|c)", vocab)
    s = guide.next_state(0, 0)
    assert guide.allowed_token_ids(s).tolist() == [1]
    with pytest.raises(structgen.UnsatisfiableConstraint, match="no token"):
        structgen.compile_regex("ab", vocab)
