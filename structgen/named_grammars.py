"""The ready-made constraints of ``grammars/``, by name (the CLI's ``--grammar``, vLLM's
``structgen_grammar``, the server's named grammars), as format values (:mod:`structgen.formats`).

Named grammars are ``NAME.regex``, ``NAME.schema.json``, ``NAME.lark`` and ``NAME.gbnf`` files,
looked up first in ``structgen/grammars/`` (where an installed wheel keeps them) and then in the
``grammars/`` folder of the source checkout next to the package (an editable install or a plain
checkout).

>>> type(named_format("date")).__name__, named_format("arithmetic").syntax, kind_of(list_grammars()["city"])
('Regex', 'gbnf', 'schema')
>>> named_format("arithmetic").syntax, kind_of(list_grammars()["city"])
('gbnf', 'schema')
"""

from __future__ import annotations

import json
from pathlib import Path

from .errors import ConstraintError
from .formats import Format, Grammar, JsonSchema, Regex

__all__ = ["SUFFIXES", "grammar_dirs", "kind_of", "list_grammars", "named_format"]

#: The file suffixes of named grammars, and the kind each holds.
SUFFIXES = {".regex": "regex", ".schema.json": "schema", ".lark": "lark", ".gbnf": "gbnf"}


def grammar_dirs() -> list[Path]:
    """The folders searched for named grammars, in order (only those that exist)."""
    here = Path(__file__).resolve().parent
    candidates = [here / "grammars", here.parent / "grammars"]
    return [d for d in candidates if d.is_dir()]


def list_grammars() -> dict[str, Path]:
    """Every named grammar: name -> file (the first folder that has a name wins), sorted by name."""
    found: dict[str, Path] = {}
    for folder in grammar_dirs():
        for suffix in SUFFIXES:
            for path in sorted(folder.glob("*" + suffix)):
                found.setdefault(path.name[: -len(suffix)], path)
    return dict(sorted(found.items()))


def kind_of(path: Path) -> str:
    """``"regex"``, ``"schema"``, ``"lark"`` or ``"gbnf"``: what a grammar file holds."""
    return next(kind for suffix, kind in SUFFIXES.items() if path.name.endswith(suffix))


def named_format(name: str) -> Format:
    """The format of the grammar called ``name``: a :class:`Regex`, a :class:`JsonSchema` or a
    :class:`Grammar`.

    Raises :class:`ConstraintError` (a ``ValueError``) for a name it does not know, listing the
    known ones, and for a schema file that is not JSON.
    """
    path = list_grammars().get(name)
    if path is None:
        known = ", ".join(list_grammars()) or "none found"
        raise ConstraintError(f"no grammar named {name!r} (known: {known}); see `structgen grammars`")
    text = path.read_text(encoding="utf-8")
    kind = kind_of(path)
    if kind == "regex":
        return Regex(text.strip())
    if kind in ("lark", "gbnf"):
        return Grammar(text, syntax=kind)
    try:
        return JsonSchema(json.loads(text))
    except json.JSONDecodeError as e:
        raise ConstraintError(f"grammar file {path} is not valid JSON: {e}") from e
