"""The ASGI app: OpenAI-compatible endpoints plus a simple ``/generate``, on FastAPI.

Handlers only validate, tokenize and compile (both in threads) and then wait on the
:class:`~structgen.server.engine.Engine`; the model never runs on the event loop.

Example:
    >>> app = create_app(model, tokenizer)                       # doctest: +SKIP
    >>> uvicorn.run(app, host="127.0.0.1", port=8000)            # doctest: +SKIP
"""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any, AsyncIterator, Awaitable, Callable

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, StreamingResponse

from ..errors import ConstraintError
from ..hf.generation import model_vocabulary
from ..vocab.index import prepare_vocabulary
from .engine import Engine, EngineRequest, Event, SamplingParams
from .protocol import ChatCompletionRequest, CompletionRequest, GenerateRequest, ResponseFormat
from .response_format import GuideCompiler, PayloadTooLarge

__all__ = ["ServerConfig", "create_app"]


@dataclass(frozen=True)
class ServerConfig:
    """Server limits and batching options (the ``structgen serve`` flags)."""

    model_name: str = "SmolLM2-135M-Instruct"
    max_batch_size: int = 32
    batch_timeout_ms: float = 2.0
    default_max_tokens: int = 256
    max_prompt_tokens: int = 4096
    max_body_bytes: int = 1 << 20
    max_constraint_bytes: int = 64 * 1024
    #: Guided output always complete within max_tokens (see ``Engine``); False allows cut-off output.
    budget_aware: bool = True
    #: Append the tokens a guide forces without sampling, several per forward pass (see ``Engine``).
    fast_forward: bool = True


class HTTPProblem(Exception):
    """An error answered with ``status`` and an OpenAI-style error body."""

    def __init__(self, status: int, message: str, *, type_: str = "invalid_request_error",
                 param: str | None = None) -> None:
        super().__init__(message)
        self.status, self.message, self.type, self.param = status, message, type_, param


def _error(status: int, message: str, type_: str = "invalid_request_error", param: str | None = None) -> JSONResponse:
    return JSONResponse({"error": {"message": message, "type": type_, "param": param, "code": status}},
                        status_code=status)


def _sse(data: Any) -> str:
    return f"data: {json.dumps(data, ensure_ascii=False)}\n\n"


