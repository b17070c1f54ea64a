"""Masks along a string under ``maxLength``, on the Llama-3 vocabulary, beside llguidance.

Run: python -m benchmarks.bounded_strings [--lengths 32,100,256] [--engines structgen,llguidance]

For each ``maxLength`` L, the schema ``{"type": "object", "properties": {"title": {"type":
"string", "maxLength": L}}, "required": ["title"]}`` is compiled once per engine, then an
instance whose title is L - 1 characters of English text is walked token by token (mask +
commit, timed per step, every engine on the same token ids). Printed per engine: the first mask
inside the string (a state never seen), the median and the slowest step inside the string, and
the whole instance (compile + every step). Inside a string under a length bound every position
is a new state, so these are cold masks (issue 21: the positions share walks where a token
cannot reach the bound).
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

from benchmarks.harness import llama3_tokenizer, make_engine

TEXT = (
    "Quarterly planning review with the platform team, covering the migration of the billing service, "
    "the on-call rotation for the holidays, and what we learned from the incident in the payments queue. "
    "Bring the dashboards and your notes; we will decide on the rollout dates before the end of the meeting."
)


def schema_of(length: int) -> dict:
    """An object with one required string property under ``maxLength``."""
    return {"type": "object", "properties": {"title": {"type": "string", "maxLength": length}}, "required": ["title"]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lengths", default="32,100,256", help="maxLength values, comma-separated")
    ap.add_argument("--engines", default="structgen,llguidance", help="engines, comma-separated")
    args = ap.parse_args()
    tok = llama3_tokenizer()
    engines = {name: make_engine(name, tok) for name in args.engines.split(",")}
    print("| maxLength | engine | first mask in the string | median step in it | slowest step in it | compile + every step |")
    print("|--:|---|--:|--:|--:|--:|")
    for length in (int(x) for x in args.lengths.split(",")):
        text = json.dumps({"title": (TEXT * (1 + length // len(TEXT)))[: length - 1]})
        ids = tok.encode(text, add_special_tokens=False)
        opening = len(tok.encode('{"title": "', add_special_tokens=False))  # (steps before the string's body)
        for name, engine in engines.items():
            start = time.perf_counter()
            handle = engine.build(schema_of(length))
            compiled = time.perf_counter() - start
            times: list[float] = []
            if not engine.walk(handle, ids, times):
                raise SystemExit(f"{name} rejected the instance of maxLength {length}")
            inside = times[opening:-1]
            print(f"| {length} | {name} | {inside[0] * 1e3:.2f} ms | {statistics.median(inside) * 1e3:.2f} ms "
                  f"| {max(inside) * 1e3:.2f} ms | {(compiled + sum(times)) * 1e3:.1f} ms |")


if __name__ == "__main__":
    main()
