"""Fast-forward: forced bytes/text/tokens of a guide, and generation that appends them unsampled."""

from __future__ import annotations

import json
from typing import Any

import pytest

import structgen
from ..support.paths import EXAMPLES

K8S_SCHEMA = {
    "type": "object",
    "properties": {
        "apiVersion": {"const": "apps/v1"},
        "kind": {"enum": ["Deployment", "DaemonSet", "StatefulSet"]},
        "metadata": {
            "type": "object",
            "properties": {"name": {"type": "string"}, "namespace": {"type": "string"}},
            "required": ["name", "namespace"],
        },
        "spec": {
            "type": "object",
            "properties": {"replicas": {"type": "integer"}, "paused": {"type": "boolean"}},
            "required": ["replicas", "paused"],
        },
    },
    "required": ["apiVersion", "kind", "metadata", "spec"],
}
K8S_INSTANCE = {
    "apiVersion": "apps/v1",
    "kind": "StatefulSet",
    "metadata": {"name": "web", "namespace": "prod"},
    "spec": {"replicas": 3, "paused": False},
}
ENUM_SCHEMA = {"enum": ["production", "staging", "stage-2"]}


def _toy_vocab() -> structgen.Vocabulary:
    return structgen.Vocabulary.from_bytes(
        [b"a", b"b", b"c", b"d", b"ab", b"abc", b"\xc3", b"\xa9", b"\xc3\xa9", b"\xa8", b""], eos_token_ids=[10]
    )


def test_forced_bytes_follow_single_byte_states_and_stop_at_final_or_choice() -> None:
    vocab = _toy_vocab()
    guide = structgen.compile_regex(r"abc(a|b)d?", vocab)
    s = guide.initial_state
    assert guide.forced_bytes(s) == b"abc"
    assert guide.forced_text(s) == "abc"
    s = guide.advance(s, [0])
    assert guide.forced_bytes(s) == b"bc"  # cached along the chain
    s = guide.advance(s, [1, 2, 0])
    assert guide.is_final(s) and guide.forced_bytes(s) == b""  # final: the model may stop
    with pytest.raises(ValueError, match="not a state"):
        guide.forced_bytes(-1)


def test_forced_text_stops_before_an_incomplete_character() -> None:
    vocab = _toy_vocab()
    guide = structgen.compile_regex(r"ab(é|è)", vocab)
    # 'é' is C3 A9 and 'è' is C3 A8: the forced bytes end mid-character
    assert guide.forced_bytes(guide.initial_state) == b"ab\xc3"
    assert guide.forced_text(guide.initial_state) == "ab"
    inside = guide.advance(guide.initial_state, [4, 6])
    assert guide.forced_text(inside) == ""


def test_forced_tokens_drop_a_trailing_token_a_longer_token_could_extend() -> None:
    vocab = _toy_vocab()
    encode = {"ab": [4], "abc": [5], "abcd": [5, 3], "a": [0]}.__getitem__
    # forced "ab" then a choice: "abc" starts with "ab", so the model keeps the choice of "abc"
    assert structgen.compile_regex(r"ab(c|d)", vocab).forced_tokens(0, encode) == []
    # forced "abcd": [abc, d] and nothing in the vocabulary extends "d" -> both forced
    assert structgen.compile_regex(r"abcd(a|b)", vocab).forced_tokens(0, encode) == [5, 3]
    # forced "abc": "abc" is no proper prefix of a token -> forced
    assert structgen.compile_regex(r"abc(a|b)", vocab).forced_tokens(0, encode) == [5]


def test_forced_tokens_stop_where_the_encoding_leaves_the_forced_text() -> None:
    vocab = _toy_vocab()
    guide = structgen.compile_regex(r"abcd(a|b)", vocab)
    assert guide.forced_tokens(0, lambda text: [5, 1]) == [5]  # "b" is not the forced "d"


TOKENIZERS = ["smollm2", "llama3", "mistral"]


@pytest.mark.parametrize("name", TOKENIZERS)
def test_forced_text_after_the_brace_is_the_first_key(name: str, request: pytest.FixtureRequest) -> None:
    tokenizer = request.getfixturevalue(f"{name}_tokenizer")
    vocab = request.getfixturevalue(f"{name}_vocabulary")
    guide = structgen.compile_json_schema(K8S_SCHEMA, vocab, whitespace="")
    s = guide.initial_state
    assert guide.forced_text(s) == '{"apiVersion":"apps/v1","kind":"'
    forced = guide.forced_tokens(s, tokenizer)
    text = vocab.decode(forced).decode()
    # canonical: the tokenizer's own encoding of that text, minus trailing tokens ('"' or '":"') that
    # '"Deployment'-like tokens could extend
    assert text.startswith('{"apiVersion":"apps/v1","kind')
    assert forced == tokenizer.encode(text, add_special_tokens=False)
    assert guide.advance(s, forced) >= 0


