"""Loading a schema: JSON text, dict or pydantic class → a dict checked against its metaschema and
rewritten into draft 2020-12 (:func:`load_2020_12`); the ``jsonschema`` validator that reads
``pattern`` and ``format`` exactly as our regexes do (:func:`validator_class`); and the formats
that are annotations only (:func:`format_annotations`, :func:`warn_annotations`).

>>> load_2020_12('{"$schema": "http://json-schema.org/draft-07/schema#", "definitions": {"a": {}}}', None)
{'$schema': 'http://json-schema.org/draft-07/schema#', '$defs': {'a': {}}}
"""

from __future__ import annotations

import functools
import json
import math
import warnings
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any, Callable, Iterator, Optional, Union
from urllib.parse import unquote

import jsonschema
from jsonschema import validators as _validators

from ..automata.unicode_props import regex_syntax_ok
from ..errors import AnnotationWarning, SchemaError, SchemaNotSupported, UnknownKeywordWarning
from .dialects import dialect_of, metaschema_validator, to_2020_12
from .ecma_pattern import compiled_pattern
from .metaschemas import fast_metaschema_check, flat_metaschema_validator
from .formats import FORMATS, FREE_STRING_FORMATS, NUMBER_FORMATS, compiled_format, format_regex
from .ops import Schema, composed_text, encoded, known_text, pointer, walk
from .options import SchemaOptions
from .unknown_keywords import KNOWN_KEYWORDS, near_keyword

__all__ = ["anchored", "annotation_warnings", "format_annotations", "load_2020_12", "load_schema", "validator_class", "warn_annotations"]


def load_schema(schema: Union[dict[str, Any], bool, str, type], *, dialect: Optional[str] = None) -> Schema:
    """Return ``schema`` as a dict or bool, checked against the metaschema of its dialect
    (``dialect``, else its ``$schema``, else draft 2020-12: see :mod:`.dialects`).

    Accepts a dict or bool (returned as is), a JSON string, or a pydantic model class (its
    ``model_json_schema()``; pydantic itself is never imported here). Raises :class:`SchemaError`
    naming the offending JSON pointer.

    >>> load_schema('{"type": "string"}')
    {'type': 'string'}
    """
    if isinstance(schema, str):
        try:
            schema = json.loads(schema)
        except json.JSONDecodeError as e:
            raise SchemaError(f"not valid JSON: {e.msg} at line {e.lineno} column {e.colno}") from e
    elif isinstance(schema, type) and callable(getattr(schema, "model_json_schema", None)):
        schema = getattr(schema, "model_json_schema")()
    elif not isinstance(schema, (dict, bool)):
        raise SchemaError(f"expected a dict, a bool, a JSON string or a pydantic model class, got {type(schema).__name__}")
    if not isinstance(schema, (dict, bool)):
        raise SchemaError(f"a JSON Schema is an object or a boolean, got {type(schema).__name__}")
    key = (id(schema), dialect)
    if _CHECKED.get(key) is schema:
        return schema
    validator = metaschema_validator(dialect_of(schema, dialect))
    try:
        for where, piece, text in _pieces(reached_part(schema)):
            _check(validator, where, piece, text)
    except SchemaError:
        raise
    except (RecursionError, ValueError) as e:  # (a schema that contains itself, or nests past Python's recursion limit)
        loop = _cycle(schema, ())
        if loop is not None:
            raise SchemaError("the schema contains itself here (a cycle of Python objects, which no JSON text can write: "
                              "write recursion with $ref)", pointer(loop)) from None
        if isinstance(e, RecursionError):
            raise SchemaError("the schema nests too deep for its metaschema check") from None
        raise
    _CHECKED[key] = schema
    while len(_CHECKED) > 64:
        _CHECKED.popitem(last=False)
    return schema


def _pieces(schema: Schema) -> Iterator[tuple[tuple[str, ...], Any, str]]:
    """The parts of ``schema`` checked on their own against the metaschema, each with its text:
    the root without its definitions, then each definition (a schema of its own there too). A
    bundle of definitions shared by many schemas (Kubernetes resources) is then checked once per
    distinct definition."""
    if not isinstance(schema, dict):
        yield (), schema, known_text(schema)
        return
    maps = [k for k in ("$defs", "definitions") if isinstance(schema.get(k), dict)]
    if maps:
        yield (), {k: v for k, v in schema.items() if k not in maps}, composed_text((k, v) for k, v in schema.items() if k not in maps)
    else:
        yield (), schema, known_text(schema)
    for m in maps:
        for name, sub in schema[m].items():
            yield (m, name), sub, known_text(sub)


