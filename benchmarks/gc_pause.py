"""What structgen adds to a full garbage collection of the process, on the Llama-3 vocabulary.

Run: python -m benchmarks.gc_pause [--schemas SOURCE/NAME,...] [--steps 200] [--seed 0] [--freeze]
Prints the time of a full collection (``gc.collect()``, the best of 3) after the tokenizer is
loaded, after :func:`~structgen.vocab.index.prepare_vocabulary`, and after each schema's guide has
been compiled and walked ``--steps`` random allowed tokens (a seeded random walk through its own
masks), with the references the collector walks (``gc.get_referents`` summed over the tracked
objects). CPython runs such a collection from time to time on its own, in the middle of whatever
step is running: every container structgen keeps alive makes that pause longer.
"""

from __future__ import annotations

import argparse
import gc
import random
import time
import warnings

import numpy as np

import structgen
from benchmarks import corpora
from benchmarks.harness import llama3_eos, llama3_tokenizer
from structgen.vocab.index import prepare_vocabulary

SCHEMAS = (
    "cfn/AWS::DataSync::LocationAzureBlob",
    "cfn/AWS::IVS::RecordingConfiguration",
    "check-jsonschema/readthedocs",
    "kubernetes/resourceslicelist-resource-v1beta1",
)


def full_collection_ms() -> float:
    """The best of three full collections, in milliseconds."""
    best = float("inf")
    for _ in range(3):
        t = time.perf_counter()
        gc.collect()
        best = min(best, time.perf_counter() - t)
    return best * 1000


def references() -> int:
    """The references a full collection walks: every tracked object's referents (``gc.get_objects``
    leaves out the objects ``gc.freeze`` moved to the permanent generation, as a collection does)."""
    return sum(len(gc.get_referents(o)) for o in gc.get_objects())


def walk(guide: structgen.Guide, eos: set[int], steps: int, rng: random.Random) -> None:
    """A random walk of at most ``steps`` allowed tokens through ``guide``'s masks."""
    state = guide.initial_state
    for _ in range(steps):
        allowed = [t for t in np.flatnonzero(guide.token_mask(state)).tolist() if t not in eos]
        if not allowed:
            break
        state = guide.next_state(state, rng.choice(allowed))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.gc_pause", description=__doc__.split("\n")[0])
    ap.add_argument("--schemas", default=",".join(SCHEMAS), help="comma-separated SOURCE/NAME of benchmarks.corpora")
    ap.add_argument("--steps", type=int, default=200, help="random allowed tokens walked per guide (default 200)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--freeze", action="store_true",
                    help="gc.freeze() after prepare_vocabulary, as structgen serve does at start-up: what start-up "
                         "made is left out of full collections")
    args = ap.parse_args(argv)
    warnings.simplefilter("ignore")  # (unknown formats read as annotations: not the point here)
    tok = llama3_tokenizer()
    vocab = structgen.Vocabulary.from_tokenizer(tok, eos_token_ids=[llama3_eos(tok)])
    rows = [("tokenizer and vocabulary loaded", full_collection_ms(), references())]
    prepare_vocabulary(vocab)
    rows.append(("after prepare_vocabulary", full_collection_ms(), references()))
    if args.freeze:
        gc.freeze()
        rows.append(("after gc.freeze()", full_collection_ms(), references()))
    rng = random.Random(args.seed)
    guides = []
    for key in args.schemas.split(","):
        source, name = key.split("/", 1)
        case = {c.name: c for c in corpora.SOURCES[source]()}[name]
        guides.append(structgen.compile_json_schema(case.schema, vocab))
        walk(guides[-1], set(vocab.eos_token_ids), args.steps, rng)
        rows.append((f"+ {key}", full_collection_ms(), references()))
    print("| process holds | full collection | references walked |\n|---|--:|--:|")
    for what, ms, refs in rows:
        print(f"| {what} | {ms:.1f} ms | {refs:,} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
