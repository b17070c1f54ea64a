"""Tool calling and reasoning end to end: the real SmolLM2 behind ``structgen serve`` (a
subprocess), driven by the official ``openai`` client, as the issue lists them: a weather tool
with ``tool_choice: "required"``, a named tool, ``auto`` with a question that needs no tool, two
parallel calls, streaming, a reasoning request, and the ``role: "tool"`` round trip. Greedy
decoding, so the model's choices are the same on every run; validity is the server's promise
whatever the model chooses."""

from __future__ import annotations

import json
from typing import Any, Iterator

import pytest

from ..support.serving import serve_process

httpx = pytest.importorskip("httpx")
openai = pytest.importorskip("openai")
jsonschema = pytest.importorskip("jsonschema")

pytestmark = [pytest.mark.model, pytest.mark.timeout(900)]

MODEL = "SmolLM2-135M-Instruct"
WEATHER = {"type": "object", "properties": {"city": {"type": "string", "maxLength": 20},
                                            "unit": {"enum": ["celsius", "fahrenheit"]}},
           "required": ["city", "unit"], "additionalProperties": False}
STOCK = {"type": "object", "properties": {"ticker": {"type": "string", "pattern": "^[A-Z]{1,5}$"}},
         "required": ["ticker"], "additionalProperties": False}
TOOLS = [{"type": "function", "function": {"name": "get_weather", "description": "Get the current weather in a city",
                                           "parameters": WEATHER}},
         {"type": "function", "function": {"name": "get_stock_price", "description": "Get a stock's price",
                                           "parameters": STOCK}}]
SCHEMAS = {"get_weather": WEATHER, "get_stock_price": STOCK}


@pytest.fixture(scope="module")
def client() -> Iterator[Any]:
    with serve_process("--max-batch-size", "4", "--served-model-name", MODEL) as base:
        yield openai.OpenAI(base_url=f"{base}/v1", api_key="none", timeout=600)


def _ask(client: Any, question: str, **kw: Any) -> Any:
    return client.chat.completions.create(model=MODEL, messages=[{"role": "user", "content": question}],
                                          temperature=0, tools=TOOLS, **kw).choices[0]


def _calls(message: Any) -> list[tuple[str, Any]]:
    out = []
    for call in message.tool_calls or []:
        assert call.type == "function" and call.id.startswith("call_")
        args = json.loads(call.function.arguments)
        jsonschema.validate(args, SCHEMAS[call.function.name])
        out.append((call.function.name, args))
    return out


def test_required_weather_call(client: Any) -> None:
    choice = _ask(client, "What is the weather in Paris?", tool_choice="required", max_tokens=60)
    assert choice.finish_reason == "tool_calls"
    [(name, args)] = _calls(choice.message)[:1]
    assert name == "get_weather" and "Paris" in args["city"]


def test_a_named_tool(client: Any) -> None:
    named = {"type": "function", "function": {"name": "get_stock_price"}}
    choice = _ask(client, "How is Apple doing?", tool_choice=named, parallel_tool_calls=False, max_tokens=40)
    assert [name for name, _ in _calls(choice.message)] == ["get_stock_price"]


def test_auto_answers_in_text_when_no_tool_is_needed(client: Any) -> None:
    choice = _ask(client, "Hi! Tell me a joke.", tool_choice="auto", max_tokens=40)
    assert not choice.message.tool_calls and choice.message.content and "<tool_call>" not in choice.message.content


def test_two_parallel_calls(client: Any) -> None:
    choice = _ask(client, "What's the weather in Paris and in London?", tool_choice="required", max_tokens=100)
    calls = _calls(choice.message)
    assert len(calls) >= 2 and calls[0] == ("get_weather", {"city": "Paris", "unit": "celsius"})


def test_streamed_calls_are_the_whole_calls(client: Any) -> None:
    kw = {"tool_choice": "required", "parallel_tool_calls": False, "max_tokens": 60}
    whole = _ask(client, "What is the weather in Oslo?", **kw)
    stream = client.chat.completions.create(model=MODEL, messages=[{"role": "user", "content": "What is the weather in Oslo?"}],
                                            temperature=0, tools=TOOLS, stream=True, **kw)
    name = arguments = ""
    finish = None
    for chunk in stream:
        for ch in chunk.choices:
            for item in ch.delta.tool_calls or []:
                name += item.function.name or "" if item.function else ""
                arguments += item.function.arguments or "" if item.function else ""
            finish = ch.finish_reason or finish
    assert finish == "tool_calls"
    assert (name, arguments) == (whole.message.tool_calls[0].function.name, whole.message.tool_calls[0].function.arguments)


def test_reasoning_then_a_valid_answer(client: Any) -> None:
    fmt = {"type": "json_schema", "json_schema": {"name": "weather", "schema": WEATHER}}
    resp = client.chat.completions.create(
        model=MODEL, messages=[{"role": "user", "content": "Describe the weather in Rome as JSON."}], temperature=0,
        max_tokens=100, response_format=fmt, extra_body={"max_reasoning_tokens": 24})
    msg = resp.choices[0].message
    jsonschema.validate(json.loads(msg.content), WEATHER)
    thinking = msg.model_extra["reasoning_content"]
    assert isinstance(thinking, str) and "</think>" not in thinking and "<think>" not in msg.content


def test_a_tool_result_round_trip(client: Any) -> None:
    first = _ask(client, "What is the weather in Paris?", tool_choice="required", parallel_tool_calls=False, max_tokens=60)
    call = first.message.tool_calls[0]
    messages = [{"role": "user", "content": "What is the weather in Paris?"},
                {"role": "assistant", "content": None, "tool_calls": [call.model_dump()]},
                {"role": "tool", "tool_call_id": call.id, "content": json.dumps({"temperature": 18, "unit": "celsius"})}]
    resp = client.chat.completions.create(model=MODEL, messages=messages, temperature=0, tools=TOOLS, max_tokens=40)
    msg = resp.choices[0].message
    assert resp.choices[0].finish_reason in ("stop", "length", "tool_calls")
    assert msg.content or msg.tool_calls
    _calls(msg)
