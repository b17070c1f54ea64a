"""What a constraint is: a *format* value. Every constraint structgen compiles is one, and one
function compiles them all (:func:`structgen.compile`).

Leaves: :class:`Regex`, :class:`JsonSchema` (with one :class:`SchemaOptions`), :class:`Grammar`
(Lark or GBNF), :class:`Extract` (verbatim spans of documents), :class:`Literal` and free
:class:`Text`. Combinators:
:class:`Sequence`, :class:`Choice`, :class:`Repeat`, :class:`Tag` and :class:`Triggered` (free text
in which a trigger starts a tag: tool calls). A format is immutable and hashable by
:meth:`Format.key`, the compile cache's key; its options are checked when it is made, so a format
that exists is one the compiler accepts.

Free text is exact at its boundaries: :class:`Tag` around :class:`Text` ends the text at the
*first* occurrence of its end string, and :class:`Triggered` text never contains a trigger except
where a tag starts (complements in the automata algebra, see :mod:`structgen.compose.build`).

Example (Hermes-style tool calls after a thinking block)::

    calls = Triggered(
        triggers=("<tool_call>",),
        tags=(Tag('<tool_call>\\n{"name": "get_weather", "arguments": ', JsonSchema(weather), "}\\n</tool_call>"),),
    )
    fmt = Sequence(Tag("<think>", Text(), "</think>"), Regex(r"\\s{0,2}"), calls)

>>> JsonSchema({"type": "integer"}, whitespace="").options.whitespace
''
>>> Regex.from_options("[0-9]+", {"max_state": 10})
Traceback (most recent call last):
...
structgen.errors.ConstraintError: unknown option 'max_state' for a regex (known: max_states)
"""

from __future__ import annotations

import dataclasses
import json
import types
import typing
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Hashable, Union

from .automata.dfa import DEFAULT_MAX_STATES
from .automata.spans import documents_key, normalize_documents
from .errors import ConstraintError
from .json_schema.ops import schema_text, schema_texts, texts_known
from .json_schema.options import DEFAULT_WHITESPACE, SchemaOptions

__all__ = [
    "DEFAULT_WHITESPACE", "Choice", "Extract", "Format", "Grammar", "JsonSchema", "Literal", "Regex", "Repeat",
    "SchemaOptions", "Sequence", "Tag", "Text", "Triggered", "option_names",
]


class Format:
    """Base class of the formats (see the module docstring)."""

    def key(self) -> Hashable:
        """A hashable value equal for equal formats (the compile cache's key)."""
        raise NotImplementedError

    def describe(self) -> str:
        """A short name for messages and logs."""
        text = repr(self)
        return text if len(text) <= 80 else text[:77] + "..."


