"""``POST /v1/responses`` on the tiny random-weight Llama through FastAPI's TestClient (the app's
lifespan runs, so the engine is the real one): the response object and its output items, the
stream's events (in OpenAI's order, numbered, saying what the whole response says), function and
custom tools, reasoning, and every refusal naming its field. The official ``openai`` client
drives the same app here too (its ``http_client`` is the TestClient); against ``structgen serve``
with the real model: ``test_responses_clients.py``."""

from __future__ import annotations

import json
import re
from typing import Any, Iterator

import pytest

pytest.importorskip("fastapi")
torch = pytest.importorskip("torch")
jsonschema = pytest.importorskip("jsonschema")
openai = pytest.importorskip("openai")
pydantic = pytest.importorskip("pydantic")

from fastapi.testclient import TestClient  # noqa: E402

WEATHER = {"type": "object", "properties": {"city": {"type": "string", "maxLength": 10},
                                            "unit": {"enum": ["celsius", "fahrenheit"]}},
           "required": ["city", "unit"], "additionalProperties": False}
SQL = r"SELECT [a-z]{1,8} FROM [a-z]{1,8};"
TOOLS = [{"type": "function", "name": "get_weather", "description": "The weather", "parameters": WEATHER,
          "strict": True},
         {"type": "custom", "name": "run_sql", "description": "Run a query",
          "format": {"type": "grammar", "syntax": "regex", "definition": SQL}}]
BASE = {"model": "tiny", "input": "Weather in Oslo?", "max_output_tokens": 60, "temperature": 0}


@pytest.fixture(scope="module")
def client(tiny_llama: tuple[Any, Any]) -> Iterator[Any]:
    from structgen.server import ServerConfig, create_app

    model, tokenizer = tiny_llama
    app = create_app(model, tokenizer, ServerConfig(model_name="tiny", default_max_tokens=32, max_prompt_tokens=400))
    with TestClient(app) as c:
        yield c


def _create(client: Any, **extra: Any) -> dict[str, Any]:
    r = client.post("/v1/responses", json={**BASE, **extra})
    assert r.status_code == 200, r.text
    return dict(r.json())


def _stream(client: Any, **extra: Any) -> list[dict[str, Any]]:
    events = []
    with client.stream("POST", "/v1/responses", json={**BASE, **extra, "stream": True}) as s:
        assert s.headers["content-type"].startswith("text/event-stream")
        name = None
        for line in s.iter_lines():
            if line.startswith("event: "):
                name = line[7:]
            elif line.startswith("data: "):
                event = json.loads(line[6:])
                assert event["type"] == name  # (the SSE event name is the event's type)
                events.append(event)
    return events


def _error(r: Any, status: int = 400) -> dict[str, Any]:
    assert r.status_code == status, r.text
    body = r.json()
    assert set(body) == {"error"} and set(body["error"]) == {"message", "type", "param", "code"}
    return dict(body["error"])


