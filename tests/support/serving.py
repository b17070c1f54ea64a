"""``structgen serve`` as a user runs it, for the tests that talk to a real server process: a
free loopback port, the subprocess, and a wait for ``/healthz``.

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
import time
from typing import Iterator

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
        yield base
    finally:
        proc.terminate()
        proc.wait(timeout=30)
