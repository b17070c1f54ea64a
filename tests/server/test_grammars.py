"""Grammars on the server (the tiny random-weight Llama through FastAPI's TestClient): structgen's
``response_format: {"type": "grammar"}`` (and the Responses API's ``text.format``), OpenAI's custom
tools with a Lark grammar on chat completions and on ``/v1/responses`` (whole and streamed, through
the official client), vLLM's ``guided_grammar`` / ``structured_outputs.grammar``; every output is
checked with Lark itself, and a grammar that does not compile is a 400 naming its field."""

from __future__ import annotations

import json
from typing import Any, Iterator

import pytest

pytest.importorskip("fastapi")
torch = pytest.importorskip("torch")
openai = pytest.importorskip("openai")
lark = pytest.importorskip("lark")

from fastapi.testclient import TestClient  # noqa: E402

SQL = 'start: "SELECT " NAME " FROM " NAME\nNAME: /[a-z]+/'
SQL_GBNF = 'root ::= "SELECT " name " FROM " name\nname ::= [a-z]+'
PARSER = lark.Lark(SQL, parser="earley")
CHAT = {"model": "tiny", "messages": [{"role": "user", "content": "Query the users"}], "max_tokens": 48,
        "temperature": 0}
CHAT_TOOL = {"type": "custom", "custom": {"name": "run_sql", "description": "Run a query",
                                          "format": {"type": "grammar", "grammar": {"syntax": "lark",
                                                                                    "definition": SQL}}}}
CHOOSE_SQL = {"type": "custom", "custom": {"name": "run_sql"}}


@pytest.fixture(scope="module")
def client(tiny_llama: tuple[Any, Any]) -> Iterator[Any]:
    from structgen.server import ServerConfig, create_app

    model, tokenizer = tiny_llama
    app = create_app(model, tokenizer, ServerConfig(model_name="tiny", default_max_tokens=32, max_prompt_tokens=600))
    with TestClient(app) as c:
        yield c


@pytest.fixture(scope="module")
def oai(client: Any) -> Any:
    return openai.OpenAI(base_url="http://testserver/v1", api_key="unused", http_client=client, max_retries=0)


def _sql(text: str) -> str:
    PARSER.parse(text)  # (raises unless the text is a string of the grammar)
    return text


def _events(client: Any, path: str, body: dict[str, Any]) -> list[dict[str, Any]]:
    out = []
    with client.stream("POST", path, json={**body, "stream": True}) as s:
        assert s.status_code == 200
        for line in s.iter_lines():
            if line.startswith("data: ") and line != "data: [DONE]":
                out.append(json.loads(line[6:]))
    return out


# -- response_format ---------------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", [{"type": "grammar", "grammar": SQL, "syntax": "lark"},
                                 {"type": "grammar", "grammar": SQL_GBNF},
                                 {"type": "grammar", "grammar": SQL_GBNF, "syntax": "gbnf"}])
def test_a_grammar_response_format(oai: Any, fmt: dict[str, Any]) -> None:
    r = oai.chat.completions.create(model="tiny", messages=CHAT["messages"], max_tokens=48, temperature=0,
                                    extra_body={"response_format": fmt})
    assert r.choices[0].finish_reason == "stop"
    _sql(r.choices[0].message.content)


def test_completions_and_the_responses_api_take_a_grammar_too(oai: Any) -> None:
    r = oai.completions.create(model="tiny", prompt="SQL:", max_tokens=32, temperature=0,
                               extra_body={"response_format": {"type": "grammar", "grammar": SQL}})
    _sql(r.choices[0].text)
    resp = oai.responses.create(model="tiny", input="Query the users", max_output_tokens=48, temperature=0,
                                text={"format": {"type": "grammar", "grammar": SQL}})  # type: ignore[typeddict-item]
    _sql(resp.output_text)


# -- vLLM's fields -------------------------------------------------------------------------------------


@pytest.mark.parametrize("body", [{"guided_grammar": SQL}, {"guided_grammar": SQL_GBNF},
                                  {"structured_outputs": {"grammar": SQL_GBNF}}])
def test_vllm_grammar_fields(oai: Any, body: dict[str, Any]) -> None:
    r = oai.chat.completions.create(model="tiny", messages=CHAT["messages"], max_tokens=48, temperature=0,
                                    extra_body=body)
    _sql(r.choices[0].message.content)


# -- custom tools ------------------------------------------------------------------------------------


