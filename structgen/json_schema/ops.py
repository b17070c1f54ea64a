"""Pure helpers on schema dicts and JSON values: equality and canonical text, cleaning and merging
("a and b" as one schema object), the walk of sub-schemas, JSON pointers, and the keyword sets.

Nothing here compiles: these are functions of dicts and strings that every part of the compiler
shares.

>>> equal(1, 1.0), equal(True, 1)
(True, False)
>>> merge({"type": ["integer", "string"], "minimum": 0}, {"type": "number", "minimum": 2}, "")
{'type': ['integer'], 'minimum': 2}
>>> pointer(["properties", "a/b"])
'/properties/a~1b'
"""

from __future__ import annotations

import contextlib
import json
import re
import threading
from json.encoder import encode_basestring
from typing import Any, Iterable, Iterator, Optional, Sequence, TypeVar, Union

from .._engine import JsonTexts, json_texts, walk_schemas
from ..errors import CompileBudgetExceeded, SchemaNotSupported, UnsatisfiableConstraint

__all__ = [
    "CONSTRAINT_KEYWORDS", "LEGACY_KEYWORDS", "LOWER_BOUNDS", "SCHEMA_LISTS", "SCHEMA_MAPS", "SCHEMA_VALUED", "TYPES",
    "UPPER_BOUNDS", "MergeClash", "Refs", "Schema", "Tokens", "TooDeep", "accepts_all", "canonical_json", "clean", "conj", "encoded",
    "equal", "merge", "no_alternative", "pointer", "type_set", "walk",
]

#: A JSON Schema: an object (whose keywords hold any JSON values) or a boolean.
Schema = Union[dict[str, Any], bool]
#: A place in a JSON document: the keys and array indices from its root (see :func:`pointer`).
Tokens = tuple[Union[str, int], ...]
#: The ``$ref`` targets (JSON pointers) a compile has entered on its way to a sub-schema, outermost
#: first: how deep it recurses (``max_recursion_depth``).
Refs = tuple[str, ...]

#: Every keyword of draft 2020-12 that constrains instances (the rest are annotations).
CONSTRAINT_KEYWORDS = frozenset({
    "$ref", "$dynamicRef", "type", "enum", "const", "multipleOf", "maximum", "exclusiveMaximum",
    "minimum", "exclusiveMinimum", "maxLength", "minLength", "pattern", "format", "maxItems",
    "minItems", "uniqueItems", "contains", "minContains", "maxContains", "maxProperties",
    "minProperties", "required", "dependentRequired", "allOf", "anyOf", "oneOf", "not", "if",
    "then", "else", "dependentSchemas", "prefixItems", "items", "properties", "patternProperties",
    "additionalProperties", "propertyNames", "unevaluatedItems", "unevaluatedProperties",
    "x-extract",  # structgen's: the string is a span of extract_from (see structgen.json_schema.spans)
})
#: Keywords whose value is one schema, a map of schemas, a list of schemas.
SCHEMA_VALUED = ("items", "additionalProperties", "not", "if", "then", "else", "contains", "propertyNames",
                 "unevaluatedItems", "unevaluatedProperties", "contentSchema")
SCHEMA_MAPS = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas")
SCHEMA_LISTS = ("prefixItems", "allOf", "anyOf", "oneOf")
#: Keywords of older drafts that 2020-12 dropped and that :mod:`.dialects` could not rewrite (a
#: ``$recursiveRef`` that is not a plain reference): refused rather than ignored.
LEGACY_KEYWORDS = ("$recursiveRef",)
TYPES = ("object", "array", "string", "number", "integer", "boolean", "null")
LOWER_BOUNDS = ("minLength", "minItems", "minProperties", "minimum", "exclusiveMinimum")
UPPER_BOUNDS = ("maxLength", "maxItems", "maxProperties", "maximum", "exclusiveMaximum")


class MergeClash(SchemaNotSupported):
    """Two schemas that must both hold do not merge keyword by keyword (intersected instead)."""


