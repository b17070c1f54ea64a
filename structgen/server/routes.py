"""The HTTP endpoints: OpenAI's ``/v1/chat/completions``, ``/v1/completions`` and ``/v1/models``,
a TGI-style ``/generate`` and ``/generate_stream``, ``/healthz`` and ``/metrics``.

A handler validates (pydantic, :mod:`.protocol`), tokenizes and compiles ``response_format``
(both in threads), submits to the :class:`~structgen.server.engine.Engine` and waits on its
events; the model never runs on the event loop. Streams are server-sent events; a client that
goes away, streaming or not, frees its batch slots. What the handlers share (engine, compiler,
tokenizer, limits) is one :class:`Serving`, built by :func:`~structgen.server.app.create_app`.

A response whose constraint left something unenforced (a ``format`` read as an annotation)
carries a ``warnings`` list of sentences: at the top of the body, or in the first chunk of a
stream; it is absent when there is nothing to say.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import time
import uuid
from dataclasses import dataclass
from typing import Annotated, Any, AsyncIterator, Union

from fastapi import APIRouter, Depends, Request
from fastapi.responses import Response, StreamingResponse

from ..compose.tools import template_renders_tools, tool_messages
from ..errors import CompileBudgetExceeded, ConstraintError, PayloadTooLarge
from ..hf.steps import LogitAdjustments
from .calls import custom_tools_prompt
from .chat import ChatDeltas, chat_constraint, chat_messages, custom_tools, finish_reason, function_tools, message
from .engine import Engine, EngineRequest, Event, SamplingParams, ShuttingDown
from .logprobs import TokenNames, chat_logprobs, completion_logprobs
from .metrics import Metrics
from .protocol import ChatCompletionRequest, CompletionRequest, CustomToolSpec, GenerateRequest, HTTPProblem
from .response_format import Answer, ChatConstraint, Compiled, GuideCompiler, ToolsProblem
from .vllm_fields import requested_answer

__all__ = ["Served", "Serving", "collect", "disconnected", "failed", "merged", "router", "sse", "streaming"]

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
    #: every name the model answers to (``--served-model-name``); ``model_name`` is the first
    model_names: tuple[str, ...] = ()
    metrics: Metrics | None = None

    @property
    def names(self) -> TokenNames:
        """Token texts for logprobs."""
        return TokenNames(self.engine.vocabulary, self.tokenizer)

    def check_model(self, name: str) -> None:
        """404 unless ``name`` is a name of the model served here."""
        names = self.model_names or (self.model_name,)
        if name not in names:
            served = " or ".join(repr(n) for n in names)
            raise HTTPProblem(404, f"model {name!r} is not served here; this server serves {served}",
                              code="model_not_found", param="model")

    def check(self, req: Union[ChatCompletionRequest, CompletionRequest]) -> None:
        """404 for another model, 400 naming a field this server cannot honour."""
        self.check_model(req.model)
        refused = req.unsupported()
        if refused is not None:
            field, why = refused
            raise HTTPProblem(400, f"{field} is not supported by this server: {why}", param=field,
                              code="unsupported_parameter")

    def params(self, req: Union[ChatCompletionRequest, CompletionRequest, GenerateRequest], *,
               logprobs: int | None = None) -> SamplingParams:
        """The request's decoding settings (``max_tokens`` is set per submission)."""
        size = self.engine.vocabulary.size
        bias = req.bias() if not isinstance(req, GenerateRequest) else {}
        for token in bias:
            if token >= size:
                raise HTTPProblem(400, f"logit_bias: token id {token} is not in this model's vocabulary of "
                                       f"{size} tokens", param="logit_bias")
        adjustments = LogitAdjustments.from_bias(
            bias, frequency_penalty=req.frequency_penalty, repetition_penalty=req.repetition_penalty,
            presence_penalty=getattr(req, "presence_penalty", 0.0))
        stop = tuple(req.stop_list()) if not isinstance(req, GenerateRequest) else tuple(req.stop or ())
        return SamplingParams(max_tokens=1, temperature=req.temperature, top_p=req.top_p, seed=req.seed, stop=stop,
                              adjustments=adjustments, logprobs=logprobs)

    async def tokenize(self, text: str, *, special: bool, field: str = "messages") -> list[int]:
        """``text``'s token ids (in a thread); 413 over the prompt limit, 400 for no tokens at
        all (a model needs one to start from), naming ``field``."""
        ids: list[int] = await asyncio.to_thread(
            lambda: self.tokenizer(text, add_special_tokens=special)["input_ids"])
        if len(ids) > self.max_prompt_tokens:
            raise HTTPProblem(413, f"the prompt is {len(ids)} tokens, over this server's limit of "
                                   f"{self.max_prompt_tokens}", param=field)
        if not ids:
            raise HTTPProblem(400, f"{field}: the prompt is empty (no tokens); give the model some text to start "
                                   "from", param=field)
        return ids

    async def chat_prompt(self, req: ChatCompletionRequest, chat: ChatConstraint | None = None) -> list[int]:
        """The messages through the chat template (joined by newlines without one), tokenized.
        Function tools go through the template when it renders them, else into the system
        message in the default format (:func:`structgen.compose.tools.tool_messages`); custom
        tools (``chat``'s) into the system message (:func:`~.calls.custom_tools_prompt`)."""
        custom = chat.custom_tools if chat is not None and chat.tool_choice != "none" else ()
        note = custom_tools_prompt(custom) if custom else ""
        return await self.messages_prompt(chat_messages(req), function_tools(req), note=note)

    async def messages_prompt(self, chat: list[dict[str, Any]], tools: list[dict[str, Any]], *,
                              note: str = "", field: str = "messages") -> list[int]:
        """OpenAI chat messages (dicts) and function tools as the prompt, tokenized; ``note`` is
        added to the system message (one is made when there is none). No messages, or messages
        the chat template refuses, are a 400 naming ``field``."""
        if not chat:
            raise HTTPProblem(400, f"{field}: give at least one message", param=field)
        template = getattr(self.tokenizer, "chat_template", None)
        native = template_renders_tools(template)
        messages = tool_messages(chat, tools, native=native)
        if note:
            if messages and messages[0]["role"] == "system":
                first = messages[0]["content"]
                messages[0] = {**messages[0], "content": f"{first}\n\n{note}" if first else note}
            else:
                messages.insert(0, {"role": "system", "content": note})
        if template:
            extra = {"tools": tools} if native and tools else {}
            try:
                text = await asyncio.to_thread(lambda: self.tokenizer.apply_chat_template(
                    messages, tokenize=False, add_generation_prompt=True, **extra))
            except Exception as e:  # noqa: BLE001 - a template's own refusal (jinja's raise_exception, ...)
                raise HTTPProblem(400, f"{field}: the model's chat template cannot render these messages: {e}",
                                  param=field) from e
            return await self.tokenize(text, special=False, field=field)
        return await self.tokenize("\n".join(m["content"] for m in messages), special=True, field=field)

    def budget(self, prompt_ids: list[int], max_tokens: int | None, *, field: str = "max_tokens") -> int:
        """The tokens a request may generate: ``max_tokens``, or the server's default within the
        context; a ``max_tokens`` that does not fit after the prompt is a 400 with the numbers."""
        context, prompt = self.engine.max_context, len(prompt_ids)
        if max_tokens is not None and prompt + max_tokens > context:
            raise HTTPProblem(400, f"This model's maximum context length is {context} tokens. However, you requested "
                                   f"{prompt + max_tokens} tokens ({prompt} in the prompt, {max_tokens} in the "
                                   f"completion). Please reduce the length of the prompt or {field}.",
                              param=field, code="context_length_exceeded")
        return max_tokens if max_tokens is not None else min(self.default_max_tokens, context - prompt)

    async def submit(self, prompt_ids: list[int], fmt: Answer, params: SamplingParams, *, n: int,
                     max_tokens: int | None, field: str = "max_tokens", chat: ChatConstraint | None = None,
                     request: Request | None = None,
                     constraint: str = "response_format") -> tuple[list[EngineRequest], Compiled]:
        """Compile ``fmt`` (with ``chat``'s tools and thinking) and queue ``n`` generations
        (seeds ``seed``, ``seed + 1``, ...). A tool whose schema fails is a 400 naming it; a
        constraint that fails, a 400 naming ``constraint`` (the field it came from).

        With ``request``, a client that goes away while its constraint compiles is answered 499
        and nothing is queued: a compile not started yet is dropped, one running finishes in its
        thread (and is cached for the next request that sends the same constraint)."""
        budget = self.budget(prompt_ids, max_tokens, field=field)
        compiling = asyncio.ensure_future(self.compiler.compile_chat(fmt, chat or ChatConstraint()))
        if request is not None:
            watch = asyncio.ensure_future(disconnected(request))
            try:
                await asyncio.wait((compiling, watch), return_when=asyncio.FIRST_COMPLETED)
            finally:
                watch.cancel()
            if not compiling.done():
                compiling.cancel()
                self.compiler.abandoned += 1
                raise HTTPProblem(499, "client disconnected while its constraint compiled")
        try:
            compiled = await compiling
        except ToolsProblem as e:
            raise HTTPProblem(400, f"tools: {e}", param="tools") from e
        except (ConstraintError, CompileBudgetExceeded) as e:  # (a grammar's rules over the term budget, ...)
            raise HTTPProblem(400, f"{constraint}: {e}", param=constraint) from e
        except PayloadTooLarge as e:
            raise HTTPProblem(413, str(e), param=constraint, code="payload_too_large") from e
        params = dataclasses.replace(params, text_budget=compiled.text_budget)
        handles = [self.engine.submit(prompt_ids, compiled.guide, dataclasses.replace(
            params, max_tokens=budget, seed=None if params.seed is None else params.seed + i)) for i in range(n)]
        return handles, compiled