def test_a_custom_tool_with_a_lark_grammar(oai: Any) -> None:
    r = oai.chat.completions.create(model="tiny", messages=CHAT["messages"], max_tokens=64, temperature=0,
                                    tools=[CHAT_TOOL], tool_choice=CHOOSE_SQL)
    choice = r.choices[0]
    assert choice.finish_reason == "tool_calls" and choice.message.content is None
    (call,) = choice.message.tool_calls
    assert call.type == "custom" and call.custom.name == "run_sql" and call.id.startswith("call_")
    _sql(call.custom.input)


def test_a_custom_tool_streamed_says_what_the_whole_answer_says(client: Any, oai: Any) -> None:
    body = {**CHAT, "max_tokens": 64, "tools": [CHAT_TOOL], "tool_choice": CHOOSE_SQL}
    whole = client.post("/v1/chat/completions", json=body).json()["choices"][0]
    calls: dict[int, dict[str, Any]] = {}
    finish = None
    for chunk in _events(client, "/v1/chat/completions", body):
        for c in chunk["choices"]:
            finish = c["finish_reason"] or finish
            for d in c["delta"].get("tool_calls", ()):
                if d["index"] not in calls:
                    assert d["type"] == "custom" and d["custom"]["input"] == ""
                    calls[d["index"]] = {"id": d["id"], "type": "custom", "custom": dict(d["custom"])}
                else:
                    calls[d["index"]]["custom"]["input"] += d["custom"]["input"]
    assert finish == "tool_calls"
    assert [{**c, "id": ""} for c in calls.values()] == [{**c, "id": ""} for c in whole["message"]["tool_calls"]]
    _sql(calls[0]["custom"]["input"])
    # the official client keeps the custom pieces (its delta type knows functions only) as extra fields
    stream = oai.chat.completions.create(model="tiny", messages=CHAT["messages"], max_tokens=64, temperature=0,
                                         tools=[CHAT_TOOL], tool_choice=CHOOSE_SQL, stream=True)
    pieces = [d.custom["input"] for chunk in stream for c in chunk.choices for d in c.delta.tool_calls or ()]
    assert "".join(pieces) == calls[0]["custom"]["input"]


def test_a_custom_tool_beside_a_function_tool_and_a_call_sent_back(client: Any) -> None:
    fn = {"type": "function", "function": {"name": "now", "parameters": {"type": "object", "properties": {}}}}
    messages = [*CHAT["messages"],
                {"role": "assistant", "content": None, "tool_calls": [
                    {"id": "call_1", "type": "custom", "custom": {"name": "run_sql", "input": "SELECT a FROM b"}}]},
                {"role": "tool", "tool_call_id": "call_1", "content": "[]"}]
    r = client.post("/v1/chat/completions", json={**CHAT, "messages": messages, "max_tokens": 64,
                                                  "tools": [fn, CHAT_TOOL], "tool_choice": "required"})
    assert r.status_code == 200, r.text
    msg = r.json()["choices"][0]["message"]
    for call in msg["tool_calls"]:
        if call["type"] == "custom":
            _sql(call["custom"]["input"])
        else:
            assert call["function"]["name"] == "now" and isinstance(json.loads(call["function"]["arguments"]), dict)


def test_the_responses_api_custom_tool_with_a_lark_grammar(oai: Any) -> None:
    tool = {"type": "custom", "name": "run_sql", "description": "Run a query",
            "format": {"type": "grammar", "syntax": "lark", "definition": SQL}}
    resp = oai.responses.create(model="tiny", input="Query the users", max_output_tokens=64, temperature=0,
                                tools=[tool], tool_choice={"type": "custom", "name": "run_sql"})
    (item,) = [o for o in resp.output if o.type == "custom_tool_call"]
    _sql(item.input)
    with oai.responses.stream(model="tiny", input="Query the users", max_output_tokens=64, temperature=0,
                              tools=[tool], tool_choice={"type": "custom", "name": "run_sql"}) as stream:
        pieces = [e.delta for e in stream if e.type == "response.custom_tool_call_input.delta"]
        final = stream.get_final_response()
    (streamed,) = [o for o in final.output if o.type == "custom_tool_call"]
    assert "".join(pieces) == streamed.input == item.input


def test_a_gbnf_custom_tool_is_an_extension(client: Any) -> None:
    tool = {"type": "custom", "custom": {"name": "run_sql", "format": {
        "type": "grammar", "grammar": {"syntax": "gbnf", "definition": SQL_GBNF}}}}
    r = client.post("/v1/chat/completions", json={**CHAT, "max_tokens": 64, "tools": [tool],
                                                  "tool_choice": CHOOSE_SQL})
    assert r.status_code == 200, r.text
    _sql(r.json()["choices"][0]["message"]["tool_calls"][0]["custom"]["input"])


