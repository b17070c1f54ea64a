"""The inference server end to end: the real SmolLM2 behind uvicorn on a free loopback port,
driven by real clients (httpx and the official ``openai`` client).

One session-scoped server; every test keeps ``max_tokens`` small so the file stays fast on a
2-core machine. Outputs are checked against their own regex or schema, never against wall time.
"""

from __future__ import annotations

import json
import re
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Iterator

import pytest

from ..support.engine import drain
from ..support.serving import free_port, serve_process

pytest.importorskip("fastapi")
pytest.importorskip("uvicorn")
httpx = pytest.importorskip("httpx")
openai = pytest.importorskip("openai")
jsonschema = pytest.importorskip("jsonschema")

pytestmark = [pytest.mark.model, pytest.mark.timeout(300)]

MODEL = "SmolLM2-135M-Instruct"
PERSON = {
    "type": "object",
    "properties": {"name": {"type": "string", "maxLength": 12}, "age": {"type": "integer", "minimum": 0, "maximum": 120}},
    "required": ["name", "age"],
    "additionalProperties": False,
}
DATE = r"\d{4}-\d{2}-\d{2}"


@pytest.fixture(scope="session")
def server(smollm2: tuple[Any, Any]) -> Iterator[str]:
    import uvicorn

    from structgen.server import ServerConfig, create_app

    model, tokenizer = smollm2
    config = ServerConfig(model_name=MODEL, max_batch_size=32, max_prompt_tokens=256,
                          max_body_bytes=64 * 1024, max_constraint_bytes=8 * 1024, default_max_tokens=32)
    app = create_app(model, tokenizer, config)
    port = free_port()
    uv = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=uv.run, daemon=True)
    thread.start()
    deadline = time.time() + 60
    while not uv.started:
        assert time.time() < deadline and thread.is_alive(), "the server did not start"
        time.sleep(0.05)
    yield f"http://127.0.0.1:{port}"
    uv.should_exit = True
    thread.join(timeout=30)


@pytest.fixture(scope="session")
def client(server: str) -> Iterator[Any]:
    with httpx.Client(base_url=server, timeout=120) as c:
        yield c


@pytest.fixture(scope="session")
def oai(server: str) -> Any:
    return openai.OpenAI(base_url=f"{server}/v1", api_key="unused", max_retries=0, timeout=120)


def _chat(oai: Any, content: str, fmt: dict[str, Any] | None, **kw: Any) -> Any:
    extra = {"response_format": fmt} if fmt is not None else {}
    kw.setdefault("temperature", 0)
    kw.setdefault("max_tokens", 32)
    return oai.chat.completions.create(model=MODEL, messages=[{"role": "user", "content": content}],
                                       extra_body=extra, **kw)


# -- basics ----------------------------------------------------------------------------------------


def test_health_and_models(client: Any, oai: Any) -> None:
    assert client.get("/healthz").json()["status"] == "ok"
    assert [m.id for m in oai.models.list().data] == [MODEL]


def test_import_structgen_stays_light() -> None:
    import subprocess
    import sys

    code = "import sys, structgen; print([m for m in ('fastapi', 'uvicorn', 'torch') if m in sys.modules])"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip() == "[]"


# -- every response_format form --------------------------------------------------------------------


def test_text(oai: Any) -> None:
    r = _chat(oai, "Say hello.", {"type": "text"}, max_tokens=8)
    assert r.choices[0].finish_reason in ("stop", "length")
    assert isinstance(r.choices[0].message.content, str)
    assert r.usage.completion_tokens <= 8


def test_regex(oai: Any) -> None:
    r = _chat(oai, "When was Bob Marley born? Answer with the date.", {"type": "regex", "pattern": DATE})
    assert r.choices[0].finish_reason == "stop"
    assert re.fullmatch(DATE, r.choices[0].message.content)