def _check(validator: Any, where: tuple[str, ...], piece: Any, text: str) -> None:
    """``piece`` checked against ``validator``'s metaschema, once per distinct piece (``text``,
    its JSON text). A number JSON cannot write (``NaN``, ``Infinity``: Python's ``json.loads``
    reads them) is a :class:`SchemaError` naming its pointer."""
    if "NaN" in text or "Infinity" in text:  # (written bare where a number is one: look closer)
        try:
            json.dumps(piece, allow_nan=False)
        except ValueError:
            path, value = _non_finite(piece, where)
            raise SchemaError(f"{value!r} is not a JSON number (JSON has no NaN or Infinity)", pointer(path)) from None
    key = (validator, text)
    if key in _VALID_PIECES:
        _VALID_PIECES.move_to_end(key)
        return
    formats = _metaschema_formats(validator)
    fast = fast_metaschema_check(validator, formats)  # (the fast paths: see .metaschema_check, .metaschemas)
    if fast is not None:
        valid = fast(piece)
    else:
        flat = flat_metaschema_validator(validator, formats)
        valid = flat is not None and flat.is_valid(piece)
    if not valid:
        _check_slowly(validator, where, piece, formats)
    _VALID_PIECES[key] = None
    while len(_VALID_PIECES) > 4096:
        _VALID_PIECES.popitem(last=False)


def _non_finite(value: Any, where: tuple[str, ...]) -> tuple[tuple[str, ...], float]:
    """The place and value of the first number in ``value`` that JSON cannot write."""
    stack: list[tuple[tuple[str, ...], Any]] = [(where, value)]
    while stack:
        path, v = stack.pop()
        if isinstance(v, float) and not math.isfinite(v):
            return path, v
        if isinstance(v, dict):
            stack.extend((path + (str(k),), x) for k, x in reversed(list(v.items())))
        elif isinstance(v, list):
            stack.extend((path + (str(i),), x) for i, x in reversed(list(enumerate(v))))
    raise AssertionError("json.dumps refused a value with no NaN or Infinity in it")


def _cycle(value: Any, where: tuple[str, ...]) -> tuple[str, ...] | None:
    """The place in ``value`` of a dict or list that contains itself (a cycle of Python objects,
    which no JSON text can write), or ``None``. Depth first, without recursion.

    >>> loop: dict = {"type": "object"}
    >>> loop["properties"] = {"a": loop}
    >>> _cycle(loop, ())
    ('properties', 'a')
    """
    on_path: set[int] = set()
    stack: list[tuple[tuple[str, ...], Any, bool]] = [(where, value, False)]
    while stack:
        path, v, leaving = stack.pop()
        if leaving:
            on_path.discard(id(v))
            continue
        if not isinstance(v, (dict, list)):
            continue
        if id(v) in on_path:
            return path
        on_path.add(id(v))
        stack.append((path, v, True))
        items = v.items() if isinstance(v, dict) else enumerate(v)
        stack.extend((path + (str(k),), x, False) for k, x in items)
    return None


def _check_slowly(validator: Any, where: tuple[str, ...], piece: Any, formats: Any) -> None:
    """``jsonschema``'s own check of ``piece``, its error raised as ours."""
    try:
        validator.check_schema(piece, format_checker=formats)
    except jsonschema.exceptions.SchemaError as e:
        path = [*where, *e.absolute_path]
        if e.validator == "format" and e.validator_value == "regex":
            keyword = "pattern" if path and path[-1] == "pattern" else "patternProperties"
            raise SchemaNotSupported(keyword, pointer(path), f"{e.instance!r} is not a regex Python can read") from e
        raise SchemaError(e.message, pointer(path)) from e


#: Pieces of schemas found valid lately, by (metaschema validator, JSON text): a bound of 4,096.
_VALID_PIECES: "OrderedDict[tuple[Any, str], None]" = OrderedDict()