# -- refusals ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("path", "extra", "param", "needle"), [
    ("/v1/chat/completions", {"response_format": {"type": "grammar", "grammar": 'start: "a" (b'}},
     "response_format.grammar", "invalid lark grammar at line 1, column"),
    ("/v1/completions", {"response_format": {"type": "grammar", "grammar": 'root ::= "a" rest', "syntax": "gbnf"}},
     "response_format.grammar", "rule 'rest' is used but never defined"),
    ("/v1/chat/completions", {"response_format": {"type": "grammar", "grammar": SQL, "syntax": "yacc"}},
     "response_format.grammar.syntax", "'lark', 'gbnf' or 'ebnf'"),
    ("/v1/chat/completions", {"tools": [{"type": "custom", "custom": {"name": "q", "format": {
        "type": "grammar", "grammar": {"syntax": "lark", "definition": 'start: "a" b'}}}}]},
     "tools[0].custom.format.grammar.definition", "rule 'b' is used but never defined"),
    ("/v1/chat/completions", {"tools": [{"type": "custom", "custom": {"name": "q", "format": {
        "type": "grammar", "grammar": {"syntax": "regex", "definition": "(a)\\1"}}}}]},
     "tools[0].custom.format.grammar.definition", "back-reference"),
    ("/v1/chat/completions", {"tools": [CHAT_TOOL], "tool_choice": {"type": "custom", "custom": {"name": "nope"}}},
     "tool_choice", "not among the custom tools"),
    ("/v1/chat/completions", {"tools": [CHAT_TOOL, {"type": "function", "function": {"name": "run_sql"}}]},
     "tools[0].custom.name", "two tools"),
    ("/v1/chat/completions", {"tools": [{"type": "code_interpreter"}]}, "tools[0]", "expected type"),
])
def test_a_bad_grammar_is_a_400_naming_the_field(client: Any, path: str, extra: dict[str, Any], param: str,
                                                 needle: str) -> None:
    base = CHAT if path.endswith("chat/completions") else {"model": "tiny", "prompt": "SQL:", "max_tokens": 8}
    r = client.post(path, json={**base, **extra})
    assert r.status_code == 400, r.text
    err = r.json()["error"]
    assert err["param"] == param and needle in err["message"], err


def test_a_grammar_over_the_compile_budget_is_a_400_not_a_500(client: Any, monkeypatch: Any) -> None:
    from structgen.errors import CompileBudgetExceeded

    def over(_: Any) -> Any:
        raise CompileBudgetExceeded("terms", 10, "rule 'start'")

    monkeypatch.setattr(client.app.state.serving.compiler, "_through_the_door", over)
    fmt = {"type": "grammar", "grammar": 'start: "budget" NAME\nNAME: /[a-z]+/'}  # (not cached by another test)
    r = client.post("/v1/chat/completions", json={**CHAT, "response_format": fmt})
    assert r.status_code == 400, r.text
    err = r.json()["error"]
    assert err["param"] == "response_format.grammar" and "compile budget exceeded" in err["message"], err


@pytest.mark.parametrize("path", ["/v1/chat/completions", "/v1/responses"])
def test_custom_tools_over_the_constraint_limit_are_a_413_before_anything_compiles(
        client: Any, monkeypatch: Any, path: str) -> None:
    from structgen.server import grammar_formats

    compiled: list[Any] = []
    monkeypatch.setattr(grammar_formats, "_byte_guide", lambda fmt: compiled.append(fmt))
    limit = client.app.state.serving.compiler.max_constraint_bytes
    half = 'start: "' + "a" * (limit // 2) + '"'  # (each under the limit, both together over it)
    if path.endswith("chat/completions"):
        tools = [{"type": "custom", "custom": {"name": f"t{i}", "format": {
            "type": "grammar", "grammar": {"syntax": "lark", "definition": half}}}} for i in range(2)]
        body, param = {**CHAT, "tools": tools}, "tools[1].custom.format.grammar.definition"
    else:
        tools = [{"type": "custom", "name": f"t{i}", "format": {"type": "grammar", "syntax": "lark", "definition": half}}
                 for i in range(2)]
        body, param = {"model": "tiny", "input": "Query the users", "tools": tools}, "tools[1].format.definition"
    r = client.post(path, json=body)
    assert r.status_code == 413, r.text
    err = r.json()["error"]
    assert err["param"] == param and err["code"] == "payload_too_large" and str(limit) in err["message"], err
    assert len(compiled) == 1  # (the first tool, within the limit, is checked; the second is refused unread)
