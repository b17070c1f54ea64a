"""Load benchmark of ``structgen serve``: throughput, latency (p50 / p99) and time to first token.

Two workloads, each against the server started in-process on a free loopback port:

- **uniform**: for 1, 8 and 32 concurrent clients, streamed chat requests constrained by one
  regex, each generating exactly ``--max-tokens`` tokens (the regex cannot complete sooner), with
  continuous batching (``--max-batch-size 32``) and without (``1``). Budget-aware masking is off
  here (``ServerConfig(budget_aware=False)``): with it on, the server answers 400 to a
  ``max_tokens`` below what the regex needs, and a regex that cannot complete is what makes every
  request cost the same.
- **mixed** (``--mixed N``, default 64): N clients at once, each with a constraint of its own
  (``tests/support/mixed_load.py``'s ``mixed_request``): chat completions with a JSON Schema, with a regex, with a tool it must
  call, and Responses API requests with a schema or a tool, half of them streamed, each schema
  naming its client so that an answer delivered to the wrong client fails its check
  (``check_answer``). The batch is ``--mixed-batch`` (16) rows, so requests queue. Every
  answer is checked; the table reports requests/s, tokens/s and the latency percentiles, and the
  largest batch the server saw (``/healthz``).

``tests/server/test_load.py`` runs the mixed workload against ``structgen serve`` and asserts what
it checks.

    python -m benchmarks.server_load [--max-tokens 32] [--requests-per-client 2] [--clients 1,8,32]
                                     [--mixed 64] [--mixed-batch 16] [--skip-uniform] [--threads 1]
"""

from __future__ import annotations

import argparse
import asyncio
import socket
import threading
import time
from typing import Any

import httpx

from benchmarks.harness import markdown_table, percentile
from tests.support.mixed_load import MODEL, run_mixed

PATTERN = "[a-z ]{400}"  # never complete within max_tokens: every request costs the same


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])



def summarize(records: list[dict[str, Any]], wall: float) -> dict[str, float]:
    """Requests/s, tokens/s and latency percentiles of a run that took ``wall`` seconds."""
    latencies = [r["latency"] for r in records]
    return {"requests": len(records), "failed": sum(r["error"] is not None for r in records), "wall": wall,
            "rps": len(records) / wall, "tps": sum(r["tokens"] for r in records) / wall,
            "p50": percentile(latencies, 50) or 0.0, "p99": percentile(latencies, 99) or 0.0}


# -- the uniform workload ----------------------------------------------------------------------------


async def _one(client: httpx.AsyncClient, max_tokens: int, i: int) -> tuple[float, float, int]:
    body = {"model": MODEL, "stream": True, "max_tokens": max_tokens, "temperature": 0,
            "messages": [{"role": "user", "content": f"Write about topic number {i}."}],
            "stream_options": {"include_usage": True},
            "response_format": {"type": "regex", "pattern": PATTERN}}
    start = time.perf_counter()
    first = None
    tokens = 0
    async with client.stream("POST", "/v1/chat/completions", json=body) as r:
        r.raise_for_status()
        async for line in r.aiter_lines():
            chunk = _sse(line)
            if chunk is None:
                continue
            if chunk.get("usage"):
                tokens = chunk["usage"]["completion_tokens"]
            if first is None and any(c["delta"].get("content") for c in chunk["choices"]):
                first = time.perf_counter() - start
    return first or 0.0, time.perf_counter() - start, tokens


async def _load(base: str, clients: int, per_client: int, max_tokens: int) -> dict[str, float]:
    async with httpx.AsyncClient(base_url=base, timeout=600) as client:
        await _one(client, 2, -1)  # warm-up: compile the regex, first masks

        async def worker(c: int) -> list[tuple[float, float, int]]:
            return [await _one(client, max_tokens, c * per_client + k) for k in range(per_client)]

        start = time.perf_counter()
        results = [x for xs in await asyncio.gather(*(worker(c) for c in range(clients))) for x in xs]
        wall = time.perf_counter() - start
    ttfts = [r[0] for r in results]
    latencies = [r[1] for r in results]
    return {"requests": len(results), "wall": wall, "rps": len(results) / wall,
            "tps": sum(r[2] for r in results) / wall, "ttft_p50": percentile(ttfts, 50) or 0.0,
            "p50": percentile(latencies, 50) or 0.0, "p99": percentile(latencies, 99) or 0.0}