class TooDeep(CompileBudgetExceeded):
    """Recursion went past ``max_recursion_depth``; dropped where the recursive part is optional."""


E = TypeVar("E", bound=BaseException)


def detached(e: E) -> E:
    """``e`` without its traceback and the exception it was raised while handling, to be kept
    (a memo's error, a failed branch's): their frames would hold the whole compile in a cycle
    that only the cyclic collector frees. Its message and ``__cause__`` stay."""
    e.__context__ = None
    return e.with_traceback(None)


def no_alternative(errors: Sequence[Exception], message: str, path: str) -> Exception:
    """The error to raise when every alternative failed with ``errors``: recursion that went too
    deep first (a budget, not a property of the schema), else the one error, else ``message``."""
    for e in errors:
        if isinstance(e, TooDeep):
            return e
    if len(errors) == 1:
        return errors[0]
    return UnsatisfiableConstraint(message, path or "/")


def schema_text(s: Schema) -> str:
    """The JSON text of a (sub-)schema: keys in their order, characters as they are, what JSON
    cannot hold by its ``repr``. Equal texts compile alike (the compile's memo keys, and the
    compile cache's): the order of an object's ``properties`` is the order the engine writes its
    keys in, so schemas that differ only in it compile apart (sorted keys gave the second such
    schema the first one's guide).

    >>> schema_text({"type": "string", "$id": "é"})
    '{"type": "string", "$id": "é"}'
    """
    return _SCHEMA_ENCODER.encode(s)


#: :func:`schema_text`'s encoder, made once (``json.dumps`` with options makes one per call; the
#: compile's memo asks for the text of each sub-schema it compiles). Reentrant: it keeps no state.
_SCHEMA_ENCODER = json.JSONEncoder(ensure_ascii=False, default=repr)


#: Per thread, while a schema is compiled (:func:`texts_known`): the schema, its text, and the
#: texts of its objects (:class:`JsonTexts`; ``None`` where Python's encoder wrote it).
_KNOWN = threading.local()


def schema_texts(s: Schema) -> tuple[str, Optional[JsonTexts]]:
    """:func:`schema_text` of ``s`` and the texts of the objects inside it, written in one native
    walk (:func:`structgen._engine.json_texts`); ``(text, None)`` where a value is not written
    natively exactly as :func:`schema_text` writes it (Python's encoder writes it then)."""
    texts = json_texts(s)
    return (schema_text(s), None) if texts is None else (texts.text, texts)


@contextlib.contextmanager
def texts_known(s: Any, text: str, texts: Optional[JsonTexts]) -> Iterator[None]:
    """Within: :func:`known_text` answers from ``text`` and ``texts`` (:func:`schema_texts` of
    ``s``, made for the compile cache's key) for ``s`` and the objects inside it, in this thread.
    The compile of ``s`` runs within (the metaschema check, the ``$ref`` resolver and the
    compile's memo read sub-schema texts; written again, each character would be written once
    per level above it); nothing changes ``s`` meanwhile, and nothing outside a compile reads
    texts kept from an earlier one."""
    held = getattr(_KNOWN, "pair", None)
    _KNOWN.pair = (s, text, texts)
    try:
        yield
    finally:
        _KNOWN.pair = held


def known_text(s: Schema) -> str:
    """:func:`schema_text` of ``s``: read from the texts of the schema being compiled
    (:func:`texts_known`) where ``s`` is that very object or one inside it, else made now.

    >>> schema = {"type": "object", "properties": {"a": {"type": "string"}}}
    >>> with texts_known(schema, *schema_texts(schema)):
    ...     known_text(schema["properties"]["a"])
    '{"type": "string"}'
    """
    pair = getattr(_KNOWN, "pair", None)
    if pair is not None:
        if pair[0] is s:
            return pair[1]  # type: ignore[no-any-return]
        if pair[2] is not None and isinstance(s, dict):
            text = pair[2].text_of(s)
            if text is not None:
                return text  # type: ignore[no-any-return]
    return schema_text(s)


