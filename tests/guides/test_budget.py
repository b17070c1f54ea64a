"""Never truncated: distances to a final state and budget-aware masking.

Property tests: random regexes (``tests/test_regex.py``'s grammar) and a few schemas, random
sampling walks under random budgets at or above the guide's minimum length, over small and real
vocabularies; every output is complete and valid. Budgets below the minimum raise
``UnsatisfiableConstraint`` naming it. Then the integrations: the LogitsProcessor with a tiny
random Llama, the ``generate_*`` helpers and the server engine.
"""

from __future__ import annotations


import asyncio
import json
import random
import re
from collections import deque
from typing import Any

import jsonschema
import numpy as np
import pytest
import regex
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import structgen
from structgen.errors import UnsatisfiableConstraint, VocabularyError
from structgen.automata.dfa import ByteDFA
from structgen.automata.regex import regex_to_dfa

from ..support.engine import drain
from ..support.strategies import patterns

SCHEMAS: list[dict[str, Any]] = [
    {
        "type": "object",
        "properties": {k: {"type": "array", "items": {"type": "string"}} for k in ("person", "organization", "location")},
        "required": ["person", "organization", "location"],
        "additionalProperties": False,
    },
    {
        "type": "object",
        "properties": {
            "name": {"type": "string", "minLength": 3},
            "population": {"type": "integer", "minimum": 0},
            "districts": {"type": "array", "items": {"type": "string"}, "minItems": 2},
        },
        "required": ["name", "population", "districts"],
        "additionalProperties": False,
    },
    {
        "type": "object",
        "properties": {
            "name": {"type": "string"},
            "age": {"type": "integer", "minimum": 0, "maximum": 120},
            "email": {"type": "string", "format": "email"},
            "kind": {"enum": ["a", "bb", "ccc"]},
        },
        "required": ["name", "age"],
    },
]


def _byte_vocabulary(extra: list[bytes]) -> structgen.Vocabulary:
    """Every single byte, some multi-byte tokens, then EOS."""
    tokens = [bytes([b]) for b in range(256)] + extra + [None]
    return structgen.Vocabulary.from_bytes(tokens, eos_token_ids=[len(tokens) - 1], name="bytes")


SMALL = _byte_vocabulary([b"ab", b"abc", b"01", b"\xc3\xa9", b"\xf0\x9f\x98", b'{"', b'":', b'"]', b"},", b" -", b"aaaa"])


def _walk(guide: structgen.Guide, budget: int, rng: random.Random, *, p_eos: float = 0.1) -> tuple[bytes, int]:
    """A random sampling walk under ``budget``; returns (output bytes, tokens used)."""
    eos = guide.vocabulary.eos_token_ids
    state, out, used = guide.initial_state, [], 0
    while used < budget:
        ids = np.flatnonzero(guide.token_mask(state, budget=budget - used))
        assert ids.size, f"nothing allowed in state {state} with {budget - used} tokens left"
        non_eos = [int(i) for i in ids if int(i) not in eos]
        if non_eos and (not guide.is_final(state) or rng.random() > p_eos):
            # Prefer long tokens now and then: they are what runs into the budget.
            token = max(rng.sample(non_eos, min(3, len(non_eos))), key=lambda i: len(guide.vocabulary.tokens[i]))
        else:
            assert guide.is_final(state) and any(int(i) in eos for i in ids)
            used += 1
            break
        state = guide.next_state(state, token)
        assert state >= 0
        out.append(token)
        used += 1
    assert guide.is_final(state), f"walk ended incomplete with budget {budget}: {guide.vocabulary.decode(out)!r}"
    return guide.vocabulary.decode(out), used


def _bfs_byte_distances(dfa: ByteDFA) -> list[int]:
    """Reference: plain BFS over the reversed transition table, one state at a time."""
    n = dfa.num_states
    preds: list[set[int]] = [set() for _ in range(n)]
    for s in range(n):
        for t in dfa.transitions[s].tolist():
            if t >= 0:
                preds[t].add(s)
    dist = [-1] * n
    queue = deque(s for s in range(n) if dfa.finals[s])
    for s in queue:
        dist[s] = 0
    while queue:
        t = queue.popleft()
        for s in preds[t]:
            if dist[s] < 0:
                dist[s] = dist[t] + 1
                queue.append(s)
    return dist


