"""The server's request fields, errors, API key, model names, warnings and metrics, on a tiny
random-weight Llama (fast: no real model), through FastAPI's TestClient (the app's lifespan runs,
so the engine is the real one).

The numbers the server reports (penalised tokens, logprobs) are checked against a reference
loop written here from the definitions (OpenAI's penalty formula, vLLM's repetition penalty,
``log_softmax`` over the tokens the guide allows), not against the server's own helpers.
"""

from __future__ import annotations

import json
import re
from typing import Any, Iterator

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("prometheus_client")
torch = pytest.importorskip("torch")

from fastapi.testclient import TestClient  # noqa: E402
from prometheus_client.parser import text_string_to_metric_families  # noqa: E402

import structgen  # noqa: E402

KEY = "sekret-key"
AUTH = {"Authorization": f"Bearer {KEY}"}
CHAT = {"model": "tiny", "messages": [{"role": "user", "content": "hi"}], "max_tokens": 4, "temperature": 0}
CONTEXT = 512  # the tiny model's max_position_embeddings


@pytest.fixture(scope="module")
def app_parts(tiny_llama: tuple[Any, Any]) -> Iterator[tuple[Any, Any, Any]]:
    from structgen.server import ServerConfig, create_app

    model, tokenizer = tiny_llama
    config = ServerConfig(model_name="tiny", model_aliases=("gpt-4o-mini",), api_key=KEY, default_max_tokens=8,
                          max_prompt_tokens=256)
    app = create_app(model, tokenizer, config)
    with TestClient(app) as client:
        yield app, client, tokenizer


@pytest.fixture(scope="module")
def client(app_parts: tuple[Any, Any, Any]) -> Any:
    return app_parts[1]


def _post(client: Any, path: str, body: dict[str, Any], headers: dict[str, str] = AUTH) -> Any:
    return client.post(path, json=body, headers=headers)


def _error(r: Any, status: int) -> dict[str, Any]:
    assert r.status_code == status, r.text
    return dict(r.json()["error"])


# -- API key and model names -----------------------------------------------------------------------


@pytest.mark.parametrize("headers", [{}, {"Authorization": "Bearer wrong"}, {"Authorization": KEY},
                                     {"Authorization": f"Basic {KEY}"}])
def test_a_missing_or_wrong_key_is_a_401(client: Any, headers: dict[str, str]) -> None:
    for path, body in (("/v1/chat/completions", CHAT), ("/generate", {"text": "a", "max_new_tokens": 2})):
        r = client.post(path, json=body, headers=headers)
        err = _error(r, 401)
        assert err["code"] == "invalid_api_key" and "Authorization: Bearer" in err["message"]
        assert r.headers["www-authenticate"] == "Bearer"
    assert client.get("/v1/models", headers=headers).status_code == 401


def test_the_right_key_opens_and_health_and_metrics_stay_open(client: Any) -> None:
    assert _post(client, "/v1/chat/completions", CHAT).status_code == 200
    assert client.get("/healthz").status_code == 200
    assert client.get("/metrics").status_code == 200


def test_every_served_name_is_accepted_and_the_first_is_reported(client: Any) -> None:
    r = _post(client, "/v1/chat/completions", {**CHAT, "model": "gpt-4o-mini"})
    assert r.status_code == 200 and r.json()["model"] == "tiny"
    assert [m["id"] for m in client.get("/v1/models", headers=AUTH).json()["data"]] == ["tiny", "gpt-4o-mini"]
    err = _error(_post(client, "/v1/chat/completions", {**CHAT, "model": "gpt-4o"}), 404)
    assert err["code"] == "model_not_found" and err["param"] == "model"
    assert "'tiny' or 'gpt-4o-mini'" in err["message"]


# -- which fields are honoured, ignored, refused ---------------------------------------------------


OPENAI_DEFAULTS = {
    "frequency_penalty": 0, "presence_penalty": 0, "logprobs": False, "n": 1, "top_p": 1, "user": "u-1",
    "stream": False, "stop": None, "seed": None, "logit_bias": None, "store": False, "metadata": {"k": "v"},
    "parallel_tool_calls": True, "tool_choice": "none", "tools": [], "service_tier": "auto",
    "safety_identifier": "s", "prompt_cache_key": "p", "modalities": ["text"], "max_completion_tokens": None,
    "response_format": None, "temperature": None, "top_logprobs": None,
}


def test_openais_defaults_sent_explicitly_are_accepted(client: Any) -> None:
    r = _post(client, "/v1/chat/completions", {**CHAT, **OPENAI_DEFAULTS})
    assert r.status_code == 200, r.text
    assert r.json()["choices"][0]["logprobs"] is None


