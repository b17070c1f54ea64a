"""The ready-made constraints of ``grammars/``, by name (the CLI's ``--grammar``, vLLM's
``structgen_grammar``).

Named grammars are ``NAME.regex`` / ``NAME.schema.json`` files, looked up first in
``structgen/grammars/`` (where an installed wheel keeps them) and then in the ``grammars/`` folder
of the source checkout next to the package (an editable install or a plain checkout). Context-free
grammars are ``NAME.lark`` / ``NAME.gbnf`` files in the same folders, read by
:func:`read_cfg_grammar` (compiled by :func:`structgen.cfg.compile_grammar`); :func:`read_grammar`
names them without reading them, until every caller compiles grammars.

>>> kind, pattern = read_grammar("date")
>>> kind
'regex'
>>> syntax, text = read_cfg_grammar("arithmetic")
>>> syntax, text.count("::=") > 3
('gbnf', True)
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .errors import ConstraintError

__all__ = [
    "CFG_SUFFIXES", "REGEX_SUFFIX", "SCHEMA_SUFFIX", "grammar_dirs", "list_cfg_grammars", "list_grammars",
    "read_cfg_grammar", "read_grammar",
]

REGEX_SUFFIX = ".regex"
SCHEMA_SUFFIX = ".schema.json"
#: The suffixes of context-free grammar files, and their syntax.
CFG_SUFFIXES = {".lark": "lark", ".gbnf": "gbnf"}


def grammar_dirs() -> list[Path]:
    """The folders searched for named grammars, in order (only those that exist)."""
    here = Path(__file__).resolve().parent
    candidates = [here / "grammars", here.parent / "grammars"]
    return [d for d in candidates if d.is_dir()]


def _list(suffixes: tuple[str, ...]) -> dict[str, Path]:
    found: dict[str, Path] = {}
    for folder in grammar_dirs():
        for suffix in suffixes:
            for path in sorted(folder.glob("*" + suffix)):
                found.setdefault(path.name[: -len(suffix)], path)
    return dict(sorted(found.items()))


def list_grammars() -> dict[str, Path]:
    """Every named regex or JSON Schema grammar: name -> file (the first folder that has a name wins)."""
    return _list((REGEX_SUFFIX, SCHEMA_SUFFIX))


def list_cfg_grammars() -> dict[str, Path]:
    """Every named context-free grammar (Lark or GBNF): name -> file."""
    return _list(tuple(CFG_SUFFIXES))


def read_cfg_grammar(name: str) -> tuple[str, str]:
    """``(syntax, text)`` of the context-free grammar called ``name`` (``syntax``: ``"lark"`` or
    ``"gbnf"``); :class:`ConstraintError` for a name it does not know, listing the known ones."""
    path = list_cfg_grammars().get(name)
    if path is None:
        known = ", ".join(list_cfg_grammars()) or "none found"
        raise ConstraintError(f"no context-free grammar named {name!r} (known: {known})")
    return CFG_SUFFIXES[path.suffix], path.read_text(encoding="utf-8")


def read_grammar(name: str) -> tuple[str, Any]:
    """``("regex", pattern)`` or ``("schema", dict)`` for the grammar called ``name``.

    Raises :class:`ConstraintError` (a ``ValueError``) for a name it does not know, listing the
    known ones, and for a schema file that is not JSON.
    """
    path = list_grammars().get(name)
    if path is None and name in list_cfg_grammars():
        raise ConstraintError(f"{name!r} is a context-free grammar ({list_cfg_grammars()[name].suffix[1:]}), which "
                              "this command does not take yet; compile it with structgen.cfg.compile_grammar")
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
