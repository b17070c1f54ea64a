"""Grammar benchmark (issue 40): structgen against llguidance and XGrammar, side by side, on the
context-free grammars of ``grammars/`` and real public ones (``tests/cfg/corpus/``).

Run:  python -m benchmarks.grammars [--engines structgen,llguidance,xgrammar] [--instances 8]

Per grammar and engine, over the Llama-3 tokenizer (128,256 tokens):

- **compile + first mask** (ms): grammar text -> the first next-token mask (the per-tokenizer setup,
  done once per engine, is not counted);
- **mask + commit** (µs): per token of each instance, compute the mask and advance by the
  instance's token; p50, p99 and max over every token of every instance;
- **agree**: instances the engine accepts token by token to the end, of those given. Instances are
  the grammar's valid samples (``grammars/NAME.valid.jsonl``) and random derivations that Python
  Lark (or the Earley reference, for GBNF) confirms; every engine gets the same token ids.

Each engine reads the grammar in its own syntax: Lark grammars as written (llguidance's Lark, XGrammar's
``Grammar.from_lark``), GBNF as written (XGrammar's EBNF) or through llguidance's ``gbnf_to_lark``.
A grammar an engine refuses is reported with its error. One process, one thread per engine
(``RAYON_NUM_THREADS=1``, XGrammar ``max_threads=1``); the engines run one after another.
Ratios are the peer's value over structgen's (> 1: structgen is faster).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any, Callable

os.environ.setdefault("RAYON_NUM_THREADS", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

ROOT = Path(__file__).resolve().parents[1]

from benchmarks.harness import fmt_ms, fmt_us, llama3_eos, llama3_tokenizer, markdown_table, percentile

GRAMMARS = [
    ROOT / "grammars" / "arithmetic.gbnf",
    ROOT / "grammars" / "json.gbnf",
    ROOT / "grammars" / "sql-select.lark",
    ROOT / "grammars" / "python-call.lark",
    ROOT / "tests" / "cfg" / "corpus" / "llama.cpp" / "c.gbnf",
    ROOT / "tests" / "cfg" / "corpus" / "llama.cpp" / "chess.gbnf",
    ROOT / "tests" / "cfg" / "corpus" / "llama.cpp" / "json.gbnf",
    ROOT / "tests" / "cfg" / "corpus" / "lark" / "json.lark",
    ROOT / "tests" / "cfg" / "corpus" / "lark" / "verilog.lark",
]


def instances(path: Path, n: int) -> list[str]:
    """The grammar's valid samples, then random derivations the reference confirms."""
    from tests.support.derive import gbnf_derivations, lark_derivations
    from tests.support.earley import GbnfReference

    text = path.read_text(encoding="utf-8")
    out: list[str] = []
    samples = path.with_name(path.name.rsplit(".", 1)[0] + ".valid.jsonl")
    if samples.is_file():
        out += [json.loads(line) for line in samples.read_text(encoding="utf-8").splitlines() if line.strip()]
    if path.suffix == ".gbnf":
        ref = GbnfReference(text)
        out += [s for s in gbnf_derivations(text, n, seed=11, depth=6) if ref.accepts(s)]
    else:
        out += lark_derivations(text, n, seed=11, depth=5)
    return [s for s in out if s][: 2 * n]


class Structgen:
    name = "structgen"

    def __init__(self, tok: Any) -> None:
        import structgen
        from structgen.cfg import compile_grammar
        from structgen.vocab.index import prepare_vocabulary

        self.vocab = structgen.Vocabulary.from_tokenizer(tok, eos_token_ids=[llama3_eos(tok)])
        prepare_vocabulary(self.vocab)
        self.compile = compile_grammar

    def build(self, text: str, syntax: str) -> Any:
        g = self.compile(text, self.vocab, syntax=syntax)  # (compile_grammar computes the first mask)
        return g

    def walk(self, g: Any, ids: list[int], times: list[float]) -> bool:
        # (the packed bitmask every integration fills, as the peers fill theirs)
        from structgen import Matcher

        pc = time.perf_counter
        m = Matcher.of(g)
        bm = Matcher.allocate_token_bitmask(1, g.vocabulary.size)
        s = g.initial_state
        for t in ids:
            a = pc()
            m.fill_next_token_bitmask(s, bm, 0)
            ok = bool(bm[0, t >> 5] >> (t & 31) & 1)
            s = g.next_state(s, t) if ok else -1
            times.append(pc() - a)
            if s < 0:
                return False
        return g.is_final(s)


class Llguidance:
    name = "llguidance"

    def __init__(self, tok: Any) -> None:
        import llguidance
        import llguidance.hf
        import llguidance.numpy as lnp
        from llguidance.gbnf_to_lark import gbnf_to_lark

        self.ll, self.lnp, self.gbnf_to_lark = llguidance, lnp, gbnf_to_lark
        self.tok = llguidance.hf.from_tokenizer(tok, eos_token=llama3_eos(tok))
        self.bitmask = lnp.allocate_token_bitmask(1, self.tok.vocab_size)

    def build(self, text: str, syntax: str) -> Any:
        lark = text if syntax == "lark" else self.gbnf_to_lark(text)
        m = self.ll.LLMatcher(self.tok, self.ll.LLMatcher.grammar_from_lark(lark), log_level=0)
        if m.is_error():
            raise ValueError(m.get_error())
        self.lnp.fill_next_token_bitmask(m, self.bitmask, 0)
        if m.is_error():
            raise ValueError(m.get_error())
        return m

    def walk(self, m0: Any, ids: list[int], times: list[float]) -> bool:
        pc = time.perf_counter
        m = m0.deep_copy()
        m.reset()
        bm, fill = self.bitmask, self.lnp.fill_next_token_bitmask
        for t in ids:
            a = pc()
            fill(m, bm, 0)
            ok = m.consume_token(t)
            times.append(pc() - a)
            if not ok or m.is_error():
                return False
        return bool(m.is_accepting())


