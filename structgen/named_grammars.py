"""The ready-made constraints of ``grammars/``, by name (the CLI's ``--grammar``, vLLM's
``structgen_grammar``).

Named grammars are ``NAME.regex`` / ``NAME.schema.json`` files, looked up first in
``structgen/grammars/`` (where an installed wheel keeps them) and then in the ``grammars/`` folder
of the source checkout next to the package (an editable install or a plain checkout).

>>> kind, pattern = read_grammar("date")
>>> kind
'regex'
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .errors import ConstraintError

__all__ = ["REGEX_SUFFIX", "SCHEMA_SUFFIX", "grammar_dirs", "list_grammars", "read_grammar"]

REGEX_SUFFIX = ".regex"
SCHEMA_SUFFIX = ".schema.json"


def grammar_dirs() -> list[Path]:
    """The folders searched for named grammars, in order (only those that exist)."""
    here = Path(__file__).resolve().parent
    candidates = [here / "grammars", here.parent / "grammars"]
    return [d for d in candidates if d.is_dir()]


def list_grammars() -> dict[str, Path]:
    """Every named grammar: name -> file (the first folder that has a name wins)."""
    found: dict[str, Path] = {}
    for folder in grammar_dirs():
        for suffix in (REGEX_SUFFIX, SCHEMA_SUFFIX):
            for path in sorted(folder.glob("*" + suffix)):
                found.setdefault(path.name[: -len(suffix)], path)
    return dict(sorted(found.items()))


def read_grammar(name: str) -> tuple[str, Any]:
    """``("regex", pattern)`` or ``("schema", dict)`` for the grammar called ``name``.

    Raises :class:`ConstraintError` (a ``ValueError``) for a name it does not know, listing the
    known ones, and for a schema file that is not JSON.
    """
    path = list_grammars().get(name)
    if path is None:
        known = ", ".join(list_grammars()) or "none found"
        raise ConstraintError(f"no grammar named {name!r} (known: {known}); see `structgen grammars`")
    text = path.read_text(encoding="utf-8")
    if path.name.endswith(REGEX_SUFFIX):
        return "regex", text.strip()
    try:
        return "schema", json.loads(text)
    except json.JSONDecodeError as e:
        raise ConstraintError(f"grammar file {path} is not valid JSON: {e}") from e
