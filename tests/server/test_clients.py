"""The clients people use, unchanged, against a running ``structgen serve`` with the embedded model:
instructor (``JSON_SCHEMA``, ``TOOLS``, ``JSON``), LangChain's ``ChatOpenAI.with_structured_output``
(``json_schema``, ``function_calling``, ``json_mode``) and the OpenAI SDK's ``parse``.

The server is the real command (``python -m structgen.cli serve``) with ``--api-key`` and
``--served-model-name``, so the clients send the key they are given and a model name they know.

- Modes that send the schema as ``response_format`` (instructor ``JSON_SCHEMA``, LangChain
  ``json_schema``, ``parse``) return a validated pydantic instance, streamed or not.
- Modes that send the schema as a tool (instructor ``TOOLS``, LangChain ``function_calling``)
  name the tool in ``tool_choice``: the server enforces the call and its arguments (issue 23),
  so they return a validated pydantic instance too, streamed or not.
- Modes that send only ``{"type": "json_object"}`` (instructor ``JSON``, LangChain
  ``json_mode``) put the schema in the prompt, not in the request: the server enforces "a JSON
  object", so the output is always valid JSON, but it follows the schema only if the model does.
  The tests check exactly that much.
"""

from __future__ import annotations

import json
from typing import Any, Iterator

import pytest

from ..support.serving import serve_process

httpx = pytest.importorskip("httpx")
openai = pytest.importorskip("openai")
instructor = pytest.importorskip("instructor")
langchain_openai = pytest.importorskip("langchain_openai")
pydantic = pytest.importorskip("pydantic")

from instructor.core.exceptions import InstructorRetryException  # noqa: E402

pytestmark = [pytest.mark.model, pytest.mark.timeout(600)]

KEY = "test-key-25"
MODEL = "gpt-4o-mini"  # a name the clients' users already write; the server answers to it too


class City(pydantic.BaseModel):
    """A city, small enough that SmolLM2-135M answers it in a few dozen tokens."""

    name: str = pydantic.Field(max_length=16)
    country: str = pydantic.Field(max_length=16)
    population: int = pydantic.Field(ge=0, le=50_000_000)


PROMPT = "Describe Paris: its name, its country and its population."


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    with serve_process("--max-batch-size", "4", "--api-key", KEY, "--served-model-name", MODEL, "SmolLM2-135M-Instruct") as base:
        yield base


@pytest.fixture(scope="module")
def oai(server: str) -> Any:
    return openai.OpenAI(base_url=f"{server}/v1", api_key=KEY, max_retries=0, timeout=300)


def _instructor(oai: Any, mode: Any) -> Any:
    return instructor.from_openai(oai, mode=mode)


def _langchain(server: str, **kw: Any) -> Any:
    return langchain_openai.ChatOpenAI(model=MODEL, base_url=f"{server}/v1", api_key=KEY, max_retries=0,
                                       temperature=0, max_tokens=48, timeout=300, **kw)


def _valid(city: Any) -> None:
    assert isinstance(city, City)
    City.model_validate(city.model_dump())  # every constraint of the model holds


# -- the key and the name ---------------------------------------------------------------------------


def test_the_server_wants_its_key_and_answers_to_its_names(server: str, oai: Any) -> None:
    r = httpx.post(f"{server}/v1/chat/completions", json={"model": MODEL, "messages": [{"role": "user", "content": "hi"}]})
    assert r.status_code == 401 and r.json()["error"]["code"] == "invalid_api_key"
    assert [m.id for m in oai.models.list().data] == [MODEL, "SmolLM2-135M-Instruct"]
    metrics = httpx.get(f"{server}/metrics").text  # open without the key, as in vLLM
    assert 'structgen_requests_total{endpoint="/v1/chat/completions",status="401"} 1.0' in metrics


# -- the OpenAI SDK ----------------------------------------------------------------------------------


def test_openai_parse(oai: Any) -> None:
    r = oai.chat.completions.parse(model=MODEL, messages=[{"role": "user", "content": PROMPT}], response_format=City,
                                   temperature=0, max_tokens=48)
    _valid(r.choices[0].message.parsed)