def _short(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


# -- options given by name (a request's JSON, a CLI flag) ---------------------------------------------


def _accepts(hint: Any, value: Any) -> bool:
    """Whether ``value`` has the type ``hint`` names (the simple types options use)."""
    origin = typing.get_origin(hint)
    if origin is Union or origin is types.UnionType:
        return any(_accepts(h, value) for h in typing.get_args(hint))
    if hint is type(None):
        return value is None
    if hint is bool:
        return isinstance(value, bool)
    if hint is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if origin is not None:
        hint = origin
    if hint is Mapping or hint is dict:
        return isinstance(value, Mapping)
    return isinstance(value, hint) if isinstance(hint, type) else True


def _checked_options(cls: type, names: tuple[str, ...], values: Mapping[str, Any], what: str) -> dict[str, Any]:
    """``values`` checked against the fields ``names`` of the dataclass ``cls``: an unknown name
    or a value of the wrong type is a :class:`ConstraintError` that names it."""
    if not isinstance(values, Mapping):
        raise ConstraintError(f"the options of {_a(what)} are a mapping of names to values, not {type(values).__name__}")
    hints = typing.get_type_hints(cls)
    out: dict[str, Any] = {}
    for name, value in values.items():
        if name not in names:
            raise ConstraintError(f"unknown option {name!r} for {_a(what)} (known: {', '.join(sorted(names))})")
        if not _accepts(hints[name], value):
            raise ConstraintError(f"option {name} of {_a(what)} must be of type {_type_name(hints[name])}, not {value!r}")
        out[name] = value
    return out


def _a(what: str) -> str:
    return f"{'an' if what[0] in 'aeiou' else 'a'} {what}"


def _type_name(hint: Any) -> str:
    if typing.get_origin(hint) in (Union, types.UnionType):
        return " or ".join(_type_name(h) for h in typing.get_args(hint))
    if hint is type(None):
        return "null"
    origin = typing.get_origin(hint) or hint
    return {Mapping: "object", dict: "object"}.get(origin, getattr(origin, "__name__", str(origin)))


F = typing.TypeVar("F", bound="Format")


def _named_errors(make: typing.Callable[[], F]) -> F:
    """``make()``, with an option value it refuses (``TypeError`` / ``ValueError``) as a
    :class:`ConstraintError`: options given by name come from a request, not from code."""
    try:
        return make()
    except (TypeError, ValueError) as e:
        if isinstance(e, ConstraintError):
            raise
        raise ConstraintError(str(e)) from e


def option_names(kind: str) -> tuple[str, ...]:
    """The options a format of ``kind`` (``"regex"``, ``"json_schema"``, ``"extract"``,
    ``"grammar"``) takes by name.

    >>> option_names("extract")
    ('min_length', 'max_length', 'max_states')
    """
    if kind == "json_schema":
        return tuple(f.name for f in dataclasses.fields(SchemaOptions))
    if kind == "regex":
        return Regex.OPTIONS
    if kind == "extract":
        return Extract.OPTIONS
    if kind == "grammar":
        return Grammar.OPTIONS
    raise ValueError(f"no format kind {kind!r} (regex, json_schema, extract, grammar)")


# -- leaves ------------------------------------------------------------------------------------------


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

    def __post_init__(self) -> None:
        if not isinstance(self.text, str):
            raise TypeError(f"Literal needs a str, not {type(self.text).__name__}")

    def key(self) -> Hashable:
        return ("literal", self.text)


@dataclass(frozen=True)
class Regex(Format):
    """The strings ``pattern`` full-matches (Python syntax; see :func:`structgen.compile_regex`).
    ``max_states`` bounds every automaton built on the way (:class:`CompileBudgetExceeded`)."""

    pattern: str
    max_states: int = DEFAULT_MAX_STATES

    OPTIONS: ClassVar[tuple[str, ...]] = ("max_states",)

    def __post_init__(self) -> None:
        if not isinstance(self.pattern, str):
            raise TypeError(f"a regex pattern is a str, not {type(self.pattern).__name__}")
        _check_max_states(self.max_states)

    @classmethod
    def from_options(cls, pattern: str, options: Mapping[str, Any]) -> "Regex":
        """The format with ``options`` given by name (unknown ones are a :class:`ConstraintError`)."""
        values = _checked_options(cls, cls.OPTIONS, options, "regex")
        return _named_errors(lambda: cls(pattern, **values))

    def key(self) -> Hashable:
        return ("regex", self.pattern, self.max_states)

    def describe(self) -> str:
        return f"regex {_short(self.pattern)!r}"


def _check_max_states(n: Any) -> None:
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"max_states must be a positive int, got {n!r}")


