"""generate_regex / generate_json / generate_pydantic and model loading.

Fast tests run on the tiny random-weight Llama; ``@pytest.mark.model`` tests run the real
SmolLM2-135M-Instruct on the constraints of the three examples.
"""

from __future__ import annotations

import json
import re
import runpy
from pathlib import Path
from typing import Any

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

import structgen  # noqa: E402
from structgen import StructgenError  # noqa: E402
from structgen.hf.generation import IncompleteGeneration, model_vocabulary  # noqa: E402
from structgen.hf.models import eos_token_ids, load_model, vocabulary_for  # noqa: E402

from ..support.paths import EXAMPLES  # noqa: E402


def _json_schema_module() -> None:
    pytest.importorskip("structgen.json_schema.dispatch", reason="JSON Schema compiler not available")


def _example(name: str) -> dict[str, Any]:
    return runpy.run_path(str(EXAMPLES / f"{name}.py"))  # defines constants, does not run main()


# -- fast: tiny random model -------------------------------------------------------------------


def test_generate_regex_finite_language(tiny_llama: Any) -> None:
    model, tokenizer = tiny_llama
    out = structgen.generate_regex(model, tokenizer, "Yes or no?", r"(yes|no|maybe)")
    assert out in ("yes", "no", "maybe")


@pytest.mark.parametrize("pattern", [r" a \. b ,c", r"日本語|🙂🙂|naïve", r"\{\"k\": \[1, 2\]\}"])
@pytest.mark.parametrize("tokenizer_name", ["smollm2_tokenizer", "mistral_tokenizer"])
def test_output_is_the_exact_text(
    request: pytest.FixtureRequest, make_tiny_llama: Any, tokenizer_name: str, pattern: str
) -> None:
    # Byte-level BPE and SentencePiece with byte fallback (emoji and CJK are spelled byte by byte):
    # the answer is decoded from the vocabulary's bytes, leading space and all.
    tokenizer = request.getfixturevalue(tokenizer_name)
    model = make_tiny_llama(tokenizer, seed=2)
    out = structgen.generate_regex(model, tokenizer, "Say it.", pattern, max_new_tokens=32)
    assert re.fullmatch(pattern, out)


def test_sampling_kwargs_pass_through(tiny_llama: Any) -> None:
    model, tokenizer = tiny_llama
    pattern = r"[a-z]{2,6}( [a-z]{2,6}){0,2}\."
    outputs = set()
    for seed in range(5):
        transformers.set_seed(seed)
        out = structgen.generate_regex(
            model, tokenizer, "Words:", pattern, max_new_tokens=48, do_sample=True, temperature=1.5, top_k=0
        )
        assert re.fullmatch(pattern, out)
        outputs.add(out)
    assert len(outputs) > 1  # sampling did happen
    greedy = {structgen.generate_regex(model, tokenizer, "Words:", pattern, max_new_tokens=48) for _ in range(2)}
    assert len(greedy) == 1  # greedy by default


def test_beam_search_returns_the_best_sequence(tiny_llama: Any) -> None:
    model, tokenizer = tiny_llama
    out = structgen.generate_regex(model, tokenizer, "Date:", r"\d{4}-\d{2}-\d{2}", num_beams=3, max_new_tokens=16)
    assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", out)


def test_extra_logits_processors_run_after_ours(tiny_llama: Any) -> None:
    model, tokenizer = tiny_llama
    seen: list[int] = []

    class Spy(transformers.LogitsProcessor):
        def __call__(self, input_ids: torch.Tensor, scores: torch.Tensor) -> torch.Tensor:
            seen.append(int(torch.isfinite(scores).sum()))
            return scores

    spy = transformers.LogitsProcessorList([Spy()])
    out = structgen.generate_regex(model, tokenizer, "?", r"(yes|no)", logits_processor=spy)
    assert out in ("yes", "no")
    assert seen and seen[-1] == 1  # the spy saw our mask: only EOS left at the end


def test_budget_exhausted_raises_instead_of_returning_a_cut_off_string(tiny_llama: Any) -> None:
    model, tokenizer = tiny_llama
    with pytest.raises(IncompleteGeneration, match=r"max_new_tokens=3 before the output was complete") as info:
        structgen.generate_regex(model, tokenizer, "Long:", r"[a-z]{100}", max_new_tokens=3, budget_aware=False)
    assert info.value.max_new_tokens == 3
    assert re.fullmatch(r"[a-z]+", info.value.text) and len(info.value.text) < 100
    assert isinstance(info.value, StructgenError)
    assert IncompleteGeneration is structgen.IncompleteGeneration  # the old path re-exports the tree's class


def test_a_final_state_at_the_budget_is_complete(tiny_llama: Any) -> None:
    # 'x' is complete after one token but could go on; at the budget the text is still valid.
    model, tokenizer = tiny_llama
    out = structgen.generate_regex(model, tokenizer, "x:", r"x+", max_new_tokens=1)
    assert re.fullmatch(r"x+", out)


