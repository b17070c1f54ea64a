"""Reasoning budgets in the one decoding step, ``generate_json(reasoning=)`` and
``generate_tool_call``, on the tiny random-weight Llama (its outputs are arbitrary, so every
check is "valid whatever the model wants"), and on the real SmolLM2 (``model``)."""

from __future__ import annotations

import json
import re
import runpy
from typing import Any

import pytest

torch = pytest.importorskip("torch")
jsonschema = pytest.importorskip("jsonschema")

import structgen  # noqa: E402
from structgen import compile_composed  # noqa: E402
from structgen.compose import Reasoning, Tool, ToolCall  # noqa: E402
from structgen.compose.reasoning import split_reasoning  # noqa: E402
from structgen.guides.text_budget import TextBudget  # noqa: E402
from structgen.hf.decoding import decode  # noqa: E402
from structgen.hf.generation import model_vocabulary  # noqa: E402
from structgen.guides.cursor import Cursor  # noqa: E402
from structgen.guides.matcher import Matcher  # noqa: E402

from ..support.paths import EXAMPLES  # noqa: E402

WEATHER = {"type": "object", "properties": {"city": {"type": "string", "maxLength": 12},
                                            "unit": {"enum": ["celsius", "fahrenheit"]}},
           "required": ["city", "unit"], "additionalProperties": False}
TOOLS = [{"type": "function", "function": {"name": "get_weather", "description": "Weather in a city",
                                           "parameters": WEATHER}}]


def _thinking_tokens(vocab: structgen.Vocabulary, ids: list[int], start: bytes, end: bytes) -> int:
    """Tokens strictly after the one that completes ``start`` and before the one that completes ``end``."""
    data, n, inside = b"", 0, False
    for t in ids:
        data += vocab.tokens[t] or b""
        if inside:
            if end in data[data.index(start) + len(start):]:
                return n
            n += 1
        elif start in data:
            inside = True
    raise AssertionError("the thinking never ended")


@pytest.mark.parametrize("max_tokens", [0, 3, 12])
def test_decode_closes_the_thinking_when_its_tokens_are_spent(tiny_llama: Any, max_tokens: int) -> None:
    model, tokenizer = tiny_llama
    vocab = model_vocabulary(model, tokenizer)
    reasoning = Reasoning(max_tokens=max_tokens)
    guide = compile_composed(reasoning.format(structgen.compose.JsonSchema(WEATHER)), vocab)
    ids = tokenizer("Think, then answer.", return_tensors="pt")["input_ids"]
    out = decode(model, tokenizer, guide, ids, max_new_tokens=120, text_budget=reasoning.budget())
    text = vocab.decode(out).decode()
    thinking, answer = split_reasoning(text, reasoning)
    jsonschema.validate(json.loads(answer), WEATHER)
    # the tokens it spent, then at most the tokens that spell "</think>" (it may finish a partial one)
    spent = _thinking_tokens(vocab, out, b"<think>", b"</think>")
    assert max_tokens <= spent <= max_tokens + len(b"</think>"), (spent, thinking)


def test_the_logits_processor_applies_the_same_budget(tiny_llama: Any) -> None:
    model, tokenizer = tiny_llama
    vocab = model_vocabulary(model, tokenizer)
    reasoning = Reasoning(max_tokens=4)
    guide = compile_composed(reasoning.format(structgen.compose.JsonSchema(WEATHER)), vocab)
    enc = tokenizer("Think, then answer.", return_tensors="pt")
    processor = structgen.LogitsProcessor(guide, max_new_tokens=80, text_budget=reasoning.budget())
    out = model.generate(**enc, max_new_tokens=80, do_sample=False, logits_processor=[processor],
                         eos_token_id=sorted(vocab.eos_token_ids), pad_token_id=sorted(vocab.eos_token_ids)[0])
    ids = [t for t in out[0, enc["input_ids"].shape[1]:].tolist() if t not in vocab.eos_token_ids]
    expected = decode(model, tokenizer, guide, enc["input_ids"], max_new_tokens=80, fast_forward=False,
                      text_budget=reasoning.budget())
    assert ids == expected
    assert 4 <= _thinking_tokens(vocab, ids, b"<think>", b"</think>") <= 4 + len(b"</think>")