def root_text(root: Schema) -> str:
    """:func:`known_text` of the root a compile reads. Where the root is not the schema the
    cache key was made of (a schema rewritten into 2020-12), its texts are made now and read
    for the rest of the compile (:func:`texts_known`'s scope ends with it)."""
    pair = getattr(_KNOWN, "pair", None)
    if pair is None:
        return schema_text(root)
    if pair[0] is root or (pair[2] is not None and isinstance(root, dict) and pair[2].text_of(root) is not None):
        return known_text(root)
    text, texts = schema_texts(root)
    _KNOWN.pair = (root, text, texts)
    return text


def composed_text(items: Iterable[tuple[str, Any]]) -> str:
    """:func:`schema_text` of a new dict holding ``items``, from the texts :func:`known_text`
    knows of their values (the root without its definitions, checked on its own).

    >>> schema = {"$defs": {"a": {}}, "properties": {"b": {"type": "string"}}, "required": ["b"]}
    >>> composed_text((k, v) for k, v in schema.items() if k != "$defs")
    '{"properties": {"b": {"type": "string"}}, "required": ["b"]}'
    """
    held = list(items)
    if not all(type(k) is str for k, _ in held):
        return schema_text(dict(held))
    return "{" + ", ".join(f"{encode_basestring(k)}: {_value_text(v)}" for k, v in held) + "}"


def _value_text(v: Any) -> str:
    if isinstance(v, dict):
        return known_text(v)
    if type(v) is list:  # (a list of schemas: one level, each dict's text known)
        return "[" + ", ".join(known_text(x) if isinstance(x, dict) else schema_text(x) for x in v) + "]"
    return schema_text(v)


def pointer(tokens: Iterable[object]) -> str:
    """The JSON pointer of a path of keys and indices (``""`` for the root)."""
    return "".join("/" + pointer_token(t) for t in tokens)


def pointer_token(token: object) -> str:
    """One key or index as a JSON pointer writes it (``~`` and ``/`` escaped).

    >>> pointer_token("a/b~c"), pointer_token(3)
    ('a~1b~0c', '3')
    """
    text = token if type(token) is str else str(token)
    if "~" in text or "/" in text:
        text = text.replace("~", "~0").replace("/", "~1")
    return text


#: Each keyword that holds schemas, by its place in the walk: the one-schema keywords, the maps,
#: the lists, each in its tuple's order.
_PLACE: dict[str, int] = {key: place for place, key in enumerate(SCHEMA_VALUED + SCHEMA_MAPS + SCHEMA_LISTS)}
_MAPS, _LISTS = frozenset(SCHEMA_MAPS), frozenset(SCHEMA_LISTS)


def walk(schema: Any, tokens: Tokens = ()) -> Iterator[tuple[dict[str, Any], Tokens]]:
    """Every subschema (dicts only) with its path, following the keywords that hold schemas:
    depth first, a schema before its subschemas, the keywords in the order of
    :data:`SCHEMA_VALUED`, :data:`SCHEMA_MAPS`, :data:`SCHEMA_LISTS`. One native walk
    (:func:`structgen._engine.walk_schemas`): the front end walks a schema several times per compile.

    >>> [t for _, t in walk({"anyOf": [{}], "items": {"not": {}}, "properties": {"a": 1}})]
    [(), ('items',), ('items', 'not'), ('anyOf', 0)]
    """
    return iter(walk_schemas(schema, tokens, _PLACE, _MAPS, _LISTS))


