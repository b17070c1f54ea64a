"""The ASGI app: the server's configuration, the engine's lifespan, and every error as one body.

:func:`create_app` loads what a model needs (its vocabulary, prepared before the first request),
starts the :class:`~structgen.server.engine.Engine` with the app and stops it after, refuses
bodies over the size limit, answers every error with OpenAI's error body
(:attr:`~structgen.server.protocol.HTTPProblem.body`), and serves the endpoints of
:mod:`structgen.server.routes`.

Example:
    >>> app = create_app(model, tokenizer)                       # doctest: +SKIP
    >>> uvicorn.run(app, host="127.0.0.1", port=8000)            # doctest: +SKIP
"""

from __future__ import annotations

from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any, AsyncIterator, Awaitable, Callable

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse

from ..errors import ConstraintError, PayloadTooLarge
from ..hf.generation import model_vocabulary
from ..vocab.index import prepare_vocabulary
from .engine import Engine
from .protocol import HTTPProblem
from .response_format import GuideCompiler
from .routes import Serving, router

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


def create_app(model: Any, tokenizer: Any, config: ServerConfig | None = None) -> FastAPI:
    """A FastAPI app serving ``model`` with continuous batching; the engine starts with the app."""
    config = config or ServerConfig()
    vocab = model_vocabulary(model, tokenizer)
    prepare_vocabulary(vocab)  # the token trie and slices, before the first request
    engine = Engine(model, vocab, max_batch_size=config.max_batch_size, batch_timeout_ms=config.batch_timeout_ms,
                    budget_aware=config.budget_aware, tokenizer=tokenizer, fast_forward=config.fast_forward)
    compiler = GuideCompiler(vocab, max_constraint_bytes=config.max_constraint_bytes)

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
    app.state.serving = Serving(engine=engine, compiler=compiler, tokenizer=tokenizer, model_name=config.model_name,
                                default_max_tokens=config.default_max_tokens,
                                max_prompt_tokens=min(config.max_prompt_tokens, engine.max_context - 1))
    app.exception_handler(RequestValidationError)(_invalid_request)
    app.exception_handler(HTTPProblem)(_problem)
    app.exception_handler(ConstraintError)(_bad_constraint)
    app.exception_handler(PayloadTooLarge)(_too_large)
    app.middleware("http")(_limit_body)
    app.include_router(router)
    return app


# -- errors: each one answered with HTTPProblem's body ------------------------------------------------


def _answer(problem: HTTPProblem) -> JSONResponse:
    return JSONResponse(problem.body, status_code=problem.status)


async def _invalid_request(_: Request, exc: RequestValidationError) -> JSONResponse:
    """400 naming each problem: malformed JSON, an unknown field, a value out of range."""
    parts = []
    for err in exc.errors():
        loc = [str(x) for x in err.get("loc", ()) if x != "body"]
        if err.get("type") == "json_invalid":
            parts.append(f"malformed JSON body: {err.get('ctx', {}).get('error', err.get('msg'))}")
        elif err.get("type") == "extra_forbidden":
            parts.append(f"unknown field {'.'.join(loc)!r}")
        else:
            parts.append(f"{'.'.join(loc) or 'body'}: {err.get('msg')}")
    return _answer(HTTPProblem(400, "; ".join(parts) or "invalid request"))


async def _problem(_: Request, exc: HTTPProblem) -> JSONResponse:
    return _answer(exc)


async def _bad_constraint(_: Request, exc: ConstraintError) -> JSONResponse:
    return _answer(HTTPProblem(400, f"response_format: {exc}", param="response_format"))


async def _too_large(_: Request, exc: PayloadTooLarge) -> JSONResponse:
    return _answer(HTTPProblem(413, str(exc), param="response_format"))


async def _limit_body(request: Request, call_next: Callable[[Request], Awaitable[Any]]) -> Any:
    """413 before reading a body whose declared length is over ``ServerConfig.max_body_bytes``."""
    limit = request.app.state.config.max_body_bytes
    length = request.headers.get("content-length")
    if length is not None and length.isdigit() and int(length) > limit:
        return _answer(HTTPProblem(413, f"request body of {length} bytes is over this server's limit of {limit}"))
    return await call_next(request)