# -- distances -----------------------------------------------------------------------------------


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pattern=patterns)
def test_byte_distances_match_a_plain_bfs(pattern: str) -> None:
    dfa = regex_to_dfa(pattern)
    assert dfa.distances.tolist() == _bfs_byte_distances(dfa)


def test_distances_of_a_small_regex() -> None:
    guide = structgen.compile_regex(r"abc(d|efg)", SMALL)
    assert guide.min_length(unit="bytes") == 4
    assert guide.spells_every_byte
    # "abc" is one token, then "d": two tokens.
    assert guide.min_length() == 2
    assert guide.is_final(guide.advance(0, [SMALL.tokens.index(b"abc"), ord("d")]))


def _assert_consistent(guide: structgen.Guide, states: range | list[int]) -> None:
    """From every non-final state, a token leads one step closer: what makes budgets sound."""
    for s in states:
        d = guide.distance(s)
        assert (d == 0) == guide.is_final(s)
        if d:
            ids = np.flatnonzero(guide.token_mask(s, budget=d))
            assert any(guide.distance(guide.next_state(s, int(t))) <= d - 1 for t in ids if t not in guide.vocabulary.eos_token_ids)
        assert d <= guide.min_length(s, unit="bytes")


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pattern=patterns)
def test_token_distances_are_consistent(pattern: str) -> None:
    guide = structgen.compile_regex(pattern, SMALL)
    _assert_consistent(guide, range(guide.num_states))


def test_exact_distances_without_single_byte_tokens() -> None:
    # "b" exists only inside longer tokens: distances are searched exactly over tokens.
    vocab = structgen.Vocabulary.from_bytes([b"a", b"ab", b"bb", b"c", b"bc", None], eos_token_ids=[5])
    guide = structgen.compile_regex(r"a(b)*c|ab{3}c", vocab)
    assert not guide.spells_every_byte
    assert guide.min_length() == 2  # "a" "c" (or "ab" "bc" is 2 too)
    _assert_consistent(guide, range(guide.num_states))
    rng = random.Random(0)
    for budget in range(2, 8):
        for _ in range(30):
            data, _ = _walk(guide, budget, rng)
            assert re.fullmatch(r"a(b)*c|ab{3}c", data.decode())


def test_exact_distances_have_a_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    from structgen.guides import distances as distance

    monkeypatch.setattr(distance, "EXACT_LIMIT", 3)
    vocab = structgen.Vocabulary.from_bytes([b"a", b"ab", b"bb", b"c", None], eos_token_ids=[4])
    guide = structgen.compile_regex(r"ab*c", vocab)
    with pytest.raises(VocabularyError, match="turn budget-aware masking off"):
        guide.min_length()


# -- budget-aware masking: random walks ----------------------------------------------------------


def _fullmatch(pattern: str, text: str) -> bool:
    return regex.fullmatch(pattern, text, flags=regex.ASCII | regex.V0, timeout=1.0) is not None


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pattern=patterns, extra=st.integers(0, 6), seed=st.integers(0, 2**32 - 1))
def test_random_walks_on_regexes_always_end_complete(pattern: str, extra: int, seed: int) -> None:
    guide = structgen.compile_regex(pattern, SMALL)
    need = guide.min_length()
    rng = random.Random(seed)
    for budget in {max(need, 1), need + extra, need + 1}:
        if budget < 1:
            continue
        data, used = _walk(guide, budget, rng)
        assert used <= budget
        try:
            assert _fullmatch(pattern, data.decode("utf-8")), (pattern, data)
        except TimeoutError:
            assume(False)
    if need >= 1:
        with pytest.raises(UnsatisfiableConstraint, match=f"takes {need} tokens .*at least {need}"):
            guide.check_budget(need - 1)