def _serving(request: Request) -> Serving:
    serving: Serving = request.app.state.serving
    return serving


Served = Annotated[Serving, Depends(_serving)]


# -- waiting on the engine ---------------------------------------------------------------------------


async def collect(request: Request, handles: list[EngineRequest]) -> list[tuple[str, Event, list[Any]]]:
    """Each request's whole text, last event and logprob entries; 499 if the client disconnects
    first, 500 if one fails."""

    async def one(h: EngineRequest) -> tuple[str, Event, list[Any]]:
        text: list[str] = []
        entries: list[Any] = []
        last = None
        async for last in h:
            text.append(last.text)
            entries.extend(last.logprobs)
        assert last is not None, "the engine ends every request with an event"
        return "".join(text), last, entries

    work: asyncio.Future[list[tuple[str, Event, list[Any]]]] = asyncio.ensure_future(asyncio.gather(*(one(h) for h in handles)))
    watch: asyncio.Future[Any] = asyncio.ensure_future(disconnected(request))
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
    for _, event, _ in results:
        if event.error is not None:
            raise failed(event.error)
    return results


async def disconnected(request: Request) -> None:
    """Returns when the client of ``request`` goes away (its body already read)."""
    while (await request.receive())["type"] != "http.disconnect":
        pass


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


def failed(error: BaseException) -> HTTPProblem:
    """The error a request that failed in the engine is answered with (503 at shutdown)."""
    if isinstance(error, ShuttingDown):
        return HTTPProblem(503, str(error), type_="server_error", code="server_shutting_down")
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