def test_json_object_any(oai: Any) -> None:
    r = _chat(oai, "Give me a JSON object with a key 'a' set to 1.", {"type": "json_object"}, max_tokens=48)
    text = r.choices[0].message.content
    if r.choices[0].finish_reason == "stop":
        assert isinstance(json.loads(text), dict)
    else:
        assert r.choices[0].finish_reason == "length" and text.startswith("{")


def test_json_schema_openai_form(oai: Any) -> None:
    fmt = {"type": "json_schema", "json_schema": {"name": "person", "schema": PERSON, "strict": True}}
    r = oai.chat.completions.create(model=MODEL, messages=[{"role": "user", "content": "Describe Ada Lovelace."}],
                                    response_format=fmt, temperature=0, max_tokens=40)
    assert r.choices[0].finish_reason == "stop"
    jsonschema.validate(json.loads(r.choices[0].message.content), PERSON)


def test_json_object_with_schema_lorax_form(oai: Any) -> None:
    r = _chat(oai, "Describe Ada Lovelace.", {"type": "json_object", "schema": PERSON}, max_tokens=40)
    assert r.choices[0].finish_reason == "stop"
    jsonschema.validate(json.loads(r.choices[0].message.content), PERSON)


def test_a_budget_below_the_minimum_is_refused(oai: Any) -> None:
    # Budget-aware (the default): the shortest output does not fit, so the request is a 400.
    with pytest.raises(openai.BadRequestError, match="at least"):
        _chat(oai, "Write letters.", {"type": "regex", "pattern": "[a-z]{40}"}, max_tokens=3)


def test_budget_aware_output_is_complete_and_stops(oai: Any) -> None:
    r = _chat(oai, "List many words.", {"type": "regex", "pattern": "[a-z]+(, [a-z]+)*"}, max_tokens=6)
    choice = r.choices[0]
    assert choice.finish_reason == "stop"
    assert re.fullmatch("[a-z]+(, [a-z]+)*", choice.message.content)
    assert r.usage.completion_tokens <= 6


def test_completions_endpoint_with_response_format(oai: Any) -> None:
    r = oai.completions.create(model=MODEL, prompt="Bob Marley was born on", max_tokens=16, temperature=0,
                               extra_body={"response_format": {"type": "regex", "pattern": DATE}})
    assert r.choices[0].finish_reason == "stop" and re.fullmatch(DATE, r.choices[0].text)


def test_n_seed_and_stop(oai: Any) -> None:
    fmt = {"type": "regex", "pattern": "[a-z]{3,8}( [a-z]{3,8}){2}"}
    a = _chat(oai, "Three words.", fmt, n=3, temperature=1.0, seed=7)
    b = _chat(oai, "Three words.", fmt, n=3, temperature=1.0, seed=7)
    assert [c.index for c in a.choices] == [0, 1, 2]
    assert [c.message.content for c in a.choices] == [c.message.content for c in b.choices]
    for c in a.choices:
        assert c.finish_reason == "stop" and re.fullmatch(fmt["pattern"], c.message.content)
    s = _chat(oai, "Three words.", fmt, stop=[" "])
    assert s.choices[0].finish_reason == "stop" and " " not in s.choices[0].message.content


# -- streaming --------------------------------------------------------------------------------------


def test_chat_stream_matches_non_streamed(oai: Any) -> None:
    fmt = {"type": "json_object", "schema": PERSON}
    whole = _chat(oai, "Describe Alan Turing.", fmt, max_tokens=40).choices[0].message.content
    stream = _chat(oai, "Describe Alan Turing.", fmt, max_tokens=40, stream=True,
                   stream_options={"include_usage": True})
    parts, finish, usage = [], None, None
    for chunk in stream:
        if chunk.usage is not None:
            usage = chunk.usage
        for c in chunk.choices:
            parts.append(c.delta.content or "")
            finish = c.finish_reason or finish
    assert "".join(parts) == whole and finish == "stop"
    assert usage is not None and usage.completion_tokens > 0
    jsonschema.validate(json.loads(whole), PERSON)


