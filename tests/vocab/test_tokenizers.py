"""Real tokenizers: byte recovery, and two-level acceptance (FSM, then token by token)."""

from __future__ import annotations

import re
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import structgen
from structgen.automata.regex import regex_to_dfa

TOKENIZERS = ["smollm2", "llama3", "mistral"]


@pytest.fixture(params=TOKENIZERS)
def tokenizer_and_vocab(request: pytest.FixtureRequest) -> tuple[Any, structgen.Vocabulary]:
    name = request.param
    return request.getfixturevalue(f"{name}_tokenizer"), request.getfixturevalue(f"{name}_vocabulary")


def encode(tokenizer: Any, text: str) -> list[int]:
    return list(tokenizer.encode(text, add_special_tokens=False))


SAMPLES = [
    "Hello world",
    '{"name": "Bob Marley", "born": "1945-02-06", "tags": ["reggae", "jamaica"]}',
    "naïve café — 日本語 😀🎉",
    "line one\nline\ttwo\r\n  indented",
    '{"a":1,"b":[true,false,null],"c":{"d":-1.5e10}}',
]


@pytest.mark.parametrize("text", SAMPLES)
def test_tokens_decode_to_the_text(tokenizer_and_vocab: tuple[Any, structgen.Vocabulary], text: str) -> None:
    tokenizer, vocab = tokenizer_and_vocab
    assert vocab.decode(encode(tokenizer, text)).decode("utf-8") == text


def test_vocabulary_facts(tokenizer_and_vocab: tuple[Any, structgen.Vocabulary]) -> None:
    tokenizer, vocab = tokenizer_and_vocab
    assert vocab.size == len(tokenizer)
    assert vocab.eos_token_ids and all(vocab.tokens[i] is None for i in vocab.eos_token_ids)
    # Every byte that some token holds is also a token of its own (so any byte path is spellable);
    # bytes no token holds are known, and guides never lead to them.
    singles = {t[0] for t in vocab.tokens if t is not None and len(t) == 1}
    assert singles == set(range(256)) - vocab.missing_bytes
    guide = structgen.compile_regex(r"(?s).{0,2}", vocab).precompute()
    assert guide.num_states > 3
    for s in range(guide.num_states):
        assert guide.token_mask(s).any()
    assert len(vocab.fingerprint) == 32


def test_eos_defaults(llama3_vocabulary: structgen.Vocabulary, smollm2_vocabulary: structgen.Vocabulary, mistral_vocabulary: structgen.Vocabulary) -> None:
    # The raw Llama-3 tokenizer.json names no EOS: the end-of-turn tokens are found by name.
    assert llama3_vocabulary.eos_token_ids == {128001, 128009}
    assert smollm2_vocabulary.eos_token_ids == {2}
    assert mistral_vocabulary.eos_token_ids == {2}


REGEXES = [
    r"\d{4}-\d{2}-\d{2}",
    r"[A-Z][a-z]+(?: [A-Z][a-z]+)*",
    r'\{"name": "[^"\\]{0,20}", "age": (?:0|[1-9][0-9]{0,2})\}',
    r"(?:[a-zé😀 ]|\n){1,30}",
    r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}",
]


@pytest.mark.parametrize("pattern", REGEXES)
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_strings_of_the_regex_are_accepted_token_by_token(
    tokenizer_and_vocab: tuple[Any, structgen.Vocabulary], pattern: str, data: st.DataObject
) -> None:
    tokenizer, vocab = tokenizer_and_vocab
    guide = structgen.compile_regex(pattern, vocab)
    # \d spelt out instead of re.ASCII: hypothesis refuses re.ASCII patterns holding "é".
    text = data.draw(st.from_regex(re.compile(pattern.replace(r"\d", "[0-9]")), fullmatch=True))
    assume(not set(text.encode()) & vocab.missing_bytes)  # the tokenizer cannot spell those
    state = guide.initial_state
    for tid in encode(tokenizer, text):
        assert guide.token_mask(state)[tid], (text, tid, vocab.tokens[tid])
        state = guide.next_state(state, tid)
        assert state >= 0
    assert guide.is_final(state)
    eos = min(vocab.eos_token_ids)
    assert guide.token_mask(state)[eos]


def test_rejected_text_dies(tokenizer_and_vocab: tuple[Any, structgen.Vocabulary]) -> None:
    tokenizer, vocab = tokenizer_and_vocab
    guide = structgen.compile_regex(r"\d{4}-\d{2}-\d{2}", vocab)
    assert guide.advance(guide.initial_state, encode(tokenizer, "1945-2-06")) == -1
    s = guide.advance(guide.initial_state, encode(tokenizer, "1945-02-0"))
    assert s >= 0 and not guide.is_final(s)
    assert not guide.token_mask(s)[list(vocab.eos_token_ids)].any()


def test_masks_match_reference_on_real_vocabulary(tokenizer_and_vocab: tuple[Any, structgen.Vocabulary]) -> None:
    """The trie walk against per-token walks over a full real vocabulary (a few states)."""
    from ..support.reference import paired_states, reference_mask, restricted

    _, vocab = tokenizer_and_vocab
    pattern = r'"(?:[^"\\]|\\["\\n])*"|[0-9é]+'
    dfa = restricted(regex_to_dfa(pattern), vocab)
    guide = structgen.compile_regex(pattern, vocab)
    for s, d in paired_states(guide, dfa, limit=6):
        assert (guide.token_mask(s) == reference_mask(dfa, vocab, d)).all(), s