#: Schemas :func:`load_schema` checked lately, by ``id`` (held, so an id is not reused).
_CHECKED: "OrderedDict[tuple[int, Optional[str]], Schema]" = OrderedDict()


def load_2020_12(schema: Union[dict[str, Any], bool, str, type], dialect: Optional[str]) -> Schema:
    """:func:`load_schema`, then rewritten into draft 2020-12 (:func:`.dialects.to_2020_12`):
    what the compiler reads. Done once per compile."""
    root: Schema = to_2020_12(load_schema(schema, dialect=dialect), dialect)
    return root


def reached_part(schema: Schema) -> Schema:
    """``schema`` with only the top-level ``$defs`` / ``definitions`` entries that its ``$ref``s
    reach: definitions nothing uses cannot constrain an instance, and checking a large bundle of
    them against the metaschema (jsonschema: ~7 ms each) would dominate the compile. Any other
    form of reference keeps the whole schema.

    >>> reached_part({"$ref": "#/$defs/a", "$defs": {"a": {}, "b": {"type": 1}}})
    {'$ref': '#/$defs/a', '$defs': {'a': {}}}
    """
    if not isinstance(schema, dict) or not any(isinstance(schema.get(k), dict) for k in ("$defs", "definitions")):
        return schema
    maps = {k: schema[k] for k in ("$defs", "definitions") if isinstance(schema.get(k), dict)}
    kept: dict[str, dict[str, Any]] = {k: {} for k in maps}
    todo: list[Any] = [{k: v for k, v in schema.items() if k not in maps}]
    while todo:
        node = todo.pop()
        if isinstance(node, list):
            todo.extend(node)
        elif isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str):
                parts = ref[2:].split("/") if ref.startswith("#/") else []
                if len(parts) < 2 or parts[0] not in maps:
                    return schema  # (some other kind of reference: check everything)
                where = parts[0]
                name = unquote(parts[1]).replace("~1", "/").replace("~0", "~")
                if name not in maps[where]:
                    return schema
                if name not in kept[where]:
                    kept[where][name] = maps[where][name]
                    todo.append(maps[where][name])
            if "$id" in node or "$anchor" in node or "$dynamicRef" in node or "$dynamicAnchor" in node:
                return schema
            todo.extend(v for k, v in node.items() if k != "enum" and k != "const")
    return {**{k: v for k, v in schema.items() if k not in maps}, **kept}


@functools.lru_cache(maxsize=None)
def _metaschema_formats(validator: Any) -> Any:
    """The metaschema's format checker, with ``regex`` reading ECMA-262's ``\\p{..}`` too."""
    checker = jsonschema.FormatChecker()
    checker.checkers = dict(validator.FORMAT_CHECKER.checkers)
    checker.checks("regex")(regex_syntax_ok)
    return checker


# ---------------------------------------------------------------------------------------------
# The validator that reads pattern and format as our regexes do


def anchored(regex: str) -> str:
    """A custom format's regex (ECMA-262, matched against the whole string) as a ``pattern``."""
    return f"^(?:{regex})$"


def _pattern_keyword(validator: Any, pattern: str, instance: Any, schema: dict[str, Any]) -> Iterator[Any]:
    if validator.is_type(instance, "string") and not compiled_pattern(pattern).fullmatch(encoded(instance)):
        yield jsonschema.ValidationError(f"{instance!r} does not match {pattern!r}")


def _pattern_properties_keyword(
    validator: Any, patterns: dict[str, Any], instance: Any, schema: dict[str, Any],
) -> Iterator[Any]:
    if validator.is_type(instance, "object"):
        for pattern, sub in patterns.items():
            for key, value in instance.items():
                if compiled_pattern(pattern).fullmatch(encoded(key)):
                    yield from validator.descend(value, sub, path=key, schema_path=pattern)