def test_generate_and_generate_stream(client: Any) -> None:
    body = {"text": "Bob Marley was born on", "max_new_tokens": 16, "response_format": {"type": "regex", "pattern": DATE}}
    r = client.post("/generate", json=body)
    assert r.status_code == 200, r.text
    out = r.json()
    assert out["finish_reason"] == "stop" and re.fullmatch(DATE, out["generated_text"])
    events = []
    with client.stream("POST", "/generate_stream", json=body) as s:
        assert s.headers["content-type"].startswith("text/event-stream")
        for line in s.iter_lines():
            if line.startswith("data: "):
                events.append(json.loads(line[6:]))
    assert events[-1]["generated_text"] == out["generated_text"]
    assert "".join(e["token"]["text"] for e in events) == out["generated_text"]


def test_disconnect_mid_stream_frees_the_slot(server: str, client: Any) -> None:
    body = {"model": MODEL, "messages": [{"role": "user", "content": "Tell a long story."}],
            "max_tokens": 400, "temperature": 0, "stream": True, "response_format": {"type": "regex", "pattern": "[a-z ]{300,}"}}
    with httpx.Client(base_url=server, timeout=60) as c, c.stream("POST", "/v1/chat/completions", json=body) as s:
        lines = s.iter_lines()
        for _ in range(6):
            next(lines)
        assert client.get("/healthz").json()["running"] >= 1
    deadline = time.time() + 30
    while client.get("/healthz").json()["running"] != 0:
        assert time.time() < deadline, "the disconnected stream kept its batch slot"
        time.sleep(0.2)


# -- bad input ----------------------------------------------------------------------------------


def _post(client: Any, path: str, body: Any) -> Any:
    if isinstance(body, (bytes, str)):
        return client.post(path, content=body, headers={"content-type": "application/json"})
    return client.post(path, json=body)


CHAT = {"model": MODEL, "messages": [{"role": "user", "content": "hi"}], "max_tokens": 4}


@pytest.mark.parametrize(
    ("body", "status", "needle"),
    [
        (b'{"model": "x", "messages": [', 400, "malformed JSON"),
        ({**CHAT, "temprature": 0.5}, 400, "unknown field 'temprature'"),
        ({**CHAT, "response_format": {"type": "regex", "pattern": "(a)\\1"}}, 400, "back-reference"),
        ({**CHAT, "response_format": {"type": "regex", "pattern": "(ab"}}, 400, "regex"),
        ({**CHAT, "response_format": {"type": "json_schema", "json_schema": {"name": "x", "schema": {
            "type": "object", "properties": {"a": {"type": "string", "pattern": "(a)\\1"}}}}}}, 400, "/properties/a"),
        ({**CHAT, "response_format": {"type": "yaml"}}, 400, "response_format"),
        ({**CHAT, "temperature": 5}, 400, "temperature"),
        ({**CHAT, "model": "gpt-4o"}, 404, "gpt-4o"),
        ({**CHAT, "messages": [{"role": "user", "content": "word " * 400}]}, 413, "prompt"),
        ({**CHAT, "response_format": {"type": "json_object", "schema": {
            "type": "object", "properties": {f"k{i}": {"type": "integer"} for i in range(600)}}}}, 413, "JSON Schema"),
        ({**CHAT, "messages": [{"role": "user", "content": "x" * 70_000}]}, 413, "request body"),
        ({**CHAT, "max_tokens": 1_000_000_000}, 400, "maximum context length is 8192 tokens"),
        ({**CHAT, "max_tokens": 8190}, 400, "in the completion"),
        ({**CHAT, "functions": [{"name": "f"}]}, 400, "legacy functions"),
        ({**CHAT, "tools": [{"type": "function", "function": {"name": "f"}}], "tool_choice": {"type": "function", "function": {"name": "g"}}},
         400, "not among the tools"),
    ],
)
def test_bad_input(client: Any, body: Any, status: int, needle: str) -> None:
    r = _post(client, "/v1/chat/completions", body)
    assert r.status_code == status, r.text
    assert needle in r.json()["error"]["message"]