def test_below_the_minimum_token_mask_raises() -> None:
    guide = structgen.compile_regex(r"\d{5}", SMALL)
    assert guide.min_length() == 5
    with pytest.raises(UnsatisfiableConstraint, match="needs at least 5 more tokens"):
        guide.token_mask(0, budget=4)
    assert guide.token_mask(0, budget=5).sum() == 11  # any digit, and "01", still finishes in time


def test_plain_mask_is_reused_far_from_the_end() -> None:
    guide = structgen.compile_regex(r"[a-c]+(x|yyyyy)", SMALL)
    plain = guide.token_mask(0)
    assert guide.token_mask(0, budget=100) is plain
    assert guide.effective_budget(0, 100) is None
    state = guide.next_state(0, ord("a"))
    tight = guide.token_mask(state, budget=2)
    # with 2 tokens left, "y" (4 more bytes to go) no longer fits; "x" and letters do
    assert not tight[ord("y")] and tight[ord("x")] and tight[ord("a")]
    assert guide.token_mask(state, budget=2) is tight  # cached


@pytest.mark.parametrize("schema", SCHEMAS, ids=["ner", "city", "person"])
def test_random_walks_on_schemas_small_vocabulary(schema: dict[str, Any]) -> None:
    guide = structgen.compile_json_schema(schema, SMALL)
    need = guide.min_length()
    rng = random.Random(1)
    for budget in [need, need + 1, need + 3, need + 10, need + 40]:
        for _ in range(5):
            data, _ = _walk(guide, budget, rng)
            jsonschema.validate(json.loads(data), schema)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(which=st.integers(0, len(SCHEMAS) - 1), extra=st.integers(0, 24), seed=st.integers(0, 2**32 - 1))
def test_random_walks_on_schemas_real_vocabulary(smollm2_vocabulary: Any, which: int, extra: int, seed: int) -> None:
    schema = SCHEMAS[which]
    guide = structgen.compile_json_schema(schema, smollm2_vocabulary)
    need = guide.min_length()
    assert need < guide.min_length(unit="bytes")  # multi-byte tokens spell keys in fewer tokens
    data, used = _walk(guide, need + extra, random.Random(seed))
    jsonschema.validate(json.loads(data), schema)
    with pytest.raises(UnsatisfiableConstraint, match=f"at least {need}"):
        guide.check_budget(need - 1)


@pytest.mark.parametrize("vocab_fixture", ["smollm2_vocabulary", "llama3_vocabulary", "mistral_vocabulary"])
def test_real_vocabularies_spell_every_byte_and_stay_consistent(vocab_fixture: str, request: pytest.FixtureRequest) -> None:
    vocab = request.getfixturevalue(vocab_fixture)
    guide = structgen.compile_json_schema(SCHEMAS[1], vocab)
    assert guide.spells_every_byte
    _assert_consistent(guide, range(guide.num_states))
    data, _ = _walk(guide, guide.min_length(), random.Random(0))
    jsonschema.validate(json.loads(data), SCHEMAS[1])


# -- integrations ----------------------------------------------------------------------------------

REGEX_BUDGET = r'\["[a-z]{1,8}"(, "[a-z]{1,8}")*\]'


@pytest.fixture(scope="module")
def tiny_vocab(tiny_llama: Any) -> structgen.Vocabulary:
    from structgen.hf.models import eos_token_ids, vocabulary_for

    model, tokenizer = tiny_llama
    return vocabulary_for(tokenizer, eos_token_ids=eos_token_ids(model, tokenizer))


def _final_rows(guide: structgen.Guide, out: Any) -> list[bytes]:
    texts = []
    eos = guide.vocabulary.eos_token_ids
    for row in out.tolist():
        state = guide.initial_state
        end = len(row)
        for i, token in enumerate(row):
            if token in eos and guide.is_final(state):
                end = i
                break
            state = guide.next_state(state, token)
            assert state >= 0
        assert guide.is_final(state), f"incomplete: {guide.vocabulary.decode(row)!r}"
        texts.append(guide.vocabulary.decode(row[:end]))
    return texts