@pytest.mark.parametrize(
    ("extra", "param"),
    [
        ({"functions": [{"name": "f", "parameters": {}}]}, "functions"),
        ({"function_call": {"name": "f"}}, "function_call"),
        ({"audio": {"voice": "alloy", "format": "wav"}}, "audio"),
        ({"modalities": ["text", "audio"]}, "modalities"),
        ({"prediction": {"type": "content", "content": "x"}}, "prediction"),
        ({"web_search_options": {"search_context_size": "low"}}, "web_search_options"),
        ({"reasoning_effort": "low"}, "reasoning_effort"),
        ({"verbosity": "low"}, "verbosity"),
        ({"store": True}, "store"),
    ],
)
def test_a_field_the_server_cannot_honour_is_refused_by_name(client: Any, extra: dict[str, Any], param: str) -> None:
    err = _error(_post(client, "/v1/chat/completions", {**CHAT, **extra}), 400)
    assert err["param"] == param and err["code"] == "unsupported_parameter"
    assert err["message"].startswith(f"{param} is not supported by this server: ")


@pytest.mark.parametrize(
    ("path", "body", "param", "needle"),
    [
        ("/v1/chat/completions", {**CHAT, "top_logprobs": 2}, "top_logprobs", "needs logprobs: true"),
        ("/v1/chat/completions", {**CHAT, "logprobs": True, "top_logprobs": 21}, "top_logprobs", "less than or equal to 20"),
        ("/v1/chat/completions", {**CHAT, "frequency_penalty": 2.5}, "frequency_penalty", "less than or equal to 2"),
        ("/v1/chat/completions", {**CHAT, "repetition_penalty": 0}, "repetition_penalty", "greater than or equal to 0.01"),
        ("/v1/chat/completions", {**CHAT, "logit_bias": {"x": 1}}, "logit_bias", "keys are token ids, got 'x'"),
        ("/v1/chat/completions", {**CHAT, "logit_bias": {"5": 101}}, "logit_bias", "outside [-100, 100]"),
        ("/v1/chat/completions", {**CHAT, "logit_bias": {"99999999": 1}}, "logit_bias", "not in this model's vocabulary"),
        ("/v1/completions", {"model": "tiny", "prompt": "a", "suffix": "b"}, "suffix", "suffix is not supported"),
        ("/v1/completions", {"model": "tiny", "prompt": "a", "best_of": 3}, "best_of", "best_of=3 is not supported"),
        ("/v1/completions", {"model": "tiny", "prompt": "a", "logprobs": 6}, "logprobs", "less than or equal to 5"),
        ("/v1/chat/completions", {**CHAT, "temprature": 0.5}, "temprature", "unknown field 'temprature'"),
    ],
)
def test_bad_values_name_their_field(client: Any, path: str, body: dict[str, Any], param: str, needle: str) -> None:
    err = _error(_post(client, path, body), 400)
    assert err["param"] == param and needle in err["message"], err


def test_error_codes_are_strings_or_null(client: Any) -> None:
    assert _error(_post(client, "/v1/chat/completions", {**CHAT, "temprature": 1}), 400)["code"] == "unknown_parameter"
    assert _error(_post(client, "/v1/chat/completions", {**CHAT, "temperature": 9}), 400)["code"] is None
    err = _error(_post(client, "/v1/chat/completions", {**CHAT, "response_format": {"type": "regex", "pattern": "(a)\\1"}}), 400)
    assert err["code"] is None and err["param"] == "response_format"


# -- max_tokens against the model's context (issue 24) ---------------------------------------------


@pytest.mark.parametrize(
    ("path", "body", "field"),
    [
        ("/v1/chat/completions", {**CHAT, "max_tokens": 1_000_000_000}, "max_tokens"),
        ("/v1/chat/completions", {**CHAT, "max_completion_tokens": CONTEXT}, "max_completion_tokens"),
        ("/v1/completions", {"model": "tiny", "prompt": "hello there", "max_tokens": CONTEXT - 1}, "max_tokens"),
        ("/generate", {"text": "hello there", "max_new_tokens": CONTEXT}, "max_new_tokens"),
    ],
)
def test_max_tokens_beyond_the_context_is_a_400_with_the_numbers(client: Any, path: str, body: dict[str, Any],
                                                                  field: str) -> None:
    err = _error(_post(client, path, body), 400)
    assert err["code"] == "context_length_exceeded" and err["param"] == field
    m = re.search(r"maximum context length is (\d+) tokens\. However, you requested (\d+) tokens \((\d+) in the "
                  r"prompt, (\d+) in the completion\)", err["message"])
    assert m, err["message"]
    context, total, prompt, completion = map(int, m.groups())
    asked = body.get(field)
    assert context == CONTEXT and completion == asked and total == prompt + completion > CONTEXT