@dataclass(frozen=True, eq=False, init=False)
class JsonSchema(Format):
    """A JSON value valid under ``schema`` (a dict or bool, JSON text, or a pydantic class),
    compiled with ``options`` (:class:`SchemaOptions`; or give the options as keywords:
    ``JsonSchema(schema, whitespace="")``). ``extract_from`` (a document or several): string
    values are verbatim spans of them (see :func:`structgen.compile_json_schema`).

    ``name`` labels errors only: inside a composed format, a bad schema raises its error
    (:class:`~structgen.SchemaError` with its JSON pointer, ...) with ``region`` set to ``name``.
    """

    schema: Any
    options: SchemaOptions
    extract_from: tuple[str, ...] | None
    name: str
    _text: str = field(repr=False)
    _texts: Any = field(repr=False)  # (the texts of the schema's objects: read by its compile)

    def __init__(self, schema: Any, options: SchemaOptions | None = None, *,
                 extract_from: str | typing.Sequence[str] | None = None, name: str = "", **option_values: Any) -> None:
        if options is None:
            options = SchemaOptions(**option_values)
        elif option_values:
            options = dataclasses.replace(options, **option_values)
        elif not isinstance(options, SchemaOptions):
            raise TypeError(f"options must be a SchemaOptions, not {type(options).__name__}")
        docs = None if extract_from is None else normalize_documents(extract_from)
        object.__setattr__(self, "schema", schema)
        object.__setattr__(self, "options", options)
        object.__setattr__(self, "extract_from", docs)
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "_text", "")
        object.__setattr__(self, "_texts", None)

    @classmethod
    def from_options(cls, schema: Any, options: Mapping[str, Any], *,
                     extract_from: str | typing.Sequence[str] | None = None, name: str = "") -> "JsonSchema":
        """The format with ``options`` given by name: the fields of :class:`SchemaOptions`
        (unknown ones, or values of the wrong type, are a :class:`ConstraintError`)."""
        values = _checked_options(SchemaOptions, option_names("json_schema"), options, "JSON Schema")
        return _named_errors(lambda: cls(schema, SchemaOptions(**values), extract_from=extract_from, name=name))

    def schema_text(self) -> str:
        """The schema as JSON text, its keys in their order (a pydantic class by its JSON Schema)."""
        if not self._text:
            schema = self.schema
            if isinstance(schema, type) and hasattr(schema, "model_json_schema"):
                schema = schema.model_json_schema()
            texts = None
            try:
                if isinstance(schema, str):  # (JSON text: written again, so that it shares its dict's guide)
                    text = schema_text(json.loads(schema))
                else:
                    text, texts = schema_texts(schema)  # (its objects' texts too: its compile reads them)
            except (TypeError, ValueError):  # not JSON: the compile names the problem (SchemaError)
                text = schema if isinstance(schema, str) else repr(schema)
            object.__setattr__(self, "_text", text)
            object.__setattr__(self, "_texts", texts)
        return self._text

    def texts_known(self) -> typing.ContextManager[None]:
        """The scope of this schema's compile: the texts of its objects, written with
        :meth:`schema_text`, are read there (:func:`.json_schema.ops.texts_known`)."""
        return texts_known(self.schema, self.schema_text(), self._texts)

    def key(self) -> Hashable:
        docs = None if self.extract_from is None else documents_key(self.extract_from)
        return ("json", self.schema_text(), self.options.cache_key(), self.options.unknown_keywords, docs)

    def describe(self) -> str:
        title = self.schema.get("title") if isinstance(self.schema, dict) else None
        return f"JSON Schema {_short(title if isinstance(title, str) else self.schema_text())!r}"


#: The grammar syntaxes :class:`Grammar` reads (``"ebnf"`` is read as GBNF).
GRAMMAR_SYNTAXES = ("lark", "gbnf", "ebnf")


