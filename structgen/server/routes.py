"""The HTTP endpoints: OpenAI's ``/v1/chat/completions``, ``/v1/completions`` and ``/v1/models``,
a TGI-style ``/generate`` and ``/generate_stream``, and ``/healthz``.

A handler validates (pydantic, :mod:`.protocol`), tokenizes and compiles ``response_format``
(both in threads), submits to the :class:`~structgen.server.engine.Engine` and waits on its
events; the model never runs on the event loop. Streams are server-sent events; a client that
goes away, streaming or not, frees its batch slots. What the handlers share (engine, compiler,
tokenizer, limits) is one :class:`Serving`, built by :func:`~structgen.server.app.create_app`.
"""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from dataclasses import dataclass
from typing import Annotated, Any, AsyncIterator

from fastapi import APIRouter, Depends, Request
from fastapi.responses import StreamingResponse

from .engine import Engine, EngineRequest, Event, SamplingParams
from .protocol import ChatCompletionRequest, CompletionRequest, GenerateRequest, HTTPProblem, ResponseFormat
from .response_format import GuideCompiler

__all__ = ["Serving", "router"]

router = APIRouter()


@dataclass(frozen=True)
class Serving:
    """What the endpoints need: built once by ``create_app``, kept as ``app.state.serving``."""

    engine: Engine
    compiler: GuideCompiler
    tokenizer: Any
    model_name: str
    default_max_tokens: int
    max_prompt_tokens: int

    def check_model(self, name: str) -> None:
        """404 unless ``name`` is the model served here."""
        if name != self.model_name:
            raise HTTPProblem(404, f"model {name!r} is not served here; this server serves {self.model_name!r}",
                              type_="model_not_found", param="model")

    async def tokenize(self, text: str, *, special: bool) -> list[int]:
        """``text``'s token ids (in a thread); 413 over the prompt limit."""
        ids: list[int] = await asyncio.to_thread(
            lambda: self.tokenizer(text, add_special_tokens=special)["input_ids"])
        if len(ids) > self.max_prompt_tokens:
            raise HTTPProblem(413, f"the prompt is {len(ids)} tokens, over this server's limit of "
                                   f"{self.max_prompt_tokens}", param="messages")
        return ids

    async def chat_prompt(self, req: ChatCompletionRequest) -> list[int]:
        """The messages through the chat template (joined by newlines without one), tokenized."""
        messages = [{"role": "system" if m.role == "developer" else m.role, "content": m.text()}
                    for m in req.messages]
        if getattr(self.tokenizer, "chat_template", None):
            text = await asyncio.to_thread(lambda: self.tokenizer.apply_chat_template(
                messages, tokenize=False, add_generation_prompt=True))
            return await self.tokenize(text, special=False)
        return await self.tokenize("\n".join(m["content"] for m in messages), special=True)

    async def submit(self, prompt_ids: list[int], fmt: ResponseFormat | None, *, n: int, max_tokens: int | None,
                     temperature: float, top_p: float, seed: int | None, stop: list[str]) -> list[EngineRequest]:
        """Compile ``fmt`` and queue ``n`` generations (seeds ``seed``, ``seed + 1``, ...)."""
        guide = await self.compiler.compile(fmt)
        room = self.engine.max_context - len(prompt_ids)
        budget = min(max_tokens or self.default_max_tokens, room)
        return [self.engine.submit(prompt_ids, guide, SamplingParams(
            max_tokens=budget, temperature=temperature, top_p=top_p,
            seed=None if seed is None else seed + i, stop=tuple(stop))) for i in range(n)]


def _serving(request: Request) -> Serving:
    serving: Serving = request.app.state.serving
    return serving


Served = Annotated[Serving, Depends(_serving)]


# -- waiting on the engine ---------------------------------------------------------------------------


