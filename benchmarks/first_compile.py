"""The first compiles in a fresh process, with and without ``structgen.compiler.warm_up``.

Run: python -m benchmarks.first_compile
Starts two fresh Python processes on the Llama-3 vocabulary (prepared, as a server has it): one
compiles a plain schema and then a schema with ``oneOf`` / ``not`` (compile + first mask each),
then two more of the same shapes; the other calls ``warm_up`` first (as ``structgen serve`` does at
start-up). The first compile in a process loads the JSON Schema front end and builds the
metaschema check, and the first ``oneOf`` / ``not`` builds the canonical universe: a server's first
requests pay that unless start-up did.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
import warnings

PLAIN = {
    "type": "object",
    "properties": {"name": {"type": "string", "maxLength": 40}, "age": {"type": "integer", "minimum": 0},
                   "tags": {"type": "array", "items": {"type": "string"}}},
    "required": ["name"],
}
ALGEBRA = {"type": "object", "properties": {"id": {"oneOf": [{"type": "string", "format": "uuid"},
                                                             {"type": "integer", "not": {"enum": [0, 1]}}]},
                                            "at": {"type": "string", "format": "date"}}}


def run_one(warm: bool) -> dict[str, float]:
    """The timings of one fresh process (this function, run as ``--child``)."""
    warnings.simplefilter("ignore")
    import structgen
    from benchmarks.harness import llama3_tokenizer
    from structgen.compiler import warm_up
    from structgen.vocab.index import prepare_vocabulary

    vocab = structgen.Vocabulary.from_tokenizer(llama3_tokenizer())
    prepare_vocabulary(vocab)
    out: dict[str, float] = {}

    def timed(name: str, fn: object) -> None:
        t = time.perf_counter()
        fn()  # type: ignore[operator]
        out[name] = (time.perf_counter() - t) * 1000

    def compile_and_mask(schema: dict) -> None:
        guide = structgen.compile_json_schema(schema, vocab)
        guide.token_mask(guide.initial_state)

    if warm:
        timed("warm_up", lambda: warm_up(vocab))
    timed("first plain schema", lambda: compile_and_mask(PLAIN))
    timed("first oneOf / not schema", lambda: compile_and_mask(ALGEBRA))
    timed("another plain schema", lambda: compile_and_mask({**PLAIN, "title": "another"}))
    timed("another oneOf / not schema", lambda: compile_and_mask({**ALGEBRA, "title": "another"}))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.first_compile", description=__doc__.split("\n")[0])
    ap.add_argument("--child", choices=["cold", "warm"], help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        print(json.dumps(run_one(args.child == "warm")))
        return 0
    runs = {}
    for mode in ("cold", "warm"):
        done = subprocess.run([sys.executable, "-m", "benchmarks.first_compile", "--child", mode],
                              capture_output=True, text=True, check=True)
        runs[mode] = json.loads(done.stdout.strip().splitlines()[-1])
    print("| compile + first mask, in a fresh process | no warm-up | after `warm_up` |\n|---|--:|--:|")
    for name in runs["warm"]:
        cold = runs["cold"].get(name)
        print(f"| {name} | {'—' if cold is None else f'{cold:.1f} ms'} | {runs['warm'][name]:.1f} ms |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