def test_extract_from(oai: Any, client: Any) -> None:
    doc = 'Acme Corp reported revenue of $4.1 million. CEO: Jane "JJ" Doe.'
    fmt = {"type": "json_schema", "extract_from": doc, "json_schema": {"name": "a", "schema": {
        "type": "object", "properties": {"ceo": {"type": "string", "minLength": 1}}, "required": ["ceo"]}}}
    r = _chat(oai, f"{doc}\nWho is the CEO? Answer in JSON.", fmt, max_tokens=24)
    assert json.loads(r.choices[0].message.content)["ceo"] in doc
    r = _chat(oai, f"{doc}\nJSON please.", {"type": "json_object", "extract_from": [doc, "other"]}, max_tokens=24)
    text = r.choices[0].message.content
    if r.choices[0].finish_reason == "stop":
        assert isinstance(json.loads(text), dict)
    for bad, needle in (([], "empty list"), (3, "extract_from"), (["a", None], "extract_from")):
        body = {**CHAT, "response_format": {"type": "json_object", "extract_from": bad}}
        resp = _post(client, "/v1/chat/completions", body)
        assert resp.status_code == 400, resp.text
        assert needle in resp.json()["error"]["message"]
    resp = _post(client, "/v1/chat/completions", {**CHAT, "response_format": {"type": "json_object", "extract_from": "x" * 9000}})
    assert resp.status_code == 413 and "extract_from" in resp.json()["error"]["message"]


def test_bad_input_through_the_openai_client(oai: Any) -> None:
    with pytest.raises(openai.BadRequestError, match="/properties/a"):
        _chat(oai, "hi", {"type": "json_object", "schema": {"properties": {"a": {"pattern": "(x)\\1"}}}})
    with pytest.raises(openai.BadRequestError, match="maximum context length") as info:
        _chat(oai, "hi", None, max_tokens=1_000_000_000)
    assert info.value.code == "context_length_exceeded" and info.value.param == "max_tokens"


def test_the_openai_clients_fields_are_honoured(oai: Any) -> None:
    """OpenAI's fields through the official client: penalties, logit_bias, logprobs, user, seed."""
    fmt = {"type": "regex", "pattern": "[a-z]{3,8}( [a-z]{3,8}){2}"}
    r = _chat(oai, "Three words.", fmt, frequency_penalty=0.5, presence_penalty=0.5, logprobs=True, top_logprobs=2,
              user="someone", seed=3, logit_bias={"28": -100}, max_completion_tokens=24)
    choice = r.choices[0]
    assert choice.finish_reason == "stop" and re.fullmatch(fmt["pattern"], choice.message.content)
    assert "".join(t.token for t in choice.logprobs.content) == choice.message.content
    for t in choice.logprobs.content:
        assert t.logprob <= 0 and len(t.top_logprobs) <= 2 and t.top_logprobs[0].logprob >= t.logprob


def test_a_failing_request_does_not_fail_the_others(tiny_llama: tuple[Any, Any]) -> None:
    """A guide that breaks mid-generation fails its own request only (engine-level, tiny model)."""
    import structgen
    from structgen.automata.regex import regex_to_dfa
    from structgen.hf.generation import model_vocabulary
    from structgen.server.engine import Engine, SamplingParams

    model, tokenizer = tiny_llama
    vocab = model_vocabulary(model, tokenizer)
    good = structgen.compile_regex("[ab]{6}", vocab)

    class Broken(structgen.guides.DfaGuide):
        __slots__ = ()

        def token_mask(self, state: int) -> Any:
            if state != self.initial_state:
                raise RuntimeError("broken guide")
            return super().token_mask(state)

    bad = Broken(regex_to_dfa("[ab]{6}"), vocab)
    engine = Engine(model, vocab, max_batch_size=4)
    engine.start()

    try:
        results = drain(lambda: [engine.submit([1, 2, 3], g, SamplingParams(max_tokens=10)) for g in (good, bad, good)])
    finally:
        engine.stop()
    assert results[1][1].error is not None and "broken guide" in str(results[1][1].error)
    for text, ev in (results[0], results[2]):
        assert ev.error is None and ev.finish_reason == "stop" and re.fullmatch("[ab]{6}", text)