def _format_keyword(custom: dict[str, str], unknown: str) -> Callable[..., Iterator[Any]]:
    def keyword(validator: Any, fmt: str, instance: Any, schema: dict[str, Any]) -> Iterator[Any]:
        if fmt in NUMBER_FORMATS and fmt not in custom and validator.is_type(instance, "number"):
            lo, hi = NUMBER_FORMATS[fmt]
            if not lo <= instance <= hi:
                yield jsonschema.ValidationError(f"{instance!r} is not a {fmt!r}")
        if not isinstance(instance, str):
            return
        if fmt in custom:
            if not compiled_pattern(anchored(custom[fmt])).fullmatch(encoded(instance)):
                yield jsonschema.ValidationError(f"{instance!r} is not a {fmt!r}")
        elif format_regex(fmt) is not None:
            if not compiled_format(fmt).fullmatch(instance):
                yield jsonschema.ValidationError(f"{instance!r} is not a {fmt!r}")
        elif fmt not in FREE_STRING_FORMATS and unknown == "error":
            raise SchemaNotSupported("format", "", f"unknown format {fmt!r}")

    return keyword


@functools.lru_cache(maxsize=32)
def _validator_class(custom: tuple[tuple[str, str], ...], unknown: str) -> Any:
    return _validators.extend(
        jsonschema.Draft202012Validator,
        {"pattern": _pattern_keyword, "patternProperties": _pattern_properties_keyword,
         "format": _format_keyword(dict(custom), unknown)},
    )


def validator_class(options: SchemaOptions) -> Any:
    """Draft 2020-12 with ``pattern`` and ``format`` read exactly as the regexes we emit read
    them (custom formats and ``unknown_formats`` from ``options``)."""
    return _validator_class(tuple(sorted(options.formats.items())), options.unknown_formats)


# ---------------------------------------------------------------------------------------------
# Formats that are annotations


def format_annotations(schema: Schema, formats: Optional[Mapping[str, str]] = None) -> list[tuple[str, str]]:
    """``(JSON pointer, name)`` of every ``format`` of a (2020-12) schema that structgen reads as an
    annotation only: neither built in nor in ``formats``.

    >>> format_annotations({"properties": {"p": {"type": "string", "format": "path"}}})
    [('/properties/p/format', 'path')]
    """
    return [(pointer(tokens + ("format",)), fmt) for sub, tokens in walk(schema) if (fmt := _annotation(sub, formats or {}))]


def _annotation(sub: dict[str, Any], custom: Mapping[str, str]) -> Optional[str]:
    """The ``format`` of ``sub`` if structgen reads it as an annotation only."""
    fmt = sub.get("format")
    if isinstance(fmt, str) and fmt not in custom and fmt not in FORMATS and fmt not in FREE_STRING_FORMATS:
        return fmt
    return None


def annotation_warnings(schema: Schema, options: SchemaOptions) -> tuple[AnnotationWarning, ...]:
    """The warnings a (2020-12) schema gives under ``options``: an :class:`UnknownKeywordWarning`
    per unknown keyword one edit from a keyword that constrains, then an
    :class:`AnnotationWarning` per unknown ``format`` (with ``unknown_formats="annotate"``); with
    ``unknown_keywords="error"``, :class:`SchemaNotSupported` for the first unknown keyword."""
    found: list[AnnotationWarning] = []
    annotations = []  # (one walk for both: warned about after the unknown keywords, as before)
    for sub, tokens in walk(schema):
        for key, value in sub.items():
            if key in KNOWN_KEYWORDS:
                continue
            near = near_keyword(key, value)
            if options.unknown_keywords == "error":
                hint = f" (did you mean {near!r}?)" if near else ""
                raise SchemaNotSupported(
                    key, pointer(tokens + (key,)), f"it is not a JSON Schema keyword{hint}, and unknown_keywords='error' refuses unknown keywords"
                )
            if near:
                found.append(UnknownKeywordWarning(key, pointer(tokens + (key,)), value, near))
        fmt = _annotation(sub, options.formats)
        if fmt:
            annotations.append((pointer(tokens + ("format",)), fmt))
    if options.unknown_formats == "annotate":
        found.extend(AnnotationWarning("format", path, fmt) for path, fmt in annotations)
    return tuple(found)


def warn_annotations(schema: Schema, options: SchemaOptions, stacklevel: int = 2) -> None:
    """Give :func:`annotation_warnings`, attributed to the caller's caller (``stacklevel``)."""
    for warning in annotation_warnings(schema, options):
        warnings.warn(warning, stacklevel=stacklevel + 1)