def test_max_tokens_that_fit_the_context_are_served(client: Any) -> None:
    r = _post(client, "/v1/completions", {"model": "tiny", "prompt": "a", "max_tokens": 3, "temperature": 0})
    assert r.status_code == 200 and r.json()["usage"]["completion_tokens"] == 3


# -- penalties and logit_bias, against a reference loop -------------------------------------------


def _reference_greedy(model: Any, prompt: list[int], steps: int, *, frequency: float = 0.0, presence: float = 0.0,
                      repetition: float = 1.0, bias: dict[int, float] | None = None) -> tuple[list[int], list[Any]]:
    """Greedy decoding with the penalties applied as OpenAI and vLLM define them, written out."""
    out: list[int] = []
    logps = []
    with torch.no_grad():
        for _ in range(steps):
            logits = model(input_ids=torch.tensor([prompt + out])).logits[0, -1].float()
            for t, b in (bias or {}).items():  # vLLM's order: the bias, then the penalties
                logits[t] += b
            for t in set(prompt + out):
                if repetition != 1:
                    logits[t] = logits[t] / repetition if logits[t] > 0 else logits[t] * repetition
            for t in set(out):
                logits[t] -= out.count(t) * frequency + presence
            logps.append(torch.log_softmax(logits, -1))
            out.append(int(torch.argmax(logits)))
    return out, logps


# Three tokens biased far above the rest: greedy decoding repeats the first forever unless a
# penalty moves it, and their log-probabilities are what the penalties change.
LEADERS = {"300": 12.0, "301": 11.0, "302": 10.0}


@pytest.mark.parametrize(
    "options",
    [
        {"frequency_penalty": 0.8, "presence_penalty": 0.5, "logit_bias": LEADERS},
        {"presence_penalty": 1.7, "logit_bias": LEADERS},
        {"repetition_penalty": 1.3, "logit_bias": LEADERS},
        {"frequency_penalty": -0.5, "repetition_penalty": 0.9, "logit_bias": {**LEADERS, "17": -100}},
        {"logit_bias": {"300": 100, "301": 99.5}},
    ],
)
def test_penalties_and_logit_bias_give_the_reference_tokens_and_logprobs(app_parts: tuple[Any, Any, Any],
                                                                         options: dict[str, Any]) -> None:
    app, client, tokenizer = app_parts
    model = app.state.engine.model
    prompt_text = "the cat sat on the mat and the cat"
    prompt = tokenizer(prompt_text, add_special_tokens=True)["input_ids"]
    steps = 10
    body = {"model": "tiny", "prompt": prompt_text, "max_tokens": steps, "temperature": 0, "logprobs": 2, **options}
    r = _post(client, "/v1/completions", body)
    assert r.status_code == 200, r.text
    choice = r.json()["choices"][0]
    bias = {int(k): v for k, v in options.get("logit_bias", {}).items()}
    expected, logps = _reference_greedy(model, prompt, steps, frequency=options.get("frequency_penalty", 0.0),
                                        presence=options.get("presence_penalty", 0.0),
                                        repetition=options.get("repetition_penalty", 1.0), bias=bias)
    vocab = app.state.engine.vocabulary
    assert choice["logprobs"]["tokens"] == [vocab.tokens[t].decode("utf-8", "replace") for t in expected]
    assert choice["logprobs"]["token_logprobs"] == pytest.approx([float(lp[t]) for lp, t in zip(logps, expected)],
                                                                 abs=1e-3)
    assert choice["logprobs"]["top_logprobs"][0] == pytest.approx(
        {vocab.tokens[t].decode("utf-8", "replace"): float(logps[0][t]) for t in torch.topk(logps[0], 2).indices.tolist()},
        abs=1e-3)
    assert set(expected) <= {300, 301, 302}
    penalised = set(options) - {"logit_bias"}
    assert (len(set(expected)) > 1) == bool(penalised and options.get("frequency_penalty", 0) >= 0), expected


