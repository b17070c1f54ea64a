"""Faults a deployment sees, on a real socket: a client that disconnects mid-stream, a client
that gives up while its schema compiles, and a shutdown (``SIGTERM``) with requests in flight.

The tiny random-weight Llama behind uvicorn in a thread (fast); one test sends a real ``SIGTERM``
to ``structgen serve`` with the embedded model. Each test reads the engine's own records (the
step a request was cancelled at and the step its row left, the batch size at every step, the
compiles running and abandoned), not wall-clock times.
"""

from __future__ import annotations

import json
import re
import signal
import threading
import time
from typing import Any, Callable, Iterator

import pytest

from ..support.serving import app_server, server_process

pytest.importorskip("fastapi")
torch = pytest.importorskip("torch")
httpx = pytest.importorskip("httpx")

pytestmark = pytest.mark.timeout(300)

LONG = "[a-z ]{300,}"  # (a row that cannot end before 300 characters)


def _app(tiny_llama: tuple[Any, Any], **config: Any) -> Any:
    from structgen.server import ServerConfig, create_app

    model, tokenizer = tiny_llama
    return create_app(model, tokenizer, ServerConfig(model_name="tiny", max_prompt_tokens=64, **config))


def _wait(condition: Callable[[], bool], what: str, timeout: float = 60) -> None:
    deadline = time.time() + timeout
    while not condition():
        assert time.time() < deadline, f"timed out waiting for {what}"
        time.sleep(0.01)


def _long_chat(k: int, **extra: Any) -> dict[str, Any]:
    return {"model": "tiny", "messages": [{"role": "user", "content": f"story {k}"}], "max_tokens": 400,
            "temperature": 0, "stream": True, "response_format": {"type": "regex", "pattern": LONG}, **extra}


@pytest.fixture(scope="module")
def served(tiny_llama: tuple[Any, Any]) -> Iterator[tuple[str, Any]]:
    app = _app(tiny_llama, max_batch_size=4)
    with app_server(app) as (base, _):
        yield base, app


# -- a client that disconnects mid-stream ----------------------------------------------------------------


def test_a_client_that_disconnects_mid_stream_frees_its_slot_at_the_next_step(served: tuple[str, Any]) -> None:
    base, app = served
    engine = app.state.engine
    done: list[str] = []

    def stay(k: int) -> None:  # two clients read their whole stream
        with httpx.stream("POST", f"{base}/v1/chat/completions", json=_long_chat(k), timeout=120) as s:
            text = "".join(json.loads(line[6:])["choices"][0]["delta"].get("content") or ""
                           for line in s.iter_lines() if line.startswith("data: {") and '"choices": [{' in line)
        done.append(text)

    stayers = [threading.Thread(target=stay, args=(k,)) for k in (1, 2)]
    for t in stayers:
        t.start()
    with httpx.stream("POST", f"{base}/v1/chat/completions", json=_long_chat(0), timeout=120) as s:
        lines = s.iter_lines()
        for _ in range(4):  # the stream has started: the row is in the batch
            next(lines)
        _wait(lambda: engine.num_running == 3, "three rows in the batch")
        rows = {row.req.id: row.req for row in engine._batch.rows}
    # the connection is closed: the server cancels the request, the row leaves before the next step
    _wait(lambda: engine.num_running < 3 or len(done) == 2, "the batch to shrink")
    leaver = next(r for r in rows.values() if r.cancelled)
    _wait(lambda: leaver.left_at_step is not None, "the cancelled row to leave")
    assert leaver.cancelled_at_step is not None
    assert leaver.left_at_step - leaver.cancelled_at_step <= 1, (leaver.cancelled_at_step, leaver.left_at_step)
    _wait(lambda: engine.steps > leaver.left_at_step, "the next step")
    log = dict(engine.batch_log)  # (step -> rows): three up to the step the client left at, two from the next
    assert log[leaver.left_at_step] == 3 and log[leaver.left_at_step + 1] == 2, \
        [(s, n) for s, n in engine.batch_log if abs(s - leaver.left_at_step) <= 2]
    for t in stayers:
        t.join(timeout=120)
    assert len(done) == 2 and all(re.fullmatch(LONG, text) for text in done)  # the others were not disturbed


# -- a client that gives up while its schema compiles ------------------------------------------------------