def create_app(model: Any, tokenizer: Any, config: ServerConfig | None = None) -> FastAPI:
    """A FastAPI app serving ``model`` with continuous batching; the engine starts with the app."""
    config = config or ServerConfig()
    vocab = model_vocabulary(model, tokenizer)
    prepare_vocabulary(vocab)  # the token trie and slices, before the first request
    engine = Engine(model, vocab, max_batch_size=config.max_batch_size, batch_timeout_ms=config.batch_timeout_ms,
                    budget_aware=config.budget_aware, tokenizer=tokenizer, fast_forward=config.fast_forward)
    compiler = GuideCompiler(vocab, max_constraint_bytes=config.max_constraint_bytes)
    max_prompt = min(config.max_prompt_tokens, engine.max_context - 1)

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        engine.start()
        try:
            yield
        finally:
            engine.stop()
            compiler.close()

    app = FastAPI(title="structgen", lifespan=lifespan)
    app.state.engine = engine
    app.state.config = config

    # -- errors ------------------------------------------------------------------------------

    @app.exception_handler(RequestValidationError)
    async def _invalid(_: Request, exc: RequestValidationError) -> JSONResponse:
        parts = []
        for err in exc.errors():
            loc = [str(x) for x in err.get("loc", ()) if x != "body"]
            if err.get("type") == "json_invalid":
                parts.append(f"malformed JSON body: {err.get('ctx', {}).get('error', err.get('msg'))}")
            elif err.get("type") == "extra_forbidden":
                parts.append(f"unknown field {'.'.join(loc)!r}")
            else:
                parts.append(f"{'.'.join(loc) or 'body'}: {err.get('msg')}")
        return _error(400, "; ".join(parts) or "invalid request")

    @app.exception_handler(HTTPProblem)
    async def _problem(_: Request, exc: HTTPProblem) -> JSONResponse:
        return _error(exc.status, exc.message, exc.type, exc.param)

    @app.exception_handler(ConstraintError)
    async def _constraint(_: Request, exc: ConstraintError) -> JSONResponse:
        return _error(400, f"response_format: {exc}", param="response_format")

    @app.exception_handler(PayloadTooLarge)
    async def _too_large(_: Request, exc: PayloadTooLarge) -> JSONResponse:
        return _error(413, str(exc), param="response_format")

    @app.middleware("http")
    async def _limit_body(request: Request, call_next: Callable[[Request], Awaitable[Any]]) -> Any:
        length = request.headers.get("content-length")
        if length is not None and length.isdigit() and int(length) > config.max_body_bytes:
            return _error(413, f"request body of {length} bytes is over this server's limit of {config.max_body_bytes}")
        return await call_next(request)

    # -- helpers -----------------------------------------------------------------------------

    def check_model(name: str) -> None:
        if name != config.model_name:
            raise HTTPProblem(404, f"model {name!r} is not served here; this server serves {config.model_name!r}",
                              type_="model_not_found", param="model")

    async def tokenize(text: str, *, special: bool) -> list[int]:
        ids: list[int] = await asyncio.to_thread(
            lambda: tokenizer(text, add_special_tokens=special)["input_ids"])
        if len(ids) > max_prompt:
            raise HTTPProblem(413, f"the prompt is {len(ids)} tokens, over this server's limit of {max_prompt}",
                              param="messages")
        return ids

    async def chat_prompt(req: ChatCompletionRequest) -> list[int]:
        messages = [{"role": "system" if m.role == "developer" else m.role, "content": m.text()}
                    for m in req.messages]
        if getattr(tokenizer, "chat_template", None):
            text = await asyncio.to_thread(lambda: tokenizer.apply_chat_template(
                messages, tokenize=False, add_generation_prompt=True))
            return await tokenize(text, special=False)
        return await tokenize("\n".join(m["content"] for m in messages), special=True)

    async def submit(prompt_ids: list[int], fmt: ResponseFormat | None, *, n: int, max_tokens: int | None,
                     temperature: float, top_p: float, seed: int | None, stop: list[str]) -> list[EngineRequest]:
        guide = await compiler.compile(fmt)
        room = engine.max_context - len(prompt_ids)
        budget = min(max_tokens or config.default_max_tokens, room)
        return [engine.submit(prompt_ids, guide, SamplingParams(
            max_tokens=budget, temperature=temperature, top_p=top_p,
            seed=None if seed is None else seed + i, stop=tuple(stop))) for i in range(n)]

    async def collect(request: Request, handles: list[EngineRequest]) -> list[tuple[str, Event]]:
        async def one(h: EngineRequest) -> tuple[str, Event]:
            text = []
            async for event in h:
                text.append(event.text)
                if event.is_last:
                    return "".join(text), event
            raise RuntimeError("engine stream ended early")  # pragma: no cover

        async def disconnected() -> None:
            while (await request.receive())["type"] != "http.disconnect":
                pass

        work = asyncio.ensure_future(asyncio.gather(*(one(h) for h in handles)))
        watch = asyncio.ensure_future(disconnected())
        try:
            await asyncio.wait({work, watch}, return_when=asyncio.FIRST_COMPLETED)
            if not work.done():
                raise HTTPProblem(499, "client disconnected")
            results: list[tuple[str, Event]] = work.result()
        finally:
            watch.cancel()
            work.cancel()
            for h in handles:
                h.cancel()
        for _, event in results:
            if event.error is not None:
                raise HTTPProblem(500, f"generation failed: {event.error}", type_="server_error")
        return results

    async def merged(handles: list[EngineRequest]) -> AsyncIterator[tuple[int, Event]]:
        if len(handles) == 1:
            async for event in handles[0]:
                yield 0, event
            return
        out: asyncio.Queue[tuple[int, Event]] = asyncio.Queue()

        async def pump(i: int, h: EngineRequest) -> None:
            async for event in h:
                await out.put((i, event))

        tasks = [asyncio.ensure_future(pump(i, h)) for i, h in enumerate(handles)]
        try:
            left = len(handles)
            while left:
                i, event = await out.get()
                left -= event.is_last
                yield i, event
        finally:
            for t in tasks:
                t.cancel()

    def streaming(body: AsyncIterator[str], handles: list[EngineRequest]) -> StreamingResponse:
        async def guarded() -> AsyncIterator[str]:
            try:
                async for chunk in body:
                    yield chunk
            finally:  # the client went away or we are done: free the batch slots
                for h in handles:
                    h.cancel()

        return StreamingResponse(guarded(), media_type="text/event-stream",
                                 headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})

    def usage(prompt_tokens: int, completion: int) -> dict[str, int]:
        return {"prompt_tokens": prompt_tokens, "completion_tokens": completion,
                "total_tokens": prompt_tokens + completion}

    def error_payload(error: BaseException) -> dict[str, Any]:
        return {"error": {"message": f"generation failed: {error}", "type": "server_error", "param": None,
                          "code": 500}}

    # -- OpenAI endpoints ------------------------------------------------------------------------

    @app.post("/v1/chat/completions")
    async def chat_completions(req: ChatCompletionRequest, request: Request) -> Any:
        check_model(req.model)
        prompt = await chat_prompt(req)
        handles = await submit(prompt, req.response_format, n=req.n, max_tokens=req.max_completion_tokens or req.max_tokens,
                               temperature=req.temperature, top_p=req.top_p, seed=req.seed, stop=req.stop_list())
        rid, created = f"chatcmpl-{uuid.uuid4().hex}", int(time.time())
        head = {"id": rid, "created": created, "model": config.model_name}
        if not req.stream:
            results = await collect(request, handles)
            choices = [{"index": i, "message": {"role": "assistant", "content": text}, "logprobs": None,
                        "finish_reason": ev.finish_reason} for i, (text, ev) in enumerate(results)]
            total = sum(ev.completion_tokens for _, ev in results)
            return {**head, "object": "chat.completion", "choices": choices, "usage": usage(len(prompt), total)}

        include_usage = bool(req.stream_options and req.stream_options.include_usage)

        async def body() -> AsyncIterator[str]:
            def chunk(i: int, delta: dict[str, Any], finish: str | None = None) -> str:
                return _sse({**head, "object": "chat.completion.chunk", "choices": [
                    {"index": i, "delta": delta, "logprobs": None, "finish_reason": finish}]})

            for i in range(len(handles)):
                yield chunk(i, {"role": "assistant", "content": ""})
            total = 0
            async for i, ev in merged(handles):
                if ev.error is not None:
                    yield _sse(error_payload(ev.error))
                    return
                if ev.text:
                    yield chunk(i, {"content": ev.text})
                if ev.finish_reason is not None:
                    total += ev.completion_tokens
                    yield chunk(i, {}, ev.finish_reason)
            if include_usage:
                yield _sse({**head, "object": "chat.completion.chunk", "choices": [],
                            "usage": usage(len(prompt), total)})
            yield "data: [DONE]\n\n"

        return streaming(body(), handles)

    @app.post("/v1/completions")
    async def completions(req: CompletionRequest, request: Request) -> Any:
        check_model(req.model)
        prompts = [req.prompt] if isinstance(req.prompt, str) else req.prompt
        if not prompts:
            raise HTTPProblem(400, "prompt: give at least one prompt", param="prompt")
        if req.stream and len(prompts) > 1:
            raise HTTPProblem(400, "stream with several prompts is not supported; send one prompt", param="prompt")
        encoded = [await tokenize(p, special=True) for p in prompts]
        handles: list[EngineRequest] = []
        for ids in encoded:
            handles += await submit(ids, req.response_format, n=req.n, max_tokens=req.max_tokens,
                                    temperature=req.temperature, top_p=req.top_p, seed=req.seed, stop=req.stop_list())
        rid, created = f"cmpl-{uuid.uuid4().hex}", int(time.time())
        head = {"id": rid, "created": created, "model": config.model_name}
        prompt_tokens = sum(len(ids) for ids in encoded)
        if not req.stream:
            results = await collect(request, handles)
            choices = [{"index": i, "text": (prompts[i // req.n] if req.echo else "") + text, "logprobs": None,
                        "finish_reason": ev.finish_reason} for i, (text, ev) in enumerate(results)]
            total = sum(ev.completion_tokens for _, ev in results)
            return {**head, "object": "text_completion", "choices": choices, "usage": usage(prompt_tokens, total)}

        include_usage = bool(req.stream_options and req.stream_options.include_usage)

        async def body() -> AsyncIterator[str]:
            def chunk(i: int, text: str, finish: str | None = None) -> str:
                return _sse({**head, "object": "text_completion", "choices": [
                    {"index": i, "text": text, "logprobs": None, "finish_reason": finish}]})

            total = 0
            async for i, ev in merged(handles):
                if ev.error is not None:
                    yield _sse(error_payload(ev.error))
                    return
                if ev.text or ev.finish_reason is not None:
                    yield chunk(i, ev.text, ev.finish_reason)
                if ev.finish_reason is not None:
                    total += ev.completion_tokens
            if include_usage:
                yield _sse({**head, "object": "text_completion", "choices": [], "usage": usage(prompt_tokens, total)})
            yield "data: [DONE]\n\n"

        return streaming(body(), handles)

    @app.get("/v1/models")
    async def models() -> Any:
        return {"object": "list", "data": [{"id": config.model_name, "object": "model", "created": 0,
                                            "owned_by": "structgen"}]}

    # -- simple endpoints ---------------------------------------------------------------------------

    async def generate_handles(req: GenerateRequest) -> tuple[list[int], list[EngineRequest]]:
        ids = await tokenize(req.text, special=True)
        handles = await submit(ids, req.response_format, n=1, max_tokens=req.max_new_tokens,
                               temperature=req.temperature, top_p=req.top_p, seed=req.seed, stop=req.stop or [])
        return ids, handles

    @app.post("/generate")
    async def generate(req: GenerateRequest, request: Request) -> Any:
        ids, handles = await generate_handles(req)
        [(text, ev)] = await collect(request, handles)
        return {"generated_text": text, "finish_reason": ev.finish_reason,
                "details": {"prompt_tokens": len(ids), "generated_tokens": ev.completion_tokens}}

    @app.post("/generate_stream")
    async def generate_stream(req: GenerateRequest) -> Any:
        ids, handles = await generate_handles(req)

        async def body() -> AsyncIterator[str]:
            text = []
            async for _, ev in merged(handles):
                if ev.error is not None:
                    yield _sse({"error": f"generation failed: {ev.error}", "error_type": "server_error"})
                    return
                text.append(ev.text)
                last = ev.finish_reason is not None
                yield _sse({"token": {"id": ev.token_id, "text": ev.text},
                            "generated_text": "".join(text) if last else None,
                            "finish_reason": ev.finish_reason,
                            "details": {"prompt_tokens": len(ids), "generated_tokens": ev.completion_tokens}
                            if last else None})

        return streaming(body(), handles)

    @app.get("/healthz")
    async def healthz() -> Any:
        return {"status": "ok", "model": config.model_name, "running": engine.num_running,
                "max_batch_seen": engine.max_rows_seen, "steps": engine.steps}

    return app


