"""The two kinds of guide are siblings over one abstract base, structgen.Guide."""

from __future__ import annotations

import pickle

import pytest

import structgen
from structgen.automata.markers import call_marker as C
from structgen.automata.network import Network
from structgen.automata.regex import regex_to_dfa
from structgen.guides import DfaGuide, Guide, PushdownGuide


def _vocab() -> structgen.Vocabulary:
    return structgen.Vocabulary.from_bytes([b"[", b"]", b"[]", b"a", b"ab", b""], eos_token_ids=[5])


def test_the_base_is_abstract_and_public() -> None:
    assert structgen.Guide is Guide
    with pytest.raises(TypeError, match="abstract"):
        Guide(_vocab())  # type: ignore[abstract]


def test_both_guides_are_guides_built_through_the_base() -> None:
    vocab = _vocab()
    flat = DfaGuide(regex_to_dfa("a(b)?"), vocab, description="flat", mask_cache_bytes=1)
    net = PushdownGuide(Network([C(1), rf"\[{C(1)}?\]"], []), vocab, description="net", mask_cache_bytes=1)
    for guide in (flat, net):
        assert isinstance(guide, structgen.Guide)
        assert guide.vocabulary is vocab and guide.initial_state == 0
        assert guide._max_masks == 16  # (set by Guide.__init__: the smallest mask cache)
        again = pickle.loads(pickle.dumps(guide))
        assert type(again) is type(guide) and again.description == guide.description
    assert isinstance(structgen.compile_regex("a(b)?", vocab), DfaGuide)
    assert flat.forced_tokens(flat.initial_state, lambda text: [3] if text == "a" else []) == []  # "ab" extends "a"
    s = net.advance(net.initial_state, [0, 2])  # "[" "[]": only "]" can follow
    assert net.forced_bytes(s) == b"]" and net.forced_tokens(s, lambda text: [1]) == [1]
    assert net.min_length(s) == 1 and net.min_length(s, unit="bytes") == 1
    with pytest.raises(ValueError, match="not a state of this guide .* so far"):
        net.min_length(10_000)
