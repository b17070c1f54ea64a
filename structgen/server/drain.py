"""Graceful shutdown: on ``SIGTERM`` (or the first Ctrl-C) the server drains.

While it drains, requests in flight (streamed or not) go on to their end, and every new request
is answered 503 with OpenAI's error body (code ``server_shutting_down``; ``/healthz`` too, so a
load balancer stops sending; ``/metrics`` stays open). When the last request in flight ends, or
``drain_timeout`` seconds have passed, the server stops; requests still running then end with an
error (a 503 body, or a stream's error event) instead of being cut without a word. A second signal
stops it at once.

:class:`Drain` counts the requests in flight (an ASGI middleware, :class:`DrainMiddleware`, so a
streamed response counts until its last byte); :class:`DrainingServer` is uvicorn's server with
that signal handling; :func:`serve` runs an app with it (``structgen serve`` does).

Example:
    >>> serve(create_app(model, tokenizer), host="127.0.0.1", port=8000, drain_timeout=30)  # doctest: +SKIP
"""

from __future__ import annotations

import json
import logging
import signal
import time
from types import FrameType
from typing import Any, Awaitable, Callable

import uvicorn

__all__ = ["Drain", "DrainMiddleware", "DrainingServer", "serve"]

log = logging.getLogger("structgen.server")

#: Paths that answer while draining.
OPEN_WHILE_DRAINING = ("/metrics",)

_BODY = json.dumps({"error": {
    "message": "the server is shutting down: requests in flight finish, new ones are refused; send this one to "
               "another server or retry later", "type": "server_error", "param": None,
    "code": "server_shutting_down"}}).encode()

Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]


class Drain:
    """The requests in flight, and whether the server is draining (new requests get 503)."""

    def __init__(self) -> None:
        self.in_flight = 0
        self.draining = False
        self.deadline: float | None = None

    def start(self, timeout: float) -> None:
        """Refuse new requests from now on; stop waiting for those in flight after ``timeout`` s."""
        if not self.draining:
            self.draining = True
            self.deadline = time.monotonic() + timeout


class DrainMiddleware:
    """Counts HTTP requests in flight; answers 503 while draining."""

    def __init__(self, app: Callable[[Scope, Receive, Send], Awaitable[None]], drain: Drain) -> None:
        self.app = app
        self.drain = drain

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if self.drain.draining and scope.get("path") not in OPEN_WHILE_DRAINING:
            await send({"type": "http.response.start", "status": 503,
                        "headers": [(b"content-type", b"application/json"), (b"connection", b"close"),
                                    (b"retry-after", b"5"), (b"content-length", str(len(_BODY)).encode())]})
            await send({"type": "http.response.body", "body": _BODY})
            return
        self.drain.in_flight += 1
        try:
            await self.app(scope, receive, send)
        finally:
            self.drain.in_flight -= 1


class DrainingServer(uvicorn.Server):
    """uvicorn's server, draining on the first ``SIGTERM`` / ``SIGINT`` (see the module docstring).

    Args:
        config: uvicorn's configuration of the app (made by :func:`create_app`, whose
            ``app.state.drain`` and ``app.state.engine`` this reads).
        drain_timeout: the most seconds to wait for requests in flight.
    """

    def __init__(self, config: uvicorn.Config, *, drain_timeout: float = 30.0) -> None:
        super().__init__(config)
        self.drain_timeout = drain_timeout
        state = config.app.state  # type: ignore[union-attr]  # (create_app's FastAPI app)
        self.drain: Drain = state.drain
        self.engine = state.engine
        self._aborted_at: float | None = None

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        if self.drain.draining or sig not in (signal.SIGTERM, signal.SIGINT):
            super().handle_exit(sig, frame)  # (a second signal: stop now)
            return
        self._captured_signals.append(sig)
        log.info("draining: %d request(s) in flight, new ones refused (at most %.0f s)", self.drain.in_flight,
                 self.drain_timeout)
        self.drain.start(self.drain_timeout)

    async def on_tick(self, counter: int) -> bool:
        done = await super().on_tick(counter)
        drain = self.drain
        if done or not drain.draining:
            return done
        if drain.in_flight == 0:
            return True
        now = time.monotonic()
        assert drain.deadline is not None
        if now >= drain.deadline and self._aborted_at is None:
            log.warning("drain timeout: ending %d request(s) still in flight", drain.in_flight)
            self.engine.abort_all(f"the server is shutting down: the drain timeout of {self.drain_timeout:g} s "
                                  "passed before this request finished")
            self._aborted_at = now
        # (requests that wait on no engine event, a compile for one, get a few seconds more)
        return self._aborted_at is not None and now >= self._aborted_at + 5.0


def serve(app: Any, *, host: str = "127.0.0.1", port: int = 8000, drain_timeout: float = 30.0,
          log_level: str = "info") -> None:
    """Run ``app`` (from :func:`~structgen.server.create_app`) with uvicorn, draining on SIGTERM."""
    config = uvicorn.Config(app, host=host, port=port, log_level=log_level, timeout_graceful_shutdown=5)
    DrainingServer(config, drain_timeout=drain_timeout).run()
