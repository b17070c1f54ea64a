"""Compile + first mask of objects with many optional properties, on the Llama-3 vocabulary.

Run: python -m benchmarks.wide_objects [--sizes 100,500,2000] [--repeats 3]
Prints, per size n, the best of ``--repeats`` compiles (cache cleared each time) of
``{"type": "object", "properties": {"property_0": {"type": "string"}, ...}}`` with n properties,
none required (the longest run of optional entries :meth:`structgen.json_schema.objects.Objects.members`
meets), then its first mask.
"""

from __future__ import annotations

import argparse
import time

import structgen
from benchmarks.harness import llama3_tokenizer
from structgen.vocab.index import prepare_vocabulary


def wide_object(n: int) -> dict:
    """An object schema with ``n`` optional string properties."""
    return {"type": "object", "properties": {f"property_{i}": {"type": "string"} for i in range(n)}}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="100,500,2000", help="property counts, comma-separated")
    ap.add_argument("--repeats", type=int, default=3, help="compiles per size (the best is printed)")
    args = ap.parse_args()
    vocab = structgen.Vocabulary.from_tokenizer(llama3_tokenizer())
    prepare_vocabulary(vocab)
    print("| properties | compile + first mask |")
    print("|--:|--:|")
    for n in (int(x) for x in args.sizes.split(",")):
        best = float("inf")
        for _ in range(args.repeats):
            structgen.clear_cache()
            start = time.perf_counter()
            guide = structgen.compile_json_schema(wide_object(n), vocab)
            guide.token_mask(guide.initial_state)
            best = min(best, time.perf_counter() - start)
        print(f"| {n} | {best * 1e3:.1f} ms |")


if __name__ == "__main__":
    main()
