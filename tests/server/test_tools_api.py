"""Tool calling and reasoning on the server (issue 23), on the tiny random-weight Llama through
FastAPI's TestClient: whatever the model wants, calls name a tool and their arguments validate,
``tool_choice`` and ``parallel_tool_calls`` hold, streams say what whole responses say, a bad
tool schema is a 400 naming the tool and the JSON pointer, and the thinking comes back apart."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Iterator

import pytest

pytest.importorskip("fastapi")
torch = pytest.importorskip("torch")
jsonschema = pytest.importorskip("jsonschema")

from fastapi.testclient import TestClient  # noqa: E402

WEATHER = {"type": "object", "properties": {"city": {"type": "string", "maxLength": 10},
                                            "unit": {"enum": ["celsius", "fahrenheit"]}},
           "required": ["city", "unit"], "additionalProperties": False}
TIME = {"type": "object", "properties": {"zone": {"enum": ["UTC", "CET"]}}, "required": ["zone"],
        "additionalProperties": False}
TOOLS = [{"type": "function", "function": {"name": "get_weather", "parameters": WEATHER, "strict": True}},
         {"type": "function", "function": {"name": "get_time", "description": "The time", "parameters": TIME}}]
SCHEMAS = {"get_weather": WEATHER, "get_time": TIME}
CHAT = {"model": "tiny", "messages": [{"role": "user", "content": "Weather in Oslo?"}], "max_tokens": 60,
        "temperature": 0, "tools": TOOLS}


@pytest.fixture(scope="module")
def client(tiny_llama: tuple[Any, Any]) -> Iterator[Any]:
    from structgen.server import ServerConfig, create_app

    model, tokenizer = tiny_llama
    app = create_app(model, tokenizer, ServerConfig(model_name="tiny", default_max_tokens=32, max_prompt_tokens=400))
    with TestClient(app) as c:
        yield c


def _chat(client: Any, **extra: Any) -> dict[str, Any]:
    r = client.post("/v1/chat/completions", json={**CHAT, **extra})
    assert r.status_code == 200, r.text
    return dict(r.json())


def _stream(client: Any, **extra: Any) -> list[dict[str, Any]]:
    with client.stream("POST", "/v1/chat/completions", json={**CHAT, **extra, "stream": True}) as s:
        lines = [line[6:] for line in s.iter_lines() if line.startswith("data: ")]
    assert lines[-1] == "[DONE]"
    return [json.loads(x) for x in lines[:-1]]


def _valid_calls(message: dict[str, Any]) -> list[tuple[str, Any]]:
    out = []
    for call in message["tool_calls"]:
        assert call["type"] == "function" and call["id"].startswith("call_")
        args = json.loads(call["function"]["arguments"])
        jsonschema.validate(args, SCHEMAS[call["function"]["name"]])
        out.append((call["function"]["name"], args))
    return out


def test_required_gives_valid_calls_and_finish_reason_tool_calls(client: Any) -> None:
    choice = _chat(client, tool_choice="required")["choices"][0]
    assert choice["finish_reason"] == "tool_calls" and choice["message"]["content"] is None
    assert _valid_calls(choice["message"])


def test_a_named_tool_and_no_parallel_calls(client: Any) -> None:
    named = {"type": "function", "function": {"name": "get_time"}}
    msg = _chat(client, tool_choice=named, parallel_tool_calls=False)["choices"][0]["message"]
    assert [name for name, _ in _valid_calls(msg)] == ["get_time"]
    msg = _chat(client, tool_choice="required", parallel_tool_calls=False, max_tokens=120)["choices"][0]["message"]
    assert len(_valid_calls(msg)) == 1


def test_none_and_auto(client: Any) -> None:
    msg = _chat(client, tool_choice="none", max_tokens=12)["choices"][0]["message"]
    assert "tool_calls" not in msg and "<tool_call>" not in msg["content"]
    choice = _chat(client, max_tokens=40)["choices"][0]  # tools and no tool_choice: "auto"
    if choice["message"].get("tool_calls"):
        _valid_calls(choice["message"])
    else:
        assert choice["finish_reason"] in ("stop", "length") and "<tool_call>" not in choice["message"]["content"]


def test_the_stream_says_what_the_whole_response_says(client: Any) -> None:
    body = {"tool_choice": "required", "max_tokens": 120, "reasoning": {"max_tokens": 4}}
    whole = _chat(client, **body)["choices"][0]
    chunks = _stream(client, **body)
    calls: dict[int, dict[str, Any]] = {}
    thinking = content = ""
    finish = None
    for chunk in chunks:
        for ch in chunk["choices"]:
            delta = ch["delta"]
            thinking += delta.get("reasoning_content") or ""
            content += delta.get("content") or ""
            for item in delta.get("tool_calls") or []:
                call = calls.setdefault(item["index"], {"id": None, "name": "", "arguments": ""})
                call["id"] = item.get("id") or call["id"]
                call["name"] += item.get("function", {}).get("name") or ""
                call["arguments"] += item.get("function", {}).get("arguments") or ""
            finish = ch["finish_reason"] or finish
    assert finish == whole["finish_reason"] == "tool_calls"
    assert thinking == whole["message"]["reasoning_content"] and content == ""
    assert [(c["name"], c["arguments"]) for c in calls.values()] == [
        (c["function"]["name"], c["function"]["arguments"]) for c in whole["message"]["tool_calls"]]
    assert all(c["id"].startswith("call_") for c in calls.values())


def test_reasoning_before_a_json_answer(client: Any) -> None:
    fmt = {"type": "json_schema", "json_schema": {"name": "w", "schema": WEATHER}}
    msg = _chat(client, tools=None, max_reasoning_tokens=3, response_format=fmt, max_tokens=80)["choices"][0]["message"]
    jsonschema.validate(json.loads(msg["content"]), WEATHER)
    assert isinstance(msg["reasoning_content"], str) and "</think>" not in msg["reasoning_content"]
    plain = _chat(client, tools=None, max_tokens=8)["choices"][0]["message"]
    assert "reasoning_content" not in plain


def test_a_bad_tool_schema_is_a_400_naming_the_tool_and_the_pointer_and_spares_the_batch(client: Any) -> None:
    bad = [*TOOLS, {"type": "function", "function": {"name": "broken", "parameters": {
        "type": "object", "properties": {"n": {"type": "integer", "minimum": "zero"}}}}}]
    with ThreadPoolExecutor(4) as pool:
        good = [pool.submit(client.post, "/v1/chat/completions", json={**CHAT, "tool_choice": "required"})
                for _ in range(3)]
        refused = pool.submit(client.post, "/v1/chat/completions", json={**CHAT, "tools": bad})
        results = [f.result() for f in good]
    r = refused.result()
    assert r.status_code == 400, r.text
    err = r.json()["error"]
    assert err["param"] == "tools"
    assert err["message"].startswith("tools: tool 'broken': invalid JSON Schema at /properties/n/minimum")
    for res in results:
        assert res.status_code == 200 and _valid_calls(res.json()["choices"][0]["message"])


@pytest.mark.parametrize(
    ("extra", "param", "needle"),
    [
        ({"tool_choice": {"type": "function", "function": {"name": "nope"}}}, "tool_choice", "not among the tools"),
        ({"tools": None, "tool_choice": "required"}, "tool_choice", "needs tools"),
        ({"tools": [{"type": "function", "function": {"name": "a b"}}]}, "tools[0].function.name", "pattern"),
    ],
)
def test_bad_tool_options_are_400s(client: Any, extra: dict[str, Any], param: str, needle: str) -> None:
    r = client.post("/v1/chat/completions", json={**CHAT, **extra})
    assert r.status_code == 400, r.text
    err = r.json()["error"]
    assert err["param"] == param and needle in err["message"]


def test_tools_are_for_chat(client: Any) -> None:
    r = client.post("/v1/completions", json={"model": "tiny", "prompt": "a", "tools": TOOLS})
    assert r.status_code == 400 and r.json()["error"]["param"] == "tools"


def test_a_tool_result_round_trip(client: Any) -> None:
    first = _chat(client, tool_choice="required", parallel_tool_calls=False)["choices"][0]["message"]
    call = first["tool_calls"][0]
    messages = [*CHAT["messages"], first, {"role": "tool", "tool_call_id": call["id"], "content": "12 degrees"}]
    msg = _chat(client, messages=messages, tool_choice="none", max_tokens=10)["choices"][0]["message"]
    assert isinstance(msg["content"], str) and "tool_calls" not in msg
