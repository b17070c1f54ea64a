"""A property-based fuzz of the HTTP API, generated from the server's own OpenAPI document.

For each endpoint that takes a body, Hypothesis draws bodies from the request schema FastAPI
publishes (``/openapi.json``; :func:`_strategy` reads it): well-formed ones (pointed at the
served model most of the time, so they reach the compiler and the engine, with random JSON
Schemas, regexes, tools, reasoning options, lone surrogates in strings ...), and broken ones (a
field dropped, an unknown field added, a field of the wrong type, a body that is not an object,
JSON cut short). The tiny random-weight model serves them behind uvicorn on a real socket.

Every answer must be one of: a 2xx (a stream is read to its end), or a 4xx with OpenAI's error
shape (``{"error": {"message", "type", "param", "code"}}``) whose ``param`` names a field of the
request (one it sent, or one it missed), save for a body that is not a JSON object at all, which
says so. No 5xx, and after every case the server still answers ``/healthz`` with its engine
alive; at the end a constrained request still gets a valid answer. The number of cases run is
printed (``-s``) and asserted; under ``--hypothesis-profile explore`` each endpoint gets ten
times the cases, drawn afresh.
"""

from __future__ import annotations

import json
import re
from typing import Any, Iterator

import pytest

from ..support.serving import app_server

pytest.importorskip("fastapi")
torch = pytest.importorskip("torch")
httpx = pytest.importorskip("httpx")

from hypothesis import HealthCheck, example, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

pytestmark = [pytest.mark.slow, pytest.mark.timeout(1800)]

MODEL = "tiny"
ENDPOINTS = ("/v1/chat/completions", "/v1/completions", "/v1/responses", "/generate", "/generate_stream")
CASES_PER_ENDPOINT = 120
CASES: dict[str, int] = {}


@pytest.fixture(scope="module")
def served(tiny_llama: tuple[Any, Any]) -> Iterator[tuple[str, Any, httpx.Client]]:
    from structgen.server import ServerConfig, create_app

    model, tokenizer = tiny_llama
    app = create_app(model, tokenizer, ServerConfig(model_name=MODEL, max_batch_size=8, default_max_tokens=16,
                                                    max_prompt_tokens=256))
    with app_server(app) as (base, _), httpx.Client(base_url=base, timeout=120) as client:
        yield base, app, client
    print(f"\nfuzz cases run: {sum(CASES.values())} ({CASES})")


def _document() -> dict[str, Any]:
    from fastapi import FastAPI

    from structgen.server.responses import router as responses
    from structgen.server.routes import router

    app = FastAPI()  # (the same routes and models as create_app's, without a model)
    app.include_router(router)
    app.include_router(responses)
    doc: dict[str, Any] = app.openapi()
    return doc


DOC = _document()


def _properties(path: str) -> set[str]:
    name = DOC["paths"][path]["post"]["requestBody"]["content"]["application/json"]["schema"]["$ref"].rsplit("/", 1)[1]
    return set(DOC["components"]["schemas"][name]["properties"])


_TEXT = st.text(st.characters(exclude_categories=()), max_size=12)  # (lone surrogates included: JSON can carry them)
_ANY = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | _TEXT,
                    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_TEXT, inner, max_size=3), max_leaves=8)


def _strategy(schema: Any, depth: int = 0) -> Any:
    """A strategy for the values ``schema`` (a piece of the OpenAPI document) describes, built
    once: ``$ref``, ``anyOf`` / ``oneOf``, ``const`` / ``enum``, the JSON types with their
    bounds, objects with their required and (some of their) optional properties. Keywords it does
    not read (``pattern``, lengths) are left to the server to enforce: bodies that break them are
    fuzz cases too. (hypothesis-jsonschema draws exactly the valid ones, at seconds per body
    for the Responses API's request: too slow to run hundreds.)"""
    if not isinstance(schema, dict) or depth > 8:
        return _ANY
    if "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[1]
        return st.deferred(lambda: _strategy(DOC["components"]["schemas"][name], depth + 1))
    for key in ("anyOf", "oneOf"):
        if key in schema:
            return st.one_of([_strategy(s, depth + 1) for s in schema[key]])
    if "const" in schema:
        return st.just(schema["const"])
    if "enum" in schema:
        return st.sampled_from(schema["enum"])
    kind = schema.get("type")
    if kind == "null":
        return st.none()
    if kind == "boolean":
        return st.booleans()
    if kind == "integer":
        low = schema.get("minimum", schema.get("exclusiveMinimum", -(2**40)))
        return st.integers(int(low), int(schema.get("maximum", 2**40)))
    if kind == "number":
        return st.floats(schema.get("minimum", -1e6), schema.get("maximum", 1e6), allow_nan=False)
    if kind == "string":
        return _TEXT
    if kind == "array":
        return st.lists(_strategy(schema.get("items"), depth + 1), max_size=3)
    if kind == "object" and "properties" in schema:
        required = set(schema.get("required", ()))
        props = {k: _strategy(v, depth + 1) for k, v in schema["properties"].items()}
        return st.fixed_dictionaries({k: v for k, v in props.items() if k in required},
                                     optional={k: v for k, v in props.items() if k not in required})
    if kind == "object":
        return st.dictionaries(_TEXT, _ANY, max_size=3)
    return _ANY


_STRATEGIES: dict[str, Any] = {}


def _bodies(path: str) -> Any:
    if path not in _STRATEGIES:
        _STRATEGIES[path] = _strategy(DOC["paths"][path]["post"]["requestBody"]["content"]["application/json"]["schema"])
    return _STRATEGIES[path]