# -- running it --------------------------------------------------------------------------------------


class _Server:
    """An app behind uvicorn in a thread, for the length of a ``with``."""

    def __init__(self, app: Any) -> None:
        import uvicorn

        self.port = _free_port()
        self.server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=self.port, log_level="warning"))
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def __enter__(self) -> str:
        self.thread.start()
        while not self.server.started:
            time.sleep(0.05)
        return f"http://127.0.0.1:{self.port}"

    def __exit__(self, *_: Any) -> None:
        self.server.should_exit = True
        self.thread.join()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.server_load", description=__doc__.splitlines()[0])
    parser.add_argument("--max-tokens", type=int, default=32)
    parser.add_argument("--requests-per-client", type=int, default=2)
    parser.add_argument("--clients", default="1,8,32")
    parser.add_argument("--mixed", type=int, default=64, help="clients of the mixed workload (0: skip it)")
    parser.add_argument("--mixed-batch", type=int, default=16, help="--max-batch-size of the mixed workload")
    parser.add_argument("--skip-uniform", action="store_true", help="run the mixed workload only")
    parser.add_argument("--threads", type=int, default=1, help="torch threads (default 1)")
    args = parser.parse_args(argv)

    import torch
    import transformers

    from structgen import load_default_model
    from structgen.server import ServerConfig, create_app

    torch.set_num_threads(args.threads)
    transformers.utils.logging.set_verbosity_error()
    model, tokenizer = load_default_model()
    rows: list[tuple[int, int, dict[str, float]]] = []
    for batch in () if args.skip_uniform else (32, 1):
        with _Server(create_app(model, tokenizer, ServerConfig(max_batch_size=batch, budget_aware=False))) as base:
            for clients in (int(c) for c in args.clients.split(",")):
                result = asyncio.run(_load(base, clients, args.requests_per_client, args.max_tokens))
                rows.append((batch, clients, result))
                print(f"  batch {batch:>2} clients {clients:>2}: {result}", flush=True)
    if rows:
        print(f"\nUniform: SmolLM2-135M-Instruct, CPU, torch threads={args.threads}, {args.max_tokens} tokens/request, "
              f"{args.requests_per_client} requests/client, streamed, regex-constrained\n")
        print(markdown_table(
            ["max batch", "clients", "requests", "requests/s", "tokens/s", "TTFT p50 (s)", "latency p50 (s)",
             "latency p99 (s)"],
            ([str(b), str(c), f"{r['requests']:.0f}", f"{r['rps']:.2f}", f"{r['tps']:.1f}", f"{r['ttft_p50']:.2f}",
              f"{r['p50']:.2f}", f"{r['p99']:.2f}"] for b, c, r in rows), "r" * 8))
    if args.mixed:
        app = create_app(model, tokenizer, ServerConfig(max_batch_size=args.mixed_batch))
        with _Server(app) as base:
            asyncio.run(run_mixed(base, 8))  # warm-up: the request paths' first compiles
            start = time.perf_counter()
            records = asyncio.run(run_mixed(base, args.mixed))
            wall = time.perf_counter() - start
            seen = httpx.get(f"{base}/healthz").json()["max_batch_seen"]
        s = summarize(records, wall)
        for r in records:
            if r["error"]:
                print(f"  client {r['k']} ({r['path']}, stream={r['stream']}): {r['error']}")
        print(f"\nMixed: {args.mixed} clients at once, each its own schema / regex / tool (chat completions and "
              f"Responses, half streamed), --max-batch-size {args.mixed_batch}, torch threads={args.threads}\n")
        print(markdown_table(
            ["clients", "valid answers", "requests/s", "tokens/s", "latency p50 (s)", "latency p99 (s)",
             "largest batch"],
            [[str(args.mixed), f"{s['requests'] - s['failed']:.0f}/{s['requests']:.0f}", f"{s['rps']:.2f}",
              f"{s['tps']:.1f}", f"{s['p50']:.2f}", f"{s['p99']:.2f}", str(seen)]], "r" * 7))


if __name__ == "__main__":
    main()