class Xgrammar:
    name = "xgrammar"

    def __init__(self, tok: Any) -> None:
        import xgrammar as xgr

        self.xgr = xgr
        self.eos = llama3_eos(tok)
        self.info = xgr.TokenizerInfo.from_huggingface(tok, vocab_size=len(tok), stop_token_ids=[self.eos])
        self.compiler = xgr.GrammarCompiler(self.info, max_threads=1, cache_enabled=False)
        self.bitmask = xgr.allocate_token_bitmask(1, self.info.vocab_size)

    def build(self, text: str, syntax: str) -> Any:
        if syntax == "lark":
            cg = self.compiler.compile_grammar(self.xgr.Grammar.from_lark(text, tokenizer_info=self.info))
        else:
            cg = self.compiler.compile_grammar(text)
        self.xgr.GrammarMatcher(cg).fill_next_token_bitmask(self.bitmask)
        return cg

    def walk(self, cg: Any, ids: list[int], times: list[float]) -> bool:
        pc = time.perf_counter
        m = self.xgr.GrammarMatcher(cg)
        for t in ids:
            a = pc()
            m.fill_next_token_bitmask(self.bitmask)
            ok = m.accept_token(t)
            times.append(pc() - a)
            if not ok:
                return False
        return bool(m.accept_token(self.eos))


ENGINES: dict[str, Callable[[Any], Any]] = {"structgen": Structgen, "llguidance": Llguidance, "xgrammar": Xgrammar}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--engines", default="structgen,llguidance,xgrammar")
    ap.add_argument("--instances", type=int, default=8, help="random derivations per grammar (besides the samples)")
    ap.add_argument("--json", help="write the raw results here")
    ap.add_argument("--table", help="only print the table of a results file written with --json")
    args = ap.parse_args(argv)
    if args.table:
        results = json.loads(Path(args.table).read_text())
        print(report(results, [e for e in args.engines.split(",") if any(e in by for by in results.values())]))
        return
    tok = llama3_tokenizer()
    jobs = []
    for path in GRAMMARS:
        texts = instances(path, args.instances)
        jobs.append((path, path.read_text(encoding="utf-8"), "lark" if path.suffix == ".lark" else "gbnf",
                     texts, [tok.encode(s, add_special_tokens=False) for s in texts]))
        print(f"{path.relative_to(ROOT)}: {len(texts)} instances", file=sys.stderr, flush=True)
    results: dict[str, dict[str, Any]] = {}
    for name in args.engines.split(","):
        t0 = time.perf_counter()
        eng = ENGINES[name](tok)
        print(f"{name}: tokenizer setup {fmt_ms(1e3 * (time.perf_counter() - t0))}", file=sys.stderr, flush=True)
        for path, text, syntax, texts, ids in jobs:
            key = path.name if path.parent.name == "grammars" else f"{path.parent.name}/{path.name}"
            row: dict[str, Any] = {}
            a = time.perf_counter()
            try:
                handle = eng.build(text, syntax)
            except Exception as e:  # noqa: BLE001 - each engine refuses in its own way
                row["error"] = f"{type(e).__name__}: {str(e).splitlines()[0][:90]}"
                results.setdefault(key, {})[name] = row
                print(f"{name} {key}: {row['error']}", file=sys.stderr, flush=True)
                continue
            row["compile"] = 1e3 * (time.perf_counter() - a)  # (ms)
            times: list[float] = []
            row["accepted"] = sum(eng.walk(handle, t, times) for t in ids)
            row["n"] = len(ids)
            times = [1e6 * t for t in times]  # (µs)
            row["p50"], row["p99"], row["max"] = percentile(times, 50), percentile(times, 99), max(times, default=0)
            results.setdefault(key, {})[name] = row
            print(f"{name} {key}: compile+first mask {fmt_ms(row['compile'])}, accepted {row['accepted']}/{row['n']}, "
                  f"p50 {fmt_us(row['p50'])} p99 {fmt_us(row['p99'])} max {fmt_us(row['max'])}", file=sys.stderr, flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1, default=str))
    print(report(results, args.engines.split(",")))


def report(results: dict[str, dict[str, Any]], engines: list[str]) -> str:
    head = ["grammar", "metric"] + engines + [f"{e} / structgen" for e in engines if e != "structgen"]
    rows = []
    for key, by in results.items():
        base = by.get("structgen", {})
        for metric, fmt in (("compile", fmt_ms), ("p50", fmt_us), ("p99", fmt_us), ("max", fmt_us), ("accepted", str)):
            cells = [key, {"compile": "compile + first mask", "accepted": "accepted"}.get(metric, f"mask + commit {metric}")]
            for e in engines:
                r = by.get(e, {})
                if "error" in r:
                    cells.append(r["error"] if metric == "compile" else "-")
                elif metric == "accepted":
                    cells.append(f"{r.get('accepted', '-')}/{r.get('n', '-')}")
                else:
                    cells.append(fmt(r[metric]) if r.get(metric) is not None else "-")
            for e in engines:
                if e == "structgen":
                    continue
                r = by.get(e, {})
                if metric != "accepted" and base.get(metric) and r.get(metric):
                    cells.append(f"{r[metric] / base[metric]:.2f}")
                else:
                    cells.append("-")
            rows.append(cells)
    return markdown_table(head, rows, "ll" + "r" * (len(head) - 2))


if __name__ == "__main__":
    main()