def _replay(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The output items the stream's events build, as a client that reads only them would."""
    items: list[dict[str, Any]] = []
    for e in events:
        if e["type"] == "response.output_item.added":
            assert e["output_index"] == len(items)
            items.append(json.loads(json.dumps(e["item"])))
        elif e["type"] == "response.content_part.added":
            items[e["output_index"]].setdefault("content", []).append(e["part"])
        elif e["type"] == "response.output_text.delta":
            items[e["output_index"]]["content"][e["content_index"]]["text"] += e["delta"]
        elif e["type"] == "response.reasoning_text.delta":
            items[e["output_index"]]["content"][e["content_index"]]["text"] += e["delta"]
        elif e["type"] == "response.function_call_arguments.delta":
            items[e["output_index"]]["arguments"] += e["delta"]
        elif e["type"] == "response.custom_tool_call_input.delta":
            items[e["output_index"]]["input"] += e["delta"]
        elif e["type"] == "response.output_item.done":
            built = items[e["output_index"]]
            assert {k: v for k, v in built.items() if k != "status"} == \
                   {k: v for k, v in e["item"].items() if k != "status"}
            items[e["output_index"]] = e["item"]
    return items


# -- the response object -------------------------------------------------------------------------------


def test_a_text_answer_is_a_message_with_output_text_and_usage(client: Any) -> None:
    r = _create(client, input="Say hello.", max_output_tokens=8, store=True, metadata={"k": "v"}, user="u1")
    assert r["object"] == "response" and r["id"].startswith("resp_") and r["model"] == "tiny"
    assert r["store"] is False and r["metadata"] == {"k": "v"} and r["previous_response_id"] is None
    [msg] = r["output"]
    assert msg["type"] == "message" and msg["role"] == "assistant" and msg["id"].startswith("msg_")
    [part] = msg["content"]
    assert part["type"] == "output_text" and part["annotations"] == []
    u = r["usage"]
    assert u["output_tokens"] == 8 and u["input_tokens"] > 0 and u["total_tokens"] == u["input_tokens"] + 8
    assert u["output_tokens_details"]["reasoning_tokens"] == 0
    # 8 tokens of free text ran out: incomplete, as OpenAI says it
    assert r["status"] == "incomplete" and r["incomplete_details"] == {"reason": "max_output_tokens"}
    assert msg["status"] == "incomplete"


def test_json_schema_format_is_enforced(client: Any) -> None:
    fmt = {"type": "json_schema", "name": "weather", "schema": WEATHER, "strict": True}
    r = _create(client, text={"format": fmt}, instructions="Answer in JSON.")
    assert r["status"] == "completed" and r["text"]["format"] == fmt and r["instructions"] == "Answer in JSON."
    jsonschema.validate(json.loads(r["output"][0]["content"][0]["text"]), WEATHER)
    r = _create(client, text={"format": {"type": "json_object"}})
    assert isinstance(json.loads(r["output"][0]["content"][0]["text"]), dict)


def test_input_items_make_a_conversation(client: Any) -> None:
    """Messages with parts, a function call and its output, a custom call and its output, a
    reasoning item: all accepted, and the answer follows the format."""
    items = [
        {"type": "message", "role": "developer", "content": [{"type": "input_text", "text": "Be brief."}]},
        {"role": "user", "content": "Weather in Oslo?"},
        {"type": "reasoning", "id": "rs_1", "summary": [], "content": [{"type": "reasoning_text", "text": "hm"}]},
        {"type": "function_call", "call_id": "call_1", "name": "get_weather",
         "arguments": json.dumps({"city": "Oslo", "unit": "celsius"}), "id": "fc_1", "status": "completed"},
        {"type": "function_call_output", "call_id": "call_1", "output": "{\"temperature\": 3}"},
        {"type": "custom_tool_call", "call_id": "call_2", "name": "run_sql", "input": "SELECT a FROM b;"},
        {"type": "custom_tool_call_output", "call_id": "call_2", "output": [{"type": "input_text", "text": "1 row"}]},
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "3 degrees.",
                                                              "annotations": []}]},
        {"role": "user", "content": "Again, as a regex answer."},
    ]
    r = _create(client, input=items, tools=TOOLS, tool_choice="none", text={"format": {"type": "regex", "pattern": "[a-z]{2,6}"}})
    assert r["status"] == "completed" and re.fullmatch("[a-z]{2,6}", r["output"][0]["content"][0]["text"])


# -- tools -----------------------------------------------------------------------------------------------


def _calls(r: dict[str, Any]) -> list[dict[str, Any]]:
    out = []
    for item in r["output"]:
        if item["type"] == "function_call":
            assert item["id"].startswith("fc_") and item["call_id"].startswith("call_")
            assert item["status"] == "completed" and item["name"] == "get_weather"
            jsonschema.validate(json.loads(item["arguments"]), WEATHER)
            out.append(item)
        elif item["type"] == "custom_tool_call":
            assert item["id"].startswith("ctc_") and item["call_id"].startswith("call_") and item["name"] == "run_sql"
            assert re.fullmatch(SQL, item["input"]), item["input"]
            out.append(item)
    return out


def test_required_gives_valid_calls_of_both_kinds(client: Any) -> None:
    r = _create(client, tools=TOOLS, tool_choice="required", max_output_tokens=120)
    assert r["status"] == "completed" and _calls(r)
    assert r["tools"] == TOOLS and r["tool_choice"] == "required"


