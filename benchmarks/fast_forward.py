"""Fast-forward: forced tokens appended without sampling, vs one model call per token, vs no constraint.

Run: python -m benchmarks.fast_forward [--repeats 3] [--threads 1]
Greedy SmolLM2-135M-Instruct (the embedded default model) on three schema-heavy tasks: a
Kubernetes-like Deployment, the arguments of a function call and the NER entities of
``examples/ner.py``. Compact JSON (``whitespace=""``): with fixed whitespace the keys are forced
text, with the default ``[ ]?`` every gap is a choice the model makes.

For each task: the constrained output with fast-forward off and on (the ``generate_*`` helpers'
own decode loop, :mod:`structgen.hf.decoding`), and unconstrained greedy ``model.generate`` of the
same number of tokens (EOS suppressed with ``min_new_tokens``). Reports generated tokens, model
forward passes (the prompt's prefill included), tokens/s and wall time (median of ``--repeats``
runs after one warm-up), and whether the greedy outputs with and without fast-forward are equal.
Where they differ, it shows why: the first byte where the texts part, the tokens each run had fed
the model up to there, and the model's top three allowed tokens in each context. Without
fast-forward the model spells forced text its own way (``c``, ``od``, ``e`` for ``code``), with it
the text is tokenized canonically, so the model conditions on different token sequences of the
same text. As a check of the KV-cache extension itself, the fast-forward output is also compared
with the same forced tokens fed one forward pass each (``feed_forced_singly``).
Prints a Markdown table.
"""

from __future__ import annotations

import argparse
import runpy
import statistics
import time
from typing import Any, Callable

import torch

import structgen
from benchmarks.harness import ROOT, markdown_table
from structgen.hf.decoding import DecodeStats, decode
from structgen.hf.generation import _encode_prompt, model_vocabulary

_S = {"type": "string"}
_LABELS = {
    "type": "object",
    "properties": {"app": _S, "tier": {"enum": ["frontend", "backend", "cache"]}},
    "required": ["app", "tier"],
    "additionalProperties": False,
}
KUBERNETES = {
    "type": "object",
    "properties": {
        "apiVersion": {"const": "apps/v1"},
        "kind": {"const": "Deployment"},
        "metadata": {
            "type": "object",
            "properties": {"name": _S, "namespace": _S, "labels": _LABELS},
            "required": ["name", "namespace", "labels"],
            "additionalProperties": False,
        },
        "spec": {
            "type": "object",
            "properties": {
                "replicas": {"type": "integer", "minimum": 1, "maximum": 20},
                "selector": {
                    "type": "object",
                    "properties": {"matchLabels": _LABELS},
                    "required": ["matchLabels"],
                    "additionalProperties": False,
                },
                "containers": {
                    "type": "array",
                    "minItems": 1,
                    "maxItems": 2,
                    "items": {
                        "type": "object",
                        "properties": {
                            "name": _S,
                            "image": _S,
                            "imagePullPolicy": {"enum": ["Always", "IfNotPresent", "Never"]},
                            "containerPort": {"type": "integer", "minimum": 1, "maximum": 65535},
                        },
                        "required": ["name", "image", "imagePullPolicy", "containerPort"],
                        "additionalProperties": False,
                    },
                },
            },
            "required": ["replicas", "selector", "containers"],
            "additionalProperties": False,
        },
    },
    "required": ["apiVersion", "kind", "metadata", "spec"],
    "additionalProperties": False,
}
FUNCTION_CALL = {
    "type": "object",
    "properties": {
        "name": {"const": "book_flight"},
        "arguments": {
            "type": "object",
            "properties": {
                "origin_airport_code": {"type": "string", "pattern": "^[A-Z]{3}$"},
                "destination_airport_code": {"type": "string", "pattern": "^[A-Z]{3}$"},
                "departure_date": {"type": "string", "pattern": r"^20[0-9]{2}-[01][0-9]-[0-3][0-9]$"},
                "number_of_passengers": {"type": "integer", "minimum": 1, "maximum": 9},
                "cabin_class": {"enum": ["economy", "premium_economy", "business", "first"]},
                "direct_flights_only": {"type": "boolean"},
            },
            "required": [
                "origin_airport_code", "destination_airport_code", "departure_date",
                "number_of_passengers", "cabin_class", "direct_flights_only",
            ],
            "additionalProperties": False,
        },
    },
    "required": ["name", "arguments"],
    "additionalProperties": False,
}


def _cases() -> list[tuple[str, Any, str, bool | None, int]]:
    ner = runpy.run_path(str(ROOT / "examples" / "ner.py"))
    return [
        (
            "Kubernetes Deployment",
            KUBERNETES,
            "Write the Kubernetes Deployment of an nginx web server called web in the namespace "
            "shop, with 3 replicas, as JSON.",
            None,
            192,
        ),
        (
            "function-call arguments",
            FUNCTION_CALL,
            "Call the book_flight function for: two adults flying business class from Paris CDG to "
            "New York JFK on 2025-03-14, direct flights only. Answer with the call as JSON.",
            None,
            128,
        ),
        ("NER entities", ner["Entities"], ner["PROMPT"], False, 96),
    ]