def _with_warnings(body: dict[str, Any], compiled: Compiled) -> dict[str, Any]:
    return {**body, "warnings": list(compiled.warnings)} if compiled.warnings else body


@router.post("/v1/chat/completions")
async def chat_completions(req: ChatCompletionRequest, request: Request, serving: Served) -> Any:
    serving.check(req)
    params = serving.params(req, logprobs=req.logprobs_top())
    custom = await asyncio.to_thread(custom_tools, req, serving.compiler.max_constraint_bytes) if any(
        isinstance(t, CustomToolSpec) for t in req.tools or ()) else ()
    chat = chat_constraint(req, custom)
    constraint, answer = requested_answer(req)
    prompt = await serving.chat_prompt(req, chat)
    field = "max_completion_tokens" if req.max_completion_tokens else "max_tokens"
    handles, compiled = await serving.submit(prompt, answer, params, n=req.n, field=field,
                                             max_tokens=req.max_completion_tokens or req.max_tokens, chat=chat,
                                             request=request, constraint=constraint)
    head = {"id": f"chatcmpl-{uuid.uuid4().hex}", "created": int(time.time()), "model": serving.model_name}
    names = serving.names if params.logprobs is not None else None
    if not req.stream:
        results = await collect(request, handles)
        messages = [message(text, compiled) for text, _, _ in results]
        choices = [{"index": i, "message": msg, "logprobs": chat_logprobs(entries, names) if names else None,
                    "finish_reason": finish_reason(ev.finish_reason, msg)}
                   for i, ((_, ev, entries), msg) in enumerate(zip(results, messages))]
        total = sum(ev.completion_tokens for _, ev, _ in results)
        return _with_warnings({**head, "object": "chat.completion", "choices": choices,
                               "usage": usage(len(prompt), total)}, compiled)
    include_usage = bool(req.stream_options and req.stream_options.include_usage)
    return streaming(_chat_chunks(head, handles, len(prompt), include_usage, compiled, names), handles)