@pytest.mark.parametrize("choice", [{"type": "custom", "name": "run_sql"}, {"type": "function", "name": "get_weather"},
                                    {"type": "allowed_tools", "mode": "required",
                                     "tools": [{"type": "custom", "name": "run_sql"}]}])
def test_a_named_tool_and_no_parallel_calls(client: Any, choice: dict[str, Any]) -> None:
    r = _create(client, tools=TOOLS, tool_choice=choice, parallel_tool_calls=False)
    [call] = _calls(r)
    wanted = choice.get("name") or choice["tools"][0]["name"]
    assert call["name"] == wanted and r["parallel_tool_calls"] is False


def test_a_custom_tool_with_free_text_input(client: Any) -> None:
    tools = [{"type": "custom", "name": "note", "format": {"type": "text"}}, {"type": "custom", "name": "memo"}]
    r = _create(client, tools=tools, tool_choice={"type": "custom", "name": "note"}, parallel_tool_calls=False,
                max_output_tokens=40)
    calls = [i for i in r["output"] if i["type"] == "custom_tool_call"]
    assert [c["name"] for c in calls] == ["note"] and "</input>" not in calls[0]["input"]


def test_reasoning_is_an_item_before_the_answer(client: Any) -> None:
    fmt = {"type": "json_schema", "name": "w", "schema": WEATHER}
    r = _create(client, reasoning={"effort": "low", "max_tokens": 4, "summary": "auto"}, text={"format": fmt},
                max_output_tokens=80)
    reasoning, msg = r["output"]
    assert reasoning["type"] == "reasoning" and reasoning["id"].startswith("rs_") and reasoning["summary"] == []
    assert reasoning["content"][0]["type"] == "reasoning_text" and "</think>" not in reasoning["content"][0]["text"]
    jsonschema.validate(json.loads(msg["content"][0]["text"]), WEATHER)
    assert r["usage"]["output_tokens_details"]["reasoning_tokens"] >= 4
    assert r["reasoning"] == {"effort": "low", "summary": "auto"}
    plain = _create(client, reasoning={"effort": "none"}, max_output_tokens=4)
    assert [i["type"] for i in plain["output"]] == ["message"]


# -- streaming -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("extra", [
    {"input": "Say hello.", "max_output_tokens": 10},
    {"tools": TOOLS, "tool_choice": "required", "max_output_tokens": 120},
    {"reasoning": {"max_tokens": 3}, "text": {"format": {"type": "json_schema", "name": "w", "schema": WEATHER}},
     "max_output_tokens": 80},
])
def test_a_stream_says_what_the_whole_response_says(client: Any, extra: dict[str, Any]) -> None:
    events = _stream(client, **extra)
    assert [e["sequence_number"] for e in events] == list(range(len(events)))
    assert [e["type"] for e in events[:2]] == ["response.created", "response.in_progress"]
    assert events[0]["response"]["status"] == "in_progress" and events[0]["response"]["output"] == []
    last = events[-1]
    assert last["type"] in ("response.completed", "response.incomplete")
    final = last["response"]
    assert final["status"] == last["type"].split(".")[1]
    assert _replay(events) == final["output"]
    whole = _create(client, **extra)
    strip = [{k: v for k, v in i.items() if k not in ("id", "call_id")} for i in final["output"]]
    assert strip == [{k: v for k, v in i.items() if k not in ("id", "call_id")} for i in whole["output"]]
    assert final["usage"] == whole["usage"]
    for e in events:  # every delta names its item and index
        if e["type"].endswith(".delta"):
            assert e["item_id"] == final["output"][e["output_index"]]["id"]


def test_the_official_client_creates_parses_and_streams(client: Any) -> None:
    oai = openai.OpenAI(base_url="http://testserver/v1", api_key="unused", http_client=client, max_retries=0)

    class Weather(pydantic.BaseModel):
        city: str = pydantic.Field(max_length=10)
        unit: str = pydantic.Field(pattern="^(celsius|fahrenheit)$")

    r = oai.responses.create(model="tiny", input="Weather in Oslo?", max_output_tokens=6, temperature=0)
    assert r.output_text and r.usage.output_tokens == 6
    parsed = oai.responses.parse(model="tiny", input="Weather?", text_format=Weather, temperature=0,
                                 max_output_tokens=60)
    assert isinstance(parsed.output_parsed, Weather)
    with oai.responses.stream(model="tiny", input="Weather?", text_format=Weather, temperature=0,
                              max_output_tokens=60) as stream:
        deltas = [e.delta for e in stream if e.type == "response.output_text.delta"]
        final = stream.get_final_response()
    assert "".join(deltas) == final.output_text and isinstance(final.output_parsed, Weather)
    r = oai.responses.create(model="tiny", input="Weather in Oslo?", tools=TOOLS, tool_choice="required",
                             max_output_tokens=120, temperature=0)
    kinds = {item.type for item in r.output}
    assert kinds <= {"function_call", "custom_tool_call"} and kinds


