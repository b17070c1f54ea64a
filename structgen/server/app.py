"""The ASGI app: the server's configuration, the engine's lifespan, and every error as one body.

:func:`create_app` loads what a model needs (its vocabulary, prepared before the first request),
starts the :class:`~structgen.server.engine.Engine` with the app and stops it after, refuses
bodies over the size limit, checks the API key (``ServerConfig.api_key``: a Bearer token on
``/v1/*`` and ``/generate*``; ``/healthz`` and ``/metrics`` stay open, as in vLLM), counts every
answer for ``/metrics`` (:mod:`structgen.server.metrics`), answers every error with OpenAI's
error body (:attr:`~structgen.server.protocol.HTTPProblem.body`), counts the requests in flight
for a graceful shutdown (:mod:`structgen.server.drain`), and serves the endpoints of
:mod:`structgen.server.routes` and :mod:`structgen.server.responses`.

Example:
    >>> app = create_app(model, tokenizer)                       # doctest: +SKIP
    >>> uvicorn.run(app, host="127.0.0.1", port=8000)            # doctest: +SKIP
"""

from __future__ import annotations

import gc
import secrets
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any, AsyncIterator, Awaitable, Callable

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse

from ..compiler import warm_up
from ..errors import ConstraintError, PayloadTooLarge
from ..hf.generation import model_vocabulary
from ..vocab.index import prepare_vocabulary
from .drain import Drain, DrainMiddleware
from .engine import Engine
from .metrics import Metrics
from .protocol import HTTPProblem
from .response_format import GuideCompiler
from .responses import router as responses_router
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
    #: When set, ``/v1/*`` and ``/generate*`` need ``Authorization: Bearer <api_key>`` (401 otherwise).
    api_key: str | None = None
    #: More names the model answers to besides ``model_name`` (``--served-model-name A B``: A, then B).
    model_aliases: tuple[str, ...] = ()


#: The collector's youngest-generation threshold while a server runs (Python's default is 700).
GC_YOUNG_THRESHOLD = 10_000


def create_app(model: Any, tokenizer: Any, config: ServerConfig | None = None) -> FastAPI:
    """A FastAPI app serving ``model`` with continuous batching; the engine starts with the app."""
    config = config or ServerConfig()
    vocab = model_vocabulary(model, tokenizer)
    prepare_vocabulary(vocab)  # the token trie and slices, before the first request
    warm_up(vocab)  # (what a first compile loads and builds once per process)
    engine = Engine(model, vocab, max_batch_size=config.max_batch_size, batch_timeout_ms=config.batch_timeout_ms,
                    budget_aware=config.budget_aware, tokenizer=tokenizer, fast_forward=config.fast_forward)
    compiler = GuideCompiler(vocab, max_constraint_bytes=config.max_constraint_bytes)
    metrics = Metrics(engine, compiler)

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        # What start-up made (the model, the tokenizer, the vocabulary's index) lives as long as the
        # server: out of the collector's full passes, which would otherwise walk it all in the middle
        # of some decoding step (benchmarks/gc_pause.py --freeze).
        # And the youngest generation is collected every GC_YOUNG_THRESHOLD allocations, not 700:
        # compiles and cold masks allocate terms by the hundred thousand, and the collector's
        # passes over them were a tenth of their CPU (a replay of issue 21's sample: masks 1.84 ->
        # 1.71 s, compiles 1.96 -> 1.88 s at 10,000).
        gc.collect()
        gc.freeze()
        thresholds = gc.get_threshold()
        gc.set_threshold(max(thresholds[0], GC_YOUNG_THRESHOLD), *thresholds[1:])
        engine.start()
        try:
            yield
        finally:
            engine.stop()
            compiler.close()
            gc.set_threshold(*thresholds)
            gc.unfreeze()

    app = FastAPI(title="structgen", lifespan=lifespan)
    app.state.engine = engine
    app.state.config = config
    app.state.metrics = metrics
    names = tuple(dict.fromkeys((config.model_name, *config.model_aliases)))
    app.state.serving = Serving(engine=engine, compiler=compiler, tokenizer=tokenizer, model_name=config.model_name,
                                default_max_tokens=config.default_max_tokens,
                                max_prompt_tokens=min(config.max_prompt_tokens, engine.max_context - 1),
                                model_names=names, metrics=metrics)
    app.exception_handler(RequestValidationError)(_invalid_request)
    app.exception_handler(HTTPProblem)(_problem)
    app.exception_handler(ConstraintError)(_bad_constraint)
    app.exception_handler(PayloadTooLarge)(_too_large)
    app.exception_handler(Exception)(_bug)
    # (the last added runs first: counting sees every answer, the key is checked before the body)
    app.middleware("http")(_limit_body)
    app.middleware("http")(_check_key)
    app.middleware("http")(_count)
    # (outermost: a request counts as in flight until its last byte; while draining, 503 first)
    app.state.drain = Drain()
    app.add_middleware(DrainMiddleware, drain=app.state.drain)
    app.include_router(router)
    app.include_router(responses_router)
    return app


# -- errors: each one answered with HTTPProblem's body ------------------------------------------------


def _answer(problem: HTTPProblem) -> JSONResponse:
    return JSONResponse(problem.body, status_code=problem.status)