def test_chat_and_plain_prompts(tiny_llama: Any, llama3_tokenizer: Any) -> None:
    model, tokenizer = tiny_llama
    messages = [{"role": "system", "content": "Answer briefly."}, {"role": "user", "content": "Yes?"}]
    for prompt, chat in [("Yes?", None), ("Yes?", True), ("Yes?", False), (messages, None)]:
        assert structgen.generate_regex(model, tokenizer, prompt, r"yes|no", chat=chat) in ("yes", "no")
    with pytest.raises(TypeError, match="chat template"):
        structgen.generate_regex(model, tokenizer, messages, r"yes|no", chat=False)
    with pytest.raises(StructgenError, match="has no chat template; pass chat=False"):
        structgen.generate_regex(model, llama3_tokenizer, "Yes?", r"yes|no", chat=True)


def test_constraint_errors_surface(tiny_llama: Any) -> None:
    model, tokenizer = tiny_llama
    with pytest.raises(structgen.RegexSyntaxError):
        structgen.generate_regex(model, tokenizer, "?", r"(ab")


def test_eos_ids_merge_tokenizer_and_generation_config(smollm2_tokenizer: Any, make_tiny_llama: Any) -> None:
    model = make_tiny_llama(smollm2_tokenizer, seed=5)
    assert eos_token_ids(model, smollm2_tokenizer) == {2}
    model.generation_config.eos_token_id = [0, 2]
    assert eos_token_ids(model, smollm2_tokenizer) == {0, 2}
    vocab = model_vocabulary(model, smollm2_tokenizer)
    assert vocab.eos_token_ids == {0, 2}
    # Generation stops on either id and the guide allows both exactly at the end.
    guide = structgen.compile_regex(r"ok", vocab)
    s = guide.advance(guide.initial_state, [vocab.tokens.index(b"ok")])
    assert set(guide.allowed_token_ids(s).tolist()) == {0, 2}


def test_vocabulary_cache_per_tokenizer_and_eos(smollm2_tokenizer: Any, llama3_tokenizer: Any) -> None:
    a = vocabulary_for(smollm2_tokenizer, eos_token_ids=[2])
    assert vocabulary_for(smollm2_tokenizer, eos_token_ids=(2,)) is a
    assert vocabulary_for(smollm2_tokenizer, eos_token_ids=[0, 2]) is not a
    assert vocabulary_for(smollm2_tokenizer) is vocabulary_for(smollm2_tokenizer)
    b = vocabulary_for(llama3_tokenizer)
    assert b is not a and b.size == len(llama3_tokenizer)


def test_load_model_errors(tmp_path: Path) -> None:
    with pytest.raises(StructgenError, match="no model at"):
        load_model(tmp_path / "missing")
    with pytest.raises(StructgenError, match="cannot load a model and tokenizer"):
        load_model(tmp_path)  # an empty folder


def test_generate_json_and_pydantic_on_the_tiny_model(tiny_llama: Any) -> None:
    _json_schema_module()
    import jsonschema
    import pydantic

    model, tokenizer = tiny_llama
    schema = {
        "type": "object",
        "properties": {"ok": {"type": "boolean"}, "n": {"type": "integer", "minimum": 0, "maximum": 99}},
        "required": ["ok", "n"],
        "additionalProperties": False,
    }
    value = structgen.generate_json(model, tokenizer, "JSON:", schema, max_new_tokens=32)
    jsonschema.validate(value, schema)

    class Flag(pydantic.BaseModel):
        ok: bool

    flag = structgen.generate_pydantic(model, tokenizer, "JSON:", Flag, max_new_tokens=16)
    assert isinstance(flag, Flag)
    with pytest.raises(IncompleteGeneration, match="max_new_tokens=2"):
        structgen.generate_json(model, tokenizer, "JSON:", schema, max_new_tokens=2, budget_aware=False)
    # Budget-aware (the default): refused up front, naming the minimum.
    with pytest.raises(structgen.UnsatisfiableConstraint, match="max_new_tokens=2: raise the token budget to at least"):
        structgen.generate_json(model, tokenizer, "JSON:", schema, max_new_tokens=2)


