"""Regex guides: structgen (the native pool and lazy automata, issue 39's first slice) beside
llguidance, over the Llama-3 vocabulary (128,256 tokens).

Run:  python -m benchmarks.regex_guides [--engines structgen,llguidance] [--rounds 3]

For every pattern (``grammars/*.regex`` and the patterns below) and every engine: **compile + first
mask** (the pattern to the first mask, in ms; each engine's per-tokenizer data prepared first and
not counted), then the **steps** of walking each example string token by token (the next-token
mask, then the token committed, in µs, every step timed on its own). The examples are the
patterns' ``*.valid.jsonl`` lines (JSON strings) or the strings listed below; every engine gets the
same token ids (the tokenizer's encoding). Patterns are compiled afresh each round (structgen's
compile cache cleared, llguidance builds a new matcher), so every round pays every compile: the
first round's cold numbers and later rounds' are reported together. One engine runs at a time,
one thread. An example that an engine rejects is a failure, counted and printed.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path
from typing import Any

from benchmarks.harness import fmt_ms, fmt_us, llama3_eos, llama3_tokenizer, markdown_table, percentile

ROOT = Path(__file__).resolve().parents[1]

#: patterns beside the ready-made grammars, each with strings it matches
PATTERNS: dict[str, tuple[str, list[str]]] = {
    "semver": (r"(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(-[0-9A-Za-z.-]+)?", ["1.2.3", "10.20.30-rc.1", "0.0.1-alpha"]),
    "slug-64": (r"[a-z0-9]+(-[a-z0-9]+){0,63}", ["hello-world", "a-b-c-d-e-f-g", "structured-generation-by-construction"]),
    "bounded-text": (r"[^\n]{1,2000}", ["A sentence of plain text, with punctuation; and numbers 1234.", "Short"]),
    "csv-row": (r"(\"[^\"]*\"|[^,\n]*)(,(\"[^\"]*\"|[^,\n]*)){3}", ['a,b,c,d', '"quoted, text",2,3.5,end']),
    "hex-color": (r"#([0-9a-fA-F]{3}){1,2}", ["#fff", "#a1B2c3"]),
    "iso-duration": (r"P(\d+Y)?(\d+M)?(\d+D)?(T(\d+H)?(\d+M)?(\d+S)?)?", ["P1Y2M3DT4H5M6S", "PT15M"]),
    "json-ish-kv": (r"\{\"[a-z]{1,10}\": (\d{1,5}|\"[a-z ]{0,40}\")\}", ['{"age": 42}', '{"name": "ada lovelace"}']),
    "sentence-choice": (r"(The answer is (yes|no|maybe)\.)|(I do not know\.)", ["The answer is yes.", "I do not know."]),
}


def patterns() -> list[tuple[str, str, list[str]]]:
    out = []
    for path in sorted((ROOT / "grammars").glob("*.regex")):
        name = path.name[: -len(".regex")]
        valid = ROOT / "grammars" / f"{name}.valid.jsonl"
        examples = [json.loads(line) for line in valid.read_text().splitlines() if line.strip()] if valid.exists() else []
        out.append((name, path.read_text().strip(), [e for e in examples if isinstance(e, str)]))
    out += [(name, p, ex) for name, (p, ex) in PATTERNS.items()]
    return out


class Structgen:
    def __init__(self, tok: Any) -> None:
        import structgen
        from structgen.vocab.index import prepare_vocabulary

        self.sg = structgen
        self.vocab = structgen.Vocabulary.from_tokenizer(tok, eos_token_ids=[llama3_eos(tok)])
        prepare_vocabulary(self.vocab)
        structgen.compiler.warm_up(self.vocab)

    def build(self, pattern: str) -> Any:
        self.sg.compiler.clear_cache()  # (every round pays the compile)
        g = self.sg.compile_regex(pattern, self.vocab)
        g.token_mask(g.initial_state)
        return g

    def walk(self, g: Any, ids: list[int], times: list[float]) -> bool:
        pc = time.perf_counter
        s = g.initial_state
        for t in ids:
            a = pc()
            ok = bool(g.token_mask(s)[t])
            if ok:
                s = g.next_state(s, t)
            times.append(pc() - a)
            if not ok or s < 0:
                return False
        return bool(g.is_final(s))


class Llguidance:
    def __init__(self, tok: Any) -> None:
        import llguidance
        import llguidance.hf
        import llguidance.numpy as lnp

        self.ll, self.lnp = llguidance, lnp
        self.tok = llguidance.hf.from_tokenizer(tok, eos_token=llama3_eos(tok))
        self.bitmask = lnp.allocate_token_bitmask(1, self.tok.vocab_size)

    def build(self, pattern: str) -> Any:
        m = self.ll.LLMatcher(self.tok, self.ll.LLMatcher.grammar_from_regex(pattern), log_level=0)
        self.lnp.fill_next_token_bitmask(m, self.bitmask, 0)
        if m.is_error():
            raise ValueError(m.get_error())
        return m

    def walk(self, m0: Any, ids: list[int], times: list[float]) -> bool:
        pc = time.perf_counter
        m = m0.deep_copy()
        bm, fill = self.bitmask, self.lnp.fill_next_token_bitmask
        for t in ids:
            a = pc()
            fill(m, bm, 0)
            ok = m.consume_token(t)
            times.append(pc() - a)
            if not ok or m.is_error():
                return False
        return bool(m.is_accepting())


ENGINES = {"structgen": Structgen, "llguidance": Llguidance}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--engines", default="structgen,llguidance")
    parser.add_argument("--rounds", type=int, default=3, help="compiles and walks of every pattern (default 3)")
    parser.add_argument("--json", help="also write the raw times here")
    args = parser.parse_args()
    os.environ.setdefault("RAYON_NUM_THREADS", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    tok = llama3_tokenizer()
    work = patterns()
    rows, raw = [], {}
    for name in args.engines.split(","):
        eng = ENGINES[name](tok)
        compile_ms: list[float] = []
        steps: list[float] = []
        failures = 0
        for _ in range(args.rounds):
            for _, pattern, examples in work:
                a = time.perf_counter()
                handle = eng.build(pattern)
                compile_ms.append(1000 * (time.perf_counter() - a))
                for text in examples:
                    if not eng.walk(handle, tok.encode(text, add_special_tokens=False), steps):
                        failures += 1
        raw[name] = {"compile_ms": compile_ms, "step_s": steps}
        rows.append([
            name, str(len(work)), fmt_ms(percentile(compile_ms, 50)), fmt_ms(percentile(compile_ms, 99)), fmt_ms(max(compile_ms)),
            fmt_us(1e6 * percentile(steps, 50)), fmt_us(1e6 * percentile(steps, 99)), fmt_us(1e6 * max(steps)), str(len(steps)),
            str(failures),
        ])
    print(markdown_table(
        ["engine", "patterns", "compile+1st mask p50", "p99", "max", "step p50", "step p99", "step max", "steps", "rejected"], rows,
        "lrrrrrrrrr"))
    if args.json:
        Path(args.json).write_text(json.dumps(raw))


if __name__ == "__main__":
    main()