#: Names pydantic puts in an error's location for the member of a union that failed, not a field.
_UNION_MEMBERS = frozenset({"str", "int", "float", "bool", "list", "dict", "none", "literal", "is-instance"})


def _location(loc: Any) -> str:
    """An error's location as the field's path, ``input[0].content`` (union members left out)."""
    out = ""
    for x in loc:
        if x == "body" and not out:
            continue
        if isinstance(x, int):
            out += f"[{x}]"
        elif isinstance(x, str) and (x.startswith("type=") or "[" in x or x.split("-")[0] in _UNION_MEMBERS):
            continue
        else:
            out += f".{x}" if out else str(x)
    return out


def _specific(errors: list[dict[str, Any]]) -> list[tuple[str, dict[str, Any]]]:
    """The errors worth telling: where a union's members failed at several depths, the deepest
    (a list whose item has an unknown field, not "input: not a string"); each location once."""
    located = [(_location(e.get("loc", ())), e) for e in errors]
    deeper = [loc for loc, _ in located]
    seen: set[tuple[str, str]] = set()
    out = []
    for loc, err in located:
        if any(d != loc and (d.startswith(loc + ".") or d.startswith(loc + "[")) for d in deeper):
            continue
        key = (loc, str(err.get("type")))
        if key not in seen:
            seen.add(key)
            out.append((loc, err))
    return out


async def _invalid_request(_: Request, exc: RequestValidationError) -> JSONResponse:
    """400 naming each problem: malformed JSON, an unknown field, a value out of range."""
    parts, params, code = [], [], None
    wrong: dict[str, list[str]] = {}  # (a union's members each say what they wanted: one sentence)
    for loc, err in _specific(list(exc.errors())):
        if err.get("type") == "json_invalid":  # (its location is a character position, not a field)
            at = next((x for x in err.get("loc", ()) if isinstance(x, int)), None)
            where = f" at character {at}" if at is not None else ""
            parts.append(f"malformed JSON body{where}: {err.get('ctx', {}).get('error', err.get('msg'))}")
            continue
        params.append(loc)
        if err.get("type") == "extra_forbidden":
            parts.append(f"unknown field {loc!r}")
            code = "unknown_parameter"
        else:
            if loc not in wrong:
                wrong[loc] = []
                parts.append(loc)
            wrong[loc].append(str(err.get("msg")))
    parts = [f"{p or 'body'}: {' or '.join(wrong[p])}" if p in wrong else p for p in parts]
    named = [x for x in dict.fromkeys(params) if x]
    param = named[0] if named else None  # (OpenAI names one field: the first)
    return _answer(HTTPProblem(400, "; ".join(parts) or "invalid request", param=param, code=code))


async def _problem(_: Request, exc: HTTPProblem) -> JSONResponse:
    return _answer(exc)


async def _bad_constraint(_: Request, exc: ConstraintError) -> JSONResponse:
    return _answer(HTTPProblem(400, f"response_format: {exc}", param="response_format"))


async def _too_large(_: Request, exc: PayloadTooLarge) -> JSONResponse:
    return _answer(HTTPProblem(413, str(exc), param="response_format", code="payload_too_large"))


async def _bug(_: Request, exc: Exception) -> JSONResponse:
    """A bug is still answered in OpenAI's shape (500, ``server_error``); the log has the traceback."""
    return _answer(HTTPProblem(500, f"internal error: {type(exc).__name__}: {exc}", type_="server_error"))


_OPEN_PATHS = ("/healthz", "/metrics")


async def _check_key(request: Request, call_next: Callable[[Request], Awaitable[Any]]) -> Any:
    """401 without ``Authorization: Bearer <key>`` when the server has an API key."""
    key = request.app.state.config.api_key
    if key is None or request.url.path in _OPEN_PATHS:
        return await call_next(request)
    scheme, _, given = request.headers.get("authorization", "").partition(" ")
    if scheme.lower() != "bearer" or not secrets.compare_digest(given.strip().encode(), key.encode()):
        problem = HTTPProblem(401, "missing or incorrect API key: send the header 'Authorization: Bearer <key>' "
                                   "with the key this server was started with (--api-key)", code="invalid_api_key")
        return JSONResponse(problem.body, status_code=401, headers={"WWW-Authenticate": "Bearer"})
    return await call_next(request)


_SERVED_PATHS = frozenset(path for route in (*router.routes, *responses_router.routes)
                          if isinstance(path := getattr(route, "path", None), str))


async def _count(request: Request, call_next: Callable[[Request], Awaitable[Any]]) -> Any:
    """Count every answer by endpoint (a path the app serves, or "other") and status, for ``/metrics``."""
    response = await call_next(request)
    path = request.url.path
    endpoint = path if path in _SERVED_PATHS else "other"
    request.app.state.metrics.requests.labels(endpoint=endpoint, status=str(response.status_code)).inc()
    return response


async def _limit_body(request: Request, call_next: Callable[[Request], Awaitable[Any]]) -> Any:
    """413 before reading a body whose declared length is over ``ServerConfig.max_body_bytes``."""
    limit = request.app.state.config.max_body_bytes
    length = request.headers.get("content-length")
    if length is not None and length.isdigit() and int(length) > limit:
        return _answer(HTTPProblem(413, f"request body of {length} bytes is over this server's limit of {limit}",
                                   code="payload_too_large"))
    return await call_next(request)