def subschemas(sub: dict[str, Any]) -> list[dict[str, Any]]:
    """The subschemas (dicts) ``sub`` holds directly, under the keywords :func:`walk` follows.

    >>> subschemas({"items": {"type": "string"}, "anyOf": [{}, True], "properties": {"a": {}}, "enum": [{}]})
    [{'type': 'string'}, {}, {}]
    """
    out: list[dict[str, Any]] = []
    for key, value in sub.items():
        if key not in _PLACE:
            continue
        if key in _MAPS:
            if isinstance(value, dict):
                out.extend(v for v in value.values() if isinstance(v, dict))
        elif key in _LISTS:
            if isinstance(value, list):
                out.extend(v for v in value if isinstance(v, dict))
        elif isinstance(value, dict):
            out.append(value)
    return out


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def encoded(text: str) -> str:
    """``text`` as the inside of a JSON string; a lone surrogate (no UTF-8 form) as its ``\\u`` escape.

    >>> encoded('say "hi"\\n')
    'say \\\\"hi\\\\"\\\\n'
    """
    return _LONE_SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", encode_basestring(text)[1:-1])


# ---------------------------------------------------------------------------------------------
# JSON values


def equal(a: Any, b: Any) -> bool:
    """JSON equality as JSON Schema defines it (1 == 1.0, true != 1)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(equal(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(equal(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b


def canonical_json(v: Any) -> str:
    """One string per JSON value under JSON Schema equality (1 and 1.0 alike, key order ignored).

    >>> canonical_json({"b": 1.0, "a": [2]}) == canonical_json({"a": [2.0], "b": 1})
    True
    """
    return json.dumps(_integral(v), sort_keys=True)


def _integral(x: Any) -> Any:
    """``x`` with each integral float an int (a module function: a nested one that calls itself
    is a cycle per call)."""
    if isinstance(x, float) and x.is_integer():
        return int(x)
    if isinstance(x, list):
        return [_integral(y) for y in x]
    if isinstance(x, dict):
        return {k: _integral(y) for k, y in x.items()}
    return x


# ---------------------------------------------------------------------------------------------
# Schema algebra: cleaning and merging (conjunction) of schema objects


def accepts_all(schema: Any) -> bool:
    """Whether ``schema`` constrains nothing (``true``, or no constraining keyword)."""
    return schema is True or (isinstance(schema, dict) and not clean(schema))


#: The keywords :func:`clean` may drop (each where it has no effect).
_CLEANED = frozenset({
    "if", "then", "else", "minContains", "maxContains", "additionalProperties", "items", "propertyNames", "unevaluatedItems",
    "unevaluatedProperties", "uniqueItems", "not", "x-extract", "minLength", "minItems", "minProperties", "properties",
    "patternProperties", "dependentRequired", "dependentSchemas", "required",
})


def clean(schema: dict[str, Any]) -> dict[str, Any]:
    """The constraining keywords of ``schema``, without the ones that have no effect.

    >>> clean({"title": "x", "minLength": 0, "if": {"type": "string"}, "maxLength": 3})
    {'maxLength': 3}
    """
    out = {k: v for k, v in schema.items() if k in CONSTRAINT_KEYWORDS}
    if out.keys().isdisjoint(_CLEANED):
        return out  # (no keyword that may have no effect: a leaf's type, format, bounds)
    if "if" in out and "then" not in out and "else" not in out:
        del out["if"]
    if "if" not in out:
        out.pop("then", None)
        out.pop("else", None)
    if "contains" not in out:
        out.pop("minContains", None)
        out.pop("maxContains", None)
    for key in ("additionalProperties", "items", "propertyNames", "unevaluatedItems", "unevaluatedProperties"):
        if key in out and accepts_all(out[key]):
            del out[key]
    if out.get("uniqueItems") is False:
        del out["uniqueItems"]
    if out.get("not") is False:
        del out["not"]
    if out.get("x-extract") is False:
        del out["x-extract"]
    for key in ("minLength", "minItems", "minProperties"):
        if out.get(key) == 0:
            del out[key]
    for key in ("properties", "patternProperties", "dependentRequired", "dependentSchemas", "required"):
        if key in out and not out[key]:
            del out[key]
    return out


def conj(a: Schema, b: Schema) -> Schema:
    """A schema for "a and b" without looking inside (merged later, when compiled)."""
    if a is False or b is False:
        return False
    if accepts_all(a):
        return b
    if accepts_all(b) or equal(a, b):
        return a
    return {"allOf": [a, b]}


def type_set(t: Any) -> set[str]:
    """The names of a ``type`` keyword's value (one name or a list)."""
    return {t} if isinstance(t, str) else set(t)


