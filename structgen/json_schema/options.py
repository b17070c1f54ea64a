"""The options of a JSON Schema compile, validated once: :class:`SchemaOptions`.

>>> SchemaOptions(key_order="any").cache_key() == SchemaOptions(key_order="any").cache_key()
True
>>> SchemaOptions(whitespace="x")
Traceback (most recent call last):
...
structgen.errors.RegexNotSupported: ...characters other than JSON whitespace...
"""

from __future__ import annotations

import re
from collections.abc import Hashable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Optional

from ..automata.dfa import DEFAULT_MAX_STATES
from ..errors import RegexNotSupported, RegexSyntaxError
from .python_regex import matches_only

__all__ = ["DEFAULT_WHITESPACE", "SchemaOptions"]

#: At most one space between tokens: enough for readable output, too little to loop on.
DEFAULT_WHITESPACE = r"[ ]?"


@dataclass(frozen=True)
class SchemaOptions:
    """How a schema is compiled (the output's style and the budgets), checked on creation.

    Parameters
    ----------
    whitespace:
        Regex allowed once between any two JSON tokens; it must only match JSON whitespace
        (space, tab, line feed, carriage return). ``""`` gives compact output only.
    max_recursion_depth:
        How many times a ``$ref`` may re-enter a schema it is already inside where one finite
        automaton is needed, and how many levels a ``{}`` value nests there.
    max_states:
        The state budget of every automaton built on the way.
    key_order:
        ``"schema"``: declared properties in schema order; ``"any"``: in any order.
    extra_properties:
        Also write keys that ``additionalProperties`` / ``patternProperties`` allow beside
        declared properties.
    dialect:
        Read the schema in this draft whatever its ``$schema`` says (see :mod:`.dialects`).
    formats:
        Custom formats, ``{name: regex}`` (ECMA-262, matched against the whole string).
    unknown_formats:
        ``"annotate"``: any other ``format`` constrains nothing (and warns); ``"error"``: refused.
    unknown_keywords:
        ``"annotate"``: a keyword no vocabulary defines constrains nothing, as the specification
        reads it (one edit away from a keyword that constrains, it warns: "did you mean");
        ``"error"``: every unknown keyword is refused (see :mod:`.unknown_keywords`).

    Raises ``ValueError`` / ``TypeError`` for an option of the wrong kind, and
    :class:`RegexSyntaxError` / :class:`RegexNotSupported` for a ``whitespace`` that is not a
    regex of JSON whitespace.
    """

    whitespace: str = DEFAULT_WHITESPACE
    max_recursion_depth: int = 3
    max_states: int = DEFAULT_MAX_STATES
    key_order: str = "schema"
    extra_properties: bool = False
    dialect: Optional[str] = None
    # (a read-only copy; equal options hash alike without it)
    formats: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}), hash=False)
    unknown_formats: str = "annotate"
    # (checked on every compile call, cached or not: not part of the cache key)
    unknown_keywords: str = "annotate"

    def __post_init__(self) -> None:
        depth = self.max_recursion_depth
        if not isinstance(depth, int) or depth < 0:
            raise ValueError(f"max_recursion_depth must be a non-negative int, got {depth!r}")
        if self.whitespace and not matches_only(self.whitespace, " \t\n\r"):
            try:
                re.compile(self.whitespace)
            except re.error as e:
                raise RegexSyntaxError(self.whitespace, e.pos, e.msg) from e
            raise RegexNotSupported(self.whitespace, "characters other than JSON whitespace (space, \\t, \\n, \\r)")
        if self.key_order not in ("schema", "any"):
            raise ValueError(f"key_order must be 'schema' or 'any', got {self.key_order!r}")
        if self.unknown_formats not in ("annotate", "error"):
            raise ValueError(f"unknown_formats must be 'annotate' or 'error', got {self.unknown_formats!r}")
        if self.unknown_keywords not in ("annotate", "error"):
            raise ValueError(f"unknown_keywords must be 'annotate' or 'error', got {self.unknown_keywords!r}")
        formats = {} if self.formats is None else self.formats
        if not isinstance(formats, Mapping) or not all(isinstance(k, str) and isinstance(v, str) for k, v in formats.items()):
            raise TypeError("formats must be a dict of format names to regexes (strings)")
        object.__setattr__(self, "formats", MappingProxyType(dict(formats)))  # (frozen: set once, here)

    def cache_key(self) -> tuple[Hashable, ...]:
        """A hashable key that two options share exactly when they compile alike."""
        return (
            self.whitespace, self.max_recursion_depth, self.max_states, self.key_order, self.extra_properties,
            self.dialect, tuple(sorted(self.formats.items())), self.unknown_formats,
        )