async def _chat_chunks(head: dict[str, Any], handles: list[EngineRequest], prompt_tokens: int, include_usage: bool,
                       compiled: Compiled, names: TokenNames | None) -> AsyncIterator[str]:
    def chunk(i: int, delta: dict[str, Any], finish: str | None = None, ev: Event | None = None) -> dict[str, Any]:
        logprobs = chat_logprobs(ev.logprobs, names) if names is not None and ev is not None else None
        return {**head, "object": "chat.completion.chunk", "choices": [
            {"index": i, "delta": delta, "logprobs": logprobs, "finish_reason": finish}]}

    for i in range(len(handles)):
        yield sse(_with_warnings(chunk(i, {"role": "assistant", "content": ""}), compiled))
    total = 0
    readers = [ChatDeltas(compiled) for _ in handles]
    async for i, ev in merged(handles):
        if ev.error is not None:
            yield sse(failed(ev.error).body)
            return
        deltas = readers[i].feed(ev.text, final=ev.finish_reason is not None)
        for k, delta in enumerate(deltas):  # (the event's logprobs ride on its first delta)
            yield sse(chunk(i, delta, ev=ev if k == 0 else None))
        if not deltas and ev.text and names is not None:  # (text held back: its logprobs still go now)
            yield sse(chunk(i, {}, ev=ev))
        if ev.finish_reason is not None:
            total += ev.completion_tokens
            yield sse(chunk(i, {}, finish_reason(ev.finish_reason, readers[i])))
    if include_usage:
        yield sse({**head, "object": "chat.completion.chunk", "choices": [], "usage": usage(prompt_tokens, total)})
    yield "data: [DONE]\n\n"


