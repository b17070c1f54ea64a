"""The JSON Schema front end: a schema → expressions (terms of an expression pool) and automata
(never a guide).

Entry points: :func:`schema_to_regex`, :func:`schema_to_dfa`, :func:`schema_to_network`,
:func:`load_schema`, :func:`format_annotations`; :mod:`structgen.compiler` calls :func:`.api.prepare`
and :func:`.api.compile_schema` with one :class:`SchemaOptions`. The keyword coverage and the
departures from the specification: ``docs/json_schema.md``.

How it is built, bottom up: pure helpers (:mod:`.ops`, :mod:`.regex_text`, :mod:`.charsets`,
:mod:`.python_regex`), JSON's pieces as terms (:mod:`.terms`), the ``pattern`` and ``format``
languages (:mod:`.ecma_pattern`, :mod:`.formats`), loading (:mod:`.dialects`, :mod:`.loading`), the shared state of a compile
(:mod:`.refs`, :mod:`.calls`, :mod:`.spans`, :mod:`.context`), its parts (:mod:`.values`,
:mod:`.strings`, :mod:`.numbers`, :mod:`.arrays`, :mod:`.objects`, :mod:`.keywords`,
:mod:`.universe`), the dispatcher (:mod:`.dispatch`) and the entry points (:mod:`.api`).
"""

from typing import Any

from .options import DEFAULT_WHITESPACE, SchemaOptions

__all__ = [
    "CONSTRAINT_KEYWORDS",
    "DEFAULT_WHITESPACE",
    "SchemaOptions",
    "format_annotations",
    "load_schema",
    "schema_to_dfa",
    "schema_to_network",
    "schema_to_regex",
]

# The front end is imported on first use of its entry points: the options (what a format value
# holds, :mod:`structgen.formats`) come without jsonschema and the compile's modules.
_LAZY = {
    "CONSTRAINT_KEYWORDS": ".ops",
    "format_annotations": ".loading",
    "load_schema": ".loading",
    "schema_to_dfa": ".api",
    "schema_to_network": ".api",
    "schema_to_regex": ".api",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'structgen.json_schema' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value
