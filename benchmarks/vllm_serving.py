"""vLLM's OpenAI-compatible server under load: unconstrained, vLLM's built-in xgrammar
(``response_format``) and structgen (``vllm_xargs``, the plugin), in one run.

Starts ``python -m vllm.entrypoints.openai.api_server`` on SmolLM2-135M-Instruct (the converted
folder, ``structgen.hf.models.default_model_dir()``) with structgen's logits processor, then:

1. **First request per schema**: for xgrammar and for structgen, each schema is sent alone twice
   in a row (streamed); the first request's time to first token (TTFT) minus the second's is
   what compiling a new schema adds. structgen's own compile times (the admission check in the
   API process and the compile in the worker) are read from the server's log.
2. **Load**: for each number of concurrent clients (8, 16, 32), each mode runs the same requests
   (each client sends ``--requests-per-client`` streamed chat requests in a row, schemas taken
   round-robin from the corpus); modes alternate order between repeats. Reported: output
   tokens/s (all completion tokens over the wall time), TTFT p50, time per output token (TPOT,
   p50 over requests of (end - first token) / (tokens - 1)), and the share of outputs that parse
   and validate against their schema (``jsonschema`` with format checking).
3. **Tensor parallel**: a second server with ``--tensor-parallel-size N`` (default 3: SmolLM2 has
   9 attention heads), structgen at the lowest client count; throughput and validity.

    python -m benchmarks.vllm_serving [--clients 8,16,32] [--requests-per-client 2] [--max-tokens 160]
        [--schemas NAME,...] [--repeats 2] [--tensor-parallel 3 | --tensor-parallel 0] [--enforce-eager]
        [--json FILE]

Needs the ``vllm`` extra (see the README's "Serving with vLLM"). On a 2-core machine shared with
other jobs, a run takes 20 to 40 minutes (vLLM compiles the model with torch.compile at start-up,
several minutes; ``--enforce-eager`` skips that and measures a slower eager model).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

import httpx
import jsonschema

from benchmarks.harness import CORPUS_DIR, ROOT, fmt_ms, markdown_table, percentile

TARGET = "structgen.integrations.vllm:StructgenLogitsProcessor"
MODES = ("unconstrained", "xgrammar", "structgen")
DEFAULT_SCHEMAS = ("fn_get_weather,fn_send_email,fn_book_flight,user_profile,invoice,k8s_service,log_entry,"
                   "product_catalog_item,geojson_point,webhook_event,ref_customer,survey_response")
WARM_UP_SCHEMA = "format_date"  # not in the default list: the first-request probe sees new schemas
MODEL_NAME = "smollm2"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Server:
    """The vLLM OpenAI server as a subprocess (its own process group), its output in a log file."""

    def __init__(self, model: str, *, tensor_parallel: int, enforce_eager: bool, max_num_seqs: int) -> None:
        self.port = _free_port()
        self.log = Path(tempfile.mkstemp(prefix="vllm-serving-", suffix=".log")[1])
        cmd = [sys.executable, "-m", "vllm.entrypoints.openai.api_server", "--model", model,
               "--served-model-name", MODEL_NAME, "--host", "127.0.0.1", "--port", str(self.port),
               "--max-model-len", "2048", "--kv-cache-memory-bytes", str(2 << 30), "--seed", "0",
               "--max-num-seqs", str(max_num_seqs), "--disable-log-stats"]
        if tensor_parallel > 1:
            cmd += ["--tensor-parallel-size", str(tensor_parallel), "--distributed-executor-backend", "mp"]
        if enforce_eager:
            cmd.append("--enforce-eager")
        if not any(ep.value == TARGET for ep in entry_points(group="vllm.logits_processors")):
            cmd += ["--logits-processors", TARGET]
        env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
        if tensor_parallel > 1:
            # vLLM's CPU backend refuses more ranks than NUMA nodes unless told how to bind threads
            env.setdefault("VLLM_CPU_OMP_THREADS_BIND", "nobind")
        self.started = time.perf_counter()
        with self.log.open("w") as sink:
            self.proc = subprocess.Popen(cmd, stdout=sink, stderr=subprocess.STDOUT, env=env, start_new_session=True)
        self.base = f"http://127.0.0.1:{self.port}"

    def wait(self, timeout: float = 1800) -> float:
        """Seconds until ``/health`` answers 200."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"vLLM exited with {self.proc.returncode}:\n{self.log.read_text()[-3000:]}")
            try:
                if httpx.get(self.base + "/health", timeout=2).status_code == 200:
                    return time.perf_counter() - self.started
            except httpx.HTTPError:
                pass
            time.sleep(1)
        raise RuntimeError(f"vLLM did not start in {timeout:.0f} s:\n{self.log.read_text()[-3000:]}")

    def stop(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(60)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()

    def structgen_times(self) -> tuple[dict[str, float], dict[str, float]]:
        """structgen's logged compile times (ms) by description: (admission checks, worker compiles)."""
        checks: dict[str, float] = {}
        compiles: dict[str, float] = {}
        for line in self.log.read_text(errors="replace").splitlines():
            m = re.search(r"structgen: checked (.*) at admission in ([\d.]+) ms", line)
            if m:
                checks.setdefault(m.group(1), float(m.group(2)))
            m = re.search(r"structgen: compiled (.*) in ([\d.]+) ms", line)
            if m:
                compiles.setdefault(m.group(1), float(m.group(2)))
        return checks, compiles


def load_schemas(names: list[str]) -> dict[str, dict[str, Any]]:
    return {name: json.loads((CORPUS_DIR / f"{name}.json").read_text())["schema"] for name in names}


def request_body(mode: str, name: str, schema: dict[str, Any], max_tokens: int) -> dict[str, Any]:
    topic = schema.get("title") or name.replace("_", " ")
    body: dict[str, Any] = {
        "model": MODEL_NAME, "max_tokens": max_tokens, "temperature": 0, "stream": True,
        "stream_options": {"include_usage": True},
        "messages": [{"role": "user", "content": f"Give a realistic example of a {topic} as a JSON object."}],
    }
    if mode == "xgrammar":
        body["response_format"] = {"type": "json_schema", "json_schema": {"name": "answer", "schema": schema}}
    elif mode == "structgen":
        body["vllm_xargs"] = {"structgen_json_schema": json.dumps(schema)}
    return body


async def one_request(client: httpx.AsyncClient, body: dict[str, Any]) -> dict[str, Any]:
    start = time.perf_counter()
    first = None
    tokens = 0
    pieces: list[str] = []
    async with client.stream("POST", "/v1/chat/completions", json=body) as r:
        if r.status_code != 200:
            raise RuntimeError(f"HTTP {r.status_code}: {(await r.aread()).decode()[:300]}")
        async for line in r.aiter_lines():
            if not line.startswith("data: ") or line == "data: [DONE]":
                continue
            chunk = json.loads(line[6:])
            if chunk.get("usage"):
                tokens = chunk["usage"]["completion_tokens"]
            for choice in chunk.get("choices", []):
                text = choice["delta"].get("content") or ""
                if text and first is None:
                    first = time.perf_counter() - start
                pieces.append(text)
    end = time.perf_counter() - start
    return {"ttft": first if first is not None else end, "latency": end, "tokens": tokens, "text": "".join(pieces)}


def is_valid(text: str, schema: dict[str, Any]) -> bool:
    try:
        value = json.loads(text)
    except json.JSONDecodeError:
        return False
    cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    return cls(schema, format_checker=cls.FORMAT_CHECKER).is_valid(value)


async def probe_first_requests(base: str, mode: str, schemas: dict[str, Any], max_tokens: int) -> list[dict[str, Any]]:
    """Each schema alone, twice in a row: TTFT of the first (new schema) and of the second."""
    out = []
    async with httpx.AsyncClient(base_url=base, timeout=900) as client:
        for name, schema in schemas.items():
            first = await one_request(client, request_body(mode, name, schema, max_tokens))
            second = await one_request(client, request_body(mode, name, schema, max_tokens))
            out.append({"schema": name, "mode": mode, "ttft_new": first["ttft"], "ttft_again": second["ttft"]})
            print(f"  {mode:<10} {name:<22} TTFT new {first['ttft'] * 1e3:7.0f} ms, again "
                  f"{second['ttft'] * 1e3:7.0f} ms", flush=True)
    return out


async def load(base: str, mode: str, schemas: dict[str, Any], clients: int, per_client: int,
               max_tokens: int) -> dict[str, Any]:
    names = list(schemas)
    limits = httpx.Limits(max_connections=clients + 4, max_keepalive_connections=clients + 4)
    async with httpx.AsyncClient(base_url=base, timeout=1800, limits=limits) as client:

        async def worker(c: int) -> list[dict[str, Any]]:
            done = []
            for k in range(per_client):
                name = names[(c * per_client + k) % len(names)]
                result = await one_request(client, request_body(mode, name, schemas[name], max_tokens))
                result["valid"] = is_valid(result["text"], schemas[name])
                done.append(result)
            return done

        start = time.perf_counter()
        results = [r for rs in await asyncio.gather(*(worker(c) for c in range(clients))) for r in rs]
        wall = time.perf_counter() - start
    tpots = [(r["latency"] - r["ttft"]) / (r["tokens"] - 1) for r in results if r["tokens"] > 1]
    return {"mode": mode, "clients": clients, "requests": len(results), "wall": wall,
            "tokens": sum(r["tokens"] for r in results), "tps": sum(r["tokens"] for r in results) / wall,
            "ttft_p50": percentile([r["ttft"] for r in results], 50), "tpot_p50": percentile(tpots, 50),
            "valid": sum(r["valid"] for r in results) / len(results)}


def merged(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """Repeats of one (mode, clients): tokens over total wall time, medians of the p50s, validity over all."""
    return {"mode": runs[0]["mode"], "clients": runs[0]["clients"], "requests": sum(r["requests"] for r in runs),
            "tps": sum(r["tokens"] for r in runs) / sum(r["wall"] for r in runs),
            "ttft_p50": statistics.median(r["ttft_p50"] for r in runs),
            "tpot_p50": statistics.median(r["tpot_p50"] for r in runs),
            "valid": sum(r["valid"] * r["requests"] for r in runs) / sum(r["requests"] for r in runs)}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.vllm_serving", description=__doc__.splitlines()[0])
    parser.add_argument("--clients", default="8,16,32")
    parser.add_argument("--requests-per-client", type=int, default=2)
    parser.add_argument("--max-tokens", type=int, default=160)
    parser.add_argument("--schemas", default=DEFAULT_SCHEMAS, help="corpus names (benchmarks/corpus/NAME.json)")
    parser.add_argument("--repeats", type=int, default=2, help="load runs per (clients, mode), order alternating")
    parser.add_argument("--tensor-parallel", type=int, default=3, help="0: skip the tensor-parallel run")
    parser.add_argument("--enforce-eager", action="store_true", help="no torch.compile (faster start, slower model)")
    parser.add_argument("--json", help="also write the results to this file")
    args = parser.parse_args(argv)

    import structgen
    from structgen.hf.models import default_model_dir

    structgen.load_default_model()  # the converted folder exists after this
    model = str(default_model_dir())
    schemas = load_schemas(args.schemas.split(","))
    clients = [int(c) for c in args.clients.split(",")]
    results: dict[str, Any] = {"args": vars(args), "probe": [], "load": [], "tp": []}

    server = Server(model, tensor_parallel=1, enforce_eager=args.enforce_eager, max_num_seqs=max(clients))
    try:
        results["startup_s"] = server.wait()
        print(f"vLLM ready in {results['startup_s']:.0f} s (log: {server.log})", flush=True)
        warm = load_schemas([WARM_UP_SCHEMA])
        for mode in MODES:
            asyncio.run(load(server.base, mode, warm, 1, 1, 16))
        print("First request per schema:", flush=True)
        for mode in ("xgrammar", "structgen"):
            results["probe"] += asyncio.run(probe_first_requests(server.base, mode, schemas, args.max_tokens))
        results["structgen_checks_ms"], results["structgen_compiles_ms"] = server.structgen_times()
        print("Load:", flush=True)
        for n in clients:
            runs: dict[str, list[dict[str, Any]]] = {m: [] for m in MODES}
            for rep in range(args.repeats):
                for mode in (MODES if rep % 2 == 0 else MODES[::-1]):
                    r = asyncio.run(load(server.base, mode, schemas, n, args.requests_per_client, args.max_tokens))
                    runs[mode].append(r)
                    print(f"  clients {n:>2} {mode:<13} {r['tps']:6.1f} tok/s  TTFT p50 {r['ttft_p50']:.2f} s  "
                          f"TPOT p50 {r['tpot_p50'] * 1e3:.0f} ms  valid {r['valid']:.0%}", flush=True)
            results["load"] += [merged(runs[m]) for m in MODES]
    finally:
        server.stop()

    if args.tensor_parallel > 1:
        server = Server(model, tensor_parallel=args.tensor_parallel, enforce_eager=args.enforce_eager,
                        max_num_seqs=max(clients))
        try:
            startup = server.wait()
            print(f"vLLM --tensor-parallel-size {args.tensor_parallel} ready in {startup:.0f} s", flush=True)
            for mode in ("unconstrained", "structgen"):
                r = asyncio.run(load(server.base, mode, schemas, clients[0], args.requests_per_client, args.max_tokens))
                r["tensor_parallel"] = args.tensor_parallel
                results["tp"].append(r)
                print(f"  TP {args.tensor_parallel} clients {clients[0]} {mode:<13} {r['tps']:6.1f} tok/s  "
                      f"valid {r['valid']:.0%}", flush=True)
        finally:
            server.stop()

    report(results, args)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1))