def test_logprobs_ride_on_the_output_text(client: Any) -> None:
    r = _create(client, input="Say hi.", max_output_tokens=5, include=["message.output_text.logprobs"], top_logprobs=2)
    part = r["output"][0]["content"][0]
    assert "".join(lp["token"] for lp in part["logprobs"]) == part["text"] and len(part["logprobs"]) == 5
    for lp in part["logprobs"]:
        assert lp["logprob"] <= 0 and len(lp["top_logprobs"]) <= 2


# -- refusals --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("extra", "param", "needle"), [
    ({"previous_response_id": "resp_1"}, "previous_response_id", "stateless"),
    ({"conversation": "conv_1"}, "conversation", "stateless"),
    ({"background": True}, "background", "storage"),
    ({"tools": [{"type": "web_search"}]}, "tools[0]", "built-in tools ('web_search')"),
    ({"tools": [{"type": "file_search", "vector_store_ids": ["v"]}, *TOOLS]}, "tools[0]", "file_search"),
    ({"tool_choice": {"type": "web_search_preview"}, "tools": TOOLS}, "tool_choice", "built-in"),
    ({"tools": [{"type": "custom", "name": "q", "format": {"type": "grammar", "syntax": "lark",
                                                           "definition": "start: \"a\" b"}}]},
     "tools[0].format.definition", "rule 'b' is used but never defined"),
    ({"text": {"format": {"type": "grammar", "grammar": "start: (\"a\""}}}, "text.format.grammar",
     "invalid lark grammar at line 1"),
    ({"tools": [{"type": "custom", "name": "q", "format": {"type": "grammar", "syntax": "regex",
                                                           "definition": "(a)\\1"}}]},
     "tools[0].format.definition", "back-reference"),
    ({"input": [{"role": "user", "content": [{"type": "input_image", "image_url": "http://x/y.png"}]}]},
     "input[0].content[0]", "text only"),
    ({"input": [{"type": "item_reference", "id": "msg_1"}]}, "input[0]", "item_reference"),
    ({"truncation": "auto"}, "truncation", "does not drop"),
    ({"text": {"verbosity": "low"}}, "text.verbosity", "verbosity"),
    ({"include": ["file_search_call.results"]}, "include[0]", "cannot be included"),
    ({"tool_choice": {"type": "function", "name": "nope"}, "tools": TOOLS}, "tool_choice", "not among"),
    ({"tool_choice": "required"}, "tool_choice", "needs tools"),
    ({"tools": [*TOOLS, {"type": "function", "name": "run_sql"}]}, "tools[2].name", "two tools"),
    ({"text": {"format": {"type": "json_schema", "name": "x", "schema": {"type": "integr"}}}}, "text.format",
     "invalid JSON Schema"),
    ({"max_output_tokens": 10**9}, "max_output_tokens", "maximum context length"),
    ({"temprature": 0.5}, "temprature", "unknown field"),
    ({"input": [{"role": "user", "content": "hi", "colour": 1}]}, "input[0].colour", "unknown field"),
    ({"include": ["message.output_text.logprobs"], "tools": TOOLS}, "include", "without tools"),
])
def test_refusals_name_the_field(client: Any, extra: dict[str, Any], param: str, needle: str) -> None:
    err = _error(client.post("/v1/responses", json={**BASE, **extra}))
    assert err["param"] == param and needle in err["message"], err


def test_another_model_is_a_404(client: Any) -> None:
    err = _error(client.post("/v1/responses", json={**BASE, "model": "gpt-5"}), 404)
    assert err["code"] == "model_not_found" and err["param"] == "model"
