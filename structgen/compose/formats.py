"""The pieces a composed constraint is made of: free text, literals, regexes, JSON Schemas, spans of
documents, and the ways to put them together (sequence, choice, repetition, tags, triggered tags).

A *format* describes a set of byte strings. :func:`structgen.compose.compile_composed` turns one
into a single :class:`~structgen.Guide` (one network of automata), so token masks, fast-forward,
never-truncated budgets, the LogitsProcessor and the server work with it unchanged.

Free text is exact at its boundaries: :class:`Tag` around :class:`Text` ends the text at the
*first* occurrence of its end string, and :class:`Triggered` text never contains a trigger except
where a tag starts. Both are complements in the automata algebra (``text = anything - contains(s)``),
so a token that carries the end of the text and the start of what follows is allowed exactly when
its bytes are.

Example (XGrammar's "triggered tags", Hermes-style tool calls)::

    calls = Triggered(
        triggers=("<tool_call>",),
        tags=(Tag('<tool_call>\\n{"name": "get_weather", "arguments": ', JsonSchema(weather), "}\\n</tool_call>"),),
    )
    thinking = Tag("<think>", Text(), "</think>")
    fmt = Sequence(thinking, Regex(r"\\s{0,2}"), calls)

Every format has :meth:`Format.key`, a hashable value that identifies it (the compile cache's key).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Hashable, Union

from ..errors import ConstraintError

__all__ = [
    "Choice", "Extract", "Format", "JsonSchema", "Literal", "Regex", "Repeat", "Sequence", "Tag", "Text", "Triggered",
]

#: JSON Schema options' defaults (as in :func:`structgen.compile_json_schema`).
DEFAULT_WHITESPACE = r"[ ]?"


class Format:
    """Base class of the formats (see the module docstring)."""

    def key(self) -> Hashable:
        """A hashable value equal for equal formats (the compile cache's key)."""
        raise NotImplementedError


def _strings(values: Any, what: str) -> tuple[str, ...]:
    if isinstance(values, str):
        values = (values,)
    out = tuple(values)
    for v in out:
        if not isinstance(v, str) or not v:
            raise ConstraintError(f"{what}: every string must be non-empty text, got {v!r}")
    return out


@dataclass(frozen=True)
class Text(Format):
    """Any text (any bytes) that contains none of the strings of ``exclude``.

    Inside a :class:`Tag`, the text also ends at the first occurrence of the tag's end string.
    Alone or in a :class:`Sequence`, it is a plain language: ``Sequence(Text(), Literal("x"))``
    matches any string ending in ``x``; use a :class:`Tag` to mean "text up to the first x"."""

    exclude: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "exclude", _strings(self.exclude, "Text(exclude=...)"))

    def key(self) -> Hashable:
        return ("text", self.exclude)


@dataclass(frozen=True)
class Literal(Format):
    """Exactly ``text`` (UTF-8)."""

    text: str

    def key(self) -> Hashable:
        return ("literal", self.text)


@dataclass(frozen=True)
class Regex(Format):
    """The strings ``pattern`` full-matches (as :func:`structgen.compile_regex`)."""

    pattern: str

    def key(self) -> Hashable:
        return ("regex", self.pattern)


@dataclass(frozen=True, eq=False)
class JsonSchema(Format):
    """A JSON value valid under ``schema`` (a dict, JSON text or pydantic class), with the
    options of :func:`structgen.compile_json_schema` (``extract_from`` included).

    ``name`` only labels errors: a bad schema raises its :class:`~structgen.SchemaError` (with its
    JSON pointer) prefixed by ``name``."""

    schema: Any
    whitespace: str = DEFAULT_WHITESPACE
    key_order: str = "schema"
    extra_properties: bool = False
    dialect: str | None = None
    formats: dict[str, str] | None = None
    unknown_formats: str = "annotate"
    max_recursion_depth: int = 3
    extract_from: Union[str, tuple[str, ...], None] = None
    name: str = ""
    _text: str = field(default="", init=False, repr=False)

    def options_key(self) -> Hashable:
        formats = tuple(sorted((self.formats or {}).items()))
        docs = self.extract_from if not isinstance(self.extract_from, list) else tuple(self.extract_from)
        return (self.whitespace, self.key_order, self.extra_properties, self.dialect, formats, self.unknown_formats,
                self.max_recursion_depth, docs)

    def schema_text(self) -> str:
        """The schema as canonical JSON text (a pydantic class by its JSON Schema)."""
        if not self._text:
            schema = self.schema
            if isinstance(schema, type) and hasattr(schema, "model_json_schema"):
                schema = schema.model_json_schema()
            text = schema if isinstance(schema, str) else json.dumps(schema, sort_keys=True, ensure_ascii=False)
            object.__setattr__(self, "_text", text)
        return self._text

    def key(self) -> Hashable:
        return ("json", self.schema_text(), self.options_key())


