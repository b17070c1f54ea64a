"""Load benchmark of ``structgen serve``: requests/s, tokens/s and time-to-first-token.

Starts the server in-process on a free loopback port (twice: continuous batching with
``--max-batch-size 32``, then ``--max-batch-size 1``), and for 1, 8 and 32 concurrent clients sends
streamed chat requests constrained by a regex, each generating exactly ``--max-tokens`` tokens
(the regex cannot complete sooner), and prints a table. Budget-aware masking is off
(``ServerConfig(budget_aware=False)``): with it on, the server answers 400 to a ``max_tokens`` below
what the regex needs, and a regex that cannot complete is what makes every request cost the same.

    python -m benchmarks.server_load [--max-tokens 32] [--requests-per-client 2] [--threads 1]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import socket
import statistics
import threading
import time
import httpx

from benchmarks.harness import markdown_table

PATTERN = "[a-z ]{400}"  # never complete within max_tokens: every request costs the same


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def _one(client: httpx.AsyncClient, max_tokens: int, i: int) -> tuple[float, float, int]:
    body = {"model": "SmolLM2-135M-Instruct", "stream": True, "max_tokens": max_tokens, "temperature": 0,
            "messages": [{"role": "user", "content": f"Write about topic number {i}."}],
            "stream_options": {"include_usage": True},
            "response_format": {"type": "regex", "pattern": PATTERN}}
    start = time.perf_counter()
    first = None
    tokens = 0
    async with client.stream("POST", "/v1/chat/completions", json=body) as r:
        r.raise_for_status()
        async for line in r.aiter_lines():
            if not line.startswith("data: ") or line == "data: [DONE]":
                continue
            chunk = json.loads(line[6:])
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
    ttfts = sorted(r[0] for r in results)
    return {"requests": len(results), "wall": wall, "rps": len(results) / wall,
            "tps": sum(r[2] for r in results) / wall, "ttft_p50": statistics.median(ttfts),
            "ttft_max": ttfts[-1]}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.server_load", description=__doc__.splitlines()[0])
    parser.add_argument("--max-tokens", type=int, default=32)
    parser.add_argument("--requests-per-client", type=int, default=2)
    parser.add_argument("--clients", default="1,8,32")
    parser.add_argument("--threads", type=int, default=1, help="torch threads (default 1)")
    args = parser.parse_args(argv)

    import torch
    import transformers
    import uvicorn

    from structgen import load_default_model
    from structgen.server import ServerConfig, create_app

    torch.set_num_threads(args.threads)
    transformers.utils.logging.set_verbosity_error()
    model, tokenizer = load_default_model()
    rows: list[tuple[int, int, dict[str, float]]] = []
    for batch in (32, 1):
        app = create_app(model, tokenizer, ServerConfig(max_batch_size=batch, budget_aware=False))
        port = _free_port()
        server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
        thread = threading.Thread(target=server.run, daemon=True)
        thread.start()
        while not server.started:
            time.sleep(0.05)
        for clients in (int(c) for c in args.clients.split(",")):
            result = asyncio.run(_load(f"http://127.0.0.1:{port}", clients, args.requests_per_client, args.max_tokens))
            rows.append((batch, clients, result))
            print(f"  batch {batch:>2} clients {clients:>2}: {result}", flush=True)
        server.should_exit = True
        thread.join()

    print(f"\nSmolLM2-135M-Instruct, CPU, torch threads={args.threads}, {args.max_tokens} tokens/request, "
          f"{args.requests_per_client} requests/client, streamed, regex-constrained\n")
    print(markdown_table(
        ["max batch", "clients", "requests", "requests/s", "tokens/s", "TTFT p50 (s)", "TTFT max (s)"],
        ([str(batch), str(clients), f"{r['requests']:.0f}", f"{r['rps']:.2f}", f"{r['tps']:.1f}", f"{r['ttft_p50']:.2f}",
          f"{r['ttft_max']:.2f}"] for batch, clients, r in rows), "r" * 7))


if __name__ == "__main__":
    main()
