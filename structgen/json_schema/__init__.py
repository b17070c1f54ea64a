"""The JSON Schema front end: a schema → regex pieces and automata (never a guide).

Entry points: :func:`schema_to_regex`, :func:`schema_to_dfa`, :func:`schema_to_network`,
:func:`load_schema`, :func:`format_annotations`.
"""

from .dispatch import (
    CONSTRAINT_KEYWORDS,
    DEFAULT_WHITESPACE,
    format_annotations,
    load_schema,
    schema_to_dfa,
    schema_to_network,
    schema_to_regex,
)

__all__ = [
    "CONSTRAINT_KEYWORDS",
    "DEFAULT_WHITESPACE",
    "format_annotations",
    "load_schema",
    "schema_to_dfa",
    "schema_to_network",
    "schema_to_regex",
]