def test_helpers_take_the_compile_options(tiny_llama: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """Compile options go to the compile, whichever helper gets them; only generation options
    reach ``model.generate`` (``extract_from`` reached it before: "model_kwargs are not used")."""
    _json_schema_module()
    import pydantic

    model, tokenizer = tiny_llama
    document = "Ada Lovelace wrote the first program."

    class Person(pydantic.BaseModel):
        name: str

    seen: dict[str, Any] = {}
    generate = model.generate

    def spy(*args: Any, **kwargs: Any) -> Any:
        seen.update(kwargs)
        return generate(*args, **kwargs)

    monkeypatch.setattr(model, "generate", spy)
    for extra in ({}, {"num_beams": 2}):  # our decode loop, then model.generate
        person = structgen.generate_pydantic(
            model, tokenizer, "Who?", Person, extract_from=document, key_order="any", max_new_tokens=24, **extra
        )
        assert isinstance(person, Person) and person.name in document
    assert seen["num_beams"] == 2 and not {"extract_from", "key_order"} & set(seen)
    # every option of a JSON Schema format is an option of generate_json and generate_pydantic
    options = structgen.formats.option_names("json_schema")
    assert {"whitespace", "key_order", "formats", "unknown_keywords", "max_states"} <= set(options)
    misspelt = {"type": "object", "propertes": {}}
    with pytest.raises(structgen.SchemaNotSupported, match="'propertes'"):
        structgen.generate_json(model, tokenizer, "?", misspelt, unknown_keywords="error", num_beams=2)
    # (max_states bounds what is built eagerly: the span automaton, a look-around's NFA)
    with pytest.raises(structgen.CompileBudgetExceeded):
        structgen.generate_pydantic(model, tokenizer, "?", Person, extract_from=document, max_states=3)
    with pytest.raises(structgen.CompileBudgetExceeded):
        structgen.generate_regex(model, tokenizer, "?", r"(a|b)*a(a|b){12}(?!c)", max_states=10, num_beams=2)
    code = structgen.generate_json(
        model, tokenizer, "?", {"type": "string", "format": "x-code"}, formats={"x-code": "[A-Z]{3}"}, max_new_tokens=8
    )
    assert re.fullmatch("[A-Z]{3}", code)


# -- the real SmolLM2 --------------------------------------------------------------------------


@pytest.mark.model
def test_birth_date_example_constraint(smollm2: Any) -> None:
    model, tokenizer = smollm2
    ex = _example("birth_date")
    out = structgen.generate_regex(model, tokenizer, ex["PROMPT"], ex["DATE"], max_new_tokens=16)
    assert re.fullmatch(ex["DATE"], out)


@pytest.mark.model
def test_city_example_constraint(smollm2: Any) -> None:
    _json_schema_module()
    import jsonschema

    model, tokenizer = smollm2
    ex = _example("city")
    city = structgen.generate_json(model, tokenizer, ex["PROMPT"], ex["SCHEMA"], max_new_tokens=160)
    jsonschema.validate(city, ex["SCHEMA"])


@pytest.mark.model
def test_ner_example_constraint(smollm2: Any) -> None:
    _json_schema_module()
    model, tokenizer = smollm2
    ex = _example("ner")
    entities = structgen.generate_pydantic(
        model, tokenizer, ex["PROMPT"], ex["Entities"], max_new_tokens=160, chat=False
    )
    assert isinstance(entities, ex["Entities"])
    assert all(isinstance(x, str) for x in entities.person + entities.location)


@pytest.mark.model
def test_default_model_loads_from_the_cache(smollm2: Any) -> None:
    from structgen.hf.models import default_model_dir

    model, tokenizer = smollm2
    folder = default_model_dir()
    assert (folder / "model.safetensors").is_file() and (folder / "tokenizer.json").is_file()
    assert not model.training and model.dtype == torch.float32
    assert len(tokenizer) == model.config.vocab_size == 49152
    again, _ = load_model(folder)  # --model with a transformers folder
    assert type(again) is type(model)


@pytest.mark.model
def test_gguf_conversion_into_a_fresh_cache(tmp_path: Path) -> None:
    from structgen.hf.models import default_gguf_path

    gguf = default_gguf_path()
    model, tokenizer = load_model(gguf, cache_dir=tmp_path)
    (converted,) = [p for p in tmp_path.iterdir()]
    assert converted.name.startswith("SmolLM2-135M-Instruct.Q4_1-")
    assert (converted / "config.json").is_file()
    assert "quantization_config" not in json.loads((converted / "config.json").read_text())
    assert len(tokenizer) == 49152 and eos_token_ids(model, tokenizer) == {2}
    # Second load: from the cache, no new folder, no leftovers from the atomic rename.
    load_model(gguf, cache_dir=tmp_path)
    assert [p.name for p in tmp_path.iterdir()] == [converted.name]


def test_generate_grammar_gives_a_string_of_the_grammar(tiny_llama: Any) -> None:
    lark = pytest.importorskip("lark")
    model, tokenizer = tiny_llama
    grammar = 'start: expr\nexpr: expr "+" term | term\nterm: NUMBER | "(" expr ")"\nNUMBER: /[0-9]{1,2}/\n'
    for extra in ({}, {"num_beams": 2}):  # our decode loop, then model.generate with the processor
        text = structgen.generate_grammar(model, tokenizer, "Sum?", grammar, max_new_tokens=24, start="start", **extra)
        lark.Lark(grammar, parser="earley", lexer="dynamic_complete").parse(text)
    gbnf = 'root ::= "(" [a-c]* ")"'
    assert re.fullmatch(r"\([a-c]*\)", structgen.generate_grammar(model, tokenizer, "?", gbnf, max_new_tokens=16))