def test_a_request_cancelled_while_its_schema_compiles_does_not_leak_the_compile(served: tuple[str, Any]) -> None:
    """Three clients send new schemas and give up while they compile (held at a gate): nothing is
    queued to the engine, the compile not started yet is dropped, the two running finish in their
    threads, are cached and serve the next request with the same schema; no compile is left."""
    base, app = served
    compiler, engine = app.state.serving.compiler, app.state.engine
    gate = threading.Event()
    ran: list[Any] = []
    original = compiler._through_the_door

    def gated(body: Any) -> Any:
        ran.append(body)
        gate.wait(60)
        return original(body)

    compiler._through_the_door = gated
    try:
        submitted, abandoned = engine.submitted, compiler.abandoned
        schemas = [{"type": "object", "properties": {f"key{k}_{time.time_ns()}": {"type": "integer"}}} for k in range(3)]

        def give_up(k: int) -> None:
            body = {"model": "tiny", "messages": [{"role": "user", "content": "hi"}], "max_tokens": 30,
                    "stream": k == 2, "response_format": {"type": "json_object", "schema": schemas[k]}}
            with pytest.raises(httpx.ReadTimeout):
                with httpx.Client(timeout=httpx.Timeout(60, read=1.0)) as c:
                    c.post(f"{base}/v1/chat/completions", json=body).read()

        for k in range(3):  # (in turn, so the third waits for a compile thread)
            give_up(k)
            _wait(lambda: compiler.abandoned == abandoned + k + 1, f"the server to see client {k} go")
        assert len(ran) == 2 and compiler.running == 2  # the pool's two threads, held; the third never started
        assert engine.submitted == submitted  # nothing was queued for clients that left
    finally:
        gate.set()
        compiler._through_the_door = original
    _wait(lambda: compiler.running == 0, "the held compiles to finish")
    assert len(ran) == 2
    hits = compiler.hits
    body = {"model": "tiny", "messages": [{"role": "user", "content": "hi"}], "max_tokens": 30, "temperature": 0,
            "response_format": {"type": "json_object", "schema": schemas[0]}}
    r = httpx.post(f"{base}/v1/chat/completions", json=body, timeout=60)
    assert r.status_code == 200 and compiler.hits == hits + 1  # the abandoned compile was kept, not redone
    assert engine.submitted == submitted + 1


# -- shutdown --------------------------------------------------------------------------------------------


def _events(s: Any) -> Iterator[dict[str, Any]]:
    for line in s.iter_lines():
        if line.startswith("data: {"):
            yield json.loads(line[6:])


def test_a_drain_lets_requests_in_flight_finish_and_refuses_new_ones(tiny_llama: tuple[Any, Any]) -> None:
    app = _app(tiny_llama, max_batch_size=4)
    with app_server(app, drain_timeout=60) as (base, server):
        with httpx.stream("POST", f"{base}/v1/chat/completions", json=_long_chat(0), timeout=120) as s:
            events = _events(s)
            first = [next(events) for _ in range(3)]
            server.handle_exit(signal.SIGTERM, None)  # (what the signal handler calls)
            for path, body in (("/v1/chat/completions", _long_chat(1, stream=False)), ("/v1/responses", {}),
                               ("/healthz", None)):
                r = httpx.request("POST" if body is not None else "GET", f"{base}{path}", json=body, timeout=30)
                assert r.status_code == 503 and r.json()["error"]["code"] == "server_shutting_down", r.text
                assert set(r.json()["error"]) == {"message", "type", "param", "code"}
            assert httpx.get(f"{base}/metrics", timeout=30).status_code == 200
            rest = list(events)
        text = "".join(c["choices"][0]["delta"].get("content") or "" for c in first + rest if c.get("choices"))
        assert rest[-1]["choices"][0]["finish_reason"] == "stop" and re.fullmatch(LONG, text)
        _wait(lambda: not server.started or server.should_exit or app.state.drain.in_flight == 0, "the drain")


def test_a_drain_past_its_timeout_ends_requests_with_an_error(tiny_llama: tuple[Any, Any]) -> None:
    app = _app(tiny_llama, max_batch_size=4)
    # (the timeout well below the 430 tokens' time: a warm process writes them in about 0.2 s)
    with app_server(app, drain_timeout=0.02) as (base, server):
        with httpx.stream("POST", f"{base}/v1/chat/completions",
                          json=_long_chat(0, max_tokens=440, response_format={"type": "regex", "pattern": "[a-z ]{430}"}),
                          timeout=120) as s:
            events = _events(s)
            next(events)
            server.handle_exit(signal.SIGTERM, None)
            last = list(events)[-1]
        assert "error" in last, last
        assert last["error"]["code"] == "server_shutting_down" and "drain timeout" in last["error"]["message"]
        _wait(lambda: app.state.drain.in_flight == 0, "the requests to end")


@pytest.mark.model
def test_sigterm_drains_structgen_serve() -> None:
    """The real command and the real signal: the stream in flight finishes, a new request gets 503,
    and the process exits."""
    with server_process("--max-batch-size", "4", "--drain-timeout", "120") as (base, proc):
        body = {"model": "SmolLM2-135M-Instruct", "stream": True, "max_tokens": 60, "temperature": 0,
                "messages": [{"role": "user", "content": "Write a long sentence."}],
                "response_format": {"type": "regex", "pattern": "[a-z ]{60,}"}}
        with httpx.stream("POST", f"{base}/v1/chat/completions", json=body, timeout=300) as s:
            events = _events(s)
            first = [next(events) for _ in range(3)]
            proc.send_signal(signal.SIGTERM)
            _wait(lambda: httpx.get(f"{base}/healthz", timeout=30).status_code == 503, "the drain to start")
            r = httpx.post(f"{base}/v1/chat/completions", json={**body, "stream": False}, timeout=30)
            assert r.status_code == 503 and r.json()["error"]["code"] == "server_shutting_down"
            rest = list(events)
        text = "".join(c["choices"][0]["delta"].get("content") or "" for c in first + rest if c.get("choices"))
        assert rest[-1]["choices"][0]["finish_reason"] == "stop" and re.fullmatch("[a-z ]{60,}", text)
        assert proc.wait(timeout=60) in (0, -signal.SIGTERM)
