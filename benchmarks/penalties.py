"""Repetition loops of the small model under a schema, without and with the server's penalties.

Run: python -m benchmarks.penalties
Greedy SmolLM2-135M-Instruct (the embedded default model) behind the server's app (in process,
FastAPI's TestClient) describes three cities under grammars/city.schema.json at max_tokens 256,
with no penalty, OpenAI's frequency_penalty and vLLM's repetition_penalty. Prints a Markdown
table: tokens, wall time, finish_reason, and how many district names repeat an earlier one.
Every output is valid under the schema either way (the constraint sees to that); what the
penalties change is whether the model loops inside it.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

import jsonschema
import torch

import structgen
from benchmarks.harness import markdown_table

SCHEMA = json.loads((Path(__file__).resolve().parent.parent / "grammars" / "city.schema.json").read_text())
PROMPTS = ["Describe Paris.", "Describe Tokyo.", "Describe Lagos."]
SETTINGS: list[dict[str, Any]] = [{}, {"frequency_penalty": 0.5}, {"repetition_penalty": 1.2}]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max-tokens", type=int, default=256)
    args = parser.parse_args()
    from fastapi.testclient import TestClient

    from structgen.server import ServerConfig, create_app

    torch.set_num_threads(1)
    model, tokenizer = structgen.load_default_model()
    fmt = {"type": "json_schema", "json_schema": {"name": "city", "schema": SCHEMA}}
    rows = []
    with TestClient(create_app(model, tokenizer, ServerConfig())) as client:
        for options in SETTINGS:
            for prompt in PROMPTS:
                body = {"model": "SmolLM2-135M-Instruct", "messages": [{"role": "user", "content": prompt}],
                        "temperature": 0, "max_tokens": args.max_tokens, "response_format": fmt, **options}
                start = time.perf_counter()
                r = client.post("/v1/chat/completions", json=body)
                seconds = time.perf_counter() - start
                r.raise_for_status()
                out = r.json()
                city = json.loads(out["choices"][0]["message"]["content"])
                jsonschema.validate(city, SCHEMA)
                districts = city.get("districts", [])
                rows.append([json.dumps(options) if options else "none", prompt, str(out["usage"]["completion_tokens"]),
                             f"{seconds:.1f}", out["choices"][0]["finish_reason"],
                             f"{len(districts) - len(set(districts))} of {len(districts)}"])
    print(markdown_table(["penalty", "prompt", "tokens", "seconds", "finish", "repeated districts"], rows, "llrrlr"))


if __name__ == "__main__":
    main()
