"""A batch step on 1 and 2 threads: structgen beside llguidance's parallel fill and XGrammar's batch matcher.

The serving step of :mod:`benchmarks.serving_step` (``--rows`` requests with different schemas,
compiled just before, in lock-step, each step filling one packed ``[rows, ceil(V / 32)]`` int32
bitmask and then committing each row's next token), run by three engines at each thread count
of ``--threads``:

- **structgen** fills through its rows' :class:`~structgen.guides.cursor.Cursor`
  (``fill_next_token_bitmasks(..., threads=T)``): the rows' cold work (a pushdown state's root
  frames, a DFA state's mask) on ``T`` native threads first, then each row filled in turn;
- **llguidance** through ``llguidance.numpy.fill_next_token_bitmask_par`` on an
  ``LLExecutor(num_threads=T)``;
- **xgrammar** through ``BatchGrammarMatcher(max_threads=T).batch_fill_next_token_bitmask``
  (its ``GrammarCompiler`` also gets ``max_threads=T``, cache off; schemas compiled with
  ``any_whitespace=False``, its default separators being ``json.dumps``'). An xgrammar without
  ``BatchGrammarMatcher`` fills row by row with ``GrammarMatcher.fill_next_token_bitmask``
  (labelled so).

Every (engine, threads) run is a process of its own (fresh caches), the engines in turn,
``--repeats`` times. The rows follow valid instances of the corpus's schemas (as in
serving_step: Llama-3 tokens, keys in the order structgen writes them), less the cases of
:data:`SKIP` (one engine refuses their instance), and every engine must take every token: a
refusal stops the run, naming the engine, the row and the step. The table
gives the step's p50 / p90 / p99 / max (the steps of all repeats pooled), all steps summed (the
mean run), the compile time of the rows (first masks not included, the fastest run: xgrammar's
compile precomputes its token masks, structgen's and llguidance's leave them to the steps), and
structgen's time over each peer's at the same thread count.

    python -m benchmarks.batch_step                          # 32 rows, 3 engines, 1 and 2 threads, 2 repeats
    python -m benchmarks.batch_step --threads 2 --repeats 1 --engines structgen,xgrammar
    python -m benchmarks.batch_step --structgen-options validator   # structgen: keys in any order, extra keys

``--structgen-options validator`` compiles structgen's rows with ``key_order="any",
extra_properties=True`` (every object of two keys or more is then an automaton whose frame data is
its keys written); the peers keep theirs, and the rows their instances.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from typing import Any, Callable

from .harness import STRUCTGEN_OPTIONS, THREAD_ENV, fmt_ms, fmt_us, llama3_eos, llama3_tokenizer, markdown_table, percentile
from .serving_step import _lock_step, _rows, _run_llguidance, _run_structgen

Rows = list[tuple[Any, list[int]]]
#: Corpus cases left out of the rows, with why: an engine refuses their valid instance.
SKIP = {"invoice": "xgrammar 0.2.8 writes the enum's floats at 17 digits (0.2 as 0.20000000000000001) and refuses 0.2"}


def _run_xgrammar(tok: Any, rows: Rows, threads: int, *, strict: bool = False) -> dict[str, Any]:
    import xgrammar as xgr

    info = xgr.TokenizerInfo.from_huggingface(tok, vocab_size=len(tok), stop_token_ids=[llama3_eos(tok)])
    compiler = xgr.GrammarCompiler(info, max_threads=threads, cache_enabled=False)
    start = time.perf_counter()
    matchers = [xgr.GrammarMatcher(compiler.compile_json_schema(json.dumps(schema), any_whitespace=False))
                for schema, _ in rows]
    compile_s = time.perf_counter() - start
    bitmask = xgr.allocate_token_bitmask(len(rows), info.vocab_size)
    batch = xgr.BatchGrammarMatcher(max_threads=threads) if hasattr(xgr, "BatchGrammarMatcher") else None

    def fill(live: list[int]) -> None:
        if batch is not None:
            batch.batch_fill_next_token_bitmask([matchers[i] for i in live], bitmask)
        else:  # (an xgrammar before BatchGrammarMatcher: row by row, one thread)
            for k, i in enumerate(live):
                matchers[i].fill_next_token_bitmask(bitmask, k)

    def commit(i: int, token: int) -> bool:
        return bool(matchers[i].accept_token(token))

    result = _lock_step(rows, fill, commit, compile_s, strict="xgrammar" if strict else None)
    result["fill"] = "BatchGrammarMatcher" if batch is not None else "GrammarMatcher row by row (no BatchGrammarMatcher)"
    return result


ENGINES: dict[str, Callable[..., dict[str, Any]]] = {
    "structgen": _run_structgen, "llguidance": _run_llguidance, "xgrammar": _run_xgrammar,
}
#: How each engine fills the batch (xgrammar's worker says which of its two it used).
FILLS = {"structgen": "fill_next_token_bitmasks (prefetch on T threads)", "llguidance": "fill_next_token_bitmask_par"}


def _worker(engine: str, count: int, threads: int, options: str) -> None:
    tok = llama3_tokenizer()
    extra = {"options": STRUCTGEN_OPTIONS[options]} if engine == "structgen" else {}
    print(json.dumps(ENGINES[engine](tok, _rows(tok, count, SKIP), threads, strict=True, **extra)))


def _run(engine: str, count: int, threads: int, options: str = "defaults") -> dict[str, Any]:
    """One (engine, threads) run in a fresh process; its failure (a refused token) ends the benchmark."""
    out = subprocess.run([sys.executable, "-m", "benchmarks.batch_step", "--worker", engine, "--rows", str(count),
                          "--threads", str(threads), "--structgen-options", options],
                         capture_output=True, text=True, env={**os.environ, **THREAD_ENV})
    if out.returncode != 0:
        sys.stderr.write(out.stderr)
        raise SystemExit(f"batch_step: {engine} on {threads} thread(s) failed (exit {out.returncode}), see above")
    result: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def _summary(runs: list[dict[str, Any]]) -> dict[str, float]:
    steps = [s for r in runs for s in r["steps"]]
    return {"compile": min(r["compile_s"] for r in runs),
            **{f"p{q}": percentile(steps, q) or 0.0 for q in (50, 90, 99)},
            "max": max(steps), "all": sum(sum(r["steps"]) for r in runs) / len(runs)}


def _ratio(a: float, b: float) -> str:
    return f"{a / b:.2f}x" if b > 0 else "-"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", type=int, default=32, help="requests in the batch (default 32)")
    ap.add_argument("--threads", default="1,2", help="thread counts, comma-separated (default 1,2)")
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--engines", default="structgen,llguidance,xgrammar")
    ap.add_argument("--structgen-options", default="defaults", choices=tuple(STRUCTGEN_OPTIONS),
                    help="structgen's compile options: defaults, or validator (key_order='any', extra_properties=True)")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        _worker(args.worker, args.rows, int(args.threads), args.structgen_options)
        return
    engines = args.engines.split(",")
    unknown = [e for e in engines if e not in ENGINES]
    if unknown:
        ap.error(f"unknown engine(s) {', '.join(unknown)}; known: {', '.join(ENGINES)}")
    thread_counts = [int(t) for t in args.threads.split(",")]
    results: dict[tuple[str, int], list[dict[str, Any]]] = {(e, t): [] for t in thread_counts for e in engines}
    for _ in range(args.repeats):
        for t in thread_counts:
            for engine in engines:  # (in turn, so a drift of the machine's speed meets every engine)
                results[engine, t].append(_run(engine, args.rows, t, args.structgen_options))
    summary = {key: _summary(runs) for key, runs in results.items()}
    table = []
    for t in thread_counts:
        for engine in engines:
            s = summary[engine, t]
            fill = FILLS.get(engine) or results[engine, t][0].get("fill", "")
            threads = str(t)
            ratios = []
            for peer in ("llguidance", "xgrammar"):
                if engine == "structgen" and peer in engines:
                    p = summary[peer, t]
                    ratios.append(f"{_ratio(s['p50'], p['p50'])} / {_ratio(s['p99'], p['p99'])} / {_ratio(s['all'], p['all'])}")
                else:
                    ratios.append("")
            table.append([engine, threads, fill, fmt_ms(1e3 * s["compile"]),
                          *(fmt_us(1e6 * s[k]) for k in ("p50", "p90", "p99", "max")), fmt_ms(1e3 * s["all"]), *ratios])
    print(f"{args.rows} rows with different schemas in lock-step, one packed bitmask per step; threads {args.threads}; "
          f"{args.repeats} repeat(s), steps of all repeats pooled; every engine took every token. structgen's rows "
          f"do their cold work on T native threads first, then are filled in turn. "
          f"Compile: xgrammar's precomputes its token masks, structgen's and llguidance's leave them to the steps. "
          f"Left out of the rows: {'; '.join(f'{name} ({why})' for name, why in SKIP.items())}. "
          f"structgen's options: {args.structgen_options} {STRUCTGEN_OPTIONS[args.structgen_options]}.\n")
    print(markdown_table(["engine", "threads", "batch fill", f"compile {args.rows} rows (min)", "step p50", "step p90",
                          "step p99", "step max", "all steps (mean run)", "structgen ÷ llguidance (p50 / p99 / all)",
                          "structgen ÷ xgrammar (p50 / p99 / all)"], table, "lrlrrrrrrrr"))


if __name__ == "__main__":
    main()