@pytest.mark.parametrize("name", TOKENIZERS)
def test_forced_tokens_along_a_real_instance(name: str, request: pytest.FixtureRequest) -> None:
    tokenizer = request.getfixturevalue(f"{name}_tokenizer")
    vocab = request.getfixturevalue(f"{name}_vocabulary")
    guide = structgen.compile_json_schema(K8S_SCHEMA, vocab, whitespace="")
    doc = json.dumps(K8S_INSTANCE, separators=(",", ":"))
    ids = tokenizer.encode(doc, add_special_tokens=False)
    s, n_forced, keys = guide.initial_state, 0, set()
    for t in ids:
        forced = guide.forced_tokens(s, tokenizer)  # asserts each is allowed in sequence
        data = vocab.decode(forced)
        assert guide.forced_bytes(s).startswith(data)
        n_forced += len(forced)
        keys.update(k for k in ("metadata", "namespace", "spec", "replicas", "paused") if k in data.decode())
        s = guide.next_state(s, t)
        assert s >= 0
    assert guide.is_final(s)
    assert n_forced > 0 and keys == {"metadata", "namespace", "spec", "replicas", "paused"}
    # after '"name":"web",' the next key is forced
    s = guide.advance(guide.initial_state, tokenizer.encode(doc[: doc.index('"web"') + 6], add_special_tokens=False))
    assert guide.forced_text(s) == '"namespace":"'


@pytest.mark.parametrize("name", TOKENIZERS)
def test_forced_rest_of_an_enum_value(name: str, request: pytest.FixtureRequest) -> None:
    tokenizer = request.getfixturevalue(f"{name}_tokenizer")
    vocab = request.getfixturevalue(f"{name}_vocabulary")
    guide = structgen.compile_json_schema(ENUM_SCHEMA, vocab, whitespace="")
    assert guide.forced_text(guide.initial_state) == '"'
    s = guide.advance(guide.initial_state, tokenizer.encode('"p', add_special_tokens=False))
    assert guide.forced_text(s) == 'roduction"'
    forced = guide.forced_tokens(s, tokenizer)
    assert guide.is_final(guide.advance(s, forced)) or vocab.decode(forced) != b'roduction"'
    assert vocab.decode(forced) and b'roduction"'.startswith(vocab.decode(forced))
    s = guide.advance(guide.initial_state, tokenizer.encode('"stag', add_special_tokens=False))
    assert guide.forced_text(s) == ""  # "staging" or "stage-2"


# -- generation with fast-forward ------------------------------------------------------------------


def _count_forward_passes(model: Any) -> tuple[list[int], Any]:
    calls = [0]

    def hook(*_: Any) -> None:
        calls[0] += 1

    return calls, model.register_forward_hook(hook)


def _example(name: str) -> dict[str, Any]:
    import runpy

    return runpy.run_path(str(EXAMPLES / f"{name}.py"))


def test_fast_forward_on_the_tiny_model_is_valid_and_saves_passes(tiny_llama: Any) -> None:
    model, tokenizer = tiny_llama
    calls, handle = _count_forward_passes(model)
    try:
        outs, passes = [], []
        for ff in (False, True):
            calls[0] = 0
            outs.append(structgen.generate_json(
                model, tokenizer, "JSON:", K8S_SCHEMA, whitespace="", max_new_tokens=96, chat=False, fast_forward=ff
            ))
            passes.append(calls[0])
    finally:
        handle.remove()
    for out in outs:
        assert out["apiVersion"] == "apps/v1" and set(out) == set(K8S_SCHEMA["required"])
    assert passes[1] < passes[0]


def test_forced_tokens_that_do_not_fit_the_budget_fall_back_to_sampling(tiny_llama: Any) -> None:
    from structgen.hf.decoding import DecodeStats, decode
    from structgen.hf.generation import model_vocabulary

    model, tokenizer = tiny_llama
    vocab = model_vocabulary(model, tokenizer)
    byte_token = {tok: i for i, tok in enumerate(vocab.tokens) if tok is not None and len(tok) == 1}

    def one_token_per_byte(text: str) -> list[int]:  # far more tokens than the shortest spelling
        return [byte_token[bytes([b])] for b in text.encode()]

    guide = structgen.compile_json_schema(K8S_SCHEMA, vocab, whitespace="")
    ids = tokenizer("JSON:", return_tensors="pt")["input_ids"]
    roomy, tight = DecodeStats(), DecodeStats()
    out = decode(model, one_token_per_byte, guide, ids, max_new_tokens=400, stats=roomy)
    assert guide.accepts_bytes(vocab.decode(out)) and roomy.forced_tokens > 0
    budget = guide.min_length()  # the forced runs, one token per byte, cannot all fit
    out = decode(model, one_token_per_byte, guide, ids, max_new_tokens=budget, stats=tight)
    assert guide.accepts_bytes(vocab.decode(out)) and len(out) <= budget
    assert tight.forced_tokens < roomy.forced_tokens


def test_options_the_loop_does_not_know_go_to_model_generate(tiny_llama: Any) -> None:
    model, tokenizer = tiny_llama
    out = structgen.generate_regex(model, tokenizer, "Date:", r"\d{4}-\d{2}-\d{2}", num_beams=2, max_new_tokens=16)
    assert len(out) == 10


