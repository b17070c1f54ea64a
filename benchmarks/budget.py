"""Never truncated: complete, valid JSON within max_new_tokens, with budget-aware masking on vs off.

Run: python -m benchmarks.budget
Greedy SmolLM2-135M-Instruct (the embedded default model) on three schemas (NER entities, a city
with its districts, a person) at max_new_tokens 32, 64 and 128. Each generation runs twice under
the same guide: with budget-aware masking (the default of the ``generate_*`` helpers) and without
(``budget_aware=False``, plain prefix masking, which cuts the document off when the budget runs
out). Prints a Markdown table: whether each output parsed as JSON and validated under the schema.
"""

from __future__ import annotations

import argparse
import json
import time
from typing import Any

import jsonschema
import torch

import structgen
from benchmarks.harness import markdown_table
from structgen.hf.generation import generate_text, model_vocabulary

_LIST = {"type": "array", "items": {"type": "string"}}
CASES: list[tuple[str, dict[str, Any], str]] = [
    (
        "NER entities",
        {
            "type": "object",
            "properties": {k: _LIST for k in ("person", "organization", "location", "miscellaneous")},
            "required": ["person", "organization", "location", "miscellaneous"],
            "additionalProperties": False,
        },
        "Extract the named entities from this text as JSON: 'Angela Merkel met Emmanuel Macron in "
        "Paris on Monday to discuss the European Union budget, while Airbus and Siemens announced "
        "a joint venture in Toulouse during the Paris Air Show.'",
    ),
    (
        "city with districts",
        {
            "type": "object",
            "properties": {
                "name": {"type": "string"},
                "country": {"type": "string"},
                "population": {"type": "integer"},
                "districts": _LIST,
            },
            "required": ["name", "country", "population", "districts"],
            "additionalProperties": False,
        },
        "Describe the city of Baghdad as JSON, listing all of its districts.",
    ),
    (
        "person",
        {
            "type": "object",
            "properties": {
                "name": {"type": "string"},
                "age": {"type": "integer", "minimum": 0},
                "occupation": {"type": "string"},
                "hobbies": _LIST,
            },
            "required": ["name", "age", "occupation", "hobbies"],
            "additionalProperties": False,
        },
        "Describe a fictional person as JSON: their name, age, occupation and hobbies.",
    ),
]
BUDGETS = (32, 64, 128)


def run_one(model: Any, tokenizer: Any, schema: dict[str, Any], prompt: str, budget: int,
            budget_aware: bool) -> tuple[bool, str]:
    """(parseable and valid, the text or the error)."""
    guide = structgen.compile_json_schema(schema, model_vocabulary(model, tokenizer))
    try:
        text = generate_text(model, tokenizer, prompt, guide, max_new_tokens=budget,
                             budget_aware=budget_aware)
    except structgen.StructgenError as e:
        return False, f"{type(e).__name__}: {getattr(e, 'text', e)}"
    try:
        jsonschema.validate(json.loads(text), schema)
    except (ValueError, jsonschema.ValidationError) as e:
        return False, f"{type(e).__name__}: {text}"
    return True, text


def main(argv: list[str] | None = None) -> None:
    argparse.ArgumentParser(prog="python -m benchmarks.budget", description=__doc__.splitlines()[0]).parse_args(argv)
    torch.set_num_threads(1)
    model, tokenizer = structgen.load_default_model()
    rows = []
    totals = {False: 0, True: 0}
    t0 = time.perf_counter()
    for name, schema, prompt in CASES:
        for budget in BUDGETS:
            cells = []
            for aware in (False, True):
                ok, text = run_one(model, tokenizer, schema, prompt, budget, aware)
                totals[aware] += ok
                cells.append("valid" if ok else "**cut off**")
                print(f"# {name} @ {budget} aware={aware}: {'OK' if ok else 'FAIL'} {text[:300]!r}", flush=True)
            rows.append([name, str(budget), *cells])
    n = len(CASES) * len(BUDGETS)
    print()
    rows.append(["**parseable and valid**", "", *(f"**{totals[aware]}/{n} ({100 * totals[aware] / n:.0f}%)**" for aware in (False, True))])
    print(markdown_table(["schema", "max_new_tokens", "budget-aware off", "budget-aware on (default)"], rows, "lrll"))
    print(f"\n({2 * n} greedy generations in {time.perf_counter() - t0:.0f} s)")


if __name__ == "__main__":
    main()