@dataclass(frozen=True)
class Extract(Format):
    """A verbatim span of ``document`` (a string or several), as :func:`structgen.compile_extract`."""

    document: Union[str, tuple[str, ...]]
    min_length: int = 0
    max_length: int | None = None
    pattern: str | None = None

    def __post_init__(self) -> None:
        if isinstance(self.document, list):
            object.__setattr__(self, "document", tuple(self.document))

    def key(self) -> Hashable:
        return ("extract", self.document, self.min_length, self.max_length, self.pattern)


@dataclass(frozen=True, init=False)
class Sequence(Format):
    """Each of ``parts`` in turn (a plain concatenation)."""

    parts: tuple[Format, ...]

    def __init__(self, *parts: Format) -> None:
        object.__setattr__(self, "parts", _formats(parts, "Sequence"))

    def key(self) -> Hashable:
        return ("seq", tuple(p.key() for p in self.parts))


@dataclass(frozen=True, init=False)
class Choice(Format):
    """Any one of ``parts``."""

    parts: tuple[Format, ...]

    def __init__(self, *parts: Format) -> None:
        object.__setattr__(self, "parts", _formats(parts, "Choice"))
        if not self.parts:
            raise ConstraintError("Choice() needs at least one part")

    def key(self) -> Hashable:
        return ("choice", tuple(p.key() for p in self.parts))


@dataclass(frozen=True)
class Repeat(Format):
    """``part`` from ``min`` to ``max`` times (``None``: no limit), ``separator`` between two."""

    part: Format
    min: int = 0
    max: int | None = None
    separator: str = ""

    def __post_init__(self) -> None:
        _formats((self.part,), "Repeat")
        if self.min < 0 or (self.max is not None and self.max < max(self.min, 1)):
            raise ConstraintError(f"Repeat(min={self.min}, max={self.max}): not a range of counts")

    def key(self) -> Hashable:
        return ("repeat", self.part.key(), self.min, self.max, self.separator)


@dataclass(frozen=True)
class Tag(Format):
    """``begin``, then ``content``, then ``end``.

    With :class:`Text` content the text ends at the first occurrence of ``end`` (which must then
    be non-empty): ``Tag("<think>", Text(), "</think>")`` is a thinking block whose text never
    contains ``</think>``."""

    begin: str
    content: Format
    end: str

    def __post_init__(self) -> None:
        _formats((self.content,), "Tag")
        if isinstance(self.content, Text) and not self.end:
            raise ConstraintError(f"Tag({self.begin!r}, Text(), ''): free text needs a non-empty end string")

    def key(self) -> Hashable:
        return ("tag", self.begin, self.content.key(), self.end)


@dataclass(frozen=True)
class Triggered(Format):
    """Free text in which each occurrence of a trigger starts one of ``tags``.

    The output is free text, tags and free text again, from ``min`` to ``max`` tags (``None``: no
    limit). The free text never contains a trigger: the first occurrence of one is the start of a
    tag whose ``begin`` starts with that trigger (each tag's ``begin`` must start with exactly one
    trigger). ``min=1`` with ``max=1`` is "exactly one tag, text around it"."""

    triggers: tuple[str, ...]
    tags: tuple[Tag, ...]
    min: int = 0
    max: int | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "triggers", _strings(self.triggers, "Triggered(triggers=...)"))
        object.__setattr__(self, "tags", tuple(self.tags))
        if not self.triggers or not self.tags:
            raise ConstraintError("Triggered needs at least one trigger and one tag")
        for t in self.tags:
            if not isinstance(t, Tag):
                raise ConstraintError(f"Triggered(tags=...) holds Tag objects, not {type(t).__name__}")
            starts = [g for g in self.triggers if t.begin.startswith(g)]
            if len(starts) != 1:
                raise ConstraintError(
                    f"the tag beginning {t.begin!r} starts with {len(starts)} of the triggers {list(self.triggers)}; "
                    "each tag's begin must start with exactly one trigger")
        for a in self.triggers:
            for b in self.triggers:
                if a != b and a in b:
                    raise ConstraintError(f"trigger {a!r} occurs inside trigger {b!r}: {b!r} could never start a tag")
        if self.min < 0 or (self.max is not None and self.max < max(self.min, 1)):
            raise ConstraintError(f"Triggered(min={self.min}, max={self.max}): not a range of counts")

    def key(self) -> Hashable:
        return ("triggered", self.triggers, tuple(t.key() for t in self.tags), self.min, self.max)


def _formats(parts: Any, what: str) -> tuple[Format, ...]:
    out = tuple(parts)
    for p in out:
        if not isinstance(p, Format):
            raise ConstraintError(f"{what} holds formats (Text, Literal, Regex, JsonSchema, ...), not {p!r}")
    return out