#: Numbers that cost generation time: within the context they are cut down (beyond it they are
#: kept, and refused with a 400); the fuzz is of the API, not of the model's speed.
_COSTLY = {"max_tokens": 24, "max_completion_tokens": 24, "max_output_tokens": 24, "max_new_tokens": 24, "n": 2,
           "best_of": 2, "max_reasoning_tokens": 8}


_NOT_OBJECT = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), st.text(max_size=8),
                        st.lists(st.integers(), max_size=3))
_WRONG = _NOT_OBJECT | st.dictionaries(st.text(max_size=4), st.integers(), max_size=2)


@st.composite
def _case(draw: Any, path: str) -> tuple[str, bytes, dict[str, Any] | None]:
    """``(what, raw body, body)``: ``what`` is ``"valid"``, a mutation's name, or ``"not an
    object"`` / ``"cut short"`` (no body to name fields of)."""
    body = dict(draw(_bodies(path)))
    for key, most in _COSTLY.items():
        value = body.get(key)
        if isinstance(value, int) and not isinstance(value, bool) and most < value <= 512:
            body[key] = value % most + 1
    if "model" in body and draw(st.integers(0, 9)) < 8:
        body["model"] = MODEL
    what = draw(st.sampled_from(["valid"] * 5 + ["drop", "unknown", "wrong type", "not an object", "cut short"]))
    if what == "drop" and body:
        body.pop(draw(st.sampled_from(sorted(body))))
    elif what == "unknown":
        body[draw(st.text(min_size=1, max_size=10).filter(lambda k: k not in _properties(path)))] = draw(_WRONG)
    elif what == "wrong type" and body:
        body[draw(st.sampled_from(sorted(body)))] = draw(_WRONG)
    elif what == "not an object":
        return what, json.dumps(draw(_NOT_OBJECT)).encode(), None
    raw = json.dumps(body).encode()
    if what == "cut short":
        return what, raw[: draw(st.integers(0, max(len(raw) - 1, 0)))], None
    return what, raw, body


def _check(path: str, what: str, body: dict[str, Any] | None, r: httpx.Response, text: str) -> None:
    assert r.status_code < 500, (path, what, body, r.status_code, text[:500])
    if r.status_code < 300:
        return
    error = json.loads(text)
    assert set(error) == {"error"} and set(error["error"]) == {"message", "type", "param", "code"}, text
    e = error["error"]
    assert isinstance(e["message"], str) and e["message"] and isinstance(e["type"], str), text
    assert e["code"] is None or isinstance(e["code"], str), text
    if body is None:  # not a JSON object: nothing to name but the body
        assert e["param"] is None and re.search("malformed JSON|body|valid dictionary", e["message"]), text
        return
    assert isinstance(e["param"], str) and e["param"], (path, what, body, text)
    root = re.split(r"[.\[]", e["param"], maxsplit=1)[0]
    assert e["param"] in body or root in body or root in _properties(path), (path, what, body, text)


#: Cases the fuzz found (each a 500 before its fix), run first every time.
FOUND: dict[str, list[dict[str, Any]]] = {
    "/v1/completions": [{"model": MODEL, "prompt": ""},  # no prompt tokens: the prefill failed
                        {"model": MODEL, "prompt": "0", "temperature": 2.2e-311},  # logits / 1e-311 = inf
                        {"model": MODEL, "prompt": "0", "repetition_penalty": 6.3e-184}],  # the same
    "/v1/responses": [{"model": MODEL, "input": []},  # no messages: the chat template raised
                      {"model": MODEL, "input": "", "temperature": 9.6e-111}],
    "/generate": [{"text": "0", "temperature": 4.3e-70}],
}


def _fuzz(served: tuple[str, Any, httpx.Client], path: str) -> None:
    base, app, client = served

    explore = settings._current_profile == "explore"  # noqa: SLF001 - (as conftest reads it)
    @settings(max_examples=CASES_PER_ENDPOINT * (10 if explore else 1), deadline=None, database=None,
              suppress_health_check=list(HealthCheck))
    @given(case=_case(path))
    def one(case: tuple[str, bytes, dict[str, Any] | None]) -> None:
        what, raw, body = case
        CASES[path] = CASES.get(path, 0) + 1
        with client.stream("POST", path, content=raw, headers={"content-type": "application/json"}) as r:
            text = "".join(r.iter_text())
        _check(path, what, body, r, text)
        health = client.get("/healthz")
        assert health.status_code == 200 and app.state.engine._thread.is_alive(), (path, body, health.text)

    for found in FOUND.get(path, ()):
        one = example(case=("valid", json.dumps(found).encode(), found))(one)
    one()


@pytest.mark.parametrize("path", ENDPOINTS)
def test_fuzz_the_endpoint(served: tuple[str, Any, httpx.Client], path: str) -> None:
    _fuzz(served, path)
    assert CASES[path] >= CASES_PER_ENDPOINT


def test_the_server_still_serves_after_the_fuzz(served: tuple[str, Any, httpx.Client]) -> None:
    _, _, client = served
    r = client.post("/v1/chat/completions", json={"model": MODEL, "messages": [{"role": "user", "content": "hi"}],
                                                  "max_tokens": 16, "response_format": {"type": "regex",
                                                                                         "pattern": "[a-z]{3,5}"}})
    assert r.status_code == 200 and re.fullmatch("[a-z]{3,5}", r.json()["choices"][0]["message"]["content"])
    assert client.get("/v1/models").status_code == 200