# -- instructor --------------------------------------------------------------------------------------


def test_instructor_json_schema(oai: Any) -> None:
    client = _instructor(oai, instructor.Mode.JSON_SCHEMA)
    city = client.chat.completions.create(model=MODEL, response_model=City, max_retries=1, temperature=0,
                                          max_tokens=48, messages=[{"role": "user", "content": PROMPT}])
    _valid(city)


def test_instructor_json_schema_streamed(oai: Any) -> None:
    client = _instructor(oai, instructor.Mode.JSON_SCHEMA)
    partials = list(client.chat.completions.create_partial(
        model=MODEL, response_model=City, max_retries=1, temperature=0, max_tokens=48,
        messages=[{"role": "user", "content": PROMPT}]))
    assert len(partials) > 1, "the answer came in one piece: not streamed"
    _valid(City.model_validate(partials[-1].model_dump()))


def test_instructor_tools(oai: Any) -> None:
    client = _instructor(oai, instructor.Mode.TOOLS)
    city = client.chat.completions.create(model=MODEL, response_model=City, max_retries=1, temperature=0,
                                          max_tokens=48, messages=[{"role": "user", "content": PROMPT}])
    _valid(city)


def test_instructor_tools_streamed(oai: Any) -> None:
    client = _instructor(oai, instructor.Mode.TOOLS)
    partials = list(client.chat.completions.create_partial(
        model=MODEL, response_model=City, max_retries=1, temperature=0, max_tokens=48,
        messages=[{"role": "user", "content": PROMPT}]))
    _valid(City.model_validate(partials[-1].model_dump()))


def test_instructor_json_mode_gives_json_but_not_the_schema(oai: Any) -> None:
    """``Mode.JSON`` sends the schema in a system message and ``{"type": "json_object"}``: the
    server guarantees a JSON object; the schema holds only if the model follows its prompt."""
    client = _instructor(oai, instructor.Mode.JSON)
    try:
        city, completion = client.chat.completions.create_with_completion(
            model=MODEL, response_model=City, max_retries=1, temperature=0, max_tokens=48,
            messages=[{"role": "user", "content": PROMPT}])
        _valid(city)
    except InstructorRetryException as e:  # valid JSON, not a City
        completion = e.last_completion
    assert completion.choices[0].finish_reason == "stop"
    assert isinstance(json.loads(completion.choices[0].message.content), dict)


# -- LangChain ---------------------------------------------------------------------------------------


def test_langchain_json_schema(server: str) -> None:
    _valid(_langchain(server).with_structured_output(City, method="json_schema").invoke(PROMPT))


def test_langchain_json_schema_streamed(server: str) -> None:
    chunks = list(_langchain(server).with_structured_output(City, method="json_schema").stream(PROMPT))
    assert chunks
    _valid(chunks[-1] if isinstance(chunks[-1], City) else City.model_validate(chunks[-1]))


def test_langchain_function_calling(server: str) -> None:
    _valid(_langchain(server).with_structured_output(City, method="function_calling").invoke(PROMPT))


def test_langchain_function_calling_streamed(server: str) -> None:
    chunks = list(_langchain(server).with_structured_output(City, method="function_calling").stream(PROMPT))
    _valid(chunks[-1] if isinstance(chunks[-1], City) else City.model_validate(chunks[-1]))


def test_langchain_json_mode_gives_json_but_not_the_schema(server: str) -> None:
    """``json_mode`` sends ``{"type": "json_object"}`` and no schema (LangChain asks the caller to
    describe the format in the prompt): a JSON object, not necessarily a City."""
    prompt = PROMPT + " Answer in JSON with the keys name, country and population."
    out = _langchain(server).with_structured_output(City, method="json_mode", include_raw=True).invoke(prompt)
    raw = out["raw"]
    assert raw.response_metadata["finish_reason"] == "stop"
    assert isinstance(json.loads(raw.content), dict)
    if out["parsing_error"] is None:
        _valid(out["parsed"])