@dataclass(frozen=True)
class Grammar(Format):
    """The strings a context-free grammar derives: ``text`` in Lark (``start`` is the start rule)
    or GBNF / EBNF (``root``) syntax; ``syntax=None`` reads GBNF when a line holds ``::=`` (as
    vLLM decides), else Lark. ``start`` names another start rule. ``max_states`` bounds every
    automaton built eagerly (a Lark terminal with look-arounds), ``max_terms`` what removing
    recursion may build (``None``: the front end's default), ``schema_options`` how Lark's
    ``%json {...}`` schemas compile. See ``docs/grammars.md`` and :mod:`structgen.cfg`.

    >>> print(Grammar('root ::= "a"+').describe())
    grammar 'root ::= "a"+'
    """

    text: str
    syntax: str | None = None
    start: str | None = None
    max_states: int = DEFAULT_MAX_STATES
    max_terms: int | None = None
    schema_options: SchemaOptions = field(default_factory=SchemaOptions)

    OPTIONS: ClassVar[tuple[str, ...]] = ("syntax", "start", "max_states", "max_terms")

    def __post_init__(self) -> None:
        if not isinstance(self.text, str):
            raise TypeError(f"a grammar is a str, not {type(self.text).__name__}")
        if self.syntax is not None and self.syntax not in GRAMMAR_SYNTAXES:
            raise ConstraintError(f"grammar syntax must be one of {', '.join(GRAMMAR_SYNTAXES)} (or None to detect it), "
                                  f"not {self.syntax!r}")
        _check_max_states(self.max_states)
        if self.max_terms is not None:
            _check_max_states(self.max_terms)
        if not isinstance(self.schema_options, SchemaOptions):
            raise TypeError(f"schema_options must be a SchemaOptions, not {type(self.schema_options).__name__}")

    @classmethod
    def from_options(cls, text: str, options: Mapping[str, Any]) -> "Grammar":
        """The format with ``options`` given by name (unknown ones are a :class:`ConstraintError`)."""
        values = _checked_options(cls, cls.OPTIONS, options, "grammar")
        return _named_errors(lambda: cls(text, **values))

    def key(self) -> Hashable:
        return ("grammar", self.text, self.syntax, self.start, self.max_states, self.max_terms,
                self.schema_options.cache_key(), self.schema_options.unknown_keywords)

    def describe(self) -> str:
        return f"grammar {_short(self.text.strip())!r}"


@dataclass(frozen=True)
class Extract(Format):
    """A verbatim span of ``document`` (a string or several), from ``min_length`` to
    ``max_length`` characters, matching ``pattern`` when given (as :func:`structgen.compile_extract`)."""

    document: Union[str, typing.Sequence[str]]
    min_length: int = 0
    max_length: int | None = None
    pattern: str | None = None
    max_states: int = DEFAULT_MAX_STATES

    OPTIONS: ClassVar[tuple[str, ...]] = ("min_length", "max_length", "max_states")

    def __post_init__(self) -> None:
        object.__setattr__(self, "document", normalize_documents(self.document, name="document"))
        if isinstance(self.min_length, bool) or not isinstance(self.min_length, int) or self.min_length < 0:
            raise ValueError(f"min_length must be a non-negative int, got {self.min_length!r}")
        if self.max_length is not None and (isinstance(self.max_length, bool) or not isinstance(self.max_length, int)):
            raise ValueError(f"max_length must be an int or None, got {self.max_length!r}")
        _check_max_states(self.max_states)

    @classmethod
    def from_options(cls, documents: str | typing.Sequence[str], pattern: str | None,
                     options: Mapping[str, Any]) -> "Extract":
        """The format with ``options`` given by name (unknown ones are a :class:`ConstraintError`)."""
        values = _checked_options(cls, cls.OPTIONS, options, "extract constraint")
        docs = tuple(documents) if not isinstance(documents, str) else documents
        return _named_errors(lambda: cls(docs, pattern=pattern, **values))

    @property
    def documents(self) -> tuple[str, ...]:
        """The documents, as a tuple."""
        assert isinstance(self.document, tuple)
        return self.document

    def key(self) -> Hashable:
        return ("extract", documents_key(self.documents), self.min_length, self.max_length, self.pattern,
                self.max_states)

    def describe(self) -> str:
        return f"spans of {len(self.documents)} document(s) {_short(self.documents[0], 40)!r}"


# -- combinators -------------------------------------------------------------------------------------


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