def _timed(fn: Callable[[], Any], repeats: int) -> tuple[Any, float]:
    fn()  # warm-up
    times, result = [], None
    for _ in range(repeats):
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return result, statistics.median(times)


def _explain(model: Any, vocab: Any, guide: Any, ids: torch.Tensor, tokens: dict[str, list[int]]) -> str:
    """Where the two greedy outputs part: each run's context and its top three allowed tokens."""
    off, on = vocab.decode(tokens["off"]), vocab.decode(tokens["on"])
    at = next((i for i in range(min(len(off), len(on))) if off[i] != on[i]), min(len(off), len(on)))
    lines = [f"  off: `{off.decode(errors='replace')}`", f"  texts part at byte {at} (after `...{on[max(0, at - 30):at].decode(errors='replace')}`):"]
    for label in ("off", "on"):
        toks = tokens[label]
        k = next(j for j in range(len(toks) + 1) if len(vocab.decode(toks[: j + 1])) > at or j == len(toks))
        context = toks[:k]
        with torch.inference_mode():
            full = torch.cat([ids, torch.tensor([context], dtype=torch.long, device=ids.device)], 1)
            logits = model(full).logits[0, -1].float()
        allowed = torch.from_numpy(guide.token_mask(guide.advance(0, context)).copy()).to(logits.device)
        best = torch.topk(logits[: allowed.shape[0]].masked_fill(~allowed, float("-inf")), 3)
        shown = ", ".join(f"{vocab.tokens[t]!r} {v:.3f}" for t, v in zip(best.indices.tolist(), best.values.tolist()))
        last = [vocab.tokens[t] for t in context[-5:]]
        lines.append(f"  - fast-forward {label}: context tokens end {last}; top allowed logits: {shown}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.fast_forward", description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--threads", type=int, default=1, help="torch CPU threads (default 1)")
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    model, tokenizer = structgen.load_default_model()
    vocab = model_vocabulary(model, tokenizer)
    device = next(model.parameters()).device

    rows = []
    for name, schema, prompt, chat, budget in _cases():
        guide = structgen.compile_json_schema(schema, vocab, whitespace="")
        ids = _encode_prompt(tokenizer, prompt, chat)[0].to(device)
        runs: dict[str, tuple[int, int, float]] = {}
        outputs: dict[str, bytes] = {}
        tokens: dict[str, list[int]] = {}
        for label, ff in (("off", False), ("on", True)):
            def run(ff: bool = ff) -> tuple[list[int], DecodeStats]:
                stats = DecodeStats()
                out = decode(model, tokenizer, guide, ids, max_new_tokens=budget, fast_forward=ff, stats=stats)
                return out, stats

            (out, stats), wall = _timed(run, args.repeats)
            tokens[label] = out
            outputs[label] = vocab.decode(out)
            assert guide.accepts_bytes(outputs[label]), (name, label, outputs[label])
            runs[label] = (stats.tokens, stats.forward_passes, wall)
        n = runs["off"][0]
        singly = decode(model, tokenizer, guide, ids, max_new_tokens=budget, feed_forced_singly=True)
        why = "" if outputs["off"] == outputs["on"] else _explain(model, vocab, guide, ids, tokens)

        def free() -> Any:
            with torch.inference_mode():
                return model.generate(
                    input_ids=ids, attention_mask=torch.ones_like(ids), max_new_tokens=n,
                    min_new_tokens=n, do_sample=False, pad_token_id=sorted(vocab.eos_token_ids)[0],
                )

        _, wall_free = _timed(free, args.repeats)
        runs["unconstrained"] = (n, n, wall_free)  # one prefill + n - 1 decode passes
        rows.append((name, runs, outputs["off"] == outputs["on"], outputs["on"].decode(), singly == tokens["on"], why))

    cells = []
    for name, runs, *_ in rows:
        free_rate = runs["unconstrained"][0] / runs["unconstrained"][2]
        for label, mode in (("unconstrained", "unconstrained (`model.generate`)"),
                            ("off", "constrained, fast-forward off"),
                            ("on", "constrained, fast-forward on")):
            tokens, passes, wall = runs[label]
            rate = tokens / wall
            cells.append([name, mode, str(tokens), str(passes), f"{rate:.1f}", f"{wall:.2f}", f"{rate / free_rate:.2f}×"])
    print(markdown_table(["task", "mode", "tokens", "forward passes", "tokens/s", "wall (s)", "vs unconstrained"], cells, "llrrrrr"))
    print()
    for name, runs, equal, text, same_singly, why in rows:
        print(f"- {name}: {runs['off'][1] - runs['on'][1]} forward passes saved; greedy output equal to "
              f"fast-forward off: {'yes' if equal else 'no'}; equal to forced tokens fed one pass each: "
              f"{'yes' if same_singly else 'no'}")
        print(f"  on:  `{text}`")
        if why:
            print(why)


if __name__ == "__main__":
    main()