def report(results: dict[str, Any], args: argparse.Namespace) -> None:
    print(f"\nSmolLM2-135M-Instruct on vLLM (CPU{', eager' if args.enforce_eager else ''}), greedy, "
          f"max_tokens={args.max_tokens}, {args.requests_per_client} requests per client, "
          f"{len(args.schemas.split(','))} corpus schemas, {args.repeats} repeats; "
          f"start-up {results.get('startup_s', 0):.0f} s\n")
    rows = []
    by = {(r["mode"], r["clients"]): r for r in results["load"]}
    for (mode, n), r in by.items():
        ratio = r["tps"] / by[("xgrammar", n)]["tps"] if ("xgrammar", n) in by else float("nan")
        rows.append([str(n), mode, f"{r['tps']:.1f}", f"{ratio:.2f}", f"{r['ttft_p50']:.2f}",
                     f"{r['tpot_p50'] * 1e3:.0f}", f"{r['valid']:.0%}"])
    print(markdown_table(["clients", "mode", "tokens/s", "vs xgrammar", "TTFT p50 (s)", "TPOT p50 (ms)", "valid"],
                         rows, "rlrrrrr"))
    probe = results["probe"]
    if probe:
        print("\nWhat a new schema adds to the time to first token (first request minus the second, alone):\n")
        rows = []
        for mode in ("xgrammar", "structgen"):
            added = [(p["ttft_new"] - p["ttft_again"]) * 1e3 for p in probe if p["mode"] == mode]
            rows.append([mode, fmt_ms(percentile(added, 50) or 0), fmt_ms(max(added)), str(len(added))])
        print(markdown_table(["mode", "added TTFT p50", "added TTFT max", "schemas"], rows, "lrrr"))
        checks = list(results.get("structgen_checks_ms", {}).values())
        compiles = list(results.get("structgen_compiles_ms", {}).values())
        if checks and compiles:
            print(f"\nstructgen compile times from the server log: admission check p50 "
                  f"{fmt_ms(percentile(checks, 50) or 0)} (max {fmt_ms(max(checks))}), worker compile p50 "
                  f"{fmt_ms(percentile(compiles, 50) or 0)} (max {fmt_ms(max(compiles))}), {len(compiles)} constraints")
    if results["tp"]:
        print("\nTensor parallel:\n")
        print(markdown_table(["TP", "clients", "mode", "tokens/s", "valid"],
                             ([str(r["tensor_parallel"]), str(r["clients"]), r["mode"], f"{r['tps']:.1f}",
                               f"{r['valid']:.0%}"] for r in results["tp"]), "rrlrr"))


if __name__ == "__main__":
    main()