def test_a_bias_never_lets_a_forbidden_token_through(client: Any) -> None:
    body = {**CHAT, "max_tokens": 8, "response_format": {"type": "regex", "pattern": "[ab]{6}"}}
    r = _post(client, "/v1/chat/completions", {**body, "logit_bias": {str(i): 100 for i in range(400)}})
    assert r.status_code == 200, r.text
    assert re.fullmatch("[ab]{6}", r.json()["choices"][0]["message"]["content"])


# -- logprobs under a constraint -------------------------------------------------------------------


def test_chat_logprobs_are_of_the_distribution_the_constraint_leaves(app_parts: tuple[Any, Any, Any]) -> None:
    app, client, tokenizer = app_parts
    engine = app.state.engine
    schema = {"type": "object", "properties": {"name": {"type": "string", "maxLength": 6}, "n": {"type": "integer"}},
              "required": ["name", "n"], "additionalProperties": False}
    fmt = {"type": "json_schema", "json_schema": {"name": "x", "schema": schema}}
    forced_before = engine.forced_tokens
    r = _post(client, "/v1/chat/completions", {**CHAT, "max_tokens": 24, "logprobs": True, "top_logprobs": 3,
                                                "response_format": fmt})
    assert r.status_code == 200, r.text
    choice = r.json()["choices"][0]
    text = choice["message"]["content"]
    entries = choice["logprobs"]["content"]
    assert engine.forced_tokens == forced_before, "a logprobs request must not fast-forward"
    assert b"".join(bytes(e["bytes"]) for e in entries).decode() == text
    guide = structgen.compile_json_schema(schema, engine.vocabulary)
    # the reference: the same prompt through the chat template, masks from the public Guide API
    prompt = tokenizer.apply_chat_template(CHAT["messages"], tokenize=False, add_generation_prompt=True)
    ids = tokenizer(prompt, add_special_tokens=False)["input_ids"]
    state, generated = guide.initial_state, []
    ids_of = {tok: i for i, tok in enumerate(engine.vocabulary.tokens) if tok is not None}
    with torch.no_grad():
        for entry in entries:
            logits = engine.model(input_ids=torch.tensor([ids + generated])).logits[0, -1].float()
            allowed = torch.from_numpy(guide.token_mask(state, budget=24 - len(generated)).copy())
            allowed = torch.nn.functional.pad(allowed, (0, logits.shape[-1] - len(allowed)))
            logp = torch.log_softmax(logits.masked_fill(~allowed, float("-inf")), -1)
            token = int(torch.argmax(logp))
            assert bytes(entry["bytes"]) == engine.vocabulary.tokens[token]
            assert entry["logprob"] == pytest.approx(float(logp[token]), abs=1e-3)
            tops = entry["top_logprobs"]
            assert len(tops) == min(3, int(allowed.sum())) and tops[0]["logprob"] == pytest.approx(entry["logprob"])
            assert [t["logprob"] for t in tops] == sorted((t["logprob"] for t in tops), reverse=True)
            for top in tops:  # only tokens the constraint allows here
                if top["bytes"]:  # (EOS has no bytes: the guide allows it only in a final state)
                    assert guide.next_state(state, ids_of[bytes(top["bytes"])]) >= 0
            state = guide.next_state(state, token)
            generated.append(token)
    assert json.loads(text) is not None


def test_streamed_logprobs_match_the_whole_response(client: Any) -> None:
    body = {**CHAT, "max_tokens": 10, "logprobs": True, "top_logprobs": 1,
            "response_format": {"type": "regex", "pattern": "[a-z]{4} [a-z]{4}"}}
    whole = _post(client, "/v1/chat/completions", body).json()["choices"][0]
    chunks = _stream(client, "/v1/chat/completions", {**body, "stream": True})
    streamed = [e for c in chunks for ch in c["choices"] if ch["logprobs"] for e in ch["logprobs"]["content"]]
    assert streamed == whole["logprobs"]["content"]
    assert "".join(e["token"] for e in streamed) == whole["message"]["content"]


# -- warnings ---------------------------------------------------------------------------------------


def _stream(client: Any, path: str, body: dict[str, Any]) -> list[dict[str, Any]]:
    with client.stream("POST", path, json=body, headers=AUTH) as s:
        assert s.status_code == 200
        lines = [line[6:] for line in s.iter_lines() if line.startswith("data: ")]
    assert lines[-1] == "[DONE]"
    return [json.loads(x) for x in lines[:-1]]


ANNOTATED = {"type": "json_schema", "json_schema": {"name": "p", "schema": {
    "type": "object", "properties": {"path": {"type": "string", "format": "unix-path", "maxLength": 4}},
    "required": ["path"]}}}


