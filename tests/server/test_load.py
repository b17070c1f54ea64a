"""64 clients at once against ``structgen serve`` with the embedded model, each with a
constraint of its own (chat completions with a JSON Schema, a regex or a tool to call; Responses
API requests with a schema or a tool; half of them streamed): every answer comes back, valid under
its own constraint, which names its client (an answer delivered to the wrong client fails), and
the batch never holds more rows than ``--max-batch-size``. The workload is the benchmark's
(``tests/support/mixed_load.py``; ``benchmarks/server_load.py`` reports its throughput and latency)."""

from __future__ import annotations

import asyncio

import pytest

from ..support.mixed_load import run_mixed

from ..support.serving import serve_process

httpx = pytest.importorskip("httpx")
pytest.importorskip("jsonschema")

pytestmark = [pytest.mark.model, pytest.mark.timeout(900)]

CLIENTS = 64
MAX_BATCH = 16


def test_64_clients_with_their_own_schemas_each_get_their_own_valid_answer() -> None:
    with serve_process("--max-batch-size", str(MAX_BATCH)) as base:
        records = asyncio.run(run_mixed(base, CLIENTS, max_tokens=40))
        health = httpx.get(f"{base}/healthz", timeout=30).json()
        metrics = httpx.get(f"{base}/metrics", timeout=30).text
    assert sorted(r["k"] for r in records) == list(range(CLIENTS))  # none lost
    failures = [(r["k"], r["path"], r["stream"], r["error"]) for r in records if r["error"]]
    assert not failures, failures
    assert {(r["path"], r["stream"]) for r in records} == {(p, s) for p in ("/v1/chat/completions", "/v1/responses")
                                                          for s in (False, True)}
    assert 1 < health["max_batch_seen"] <= MAX_BATCH, health
    assert health["running"] == 0 and health["waiting"] == 0
    ok = sum(float(line.rsplit(" ", 1)[1]) for line in metrics.splitlines()
             if line.startswith("structgen_requests_total{") and 'status="200"' in line
             and ("/v1/chat/completions" in line or "/v1/responses" in line))
    assert ok == CLIENTS