async def collect(request: Request, handles: list[EngineRequest]) -> list[tuple[str, Event]]:
    """Each request's whole text and last event; 499 if the client disconnects first, 500 if one fails."""

    async def one(h: EngineRequest) -> tuple[str, Event]:
        text, last = [], None
        async for last in h:
            text.append(last.text)
        assert last is not None, "the engine ends every request with an event"
        return "".join(text), last

    async def disconnected() -> None:
        while (await request.receive())["type"] != "http.disconnect":
            pass

    work: asyncio.Future[list[tuple[str, Event]]] = asyncio.ensure_future(asyncio.gather(*(one(h) for h in handles)))
    watch: asyncio.Future[Any] = asyncio.ensure_future(disconnected())
    try:
        await asyncio.wait((work, watch), return_when=asyncio.FIRST_COMPLETED)
        if not work.done():
            raise HTTPProblem(499, "client disconnected")
        results = work.result()
    finally:
        watch.cancel()
        work.cancel()
        for h in handles:
            h.cancel()
    for _, event in results:
        if event.error is not None:
            raise _failed(event.error)
    return results


async def merged(handles: list[EngineRequest]) -> AsyncIterator[tuple[int, Event]]:
    """The events of several requests as they come, each with its request's index."""
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


def _failed(error: BaseException) -> HTTPProblem:
    return HTTPProblem(500, f"generation failed: {error}", type_="server_error")


# -- server-sent events ------------------------------------------------------------------------------


def sse(data: Any) -> str:
    """One server-sent event carrying ``data`` as JSON."""
    return f"data: {json.dumps(data, ensure_ascii=False)}\n\n"


def streaming(body: AsyncIterator[str], handles: list[EngineRequest]) -> StreamingResponse:
    """An event stream of ``body`` that frees the requests' batch slots when it ends, however it ends."""

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
    """OpenAI's ``usage`` member."""
    return {"prompt_tokens": prompt_tokens, "completion_tokens": completion,
            "total_tokens": prompt_tokens + completion}


# -- OpenAI endpoints --------------------------------------------------------------------------------


@router.post("/v1/chat/completions")
async def chat_completions(req: ChatCompletionRequest, request: Request, serving: Served) -> Any:
    serving.check_model(req.model)
    prompt = await serving.chat_prompt(req)
    handles = await serving.submit(prompt, req.response_format, n=req.n,
                                   max_tokens=req.max_completion_tokens or req.max_tokens, temperature=req.temperature,
                                   top_p=req.top_p, seed=req.seed, stop=req.stop_list())
    head = {"id": f"chatcmpl-{uuid.uuid4().hex}", "created": int(time.time()), "model": serving.model_name}
    if not req.stream:
        results = await collect(request, handles)
        choices = [{"index": i, "message": {"role": "assistant", "content": text}, "logprobs": None,
                    "finish_reason": ev.finish_reason} for i, (text, ev) in enumerate(results)]
        total = sum(ev.completion_tokens for _, ev in results)
        return {**head, "object": "chat.completion", "choices": choices, "usage": usage(len(prompt), total)}
    include_usage = bool(req.stream_options and req.stream_options.include_usage)
    return streaming(_chat_chunks(head, handles, len(prompt), include_usage), handles)


async def _chat_chunks(head: dict[str, Any], handles: list[EngineRequest], prompt_tokens: int,
                       include_usage: bool) -> AsyncIterator[str]:
    def chunk(i: int, delta: dict[str, Any], finish: str | None = None) -> str:
        return sse({**head, "object": "chat.completion.chunk", "choices": [
            {"index": i, "delta": delta, "logprobs": None, "finish_reason": finish}]})

    for i in range(len(handles)):
        yield chunk(i, {"role": "assistant", "content": ""})
    total = 0
    async for i, ev in merged(handles):
        if ev.error is not None:
            yield sse(_failed(ev.error).body)
            return
        if ev.text:
            yield chunk(i, {"content": ev.text})
        if ev.finish_reason is not None:
            total += ev.completion_tokens
            yield chunk(i, {}, ev.finish_reason)
    if include_usage:
        yield sse({**head, "object": "chat.completion.chunk", "choices": [], "usage": usage(prompt_tokens, total)})
    yield "data: [DONE]\n\n"