@router.post("/v1/completions")
async def completions(req: CompletionRequest, request: Request, serving: Served) -> Any:
    serving.check(req)
    params = serving.params(req, logprobs=req.logprobs_top())
    constraint, answer = requested_answer(req)
    prompts = [req.prompt] if isinstance(req.prompt, str) else req.prompt
    if not prompts:
        raise HTTPProblem(400, "prompt: give at least one prompt", param="prompt")
    if req.stream and len(prompts) > 1:
        raise HTTPProblem(400, "stream with several prompts is not supported; send one prompt", param="prompt")
    encoded = [await serving.tokenize(p, special=True, field="prompt") for p in prompts]
    for ids in encoded:  # every prompt's budget is checked before any is queued
        serving.budget(ids, req.max_tokens)
    handles: list[EngineRequest] = []
    compiled = Compiled(None)
    for ids in encoded:
        more, compiled = await serving.submit(ids, answer, params, n=req.n, max_tokens=req.max_tokens,
                                              request=request, constraint=constraint)
        handles += more
    head = {"id": f"cmpl-{uuid.uuid4().hex}", "created": int(time.time()), "model": serving.model_name}
    prompt_tokens = sum(len(ids) for ids in encoded)
    names = serving.names if params.logprobs is not None else None
    if not req.stream:
        results = await collect(request, handles)
        choices = []
        for i, (text, ev, entries) in enumerate(results):
            echo = prompts[i // req.n] if req.echo else ""
            choices.append({"index": i, "text": echo + text, "finish_reason": ev.finish_reason,
                            "logprobs": completion_logprobs(entries, names, len(echo)) if names else None})
        total = sum(ev.completion_tokens for _, ev, _ in results)
        return _with_warnings({**head, "object": "text_completion", "choices": choices,
                               "usage": usage(prompt_tokens, total)}, compiled)
    include_usage = bool(req.stream_options and req.stream_options.include_usage)
    return streaming(_completion_chunks(head, handles, prompt_tokens, include_usage, compiled, names), handles)


async def _completion_chunks(head: dict[str, Any], handles: list[EngineRequest], prompt_tokens: int,
                             include_usage: bool, compiled: Compiled, names: TokenNames | None) -> AsyncIterator[str]:
    def chunk(i: int, text: str, finish: str | None = None, ev: Event | None = None) -> dict[str, Any]:
        logprobs = completion_logprobs(ev.logprobs, names) if names is not None and ev is not None else None
        return {**head, "object": "text_completion", "choices": [
            {"index": i, "text": text, "logprobs": logprobs, "finish_reason": finish}]}

    if compiled.warnings:
        yield sse(_with_warnings(chunk(0, ""), compiled))
    total = 0
    async for i, ev in merged(handles):
        if ev.error is not None:
            yield sse(failed(ev.error).body)
            return
        if ev.text or ev.finish_reason is not None:
            yield sse(chunk(i, ev.text, ev.finish_reason, ev))
        if ev.finish_reason is not None:
            total += ev.completion_tokens
    if include_usage:
        yield sse({**head, "object": "text_completion", "choices": [], "usage": usage(prompt_tokens, total)})
    yield "data: [DONE]\n\n"


@router.get("/v1/models")
async def models(serving: Served) -> Any:
    return {"object": "list", "data": [{"id": name, "object": "model", "created": 0, "owned_by": "structgen",
                                        "max_model_len": serving.engine.max_context}
                                       for name in serving.model_names or (serving.model_name,)]}


# -- simple endpoints --------------------------------------------------------------------------------


async def _generate_handles(serving: Serving, req: GenerateRequest,
                            request: Request) -> tuple[list[int], list[EngineRequest], Compiled]:
    params = serving.params(req)
    ids = await serving.tokenize(req.text, special=True, field="text")
    handles, compiled = await serving.submit(ids, req.response_format, params, n=1, max_tokens=req.max_new_tokens,
                                             field="max_new_tokens", request=request)
    return ids, handles, compiled


@router.post("/generate")
async def generate(req: GenerateRequest, request: Request, serving: Served) -> Any:
    ids, handles, compiled = await _generate_handles(serving, req, request)
    [(text, ev, _)] = await collect(request, handles)
    return _with_warnings({"generated_text": text, "finish_reason": ev.finish_reason,
                           "details": {"prompt_tokens": len(ids), "generated_tokens": ev.completion_tokens}}, compiled)


@router.post("/generate_stream")
async def generate_stream(req: GenerateRequest, request: Request, serving: Served) -> Any:
    ids, handles, compiled = await _generate_handles(serving, req, request)
    return streaming(_generate_events(handles, len(ids), compiled), handles)


async def _generate_events(handles: list[EngineRequest], prompt_tokens: int, compiled: Compiled) -> AsyncIterator[str]:
    text = []
    first = True
    async for _, ev in merged(handles):
        if ev.error is not None:  # TGI's error event, not OpenAI's body
            yield sse({"error": f"generation failed: {ev.error}", "error_type": "server_error"})
            return
        text.append(ev.text)
        last = ev.finish_reason is not None
        event = {"token": {"id": ev.token_id, "text": ev.text},
                 "generated_text": "".join(text) if last else None,
                 "finish_reason": ev.finish_reason,
                 "details": {"prompt_tokens": prompt_tokens, "generated_tokens": ev.completion_tokens}
                 if last else None}
        yield sse(_with_warnings(event, compiled) if first else event)
        first = False


@router.get("/healthz")
async def healthz(serving: Served) -> Any:
    engine = serving.engine
    return {"status": "ok", "model": serving.model_name, "running": engine.num_running,
            "waiting": engine.num_waiting, "max_batch_seen": engine.max_rows_seen, "steps": engine.steps}


@router.get("/metrics")
async def metrics(serving: Served) -> Any:
    """Prometheus' text format (see :mod:`.metrics`)."""
    if serving.metrics is None:
        raise HTTPProblem(404, "metrics are off on this server")
    body, content_type = serving.metrics.render()
    return Response(body, media_type=content_type)