@pytest.mark.parametrize("constraint", ["regex", "schema"])
def test_logits_processor_with_a_small_budget_always_ends_final(tiny_llama: Any, tiny_vocab: Any, constraint: str) -> None:
    import torch
    import transformers

    model, tokenizer = tiny_llama
    if constraint == "regex":
        guide = structgen.compile_regex(REGEX_BUDGET, tiny_vocab)
    else:
        guide = structgen.compile_json_schema(SCHEMAS[2], tiny_vocab)
    ids = torch.tensor([tokenizer("Go:")["input_ids"]])
    for budget in sorted({guide.min_length(), guide.min_length() + 2, 12, 20}):
        if budget < guide.min_length():
            continue
        processor = structgen.LogitsProcessor(guide, max_new_tokens=budget)
        for seed in range(3):
            torch.manual_seed(seed)
            with torch.inference_mode():
                out = model.generate(
                    input_ids=ids, attention_mask=torch.ones_like(ids), max_new_tokens=budget, do_sample=True,
                    num_return_sequences=3, logits_processor=transformers.LogitsProcessorList([processor]),
                    eos_token_id=sorted(tiny_vocab.eos_token_ids), pad_token_id=2,
                )
            for text in _final_rows(guide, out[:, ids.shape[1]:]):
                if constraint == "regex":
                    assert re.fullmatch(REGEX_BUDGET, text.decode())
                else:
                    jsonschema.validate(json.loads(text), SCHEMAS[2])


def test_logits_processor_refuses_a_budget_below_the_minimum(tiny_vocab: Any) -> None:
    guide = structgen.compile_json_schema(SCHEMAS[0], tiny_vocab)
    need = guide.min_length()
    with pytest.raises(UnsatisfiableConstraint, match=f"max_new_tokens={need - 1}: raise the token budget to at least {need}"):
        structgen.LogitsProcessor(guide, max_new_tokens=need - 1)
    assert "max_new_tokens" in repr(structgen.LogitsProcessor(guide, max_new_tokens=need))


def test_generate_json_small_budget_is_complete(tiny_llama: Any) -> None:
    from structgen.hf.generation import model_vocabulary

    model, tokenizer = tiny_llama
    guide = structgen.compile_json_schema(SCHEMAS[0], model_vocabulary(model, tokenizer))
    for extra in (0, 3):
        value = structgen.generate_json(model, tokenizer, "JSON:", SCHEMAS[0], max_new_tokens=guide.min_length() + extra,
                                        do_sample=True, chat=False)
        jsonschema.validate(value, SCHEMAS[0])


@pytest.mark.parametrize("aware", [True, False])
def test_engine_budget_aware_finishes_with_stop(tiny_llama: Any, tiny_vocab: Any, aware: bool) -> None:
    from structgen.server.engine import Engine, SamplingParams

    model, _ = tiny_llama
    guide = structgen.compile_regex(r"[a-z]+( [a-z]+)*", tiny_vocab)
    engine = Engine(model, tiny_vocab, max_batch_size=4, budget_aware=aware)
    engine.start()

    try:
        results = drain(lambda: [engine.submit([1, 2, 3], guide, SamplingParams(max_tokens=5, temperature=1.0, seed=s)) for s in range(4)])
    finally:
        engine.stop()
    for text, ev in results:
        assert ev.error is None
        if aware:
            assert ev.finish_reason == "stop" and re.fullmatch(r"[a-z]+( [a-z]+)*", text), (text, ev)
        assert ev.finish_reason in ("stop", "length")


def test_engine_refuses_a_budget_below_the_minimum(tiny_llama: Any, tiny_vocab: Any) -> None:
    from structgen.server.engine import Engine, SamplingParams

    model, _ = tiny_llama
    guide = structgen.compile_regex(r"[0-9]{12}", tiny_vocab)
    engine = Engine(model, tiny_vocab, budget_aware=True)

    async def run() -> None:
        engine.submit([1, 2], guide, SamplingParams(max_tokens=2))

    with pytest.raises(UnsatisfiableConstraint, match="at least"):
        asyncio.run(run())