def test_a_spent_thinking_the_guide_cannot_close_fails_the_row_closed() -> None:
    vocab = structgen.Vocabulary.from_bytes([b"a", b"</t>", None], eos_token_ids=[2])
    cursor = Cursor(Matcher.of(structgen.compile_regex("a+", vocab)), text_budget=TextBudget(b"", b"</t>", 0))
    bitmask = Matcher.allocate_token_bitmask(1, vocab.size)
    cursor.fill(bitmask)
    assert isinstance(cursor.error, structgen.UnsatisfiableConstraint)
    assert "allows no token that writes b'</t>'" in str(cursor.error)
    assert bitmask.tolist() == [[1 << 2]]  # EOS only: the row ends, never unconstrained


def test_generate_json_with_reasoning(tiny_llama: Any) -> None:
    model, tokenizer = tiny_llama
    value, thinking = structgen.generate_json(model, tokenizer, "Weather?", WEATHER, max_new_tokens=80,
                                              reasoning=Reasoning(max_tokens=5), with_reasoning=True)
    jsonschema.validate(value, WEATHER)
    assert isinstance(thinking, str)


def test_generate_tool_call_returns_valid_calls(tiny_llama: Any) -> None:
    pydantic = pytest.importorskip("pydantic")
    model, tokenizer = tiny_llama

    class Lookup(pydantic.BaseModel):
        """Find a user."""

        user_id: int = pydantic.Field(ge=0, le=999)

    call = structgen.generate_tool_call(model, tokenizer, "Weather in Oslo?", TOOLS, max_new_tokens=60)
    assert isinstance(call, ToolCall) and call.name == "get_weather"
    jsonschema.validate(call.parsed, WEATHER)
    found = structgen.generate_tool_call(model, tokenizer, "Find user 7.", [Lookup], max_new_tokens=40)
    assert isinstance(found, Lookup)
    calls = structgen.generate_tool_call(model, tokenizer, "Both.", [Lookup, *TOOLS], parallel=True,
                                         tool_choice="required", max_new_tokens=90)
    assert isinstance(calls, list) and calls
    named = structgen.generate_tool_call(model, tokenizer, "x", [Lookup, *TOOLS], max_new_tokens=60,
                                         tool_choice={"type": "function", "function": {"name": "get_weather"}})
    assert named.name == "get_weather"
    with pytest.raises(structgen.ConstraintError, match="not among the tools"):
        structgen.generate_tool_call(model, tokenizer, "x", TOOLS, tool_choice="nope")
    text = structgen.generate_tool_call(model, tokenizer, "Hi", TOOLS, tool_choice="none", max_new_tokens=8)
    assert isinstance(text, str) and "<tool_call>" not in text


@pytest.mark.model
def test_smollm2_calls_the_weather_tool_and_thinks_before_json(smollm2: Any) -> None:
    model, tokenizer = smollm2
    call = structgen.generate_tool_call(model, tokenizer, "What is the weather in Paris, in celsius?", TOOLS)
    assert call.name == "get_weather" and call.parsed["unit"] == "celsius"
    assert "Paris" in call.parsed["city"]
    value, thinking = structgen.generate_json(
        model, tokenizer, "Which unit do people in Paris use? Answer as JSON.", WEATHER, max_new_tokens=96,
        reasoning=Reasoning(max_tokens=24), with_reasoning=True)
    jsonschema.validate(value, WEATHER)
    assert thinking and len(tokenizer.encode(thinking, add_special_tokens=False)) <= 24 + 8
    assert isinstance(Tool.of(TOOLS[0]), Tool)


@pytest.mark.model
@pytest.mark.timeout(300)
def test_tool_calls_example_end_to_end(capsys: pytest.CaptureFixture[str]) -> None:
    """``python examples/tool_calls.py``: every printed call is a valid call of one of its tools, the
    parallel calls are calls of the named tool, and the answer after the thinking validates."""
    ns = runpy.run_path(str(EXAMPLES / "tool_calls.py"), run_name="tool_calls")
    ns["main"]()
    out = capsys.readouterr().out
    tools = {cls.__name__: cls for cls in ns["TOOLS"]}
    calls = re.findall(r"(\w+)\((\{.*?\})\)", out)
    assert len(calls) >= len(ns["QUESTIONS"]) + 1
    for name, arguments in calls:
        tools[name].model_validate_json(arguments)
    parallel = re.search(r"parallel: (.*)", out)
    assert parallel and all(name == "GetWeather" for name, _ in re.findall(r"(\w+)\((\{.*?\})\)", parallel.group(1)))
    answer = re.search(r"  answer: (.*)", out)
    assert answer and "thinking: " in out
    jsonschema.validate(json.loads(answer.group(1)), ns["ANSWER"])
