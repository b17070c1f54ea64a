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

from .api import schema_to_dfa, schema_to_network, schema_to_regex
from .loading import format_annotations, load_schema
from .ops import CONSTRAINT_KEYWORDS
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
