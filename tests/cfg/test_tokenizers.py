"""Random derivations of the grammars accepted token by token on real tokenizers: Llama-3 and
SmolLM2 (byte-level BPE) and Mistral (SentencePiece with byte fallback), each token allowed by the
mask of the state it is read in."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import structgen
from structgen.cfg import compile_grammar

from ..support.derive import gbnf_derivations, lark_derivations

GRAMMARS = Path(__file__).resolve().parents[2] / "grammars"
NAMES = ["arithmetic.gbnf", "json.gbnf", "sql-select.lark", "python-call.lark"]


@pytest.fixture(params=["llama3", "smollm2", "mistral"])
def tokenizer_and_vocab(request: pytest.FixtureRequest) -> tuple[Any, structgen.Vocabulary]:
    return request.getfixturevalue(f"{request.param}_tokenizer"), request.getfixturevalue(f"{request.param}_vocabulary")


def _derivations(name: str, n: int) -> list[str]:
    text = (GRAMMARS / name).read_text(encoding="utf-8")
    if name.endswith(".gbnf"):
        return gbnf_derivations(text, n, seed=7, depth=6)
    return lark_derivations(text, n, seed=7, depth=4)


@pytest.mark.parametrize("name", NAMES)
def test_derivations_walk_token_by_token(name: str, tokenizer_and_vocab: tuple[Any, structgen.Vocabulary]) -> None:
    tokenizer, vocab = tokenizer_and_vocab
    guide = compile_grammar((GRAMMARS / name).read_text(encoding="utf-8"), vocab)
    texts = _derivations(name, 8) + [json.loads(line) for line in (GRAMMARS / name.rsplit(".", 1)[0]).with_suffix(
        ".valid.jsonl").read_text(encoding="utf-8").splitlines()][:4]
    for k, text in enumerate(texts):
        if set(text.encode()) & vocab.missing_bytes:
            continue  # (the tokenizer cannot spell it)
        state = guide.initial_state
        for tid in tokenizer.encode(text, add_special_tokens=False):
            if k < 2:  # (masks on the first two: a mask over a 128k vocabulary is the slow part)
                assert guide.token_mask(state)[tid], (text, tokenizer.decode([tid]))
            state = guide.next_state(state, tid)
            assert state >= 0, (text, tokenizer.decode([tid]))
        assert guide.is_final(state), text
        assert guide.token_mask(state)[min(vocab.eos_token_ids)]


def test_an_invalid_string_dies_on_its_token(smollm2_tokenizer: Any, smollm2_vocabulary: structgen.Vocabulary) -> None:
    guide = compile_grammar((GRAMMARS / "json.gbnf").read_text(encoding="utf-8"), smollm2_vocabulary)
    ids = smollm2_tokenizer.encode('{"a": [1, 2,]}', add_special_tokens=False)
    assert guide.advance(guide.initial_state, ids) == -1
    ok = smollm2_tokenizer.encode('{"a": [1, 2', add_special_tokens=False)
    state = guide.advance(guide.initial_state, ok)
    assert state >= 0 and not guide.is_final(state)
