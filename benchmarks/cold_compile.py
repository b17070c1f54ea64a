"""A new schema's compile + first mask, each schema compiled again and again with nothing kept
between its compiles, and the memory an engine's vocabulary and guides hold; beside llguidance.

Run: python -m benchmarks.cold_compile [--sample 10] [--repeats 9] [--rounds 2]

The real-world benchmark (``benchmarks.realworld``) times each schema's one compile in a worker
that has compiled the schemas before it: on a shared machine one run moves by 20-30%, more than a
change to the front end does. Here each engine runs in fresh processes, one per round, alternating;
a process compiles each schema of the sample (``--sample`` per source, the real-world benchmark's
sources and sampling) ``--repeats`` times, structgen's caches cleared before each compile (its
compiled guides, pattern parses, their classes' automata, their ECMA-262 readings and classes, and checked metaschema
pieces: what a schema never seen before finds), and keeps each schema's best time. Reported: the
sums and medians of those best times over the schemas both engines compile and over all, per round. The first round also reports memory:
the resident set after the tokenizer, after the engine's start-up (its vocabulary), and after
compiling each schema once and taking its first mask with every guide held.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import subprocess
import sys
import time
import warnings
from typing import Any

from benchmarks import corpora
from benchmarks.harness import LlguidanceEngine, StructgenEngine, llama3_tokenizer, markdown_table

ENGINES = ("structgen", "llguidance")
SOURCES = ("kubernetes", "cfn", "check-jsonschema", "corpus")


def _rss() -> int:
    """This process's resident set, in bytes (Linux)."""
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def _clear_structgen() -> None:
    """What a schema never seen before finds: no compiled guide, no parse of its patterns, none
    of its metaschema pieces checked."""
    import structgen
    from structgen.automata import regex
    from structgen.json_schema import ecma_pattern, loading

    structgen.compiler.clear_cache()
    regex._PARSES.clear()
    regex._class_dfa.cache_clear()  # (a pattern's large classes' automata, by their text)
    ecma_pattern._read.cache_clear()  # (the ECMA-262 reading of each pattern, and of its classes)
    ecma_pattern._class_set.cache_clear()
    loading._VALID_PIECES.clear()
    loading._CHECKED.clear()


def run_child(engine: str, sample: int, repeats: int, memory: bool) -> dict[str, Any]:
    """One fresh process of one engine (``--child``): each schema's best compile + first mask in
    ms (absent: refused), and the memory figures."""
    warnings.simplefilter("ignore")
    cases = [c for src in SOURCES for c in corpora.sample(corpora.SOURCES[src](), sample)]
    gc.collect()
    start = _rss()
    tok = llama3_tokenizer()
    gc.collect()
    after_tokenizer = _rss()
    eng: Any = StructgenEngine(tok) if engine == "structgen" else LlguidanceEngine(tok)
    clear = _clear_structgen if engine == "structgen" else (lambda: None)
    gc.collect()
    after_setup = _rss()
    held, best = [], {}
    for c in cases:  # (once each, every guide held: the memory; and what later compiles find loaded)
        try:
            g = eng.build(c.schema)
            eng.first_mask(g)
        except Exception:  # noqa: BLE001 - a refused schema is a result
            continue
        held.append(g)
        best[f"{c.source}/{c.name}"] = float("inf")
    gc.collect()
    after_guides = _rss()
    out: dict[str, Any] = {"memory": {
        "process before the tokenizer": start, "tokenizer": after_tokenizer - start,
        "vocabulary (engine start-up)": after_setup - after_tokenizer, "guides held": after_guides - after_setup,
        "guides": len(held),
    }} if memory else {}
    if engine == "structgen":
        from structgen.vocab.index import index_of

        out["own"] = {"vocabulary index": index_of(eng.vocab).memory_bytes,
                      "guides": sum(int(g.memory_bytes) for g in held)}
    held.clear()
    gc.collect()
    gc.freeze()  # (what start-up made, out of the collector's way, as a server does)
    for c in cases:
        key = f"{c.source}/{c.name}"
        if key not in best:
            continue
        for _ in range(repeats):
            clear()
            t = time.perf_counter()
            g = eng.build(c.schema)
            eng.first_mask(g)
            best[key] = min(best[key], time.perf_counter() - t)
            del g
    out["best_ms"] = {k: v * 1e3 for k, v in best.items()}
    gc.unfreeze()  # (a frozen cycle outlives the interpreter: nanobind would report its objects as leaked)
    return out


def _median(xs: list[float]) -> float:
    xs = sorted(xs)
    return xs[len(xs) // 2] if xs else float("nan")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.cold_compile", description=__doc__.split("\n")[0])
    ap.add_argument("--sample", type=int, default=10, help="schemas per source (the real-world sampling; default 10)")
    ap.add_argument("--repeats", type=int, default=9, help="compiles per schema per process (default 9)")
    ap.add_argument("--rounds", type=int, default=2, help="fresh processes per engine, alternating (default 2)")
    ap.add_argument("--child", choices=ENGINES, help=argparse.SUPPRESS)
    ap.add_argument("--memory", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        print(json.dumps(run_child(args.child, args.sample, args.repeats, args.memory)))
        return 0
    runs: dict[str, list[dict[str, Any]]] = {e: [] for e in ENGINES}
    for r in range(args.rounds):
        for engine in ENGINES if r % 2 == 0 else ENGINES[::-1]:
            cmd = [sys.executable, "-m", "benchmarks.cold_compile", "--child", engine, "--sample", str(args.sample),
                   "--repeats", str(args.repeats), *(["--memory"] if r == 0 else [])]
            done = subprocess.run(cmd, capture_output=True, text=True, check=True)
            runs[engine].append(json.loads(done.stdout.strip().splitlines()[-1]))
    both = set.intersection(*(set(run["best_ms"]) for e in ENGINES for run in runs[e]))
    rows = []
    for r in range(args.rounds):
        s, ll = runs["structgen"][r]["best_ms"], runs["llguidance"][r]["best_ms"]
        sb, lb = [s[k] for k in both], [ll[k] for k in both]
        rows.append([str(r + 1), f"{sum(sb):.1f} ms", f"{sum(lb):.1f} ms", f"{sum(sb) / sum(lb):.2f}x",
                     f"{_median(sb):.2f} / {_median(lb):.2f} ms", f"{sum(s.values()):.0f} ms ({len(s)})",
                     f"{max(s.values()):.1f} ms"])
    print(f"Compile + first mask, best of {args.repeats} per schema, {len(both)} schemas both compile "
          f"(--sample {args.sample}):\n")
    print(markdown_table(["round", "structgen, summed", "llguidance, summed", "ratio", "median (structgen / llguidance)",
                          "structgen, all it compiles", "structgen, largest"], rows, "r" * 7))
    mib = 2 ** 20
    mem_rows = []
    for e in ENGINES:
        m = runs[e][0].get("memory", {})
        if m:
            mem_rows.append([e, f"{m['tokenizer'] / mib:.0f} MiB", f"{m['vocabulary (engine start-up)'] / mib:.0f} MiB",
                             f"{m['guides held'] / mib:.1f} MiB ({m['guides']})"])
    print("\nResident set added (first round's processes):\n")
    print(markdown_table(["engine", "the tokenizer", "the engine's start-up (vocabulary)", "each schema compiled once, guides held"],
                         mem_rows, "lrrr"))
    own = runs["structgen"][0].get("own")
    if own:
        print(f"\nstructgen's own count: the vocabulary index {own['vocabulary index'] / mib:.0f} MiB, "
              f"the guides' memory_bytes summed {own['guides'] / mib:.1f} MiB.")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
