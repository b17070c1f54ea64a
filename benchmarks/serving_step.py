"""A serving step: many requests with different schemas in lock-step, one packed bitmask per step.

What a batching server does at every decoding step: each row of the batch (a request with a schema
of its own, all compiled just before, as new requests arrive) writes its mask of allowed tokens
into one ``[rows, ceil(V / 32)]`` int32 bitmask, then takes its next token. A step's time is the
whole batch's fill plus the commits; the first steps of new schemas are cold (their masks not
computed yet), which is where serving hurts. structgen fills through its rows'
:class:`~structgen.guides.cursor.Cursor` (``fill_next_token_bitmasks``, its cold work first on
``--threads`` native threads); llguidance through ``fill_next_token_bitmask_par`` on an
``LLExecutor`` of ``--threads`` threads. Each engine runs
in a process of its own (fresh caches), in turn, ``--repeats`` times.

The rows follow valid instances of the corpus's schemas (``benchmarks/corpus/``, tokenized by the
Llama-3 tokenizer, in the key order structgen writes), ``--rows`` of them, cycling over the
schemas; a row that has finished leaves the batch.

    python -m benchmarks.serving_step                      # 32 rows, both engines, 3 repeats
    python -m benchmarks.serving_step --rows 8 --repeats 1 --engines structgen
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from typing import Any, Callable, Collection

import numpy as np

from .corpora import load_corpus
from .harness import THREAD_ENV, fmt_ms, instance_text, llama3_eos, llama3_tokenizer, markdown_table, percentile


def _rows(tok: Any, count: int, skip: Collection[str] = ()) -> list[tuple[Any, list[int]]]:
    """``count`` (schema, token ids of a valid instance) pairs, cycling over the corpus (less the
    cases named in ``skip``)."""
    pairs = []
    for case in load_corpus():
        if case.instances and case.name not in skip:
            text = instance_text(case.instances[0], case.schema)
            pairs.append((case.schema, tok.encode(text, add_special_tokens=False)))
    return [pairs[i % len(pairs)] for i in range(count)]


def _run_structgen(tok: Any, rows: list[tuple[Any, list[int]]], threads: int, *,
                  strict: bool = False, options: dict[str, Any] | None = None) -> dict[str, Any]:
    import structgen
    from structgen.guides.cursor import Cursor, fill_next_token_bitmasks
    from structgen.vocab.index import prepare_vocabulary

    vocab = structgen.Vocabulary.from_tokenizer(tok, eos_token_ids=[llama3_eos(tok)])
    prepare_vocabulary(vocab)
    structgen.compiler.warm_up(vocab)
    start = time.perf_counter()
    cursors = [Cursor(structgen.Matcher.of(structgen.compile_json_schema(schema, vocab, **(options or {})), vocab.size))
               for schema, _ in rows]
    compile_s = time.perf_counter() - start
    bitmask = structgen.Matcher.allocate_token_bitmask(len(rows), vocab.size)

    def fill(live: list[int]) -> None:
        fill_next_token_bitmasks([cursors[i] for i in live], bitmask, threads=threads)

    def commit(i: int, token: int) -> bool:
        return cursors[i].accept(token)

    return _lock_step(rows, fill, commit, compile_s, strict="structgen" if strict else None)


def _run_llguidance(tok: Any, rows: list[tuple[Any, list[int]]], threads: int, *,
                   strict: bool = False) -> dict[str, Any]:
    import llguidance
    import llguidance.hf
    import llguidance.numpy as lnp

    ltok = llguidance.hf.from_tokenizer(tok, eos_token=llama3_eos(tok))
    executor = llguidance.LLExecutor(num_threads=threads)
    start = time.perf_counter()
    matchers = []
    for schema, _ in rows:
        m = llguidance.LLMatcher(ltok, llguidance.LLMatcher.grammar_from_json_schema(schema), log_level=0)
        if m.is_error():
            raise ValueError(m.get_error())
        matchers.append(m)
    compile_s = time.perf_counter() - start
    bitmask = lnp.allocate_token_bitmask(len(rows), ltok.vocab_size)

    def fill(live: list[int]) -> None:
        lnp.fill_next_token_bitmask_par(executor, [(matchers[i], k) for k, i in enumerate(live)], bitmask)

    def commit(i: int, token: int) -> bool:
        return bool(matchers[i].consume_token(token)) and not matchers[i].is_error()

    return _lock_step(rows, fill, commit, compile_s, strict="llguidance" if strict else None)


def _lock_step(rows: list[tuple[Any, list[int]]], fill: Callable[[list[int]], None],
               commit: Callable[[int, int], bool], compile_s: float, *, strict: str | None = None) -> dict[str, Any]:
    """Step the rows in lock-step: ``fill(live)`` (the live rows' masks into rows ``0..len(live)``),
    then ``commit(i, token)`` for each live row; a row leaves once its tokens are spent. A refused
    token is counted, or, with ``strict`` (the engine's name), raised as an error naming the row
    and the step."""
    steps: list[float] = []
    refused = 0
    live = list(range(len(rows)))
    k = 0
    while live:
        start = time.perf_counter()
        fill(live)
        for i in live:
            if not commit(i, rows[i][1][k]):
                if strict:
                    raise RuntimeError(f"{strict} refused token {rows[i][1][k]} of row {i} at step {k}")
                refused += 1
        steps.append(time.perf_counter() - start)
        k += 1
        live = [i for i in live if k < len(rows[i][1])]
    return {"compile_s": compile_s, "steps": steps, "refused": refused}


ENGINES = {"structgen": _run_structgen, "llguidance": _run_llguidance}


def _worker(engine: str, count: int, threads: int) -> None:
    tok = llama3_tokenizer()
    rows = _rows(tok, count)
    print(json.dumps(ENGINES[engine](tok, rows, threads)))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", type=int, default=32, help="requests in the batch (default 32)")
    ap.add_argument("--threads", type=int, default=2, help="llguidance's executor threads (default 2)")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--engines", default="structgen,llguidance")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        _worker(args.worker, args.rows, args.threads)
        return
    engines = args.engines.split(",")
    results: dict[str, list[dict[str, Any]]] = {e: [] for e in engines}
    env = {**__import__("os").environ, **THREAD_ENV}
    for _ in range(args.repeats):
        for engine in engines:  # (in turn, so a drift of the machine's speed meets both)
            out = subprocess.run([sys.executable, "-m", "benchmarks.serving_step", "--worker", engine, "--rows",
                                  str(args.rows), "--threads", str(args.threads)],
                                 capture_output=True, text=True, env=env, check=True)
            results[engine].append(json.loads(out.stdout.strip().splitlines()[-1]))
    rows = []
    for engine in engines:
        runs = results[engine]
        steps = [s for r in runs for s in r["steps"]]
        rows.append([engine, fmt_ms(1e3 * min(r["compile_s"] for r in runs)),
                     *(fmt_ms(1e3 * (percentile(steps, q) or 0.0)) for q in (50, 90, 99)), fmt_ms(1e3 * max(steps)),
                     fmt_ms(1e3 * sum(sum(r["steps"]) for r in runs) / len(runs)),
                     str(sum(r["refused"] for r in runs))])
    print(f"{args.rows} rows in lock-step, one packed bitmask per step, llguidance on {args.threads} threads; "
          f"{args.repeats} repeats (steps of all repeats pooled)\n")
    print(markdown_table(["engine", "compile all (min)", "step p50", "step p90", "step p99", "step max",
                          "all steps (mean run)", "tokens refused"], rows, "lrrrrrrr"))


if __name__ == "__main__":
    main()