def merge(a: Schema, b: Schema, path: str) -> Schema:
    """One schema object equivalent to "a and b" (both without top-level $ref/allOf); raises
    :class:`MergeClash` where two keywords do not combine into one."""
    if a is False or b is False:
        return False
    if a is True:
        return b if isinstance(b, bool) else clean(b)
    if b is True:
        return clean(a)
    a, b = clean(a), clean(b)
    out = dict(a)
    for key, vb in b.items():
        if key in ("properties", "additionalProperties", "patternProperties", "prefixItems", "items"):
            continue  # (combined below: they depend on each other)
        if key not in out:
            out[key] = vb
            continue
        va = out[key]
        if equal(va, vb):
            continue
        if key == "type":
            ta, tb = type_set(va), type_set(vb)
            both = (ta & tb) | ({"integer"} if ("integer" in ta and "number" in tb) or ("number" in ta and "integer" in tb) else set())
            if not both:
                return False
            out[key] = [t for t in TYPES if t in both]
        elif key in LOWER_BOUNDS:
            out[key] = max(va, vb)
        elif key in UPPER_BOUNDS:
            out[key] = min(va, vb)
        elif key == "required":
            out[key] = list(dict.fromkeys([*va, *vb]))
        elif key == "enum":
            out[key] = [x for x in va if any(equal(x, y) for y in vb)]
        elif key == "const":
            return False
        elif key == "uniqueItems":
            out[key] = True
        else:
            raise MergeClash(key, path, "two different values of it must hold at once (from $ref, allOf, anyOf or oneOf)")
    if any(k in side for side in (a, b) for k in ("prefixItems", "items")):
        # position i is constrained by each side's prefixItems[i], or by its items past its prefix
        pa, pb = a.get("prefixItems", []), b.get("prefixItems", [])
        ia, ib = a.get("items", True), b.get("items", True)
        for key in ("prefixItems", "items"):
            out.pop(key, None)
        prefix = [conj(pa[i] if i < len(pa) else ia, pb[i] if i < len(pb) else ib) for i in range(max(len(pa), len(pb)))]
        if prefix:
            out["prefixItems"] = prefix
        items = conj(ia, ib)
        if not accepts_all(items):
            out["items"] = items
    if "patternProperties" in a or "patternProperties" in b:
        # (a key's patterns apply beside its property, additionalProperties only to keys no
        # property or pattern names: where a side has additionalProperties, the other side's
        # properties and patterns must be among its own, as unevaluatedProperties writes them)
        for x, y in ((a, b), (b, a)):
            if not accepts_all(x.get("additionalProperties", True)) and not (
                    y.get("patternProperties", {}).keys() <= x.get("patternProperties", {}).keys()
                    and y.get("properties", {}).keys() <= x.get("properties", {}).keys()):
                raise MergeClash("patternProperties", path, "combining it with the additionalProperties of another "
                                 "schema that names other properties or patterns")
        pa, pb = a.get("patternProperties", {}), b.get("patternProperties", {})
        out["patternProperties"] = {k: conj(pa[k], pb[k]) if k in pa and k in pb else pa.get(k, pb.get(k)) for k in [*pa, *(k for k in pb if k not in pa)]}
    if any(k in side for side in (a, b) for k in ("properties", "additionalProperties")):
        pa, pb = a.get("properties", {}), b.get("properties", {})
        apa, apb = a.get("additionalProperties", True), b.get("additionalProperties", True)
        props = {k: conj(pa.get(k, apa), pb.get(k, apb)) for k in [*pa, *(k for k in pb if k not in pa)]}
        out.pop("properties", None)
        out.pop("additionalProperties", None)
        if props:
            out["properties"] = props
        additional = conj(apa, apb)
        if not accepts_all(additional):
            out["additionalProperties"] = additional
    return out
