"""``GET /metrics``: the server's counters in Prometheus' text format, through ``prometheus_client``.

Every app has its own registry (two apps in one process do not share counters). Series, all
prefixed ``structgen_``:

| series | type | what |
|---|---|---|
| ``requests_total{endpoint, status}`` | counter | HTTP requests answered, by route and status code |
| ``prompt_tokens_total`` | counter | prompt tokens prefilled |
| ``generation_tokens_total`` | counter | tokens generated (sampled or forced) |
| ``forced_tokens_total`` | counter | tokens appended by fast-forward, without sampling |
| ``decode_steps_total`` | counter | batched decoding steps |
| ``num_requests_running`` | gauge | rows in the running batch |
| ``num_requests_waiting`` | gauge | requests queued for the batch |
| ``guide_cache_hits_total`` / ``guide_cache_misses_total`` | counter | ``response_format`` values served by a guide already compiled / compiled anew |
| ``compile_seconds`` | histogram | time to compile a ``response_format`` (misses only) |

Engine and compiler numbers are read when Prometheus scrapes (a collector), so the decode loop
pays nothing for them.
"""

from __future__ import annotations

from typing import Any, Iterator

from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
from prometheus_client.registry import Collector

from .engine import Engine
from .response_format import GuideCompiler

__all__ = ["Metrics"]

#: compile_seconds buckets: from a cached schema's reload (ms) to a large schema's first compile
COMPILE_BUCKETS = (0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)


class _Live(Collector):
    """The engine's and the compiler's own counters, read at scrape time."""

    def __init__(self, engine: Engine, compiler: GuideCompiler) -> None:
        self.engine = engine
        self.compiler = compiler

    def collect(self) -> Iterator[Any]:
        e, c = self.engine, self.compiler
        for name, doc, value in (
            ("structgen_prompt_tokens", "Prompt tokens prefilled.", e.prompt_tokens),
            ("structgen_generation_tokens", "Tokens generated (sampled or forced).", e.generated_tokens),
            ("structgen_forced_tokens", "Tokens appended by fast-forward without sampling.", e.forced_tokens),
            ("structgen_decode_steps", "Batched decoding steps.", e.steps),
            ("structgen_guide_cache_hits", "response_format values served by a guide already compiled.", c.hits),
            ("structgen_guide_cache_misses", "response_format values compiled anew.", c.misses),
        ):
            yield CounterMetricFamily(name, doc, value=value)
        yield GaugeMetricFamily("structgen_num_requests_running", "Rows in the running batch.", value=e.num_running)
        yield GaugeMetricFamily("structgen_num_requests_waiting", "Requests queued for the batch.",
                                value=e.num_waiting)


class Metrics:
    """The registry of one app: request counts, compile times, and the engine's live numbers.

    Example:
        >>> metrics = Metrics(engine, compiler)                        # doctest: +SKIP
        >>> metrics.requests.labels(endpoint="/v1/models", status="200").inc()   # doctest: +SKIP
        >>> body, content_type = metrics.render()                      # doctest: +SKIP
    """

    def __init__(self, engine: Engine, compiler: GuideCompiler) -> None:
        self.registry = CollectorRegistry()
        self.requests = Counter("structgen_requests", "HTTP requests answered, by endpoint and status code.",
                                ["endpoint", "status"], registry=self.registry)
        self.compile_seconds = Histogram("structgen_compile_seconds", "Time to compile a response_format (misses).",
                                         buckets=COMPILE_BUCKETS, registry=self.registry)
        self.registry.register(_Live(engine, compiler))
        compiler.observe = self.compile_seconds.observe

    def render(self) -> tuple[bytes, str]:
        """The body of ``GET /metrics`` and its content type."""
        return generate_latest(self.registry), CONTENT_TYPE_LATEST
