"""``structgen serve`` as a user runs it, for the tests that talk to a real server process: a
free loopback port, the subprocess, and a wait for ``/healthz``.

In-process, :func:`app_server` runs an app (the tiny model's, say) behind uvicorn in a thread.

Example:
    >>> with serve_process("--max-batch-size", "4") as base:   # doctest: +SKIP
    ...     httpx.get(f"{base}/v1/models")
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import threading
import time
from typing import Any, Iterator

import httpx


def free_port() -> int:
    """A loopback TCP port nobody listens on (now)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def serve_process(*flags: str, start_timeout: float = 180) -> Iterator[str]:
    """``python -m structgen.cli serve --host 127.0.0.1 --port P FLAGS...`` on one thread; yields
    its base URL once ``/healthz`` answers 200, and stops it on exit. A server that exits or does
    not come up within ``start_timeout`` seconds fails the test with its stderr."""
    with server_process(*flags, start_timeout=start_timeout) as (base, _):
        yield base


@contextlib.contextmanager
def server_process(*flags: str, start_timeout: float = 180) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """:func:`serve_process`, yielding the process too (to signal it)."""
    port = free_port()
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "structgen.cli", "serve", "--host", "127.0.0.1", "--port", str(port), *flags],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.time() + start_timeout
        while True:
            assert proc.poll() is None, proc.stderr.read().decode() if proc.stderr else "serve exited"
            try:
                if httpx.get(f"{base}/healthz", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert time.time() < deadline, "structgen serve did not come up"
            time.sleep(0.5)
        yield base, proc
    finally:
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=60)
            except subprocess.TimeoutExpired:  # (draining past its timeout: a second signal stops it)
                proc.kill()
                proc.wait(timeout=30)


@contextlib.contextmanager
def app_server(app: Any, *, drain_timeout: float = 30.0) -> Iterator[tuple[str, Any]]:
    """``app`` behind uvicorn on a free loopback port, in a thread (the app's lifespan runs), as
    :func:`structgen.server.serve` runs it: yields the base URL and the server (a
    :class:`~structgen.server.drain.DrainingServer`: ``server.handle_exit(signal.SIGTERM, None)``
    drains it as the signal would)."""
    import uvicorn

    from structgen.server.drain import DrainingServer

    port = free_port()
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", timeout_graceful_shutdown=5)
    server = DrainingServer(config, drain_timeout=drain_timeout)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.time() + 60
    while not server.started:
        assert time.time() < deadline and thread.is_alive(), "the server did not start"
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}", server
    finally:
        server.should_exit = True
        thread.join(timeout=60)
