"""vLLM's constraint fields on ``/v1/chat/completions`` and ``/v1/completions`` (the tiny
random-weight Llama through FastAPI's TestClient): ``structured_outputs`` and the older
``guided_*`` fields are enforced like ``response_format``, through the official client's
``extra_body`` as vLLM's users send them (a grammar's syntax detected as vLLM does); two
constraints at once and a bad value are 400s that name the fields."""

from __future__ import annotations

import json
import re
from typing import Any, Iterator

import pytest

pytest.importorskip("fastapi")
torch = pytest.importorskip("torch")
jsonschema = pytest.importorskip("jsonschema")
openai = pytest.importorskip("openai")

from fastapi.testclient import TestClient  # noqa: E402

PERSON = {"type": "object", "properties": {"name": {"type": "string", "maxLength": 8},
                                           "age": {"type": "integer", "minimum": 0, "maximum": 99}},
          "required": ["name", "age"], "additionalProperties": False}
CHAT = {"model": "tiny", "messages": [{"role": "user", "content": "hi"}], "max_tokens": 40, "temperature": 0}


@pytest.fixture(scope="module")
def client(tiny_llama: tuple[Any, Any]) -> Iterator[Any]:
    from structgen.server import ServerConfig, create_app

    model, tokenizer = tiny_llama
    app = create_app(model, tokenizer, ServerConfig(model_name="tiny", default_max_tokens=32, max_prompt_tokens=400))
    with TestClient(app) as c:
        yield c


@pytest.fixture(scope="module")
def oai(client: Any) -> Any:
    return openai.OpenAI(base_url="http://testserver/v1", api_key="unused", http_client=client, max_retries=0)


def _chat(oai: Any, **extra_body: Any) -> str:
    r = oai.chat.completions.create(model="tiny", messages=[{"role": "user", "content": "hi"}], max_tokens=40,
                                    temperature=0, extra_body=extra_body)
    assert r.choices[0].finish_reason == "stop"
    return str(r.choices[0].message.content)


@pytest.mark.parametrize("body", [
    {"structured_outputs": {"json": PERSON}},
    {"structured_outputs": {"json": json.dumps(PERSON)}},
    {"guided_json": PERSON},
    {"guided_json": PERSON, "guided_decoding_backend": "xgrammar"},
])
def test_json(oai: Any, body: dict[str, Any]) -> None:
    jsonschema.validate(json.loads(_chat(oai, **body)), PERSON)


@pytest.mark.parametrize("body", [
    {"structured_outputs": {"json": PERSON, "disable_any_whitespace": True}},
    {"structured_outputs": {"json": PERSON, "whitespace_pattern": ""}},
    {"guided_json": PERSON, "guided_whitespace_pattern": ""},
])
def test_json_without_whitespace(oai: Any, body: dict[str, Any]) -> None:
    text = _chat(oai, **body)
    jsonschema.validate(json.loads(text), PERSON)
    assert json.dumps(json.loads(text), separators=(",", ":"), ensure_ascii=False) == text


@pytest.mark.parametrize("body", [{"structured_outputs": {"regex": "[a-z]{3}-[0-9]{2}"}},
                                  {"guided_regex": "[a-z]{3}-[0-9]{2}"}])
def test_regex(oai: Any, body: dict[str, Any]) -> None:
    assert re.fullmatch("[a-z]{3}-[0-9]{2}", _chat(oai, **body))


@pytest.mark.parametrize("body", [{"structured_outputs": {"choice": ["positive", "negative", "neutral"]}},
                                  {"guided_choice": ["positive", "negative", "neutral"]}])
def test_choice(oai: Any, body: dict[str, Any]) -> None:
    assert _chat(oai, **body) in ("positive", "negative", "neutral")


def test_json_object(oai: Any) -> None:
    assert isinstance(json.loads(_chat(oai, structured_outputs={"json_object": True})), dict)


def test_completions_take_them_too(oai: Any) -> None:
    r = oai.completions.create(model="tiny", prompt="Date:", max_tokens=16, temperature=0,
                               extra_body={"guided_regex": r"\d{4}-\d{2}-\d{2}"})
    assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", r.choices[0].text)
    r = oai.completions.create(model="tiny", prompt="Mood:", max_tokens=8, temperature=0,
                               extra_body={"structured_outputs": {"choice": ["up", "down"]}})
    assert r.choices[0].text in ("up", "down")


@pytest.mark.parametrize(("extra", "param", "needle"), [
    ({"guided_json": PERSON, "guided_regex": "a"}, "guided_regex", "guided_json and guided_regex are two constraints"),
    ({"structured_outputs": {"regex": "a", "choice": ["b"]}}, "structured_outputs.choice",
     "structured_outputs.regex and structured_outputs.choice"),
    ({"structured_outputs": {"regex": "a"}, "guided_choice": ["b"]}, "guided_choice",
     "structured_outputs.regex and guided_choice"),
    ({"response_format": {"type": "json_object"}, "guided_regex": "a"}, "guided_regex",
     "response_format and guided_regex"),
    ({"structured_outputs": {"grammar": "root ::= \"a\" rest"}}, "structured_outputs.grammar",
     "invalid gbnf grammar at line 1"),
    ({"guided_grammar": "start: \"a\" rest"}, "guided_grammar", "rule 'rest' is used but never defined"),
    ({"guided_grammar": "   "}, "guided_grammar", "give the grammar's text"),
    ({"guided_grammar": "start: \"a\"", "guided_regex": "a"}, "guided_grammar", "guided_regex and guided_grammar"),
    ({"structured_outputs": {"structural_tag": "{}"}}, "structured_outputs.structural_tag", "structural tags"),
    ({"structured_outputs": {}}, "structured_outputs", "give one constraint"),
    ({"structured_outputs": {"json": "{not json"}}, "structured_outputs.json", "not valid JSON"),
    ({"guided_json": [1, 2]}, "guided_json", "guided_json: Input should be a valid dictionary or"),
    ({"guided_choice": []}, "guided_choice", "at least one"),
    ({"guided_regex": "(a)\\1"}, "guided_regex", "back-reference"),
    ({"guided_json": {"type": "integr"}}, "guided_json", "invalid JSON Schema"),
    ({"structured_outputs": {"json": PERSON, "whitespace_pattern": "x"}}, "structured_outputs.whitespace_pattern",
     "whitespace"),
    ({"structured_outputs": {"json": PERSON, "whitespace_pattern": " ", "disable_any_whitespace": True}},
     "structured_outputs.disable_any_whitespace", "different whitespace"),
    ({"structured_outputs": {"jsn": PERSON}}, "structured_outputs.jsn", "unknown field"),
])
def test_bad_fields_are_400s_naming_them(client: Any, extra: dict[str, Any], param: str | None, needle: str) -> None:
    r = client.post("/v1/chat/completions", json={**CHAT, **extra})
    assert r.status_code == 400, r.text
    err = r.json()["error"]
    assert needle in err["message"] and err["param"] == param, err
