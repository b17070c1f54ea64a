"""The wheel, as a user installs it: run from outside the checkout, in a fresh virtualenv where
structgen was installed from its wheel (core dependencies only). Imports every module that needs
no extra (so a package left out of the wheel fails here), finds the ready-made grammars shipped
inside it, and compiles and walks a regex and a JSON Schema over a small vocabulary."""

from __future__ import annotations

import importlib
import json
import pathlib
import pkgutil
import sys
import time

start = time.perf_counter()
import structgen  # noqa: E402

here = pathlib.Path(structgen.__file__).resolve().parent
assert "site-packages" in here.parts, f"structgen was imported from {here}, not from an installed wheel"
assert not (here.parent / "pyproject.toml").exists(), f"{here} is a checkout"

#: Subpackages whose modules need an extra (torch, transformers, the web stack, vLLM).
EXTRAS = ("structgen.hf", "structgen.server", "structgen.integrations.vllm")
modules = [m.name for m in pkgutil.walk_packages(structgen.__path__, "structgen.") if not m.name.startswith(EXTRAS)]
for name in modules:
    importlib.import_module(name)
heavy = [m for m in ("torch", "transformers", "fastapi", "vllm") if m in sys.modules]
assert not heavy, f"importing the core loaded {heavy}"

from structgen.named_grammars import list_grammars, named_format  # noqa: E402

grammars = list_grammars()
assert "date" in grammars and all("site-packages" in p.parts for p in grammars.values()), grammars
date = named_format("date")
assert isinstance(date, structgen.formats.Regex), date

vocab = structgen.Vocabulary.from_bytes([bytes([b]) for b in range(256)] + [b"2024", b'{"', None], eos_token_ids=[258])


def walk(guide: structgen.Guide, text: bytes) -> None:
    """Follow ``text`` byte by byte (each a token here), checking every step's mask."""
    s = guide.initial_state
    for b in text:
        assert guide.token_mask(s)[b], (guide, text, b)
        s = guide.next_state(s, b)
    assert guide.is_final(s) and guide.token_mask(s)[258]


walk(structgen.compile(date, vocab), b"2024-02-29")
walk(structgen.compile(named_format("arithmetic"), vocab), b"(1+2)*3")
schema = {"type": "object", "properties": {"n": {"type": "integer"}, "tags": {"type": "array", "items": {"type": "string"}}},
          "required": ["n"]}
walk(structgen.compile_json_schema(schema, vocab), json.dumps({"n": 3, "tags": ["a"]}).encode())
guide = structgen.compile(structgen.formats.Sequence(structgen.formats.Literal("x="), structgen.formats.JsonSchema(schema)), vocab)
walk(guide, b'x={"n": 1}')
print(f"wheel smoke: {len(modules)} modules imported, {len(grammars)} grammars, regex and schema walked "
      f"in {time.perf_counter() - start:.1f} s")