@pytest.mark.filterwarnings("ignore::structgen.errors.AnnotationWarning")  # (the server's log copy)
def test_a_format_read_as_an_annotation_is_told_to_the_client(client: Any) -> None:
    for _ in range(2):  # the second request reuses the compiled guide: the warning comes with it
        r = _post(client, "/v1/chat/completions", {**CHAT, "max_tokens": 16, "response_format": ANNOTATED})
        assert r.status_code == 200, r.text
        assert r.json()["warnings"] == ["format 'unix-path' at /properties/path/format is unknown to this server: "
                                        "read as an annotation, the string is not constrained by it"]
    plain = _post(client, "/v1/chat/completions", {**CHAT, "response_format": {"type": "json_object"}}).json()
    assert "warnings" not in plain
    chunks = _stream(client, "/v1/chat/completions", {**CHAT, "max_tokens": 16, "stream": True,
                                                      "response_format": ANNOTATED})
    assert "unix-path" in chunks[0]["warnings"][0] and all("warnings" not in c for c in chunks[1:])
    r = _post(client, "/generate", {"text": "a", "max_new_tokens": 16, "response_format": ANNOTATED})
    assert "unix-path" in r.json()["warnings"][0]


# -- metrics ----------------------------------------------------------------------------------------


def _samples(client: Any) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    r = client.get("/metrics")
    assert r.headers["content-type"].startswith("text/plain")
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for family in text_string_to_metric_families(r.text) for s in family.samples}


def test_metrics_count_requests_tokens_and_guide_cache_hits(client: Any) -> None:
    before = _samples(client)
    fmt = {"type": "regex", "pattern": "metrics-[0-9]{3}"}
    for _ in range(3):
        assert _post(client, "/v1/chat/completions", {**CHAT, "max_tokens": 8, "response_format": fmt}).status_code == 200
    _post(client, "/v1/chat/completions", {**CHAT, "model": "nope"})
    after = _samples(client)

    def grew(name: str, **labels: str) -> float:
        key = (name, tuple(sorted(labels.items())))
        return after.get(key, 0.0) - before.get(key, 0.0)

    assert grew("structgen_requests_total", endpoint="/v1/chat/completions", status="200") == 3
    assert grew("structgen_requests_total", endpoint="/v1/chat/completions", status="404") == 1
    assert grew("structgen_guide_cache_misses_total") == 1 and grew("structgen_guide_cache_hits_total") == 2
    assert grew("structgen_compile_seconds_count") == 1
    assert 3 * 2 <= grew("structgen_generation_tokens_total") <= 3 * 11  # "metrics-" + 3 digits: 2 to 11 tokens
    assert grew("structgen_prompt_tokens_total") > 0
    assert after[("structgen_num_requests_running", ())] == 0 and after[("structgen_num_requests_waiting", ())] == 0


# -- start-up ---------------------------------------------------------------------------------------


def test_start_up_warms_the_compiler_and_freezes_what_it_made(tiny_llama: tuple[Any, Any]) -> None:
    """``create_app`` warms the compiler (the canonical universe a ``oneOf`` needs is built, and
    every built-in format parsed, before the first request), and the running app leaves what start-up made out of the collector's full
    passes (``gc.freeze``) and collects its youngest generation less often, until it stops."""
    import gc

    from structgen.compiler import DEFAULT_WHITESPACE
    from structgen.json_schema import formats, universe
    from structgen.server import ServerConfig, create_app

    model, tokenizer = tiny_llama
    universe._UNIVERSES.clear()
    formats._template.cache_clear()
    structgen.clear_cache()  # (an earlier app compiled the warm-up schema: its guide would be a hit)
    app = create_app(model, tokenizer, ServerConfig(model_name="tiny", default_max_tokens=4))
    assert DEFAULT_WHITESPACE in universe._UNIVERSES
    assert formats._template.cache_info().currsize == len(formats.FORMATS)  # (every format parsed)
    before = gc.get_threshold()
    with TestClient(app) as c:
        assert gc.get_freeze_count() > 100_000  # (the model, the tokenizer, the vocabulary's index)
        assert gc.get_threshold()[0] >= 10_000 and gc.get_threshold()[1:] == before[1:]  # (fewer young passes)
        fmt = {"type": "json_schema", "json_schema": {"name": "k", "schema": {"oneOf": [{"type": "integer"}, {"const": "a"}]}}}
        r = _post(c, "/v1/chat/completions", {**CHAT, "max_tokens": 6, "response_format": fmt}, headers={})
        assert r.status_code == 200, r.text
    assert gc.get_freeze_count() == 0 and gc.get_threshold() == before