# -- load ------------------------------------------------------------------------------------------


def test_concurrent_clients_each_get_their_own_valid_answer(server: str) -> None:
    """24 clients x 2 requests at once; each request has a constraint only its own answer can match,
    so a response delivered to the wrong client (or lost, or cut) fails the check."""
    clients, per_client = 24, 2

    def one(c: int) -> list[tuple[str, str, Any]]:
        oai = openai.OpenAI(base_url=f"{server}/v1", api_key="unused", max_retries=0, timeout=240)
        out = []
        for k in range(per_client):
            if (c + k) % 2:
                pattern = f"id{c:02d}-{k}:[a-z]{{2,6}}"
                fmt: dict[str, Any] = {"type": "regex", "pattern": pattern}
            else:
                schema = {"type": "object", "properties": {"client": {"const": c}, "k": {"const": k},
                                                           "word": {"type": "string", "maxLength": 6}},
                          "required": ["client", "k", "word"], "additionalProperties": False}
                fmt = {"type": "json_schema", "json_schema": {"name": f"c{c}", "schema": schema}}
            r = _chat(oai, f"Client {c} says a word.", fmt, max_tokens=48, temperature=0.8, seed=c * 10 + k)
            out.append((fmt["type"], r.choices[0].message.content, (fmt, r.choices[0].finish_reason)))
        return out

    with ThreadPoolExecutor(clients) as pool:
        results = [x for xs in pool.map(one, range(clients)) for x in xs]
    assert len(results) == clients * per_client
    for kind, text, (fmt, finish) in results:
        assert finish == "stop", (fmt, text)
        if kind == "regex":
            assert re.fullmatch(fmt["pattern"], text), (fmt, text)
        else:
            jsonschema.validate(json.loads(text), fmt["json_schema"]["schema"])
    assert httpx.get(f"{server}/healthz").json()["max_batch_seen"] > 1, "requests were never batched"


def test_batched_greedy_equals_alone(server: str, oai: Any) -> None:
    """Rows joining and leaving a running batch (left padding, cache merge/trim) change nothing."""
    prompts = [f"Name {k} fruits, then count to {k + 3}." for k in range(6)]
    alone = [_chat(oai, p, None, max_tokens=6 + 3 * k).choices[0].message.content for k, p in enumerate(prompts)]
    with ThreadPoolExecutor(len(prompts)) as pool:
        together = list(pool.map(lambda kp: _chat(oai, kp[1], None, max_tokens=6 + 3 * kp[0]).choices[0].message.content,
                                 enumerate(prompts)))
    assert together == alone


def test_serve_command_starts_a_server(tmp_path: Any) -> None:
    """`structgen serve` as a user runs it: a subprocess answering on a loopback port."""
    with serve_process("--max-batch-size", "4", start_timeout=120) as base:
        r = httpx.post(f"{base}/generate", timeout=60, json={
            "text": "Bob Marley was born on", "max_new_tokens": 16, "response_format": {"type": "regex", "pattern": DATE}})
        assert r.status_code == 200 and re.fullmatch(DATE, r.json()["generated_text"])


def test_serve_rejects_bad_flags(capsys: pytest.CaptureFixture[str]) -> None:
    from structgen.cli import main

    assert main(["serve", "--max-batch-size", "0"]) == 2
    assert "--max-batch-size" in capsys.readouterr().err
