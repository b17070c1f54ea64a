"""Compile time and per-token mask time for one real schema on the Llama-3 vocabulary (128,256 tokens).

Run: python -m benchmarks.one_schema
Prints: vocabulary load, trie build, schema compile (TTFM = time to first mask), and per-token
time (mask + advance) percentiles while walking a valid instance token by token, cold (masks
computed on first visit) and warm (cached).
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np

import structgen
from benchmarks.harness import llama3_tokenizer
from structgen.vocab.index import prepare_vocabulary

SCHEMA = {
    "title": "get_weather arguments",
    "type": "object",
    "properties": {
        "location": {"type": "string", "description": "City and country"},
        "unit": {"enum": ["celsius", "fahrenheit"]},
        "days": {"type": "integer", "minimum": 1, "maximum": 14},
        "include_hourly": {"type": "boolean"},
        "date": {"type": "string", "format": "date"},
        "tags": {"type": "array", "items": {"type": "string", "maxLength": 20}, "maxItems": 5},
    },
    "required": ["location", "unit", "days"],
    "additionalProperties": False,
}
INSTANCE = {
    "location": "Kingston, Jamaica",
    "unit": "celsius",
    "days": 7,
    "include_hourly": True,
    "date": "2026-11-23",
    "tags": ["reggae", "beach"],
}


def main(argv: list[str] | None = None) -> None:
    argparse.ArgumentParser(prog="python -m benchmarks.one_schema", description=__doc__.splitlines()[0]).parse_args(argv)
    tok = llama3_tokenizer()
    t0 = time.perf_counter()
    vocab = structgen.Vocabulary.from_tokenizer(tok)
    t1 = time.perf_counter()
    prepare_vocabulary(vocab)
    t2 = time.perf_counter()
    guide = structgen.compile_json_schema(SCHEMA, vocab)
    guide.token_mask(guide.initial_state)
    t3 = time.perf_counter()
    ids = tok.encode(json.dumps(INSTANCE), add_special_tokens=False)

    def walk() -> list[float]:
        times = []
        s = guide.initial_state
        for t in ids:
            a = time.perf_counter()
            m = guide.token_mask(s)
            assert m[t]
            s = guide.next_state(s, t)
            times.append(time.perf_counter() - a)
        assert guide.is_final(s)
        return times

    cold = walk()
    warm = walk()
    print(f"vocabulary: {vocab.size} tokens, read in {1e3 * (t1 - t0):.0f} ms; token trie and slices built in {1e3 * (t2 - t1):.0f} ms (once per vocabulary)")
    print(f"schema compile + first mask (TTFM): {1e3 * (t3 - t2):.1f} ms; automaton: {guide.num_states} states")
    for name, ts in (("cold (masks computed on first visit)", cold), ("warm (cached masks)", warm)):
        us = np.array(ts) * 1e6
        print(f"per token, {name}: {len(ts)} tokens, p50 {np.percentile(us, 50):.0f} µs, p99 {np.percentile(us, 99):.0f} µs, max {us.max():.0f} µs")
    print(f"guide memory after the walk: {guide.memory_bytes / 2**20:.1f} MiB ({len(guide._masks)} masks cached; "
          f"bounded by mask_cache_bytes, default {structgen.guides.dfa_guide.DEFAULT_MASK_CACHE_BYTES // 2**20} MiB)")


if __name__ == "__main__":
    main()