CASES = [
    ("birth_date", "regex", {}, 16),
    ("city", "json", {}, 96),
    ("ner", "pydantic", {"chat": False}, 64),
    ("ner", "pydantic", {"chat": False, "whitespace": ""}, 64),
]


@pytest.mark.model
@pytest.mark.parametrize(("name", "kind", "options", "max_new_tokens"), CASES)
def test_greedy_output_is_the_same_with_and_without_fast_forward(
    smollm2: Any, name: str, kind: str, options: dict[str, Any], max_new_tokens: int
) -> None:
    model, tokenizer = smollm2
    ex = _example(name)
    calls, handle = _count_forward_passes(model)
    outs, passes = [], []
    try:
        for ff in (False, True):
            calls[0] = 0
            if kind == "regex":
                out = structgen.generate_regex(
                    model, tokenizer, ex["PROMPT"], ex["DATE"], max_new_tokens=max_new_tokens, fast_forward=ff
                )
            elif kind == "json":
                out = structgen.generate_json(
                    model, tokenizer, ex["PROMPT"], ex["SCHEMA"], max_new_tokens=max_new_tokens,
                    fast_forward=ff, **options
                )
            else:
                out = structgen.generate_pydantic(
                    model, tokenizer, ex["PROMPT"], ex["Entities"], max_new_tokens=max_new_tokens,
                    fast_forward=ff, **options
                )
            outs.append(out)
            passes.append(calls[0])
    finally:
        handle.remove()
    assert outs[0] == outs[1]
    assert passes[1] <= passes[0]
    if kind != "regex":  # a date has no forced run longer than one token
        assert passes[1] < passes[0]


def test_one_forward_pass_for_the_forced_run_matches_one_pass_per_token(tiny_llama: Any) -> None:
    from structgen.hf.decoding import DecodeStats, decode
    from structgen.hf.generation import model_vocabulary

    model, tokenizer = tiny_llama
    guide = structgen.compile_json_schema(K8S_SCHEMA, model_vocabulary(model, tokenizer), whitespace="")
    ids = tokenizer("JSON:", return_tensors="pt")["input_ids"]
    batched, singly = DecodeStats(), DecodeStats()
    a = decode(model, tokenizer, guide, ids, max_new_tokens=96, stats=batched)
    b = decode(model, tokenizer, guide, ids, max_new_tokens=96, stats=singly, feed_forced_singly=True)
    assert a == b and batched.forced_tokens > 0
    assert batched.forward_passes < singly.forward_passes


# -- the server engine: rows fast-forward different amounts in one step -----------------------------


def _engine_outputs(model: Any, tokenizer: Any, jobs: list[tuple[list[int], Any, int]], *, fast_forward: bool) -> tuple[list[str], Any]:
    import asyncio

    from structgen.server.engine import Engine, SamplingParams

    vocab = structgen.hf.generation.model_vocabulary(model, tokenizer)
    engine = Engine(model, vocab, max_batch_size=4, tokenizer=tokenizer, fast_forward=fast_forward)
    engine.start()

    async def run() -> list[str]:
        handles = [engine.submit(ids, guide, SamplingParams(max_tokens=n)) for ids, guide, n in jobs]
        out = []
        for h in handles:
            text = ""
            async for ev in h:
                assert ev.error is None, ev.error
                text += ev.text
            out.append(text)
        return out

    try:
        return asyncio.run(run()), engine
    finally:
        engine.stop()


def test_engine_rows_fast_forward_different_amounts_in_one_step(tiny_llama: Any) -> None:
    from structgen.hf.decoding import decode
    from structgen.hf.generation import model_vocabulary

    model, tokenizer = tiny_llama
    vocab = model_vocabulary(model, tokenizer)
    k8s = structgen.compile_json_schema(K8S_SCHEMA, vocab, whitespace="")
    enum = structgen.compile_json_schema(ENUM_SCHEMA, vocab, whitespace="")
    free = structgen.compile_regex(r"[a-z]{3,12}", vocab)
    jobs = [([1, 2, 3], k8s, 80), ([5, 6], enum, 16), ([7, 8, 9, 10], free, 12), ([4], k8s, 80)]
    on, engine_on = _engine_outputs(model, tokenizer, jobs, fast_forward=True)
    off, engine_off = _engine_outputs(model, tokenizer, jobs, fast_forward=False)
    assert engine_on.forced_tokens > 0 and engine_off.forced_tokens == 0
    assert engine_on.steps < engine_off.steps
    for (ids, guide, n), text in zip(jobs, on):
        assert guide.accepts_bytes(text.encode())
        # the same greedy output as the one-sequence loop with fast-forward
        alone = decode(model, tokenizer, guide, torch_tensor([ids]), max_new_tokens=n)
        assert vocab.decode(alone).decode() == text
    for (ids, guide, n), text in zip(jobs, off):
        assert guide.accepts_bytes(text.encode())


def torch_tensor(rows: list[list[int]]) -> Any:
    import torch

    return torch.tensor(rows, dtype=torch.long)