@router.post("/v1/completions")
async def completions(req: CompletionRequest, request: Request, serving: Served) -> Any:
    serving.check_model(req.model)
    prompts = [req.prompt] if isinstance(req.prompt, str) else req.prompt
    if not prompts:
        raise HTTPProblem(400, "prompt: give at least one prompt", param="prompt")
    if req.stream and len(prompts) > 1:
        raise HTTPProblem(400, "stream with several prompts is not supported; send one prompt", param="prompt")
    encoded = [await serving.tokenize(p, special=True) for p in prompts]
    handles: list[EngineRequest] = []
    for ids in encoded:
        handles += await serving.submit(ids, req.response_format, n=req.n, max_tokens=req.max_tokens,
                                        temperature=req.temperature, top_p=req.top_p, seed=req.seed,
                                        stop=req.stop_list())
    head = {"id": f"cmpl-{uuid.uuid4().hex}", "created": int(time.time()), "model": serving.model_name}
    prompt_tokens = sum(len(ids) for ids in encoded)
    if not req.stream:
        results = await collect(request, handles)
        choices = [{"index": i, "text": (prompts[i // req.n] if req.echo else "") + text, "logprobs": None,
                    "finish_reason": ev.finish_reason} for i, (text, ev) in enumerate(results)]
        total = sum(ev.completion_tokens for _, ev in results)
        return {**head, "object": "text_completion", "choices": choices, "usage": usage(prompt_tokens, total)}
    include_usage = bool(req.stream_options and req.stream_options.include_usage)
    return streaming(_completion_chunks(head, handles, prompt_tokens, include_usage), handles)


async def _completion_chunks(head: dict[str, Any], handles: list[EngineRequest], prompt_tokens: int,
                             include_usage: bool) -> AsyncIterator[str]:
    def chunk(i: int, text: str, finish: str | None = None) -> str:
        return sse({**head, "object": "text_completion", "choices": [
            {"index": i, "text": text, "logprobs": None, "finish_reason": finish}]})

    total = 0
    async for i, ev in merged(handles):
        if ev.error is not None:
            yield sse(_failed(ev.error).body)
            return
        if ev.text or ev.finish_reason is not None:
            yield chunk(i, ev.text, ev.finish_reason)
        if ev.finish_reason is not None:
            total += ev.completion_tokens
    if include_usage:
        yield sse({**head, "object": "text_completion", "choices": [], "usage": usage(prompt_tokens, total)})
    yield "data: [DONE]\n\n"


@router.get("/v1/models")
async def models(serving: Served) -> Any:
    return {"object": "list", "data": [{"id": serving.model_name, "object": "model", "created": 0,
                                        "owned_by": "structgen"}]}


# -- simple endpoints --------------------------------------------------------------------------------


async def _generate_handles(serving: Serving, req: GenerateRequest) -> tuple[list[int], list[EngineRequest]]:
    ids = await serving.tokenize(req.text, special=True)
    handles = await serving.submit(ids, req.response_format, n=1, max_tokens=req.max_new_tokens,
                                   temperature=req.temperature, top_p=req.top_p, seed=req.seed, stop=req.stop or [])
    return ids, handles


@router.post("/generate")
async def generate(req: GenerateRequest, request: Request, serving: Served) -> Any:
    ids, handles = await _generate_handles(serving, req)
    [(text, ev)] = await collect(request, handles)
    return {"generated_text": text, "finish_reason": ev.finish_reason,
            "details": {"prompt_tokens": len(ids), "generated_tokens": ev.completion_tokens}}


@router.post("/generate_stream")
async def generate_stream(req: GenerateRequest, serving: Served) -> Any:
    ids, handles = await _generate_handles(serving, req)
    return streaming(_generate_events(handles, len(ids)), handles)


async def _generate_events(handles: list[EngineRequest], prompt_tokens: int) -> AsyncIterator[str]:
    text = []
    async for _, ev in merged(handles):
        if ev.error is not None:  # TGI's error event, not OpenAI's body
            yield sse({"error": f"generation failed: {ev.error}", "error_type": "server_error"})
            return
        text.append(ev.text)
        last = ev.finish_reason is not None
        yield sse({"token": {"id": ev.token_id, "text": ev.text},
                   "generated_text": "".join(text) if last else None,
                   "finish_reason": ev.finish_reason,
                   "details": {"prompt_tokens": prompt_tokens, "generated_tokens": ev.completion_tokens}
                   if last else None})


@router.get("/healthz")
async def healthz(serving: Served) -> Any:
    engine = serving.engine
    return {"status": "ok", "model": serving.model_name, "running": engine.num_running,
            "max_batch_seen": engine.max_rows_seen, "steps": engine.steps}
