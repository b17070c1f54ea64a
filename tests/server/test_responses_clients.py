"""The Responses API's clients, unchanged, against ``structgen serve`` with the embedded model:
the official ``openai`` client's ``responses.create`` / ``responses.parse`` /
``responses.stream`` (text, a schema, function and custom tools, a tool result sent back), and
LangChain's ``ChatOpenAI(use_responses_api=True)`` (plain, structured output, tools, streaming).

The server is the real command (``python -m structgen.cli serve``) with ``--api-key`` and
``--served-model-name``, so the clients send the key and a model name they know.
"""

from __future__ import annotations

import json
import re
from typing import Any, Iterator

import pytest

from ..support.serving import serve_process

openai = pytest.importorskip("openai")
langchain_openai = pytest.importorskip("langchain_openai")
pydantic = pytest.importorskip("pydantic")
jsonschema = pytest.importorskip("jsonschema")

pytestmark = [pytest.mark.model, pytest.mark.timeout(600)]

KEY = "test-key-41"
MODEL = "gpt-4o-mini"


class City(pydantic.BaseModel):
    """A city, small enough that SmolLM2-135M answers it in a few dozen tokens."""

    name: str = pydantic.Field(max_length=16)
    country: str = pydantic.Field(max_length=16)
    population: int = pydantic.Field(ge=0, le=50_000_000)


class GetWeather(pydantic.BaseModel):
    """Get the current weather in a city."""

    city: str = pydantic.Field(max_length=16)
    unit: str = pydantic.Field(pattern="^(celsius|fahrenheit)$")


PROMPT = "Describe Paris: its name, its country and its population."
WEATHER = {"type": "function", "name": "get_weather", "description": "Get the current weather in a city",
           "parameters": GetWeather.model_json_schema(), "strict": True}
SQL = r"SELECT (name|population) FROM cities WHERE name = '[A-Z][a-z]{1,10}';"
RUN_SQL = {"type": "custom", "name": "run_sql", "description": "Run one SQL query on the table cities",
           "format": {"type": "grammar", "syntax": "regex", "definition": SQL}}


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    with serve_process("--max-batch-size", "4", "--api-key", KEY, "--served-model-name", MODEL,
                       "SmolLM2-135M-Instruct") as base:
        yield base


@pytest.fixture(scope="module")
def oai(server: str) -> Any:
    return openai.OpenAI(base_url=f"{server}/v1", api_key=KEY, max_retries=0, timeout=300)


def _langchain(server: str, **kw: Any) -> Any:
    kw = {"temperature": 0, "max_tokens": 48, **kw}
    return langchain_openai.ChatOpenAI(model=MODEL, base_url=f"{server}/v1", api_key=KEY, max_retries=0, timeout=300,
                                       use_responses_api=True, **kw)


def _valid(city: Any) -> None:
    assert isinstance(city, City)
    City.model_validate(city.model_dump())


# -- the official client ------------------------------------------------------------------------------


def test_create(oai: Any) -> None:
    r = oai.responses.create(model=MODEL, input="Say hello.", instructions="Be brief.", max_output_tokens=16,
                             temperature=0)
    assert r.model == MODEL and r.store is False and r.output_text and r.usage.output_tokens <= 16


def test_parse(oai: Any) -> None:
    r = oai.responses.parse(model=MODEL, input=PROMPT, text_format=City, temperature=0, max_output_tokens=48)
    _valid(r.output_parsed)


def test_stream(oai: Any) -> None:
    with oai.responses.stream(model=MODEL, input=PROMPT, text_format=City, temperature=0,
                              max_output_tokens=48) as stream:
        events = list(stream)
        final = stream.get_final_response()
    assert [e.sequence_number for e in events] == list(range(len(events)))
    assert events[0].type == "response.created" and events[-1].type == "response.completed"
    deltas = [e.delta for e in events if e.type == "response.output_text.delta"]
    assert len(deltas) > 1 and "".join(deltas) == final.output_text
    _valid(final.output_parsed)


def test_a_function_call_and_its_result(oai: Any) -> None:
    messages: list[Any] = [{"role": "user", "content": "What is the weather in Paris?"}]
    r = oai.responses.create(model=MODEL, input=messages, tools=[WEATHER], tool_choice="required",
                             parallel_tool_calls=False, temperature=0, max_output_tokens=60)
    [call] = [item for item in r.output if item.type == "function_call"]
    GetWeather.model_validate_json(call.arguments)
    messages += [call.model_dump(exclude_none=True),
                 {"type": "function_call_output", "call_id": call.call_id,
                  "output": json.dumps({"temperature": 18, "unit": "celsius"})}]
    r = oai.responses.create(model=MODEL, input=messages, tools=[WEATHER], tool_choice="none", temperature=0,
                             max_output_tokens=30)
    assert r.output_text and not [item for item in r.output if item.type == "function_call"]


def test_a_custom_tool_with_a_regex_grammar(oai: Any) -> None:
    r = oai.responses.create(model=MODEL, input="How many people live in Paris? Ask the database.",
                             tools=[RUN_SQL], tool_choice={"type": "custom", "name": "run_sql"},
                             parallel_tool_calls=False, temperature=0, max_output_tokens=60)
    [call] = [item for item in r.output if item.type == "custom_tool_call"]
    assert call.name == "run_sql" and re.fullmatch(SQL, call.input), call.input
    with oai.responses.stream(model=MODEL, input="Population of Rome? Ask the database.", tools=[RUN_SQL],
                              tool_choice="required", parallel_tool_calls=False, temperature=0,
                              max_output_tokens=60) as stream:
        pieces = [e.delta for e in stream if e.type == "response.custom_tool_call_input.delta"]
        final = stream.get_final_response()
    [call] = [item for item in final.output if item.type == "custom_tool_call"]
    assert "".join(pieces) == call.input and re.fullmatch(SQL, call.input)


def test_a_refusal_through_the_client(oai: Any) -> None:
    with pytest.raises(openai.BadRequestError) as info:
        oai.responses.create(model=MODEL, input="hi", previous_response_id="resp_123")
    assert info.value.param == "previous_response_id" and info.value.code == "unsupported_parameter"
    with pytest.raises(openai.BadRequestError) as info:
        oai.responses.create(model=MODEL, input="hi", tools=[{"type": "web_search"}])
    assert info.value.param == "tools[0]"


# -- LangChain, use_responses_api=True -------------------------------------------------------------------


def test_langchain_invoke(server: str) -> None:
    msg = _langchain(server).invoke("Say hello.")
    assert isinstance(msg.content, (str, list)) and msg.text


def test_langchain_structured_output(server: str) -> None:
    _valid(_langchain(server).with_structured_output(City, method="json_schema").invoke(PROMPT))


def test_langchain_structured_output_streamed(server: str) -> None:
    chunks = list(_langchain(server).with_structured_output(City, method="json_schema").stream(PROMPT))
    assert chunks
    last = chunks[-1]
    _valid(last if isinstance(last, City) else City.model_validate(last))


def test_langchain_tools(server: str) -> None:
    llm = _langchain(server, max_tokens=60).bind_tools([GetWeather], tool_choice="GetWeather",
                                                       parallel_tool_calls=False)
    msg = llm.invoke("What is the weather in Paris?")
    [call] = msg.tool_calls
    assert call["name"] == "GetWeather"
    GetWeather.model_validate(call["args"])


def test_langchain_stream(server: str) -> None:
    chunks = list(_langchain(server, max_tokens=16).stream("Count to five."))
    assert len(chunks) > 1
    text = "".join(c.text for c in chunks)
    assert text
