"""The native trie walk alone: nanoseconds per trie node on the Llama-3 vocabulary.

A root walk of the token trie (``cpp/engine/walk.h``) from the start state of a few automata,
from a wide one (every printable byte: 200,000 of the trie's 275,000 nodes) to narrow ones (a
number: 1,100 nodes). Each automaton is made afresh and walked once first (its rows built), then
timed ``--repeats`` times, the least kept: ``walk_tokens`` (the token ids and end states, as a DFA
guide's walk lists them) and ``walk_frame`` (what a pushdown frame reads: the same, and the
branch points). The per-node figure divides ``walk_tokens``' time by the nodes the walk reaches.

    python -m benchmarks.trie_walk
    python -m benchmarks.trie_walk --repeats 20
"""

from __future__ import annotations

import argparse
import time

from .harness import llama3_eos, llama3_tokenizer, markdown_table

PATTERNS = [r"[ -~]*", r"[a-z ]*", r"[^\"\\]*", r"[\s\S]*", r"[0-9]+(\.[0-9]+)?", r"(true|false|null|[ \n\t]*)*"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeats", type=int, default=5, help="timed walks per automaton (the least is kept; default 5)")
    args = ap.parse_args()

    import structgen
    from structgen import _engine
    from structgen.automata.expr import ExprPool
    from structgen.automata.lazy import LazyAutomaton
    from structgen.automata.regex import regex_to_expr
    from structgen.vocab.trie import TokenTrie, walk_frame, walk_tokens

    tok = llama3_tokenizer()
    vocab = structgen.Vocabulary.from_tokenizer(tok, eos_token_ids=[llama3_eos(tok)])
    trie = TokenTrie.from_tokens(list(vocab.tokens))
    rows = []
    for pattern in PATTERNS:
        pool = ExprPool()
        auto = LazyAutomaton(pool, regex_to_expr(pattern, pool))
        walk_tokens(auto, trie, 0)  # (the rows the walk reads, built)
        nodes = _engine.walk_trie(auto, trie.native, 0, 0, False)[0].size
        tokens = frame = float("inf")
        for _ in range(args.repeats):
            start = time.perf_counter()
            ids, _ = walk_tokens(auto, trie, 0)
            tokens = min(tokens, time.perf_counter() - start)
            start = time.perf_counter()
            walk_frame(auto, trie, 0, 0)
            frame = min(frame, time.perf_counter() - start)
        rows.append([f"`{pattern}`", f"{nodes:,}", f"{ids.size:,}", f"{tokens * 1e3:.2f} ms", f"{frame * 1e3:.2f} ms",
                     f"{tokens / max(nodes, 1) * 1e9:.1f}"])
    print(f"Llama-3 trie: {trie.num_nodes:,} nodes; the least of {args.repeats} walks\n")
    print(markdown_table(["automaton", "nodes reached", "tokens", "walk_tokens", "walk_frame", "ns per node"], rows,
                         "lrrrrr"))


if __name__ == "__main__":
    main()
