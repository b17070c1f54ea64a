"""JSON Schema (draft 2020-12) → a regex whose language is the serialisations of the valid instances.

Older drafts (draft-04, -06, -07, 2019-09, by ``$schema`` or ``dialect=``) are first rewritten into
2020-12 by :mod:`structgen.json_dialects`; the table below is about 2020-12 keywords.

The regex is matched with full-match semantics; between two JSON tokens (after ``{ [ , :`` and
before ``} ] , :``) it allows one match of the ``whitespace`` regex, so both ``json.dumps(x)`` and
``json.dumps(x, separators=(",", ":"))`` (``ensure_ascii=False``) of an instance we cover match.

**Soundness first**: every string the regex matches parses with ``json.loads`` and is valid under
the schema. A keyword that cannot be enforced exactly raises :class:`SchemaNotSupported` (with the
keyword and a JSON pointer) at compile time; it is never ignored. Completeness gaps — valid
instances the regex rejects — are allowed and listed here.

=====================================  =========================================================
keyword                                coverage
=====================================  =========================================================
``type`` (one or a list)               exact; ``integer`` is written without fraction/exponent
                                       (``1.0`` is rejected), numbers as JSON numbers
``enum`` / ``const``                   exact for any JSON values: each value is checked against
                                       the whole schema with ``jsonschema`` (so every sibling
                                       keyword holds; ``pattern`` and ``format`` read as our
                                       regexes read them), then spelled canonically (keys in
                                       the value's order, whitespace between tokens; an integer
                                       also as ``1.0`` while that float is exact)
``properties`` / ``required``          properties appear in schema order (``key_order="any"``:
                                       any order, any number of keys, in a network; up to 5
                                       inside the algebra); optional ones may
                                       be left out; required names missing from ``properties``
                                       are emitted with the ``additionalProperties`` schema
``additionalProperties``               ``false``: exact. With declared properties, extra keys are
                                       emitted only with ``extra_properties=True`` (never a
                                       declared name, never a duplicate of one). Without any,
                                       ``{"key": value, ...}`` with free keys and values under
                                       the schema
``items`` / ``prefixItems``            exact, with ``minItems`` / ``maxItems``
``minLength`` / ``maxLength``          exact, in code points (an escape is one character)
``pattern``                            ECMA-262 search semantics, translated per character (see
                                       :mod:`structgen.json_formats`), ``\\p{..}`` general
                                       categories included (:mod:`structgen.unicode_props`);
                                       with min/maxLength exactly combined, or the automata
                                       intersected; next to ``format``, intersected with it
``format``                             date, time, date-time, duration, uuid, ipv4, ipv6,
                                       hostname, email, uri, uri-reference, json-pointer,
                                       relative-json-pointer, byte (base64) enforced (hostname
                                       and email are under-approximations keeping RFC length
                                       limits; quoted e-mail local parts, IPvFuture and pointer
                                       characters JSON escapes are left out); iri,
                                       iri-reference, idn-email, idn-hostname, regex as ASCII
                                       under-approximations; int32 / int64 bound numbers;
                                       float, double, binary, password constrain nothing;
                                       ``formats={name: regex}`` custom formats enforced; any
                                       other format is an annotation (an
                                       :class:`~structgen.errors.AnnotationWarning` names it;
                                       ``unknown_formats="error"`` refuses it)
``minimum`` / ``maximum`` / exclusive  exact for integers (digit-range regexes); for numbers
                                       exact on numbers written without exponent (strict
                                       bounds: a fraction has at most 15 digits, see
                                       :mod:`structgen.json_numbers`)
``multipleOf``                         a remainder automaton over the digits, exact without
                                       exponent; a non-integer ``multipleOf`` only when it is a
                                       binary fraction (``1.5``; ``0.1`` is refused: jsonschema
                                       divides floats inexactly)
``anyOf``                              exact (siblings are distributed into each branch)
``oneOf``                              provably disjoint branches: a union; otherwise each
                                       branch minus the over-approximations of the others
``allOf`` / ``$ref`` with siblings     merged keyword by keyword where possible (bounds
                                       tightened, types and enums intersected, properties
                                       combined); otherwise the automata are intersected
``not``                                the positive language (made canonical) minus an
                                       over-approximation of the negated schema (see
                                       :mod:`structgen.json_algebra`); refused when nothing is
                                       left
``if`` / ``then`` / ``else``           (if ∩ then) ∪ (else minus over-approximated if)
``$ref``, ``$defs``, ``definitions``   local references ``#``, ``#/json/pointer``, ``#anchor``;
                                       in a network (:func:`schema_to_network`) a recursive
                                       target is an automaton that calls itself: exact. Where
                                       one finite automaton is needed (the algebra, and
                                       :func:`schema_to_dfa`) a schema is re-entered at most
                                       ``max_recursion_depth`` times, beyond which an optional
                                       recursive part (optional property, ``anyOf`` branch,
                                       array items past ``minItems``) is dropped; a schema that
                                       needs deeper recursion raises
                                       :class:`CompileBudgetExceeded`. Remote references and an
                                       embedded ``$id`` next to a ``$ref`` are refused
``{}`` / ``true``                      any JSON value (in a network: an automaton calling
                                       itself, any depth up to the guide's nesting bound;
                                       otherwise nested at most ``max_recursion_depth`` levels)
``false``                              :class:`UnsatisfiableConstraint`
``patternProperties``,                 exact, with the object automaton of
``propertyNames``,                     :mod:`structgen.json_objects` (extra keys are written as
``minProperties`` / ``maxProperties``  ``json.dumps`` escapes them, never a declared name; next
                                       to patterns with classes they are printable ASCII; extra
                                       keys count once toward ``minProperties``)
``dependentRequired``,                 objects without the key, or with it and what it requires
``dependentSchemas``                   (a union, one key at a time)
``contains``, ``minContains``,         the array language intersected with "lo..hi items valid
``maxContains``                        under contains"; with a maximum the other items are the
                                       canonical values outside its over-approximation
``unevaluatedProperties`` /            rewritten as ``additionalProperties`` / ``items`` over
``unevaluatedItems``                   what the schema and its ``allOf`` / ``$ref`` evaluate;
                                       next to ``anyOf``, ``oneOf``, ``if``,
                                       ``dependentSchemas`` or ``contains`` (branch-dependent
                                       annotations) refused
``uniqueItems: true``                  when items come from a finite set of values (``enum``,
                                       ``const``, ``boolean``, ``null``): at most one item equal
                                       to each value; or when at most one item can appear; else
                                       refused
``$dynamicRef``                        refused
annotations, unknown keywords          ignored, as the specification says — except
                                       ``dependencies`` and ``definitions`` (read as the older
                                       drafts meant them) and a ``$recursiveRef`` that is not a
                                       plain reference (refused, not silently lost)
=====================================  =========================================================
"""

from __future__ import annotations

import functools
import itertools
import json
from collections import OrderedDict
import re
import math
import warnings
from typing import TYPE_CHECKING, Any, Callable, Iterator, Optional, Sequence, Union
from urllib.parse import unquote

import jsonschema
import referencing
from jsonschema import validators as _validators

from ..errors import (
    AnnotationWarning,
    CompileBudgetExceeded,
    ConstraintError,
    RegexNotSupported,
    RegexSyntaxError,
    SchemaError,
    SchemaNotSupported,
    UnsatisfiableConstraint,
)
from ..automata.dfa import DEFAULT_MAX_STATES, ByteDFA
from .dialects import _join, dialect_of, metaschema_validator, to_2020_12
from ..automata.markers import call_index, call_marker, slot_marker
from ..automata.regex import regex_to_dfa, slotted_regex_to_dfa
from ..automata.spans import normalize_documents
from ..automata.unicode_props import regex_syntax_ok
from .spans import SpanStrings
from .universe import _AlgebraMixin
from .keywords import _KeywordsMixin
from .objects import _ObjectsMixin
from .numbers import _NumbersMixin
from .formats import (
    CHAR,
    FORMATS,
    FREE_STRING_FORMATS,
    NUMBER,
    NUMBER_FORMATS,
    STRING,
    compiled_format,
    compiled_pattern,
    format_regex,
    has_assertions,
    literal,
    matches_only,
    pattern_regex,
    quantify,
    regex_width,
)

__all__ = [
    "DEFAULT_WHITESPACE", "MAX_REGEX_SIZE", "format_annotations", "load_schema", "schema_to_dfa", "schema_to_network",
    "schema_to_regex",
]

#: At most one space between tokens: enough for readable output, too little to loop on.
DEFAULT_WHITESPACE = r"[ ]?"
#: Regexes longer than this many characters raise :class:`CompileBudgetExceeded`.
MAX_REGEX_SIZE = 1_000_000
#: In a network (:func:`schema_to_network`), a sub-schema whose regex weighs more than this
#: (:func:`regex_weight`: about the NFA positions it expands to) becomes an automaton of its own
#: that its users call (equal regexes share one), instead of a copy at every use. ``$ref``
#: targets that recurse are always called.
CALL_THRESHOLD = 200


def regex_weight(regex: str, slot_weight: Optional[Callable[[str], int]] = None) -> int:
    """About how many character positions ``regex`` expands to: a class counts 4 (UTF-8 paths),
    ``x{m,n}`` counts ``max(m, n)`` copies of ``x``, an alternation the sum of its options.

    >>> regex_weight("ab"), regex_weight("[a-z]{0,10}"), regex_weight("(?:ab|c)*")
    (2, 40, 3)
    """
    stack: list[list[int]] = [[0, 0]]  # per open group: [total of finished options, current option]
    last = 0  # weight of the last atom (what a quantifier repeats)
    i, n = 0, len(regex)
    while i < n:
        c = regex[i]
        if c == "\\":
            i += 2
            last = 1
            stack[-1][1] += 1
            continue
        if c == "[":
            j = i + 1
            if j < n and regex[j] == "^":
                j += 1
            if j < n and regex[j] == "]":
                j += 1
            while j < n and regex[j] != "]":
                j += 2 if regex[j] == "\\" else 1
            i = j + 1
            last = 4
            stack[-1][1] += 4
            continue
        if c == "(":
            stack.append([0, 0])
            i += 3 if regex.startswith("(?:", i) else 1
            continue
        if c == ")" and len(stack) > 1:
            total, cur = stack.pop()
            last = total + cur
            stack[-1][1] += last
            i += 1
            continue
        if c == "|":
            stack[-1][0] += stack[-1][1]
            stack[-1][1] = 0
            i += 1
            continue
        if c in "*+?":
            i += 1
            continue
        if c == "{":
            j = regex.find("}", i)
            body = regex[i + 1 : j] if j > 0 else ""
            parts = body.split(",")
            if j > 0 and 1 <= len(parts) <= 2 and all(p.isdigit() or p == "" for p in parts) and parts[0]:
                copies = max(int(p) for p in parts if p) if parts[-1] else int(parts[0]) + 1
                stack[-1][1] += last * (max(copies, 1) - 1)
                i = j + 1
                continue
        last = slot_weight(c) if slot_weight is not None and 0xD800 <= ord(c) < 0xDC00 else 1
        stack[-1][1] += last
        i += 1
    while len(stack) > 1:
        total, cur = stack.pop()
        stack[-1][1] += total + cur
    return stack[0][0] + stack[0][1]

if TYPE_CHECKING:
    from ..automata.network import Network

Schema = Union[dict, bool]

#: Every keyword of draft 2020-12 that constrains instances (the rest are annotations).
CONSTRAINT_KEYWORDS = frozenset({
    "$ref", "$dynamicRef", "type", "enum", "const", "multipleOf", "maximum", "exclusiveMaximum",
    "minimum", "exclusiveMinimum", "maxLength", "minLength", "pattern", "format", "maxItems",
    "minItems", "uniqueItems", "contains", "minContains", "maxContains", "maxProperties",
    "minProperties", "required", "dependentRequired", "allOf", "anyOf", "oneOf", "not", "if",
    "then", "else", "dependentSchemas", "prefixItems", "items", "properties", "patternProperties",
    "additionalProperties", "propertyNames", "unevaluatedItems", "unevaluatedProperties",
    "x-extract",  # structgen's: the string is a span of extract_from (see structgen.spans)
})
_SCHEMA_VALUED = ("items", "additionalProperties", "not", "if", "then", "else", "contains", "propertyNames",
                  "unevaluatedItems", "unevaluatedProperties", "contentSchema")
_SCHEMA_MAPS = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas")
_SCHEMA_LISTS = ("prefixItems", "allOf", "anyOf", "oneOf")
#: Keywords of older drafts that 2020-12 dropped and that :mod:`structgen.json_dialects` could not
#: rewrite (a ``$recursiveRef`` that is not a plain reference): refused rather than ignored.
_LEGACY_KEYWORDS = ("$recursiveRef",)
_TYPES = ("object", "array", "string", "number", "integer", "boolean", "null")
_LOWER_BOUNDS = ("minLength", "minItems", "minProperties", "minimum", "exclusiveMinimum")
_UPPER_BOUNDS = ("maxLength", "maxItems", "maxProperties", "maximum", "exclusiveMaximum")


#: Formats whose regex keeps under the RFC's length limit by dropping some long valid values.
_CAPPED_FORMATS = ("hostname", "email", "idn-hostname", "idn-email")


class _MergeClash(SchemaNotSupported):
    """Two schemas that must both hold do not merge keyword by keyword (intersected instead)."""


class _TooDeep(CompileBudgetExceeded):
    """Recursion went past ``max_recursion_depth``; dropped where the recursive part is optional."""


# ---------------------------------------------------------------------------------------------
# Loading


def load_schema(schema: Union[dict, bool, str, type], *, dialect: Optional[str] = None) -> Schema:
    """Return ``schema`` as a dict or bool, checked against the metaschema of its dialect
    (``dialect``, else its ``$schema``, else draft 2020-12: see :mod:`structgen.json_dialects`).

    Accepts a dict or bool (returned as is), a JSON string, or a pydantic model class (its
    ``model_json_schema()``; pydantic itself is never imported here). Raises :class:`SchemaError`
    naming the offending JSON pointer.
    """
    if isinstance(schema, str):
        try:
            schema = json.loads(schema)
        except json.JSONDecodeError as e:
            raise SchemaError(f"not valid JSON: {e.msg} at line {e.lineno} column {e.colno}") from e
    elif isinstance(schema, type) and callable(getattr(schema, "model_json_schema", None)):
        schema = schema.model_json_schema()
    elif not isinstance(schema, (dict, bool)):
        raise SchemaError(f"expected a dict, a bool, a JSON string or a pydantic model class, got {type(schema).__name__}")
    if not isinstance(schema, (dict, bool)):
        raise SchemaError(f"a JSON Schema is an object or a boolean, got {type(schema).__name__}")
    key = (id(schema), dialect)
    if _CHECKED.get(key) is schema:
        return schema
    validator = metaschema_validator(dialect_of(schema, dialect))
    try:
        validator.check_schema(_reached_part(schema), format_checker=_metaschema_formats(validator))
    except jsonschema.exceptions.SchemaError as e:
        if e.validator == "format" and e.validator_value == "regex":
            keyword = "pattern" if e.absolute_path and e.absolute_path[-1] == "pattern" else "patternProperties"
            raise SchemaNotSupported(keyword, _pointer(e.absolute_path), f"{e.instance!r} is not a regex Python can read") from e
        raise SchemaError(e.message, _pointer(e.absolute_path)) from e
    _CHECKED[key] = schema
    while len(_CHECKED) > 64:
        _CHECKED.popitem(last=False)
    return schema


#: Schemas :func:`load_schema` checked lately, by ``id`` (held, so an id is not reused).
_CHECKED: "OrderedDict[tuple[int, Optional[str]], Any]" = OrderedDict()


def _reached_part(schema: Schema) -> Schema:
    """``schema`` with only the top-level ``$defs`` / ``definitions`` entries that its ``$ref``s
    reach: definitions nothing uses cannot constrain an instance, and checking a large bundle of
    them against the metaschema (jsonschema: ~7 ms each) would dominate the compile. Any other
    form of reference keeps the whole schema."""
    if not isinstance(schema, dict) or not any(isinstance(schema.get(k), dict) for k in ("$defs", "definitions")):
        return schema
    maps = {k: schema[k] for k in ("$defs", "definitions") if isinstance(schema.get(k), dict)}
    kept: dict[str, dict] = {k: {} for k in maps}
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


def _pointer(tokens: Any) -> str:
    return "".join("/" + str(t).replace("~", "~0").replace("/", "~1") for t in tokens)


def _walk(schema: Any, tokens: tuple = ()) -> Iterator[tuple[dict, tuple]]:
    """Every subschema (dicts only) with its path, following the keywords that hold schemas."""
    if not isinstance(schema, dict):
        return
    yield schema, tokens
    for key in _SCHEMA_VALUED:
        if key in schema:
            yield from _walk(schema[key], tokens + (key,))
    for key in _SCHEMA_MAPS:
        if isinstance(schema.get(key), dict):
            for name, sub in schema[key].items():
                yield from _walk(sub, tokens + (key, name))
    for key in _SCHEMA_LISTS:
        if isinstance(schema.get(key), list):
            for i, sub in enumerate(schema[key]):
                yield from _walk(sub, tokens + (key, i))


# ---------------------------------------------------------------------------------------------
# Schema algebra: cleaning and merging (conjunction) of schema objects


def _equal(a: Any, b: Any) -> bool:
    """JSON equality as JSON Schema defines it (1 == 1.0, true != 1)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_equal(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_equal(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b


def _canonical(v: Any) -> str:
    """One string per JSON value under JSON Schema equality (1 and 1.0 alike, key order ignored)."""

    def norm(x: Any) -> Any:
        if isinstance(x, float) and x.is_integer():
            return int(x)
        if isinstance(x, list):
            return [norm(y) for y in x]
        if isinstance(x, dict):
            return {k: norm(y) for k, y in x.items()}
        return x

    return json.dumps(norm(v), sort_keys=True)


def _accepts_all(schema: Any) -> bool:
    return schema is True or (isinstance(schema, dict) and not _clean(schema))


def _clean(schema: dict) -> dict:
    """The constraining keywords of ``schema``, without the ones that have no effect."""
    out = {k: v for k, v in schema.items() if k in CONSTRAINT_KEYWORDS}
    if "if" in out and "then" not in out and "else" not in out:
        del out["if"]
    if "if" not in out:
        out.pop("then", None)
        out.pop("else", None)
    if "contains" not in out:
        out.pop("minContains", None)
        out.pop("maxContains", None)
    for key in ("additionalProperties", "items", "propertyNames", "unevaluatedItems", "unevaluatedProperties"):
        if key in out and _accepts_all(out[key]):
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


def _conj(a: Schema, b: Schema) -> Schema:
    """A schema for "a and b" without looking inside (merged later, when compiled)."""
    if a is False or b is False:
        return False
    if _accepts_all(a):
        return b
    if _accepts_all(b) or _equal(a, b):
        return a
    return {"allOf": [a, b]}


def _type_set(t: Any) -> set[str]:
    return {t} if isinstance(t, str) else set(t)


def _merge(a: Schema, b: Schema, path: str) -> Schema:
    """One schema object equivalent to "a and b" (both without top-level $ref/allOf)."""
    if a is False or b is False:
        return False
    if a is True:
        return b if isinstance(b, bool) else _clean(b)
    if b is True:
        return _clean(a)
    a, b = _clean(a), _clean(b)
    out = dict(a)
    for key, vb in b.items():
        if key in ("properties", "additionalProperties", "prefixItems", "items"):
            continue  # (combined below: they depend on each other)
        if key not in out:
            out[key] = vb
            continue
        va = out[key]
        if _equal(va, vb):
            continue
        if key == "type":
            ta, tb = _type_set(va), _type_set(vb)
            both = (ta & tb) | ({"integer"} if ("integer" in ta and "number" in tb) or ("number" in ta and "integer" in tb) else set())
            if not both:
                return False
            out[key] = [t for t in _TYPES if t in both]
        elif key in _LOWER_BOUNDS:
            out[key] = max(va, vb)
        elif key in _UPPER_BOUNDS:
            out[key] = min(va, vb)
        elif key == "required":
            out[key] = list(dict.fromkeys([*va, *vb]))
        elif key == "enum":
            out[key] = [x for x in va if any(_equal(x, y) for y in vb)]
        elif key == "const":
            return False
        elif key == "uniqueItems":
            out[key] = True
        else:
            raise _MergeClash(key, path, "two different values of it must hold at once (from $ref, allOf, anyOf or oneOf)")
    if any(k in side for side in (a, b) for k in ("prefixItems", "items")):
        # position i is constrained by each side's prefixItems[i], or by its items past its prefix
        pa, pb = a.get("prefixItems", []), b.get("prefixItems", [])
        ia, ib = a.get("items", True), b.get("items", True)
        for key in ("prefixItems", "items"):
            out.pop(key, None)
        prefix = [_conj(pa[i] if i < len(pa) else ia, pb[i] if i < len(pb) else ib) for i in range(max(len(pa), len(pb)))]
        if prefix:
            out["prefixItems"] = prefix
        items = _conj(ia, ib)
        if not _accepts_all(items):
            out["items"] = items
    for x, y in ((a, b), (b, a)):
        if "patternProperties" in x and ("properties" in y or "additionalProperties" in y):
            raise _MergeClash("patternProperties", path, "combining it with properties of another schema")
    if any(k in side for side in (a, b) for k in ("properties", "additionalProperties")):
        pa, pb = a.get("properties", {}), b.get("properties", {})
        apa, apb = a.get("additionalProperties", True), b.get("additionalProperties", True)
        props = {k: _conj(pa.get(k, apa), pb.get(k, apb)) for k in [*pa, *(k for k in pb if k not in pa)]}
        out.pop("properties", None)
        out.pop("additionalProperties", None)
        if props:
            out["properties"] = props
        additional = _conj(apa, apb)
        if not _accepts_all(additional):
            out["additionalProperties"] = additional
    return out


# ---------------------------------------------------------------------------------------------
# The finite case: enum / const checked against the whole schema by jsonschema


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def _encoded(text: str) -> str:
    """``text`` as the inside of a JSON string; a lone surrogate (no UTF-8 form) as its ``\\u`` escape."""
    return _LONE_SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", json.dumps(text, ensure_ascii=False)[1:-1])


def _pattern_keyword(validator: Any, pattern: str, instance: Any, schema: dict) -> Iterator[Any]:
    if validator.is_type(instance, "string") and not compiled_pattern(pattern).fullmatch(_encoded(instance)):
        yield jsonschema.ValidationError(f"{instance!r} does not match {pattern!r}")


def _pattern_properties_keyword(validator: Any, patterns: dict, instance: Any, schema: dict) -> Iterator[Any]:
    if validator.is_type(instance, "object"):
        for pattern, sub in patterns.items():
            for key, value in instance.items():
                if compiled_pattern(pattern).fullmatch(_encoded(key)):
                    yield from validator.descend(value, sub, path=key, schema_path=pattern)


def _anchored(regex: str) -> str:
    """A custom format's regex (ECMA-262, matched against the whole string) as a ``pattern``."""
    return f"^(?:{regex})$"


def _format_keyword(custom: dict[str, str], unknown: str) -> Callable[..., Iterator[Any]]:
    def keyword(validator: Any, fmt: str, instance: Any, schema: dict) -> Iterator[Any]:
        if fmt in NUMBER_FORMATS and fmt not in custom and validator.is_type(instance, "number"):
            lo, hi = NUMBER_FORMATS[fmt]
            if not lo <= instance <= hi:
                yield jsonschema.ValidationError(f"{instance!r} is not a {fmt!r}")
        if not isinstance(instance, str):
            return
        if fmt in custom:
            if not compiled_pattern(_anchored(custom[fmt])).fullmatch(_encoded(instance)):
                yield jsonschema.ValidationError(f"{instance!r} is not a {fmt!r}")
        elif format_regex(fmt) is not None:
            if not compiled_format(fmt).fullmatch(instance):
                yield jsonschema.ValidationError(f"{instance!r} is not a {fmt!r}")
        elif fmt not in FREE_STRING_FORMATS and unknown == "error":
            raise SchemaNotSupported("format", "", f"unknown format {fmt!r}")

    return keyword


@functools.lru_cache(maxsize=32)
def _validator_class(custom: tuple, unknown: str) -> Any:
    """Draft 2020-12 with ``pattern`` and ``format`` read exactly as the regexes we emit read
    them (``custom``: the ``formats=`` option as sorted pairs)."""
    return _validators.extend(
        jsonschema.Draft202012Validator,
        {"pattern": _pattern_keyword, "patternProperties": _pattern_properties_keyword,
         "format": _format_keyword(dict(custom), unknown)},
    )


def format_annotations(schema: Schema, formats: Optional[dict] = None) -> list[tuple[str, str]]:
    """``(JSON pointer, name)`` of every ``format`` of a (2020-12) schema that structgen reads as an
    annotation only: neither built in nor in ``formats``.

    >>> format_annotations({"properties": {"p": {"type": "string", "format": "path"}}})
    [('/properties/p/format', 'path')]
    """
    custom = formats or {}
    out = []
    for sub, tokens in _walk(schema):
        fmt = sub.get("format")
        if isinstance(fmt, str) and fmt not in custom and fmt not in FORMATS and fmt not in FREE_STRING_FORMATS:
            out.append((_pointer(tokens + ("format",)), fmt))
    return out


def warn_annotations(schema: Schema, formats: Optional[dict], unknown_formats: str, stacklevel: int = 2) -> None:
    """An :class:`AnnotationWarning` per unknown ``format`` (with ``unknown_formats="annotate"``)."""
    _check_format_options(formats, unknown_formats)
    if unknown_formats == "annotate":
        for path, fmt in format_annotations(schema, formats):
            warnings.warn(AnnotationWarning("format", path, fmt), stacklevel=stacklevel + 1)


def _check_format_options(formats: Optional[dict], unknown_formats: str) -> dict[str, str]:
    if unknown_formats not in ("annotate", "error"):
        raise ValueError(f"unknown_formats must be 'annotate' or 'error', got {unknown_formats!r}")
    if formats is None:
        return {}
    if not isinstance(formats, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in formats.items()):
        raise TypeError("formats must be a dict of format names to regexes (strings)")
    return dict(formats)


#: The validator of the default options (every known format enforced, unknown ones annotations).
_Validator = _validator_class((), "annotate")


# ---------------------------------------------------------------------------------------------
# Shapes: what a schema says about types and constants, for proving oneOf branches disjoint

_ALL = frozenset({"null", "boolean", "integer", "fraction", "string", "array", "object"})


def _value_type(v: Any) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "boolean"
    if isinstance(v, int) or (isinstance(v, float) and v.is_integer()):
        return "integer"
    if isinstance(v, float):
        return "fraction"
    return {str: "string", list: "array", dict: "object"}[type(v)]


def _schema_types(t: Any) -> frozenset:
    out = set()
    for name in _type_set(t):
        out |= {"integer", "fraction"} if name == "number" else {name}
    return frozenset(out)


class _Shape:
    """Over-approximated types, the finite set of values (or None), definitely required
    properties and the property schemas that apply."""

    def __init__(self) -> None:
        self.types = _ALL
        self.values: Optional[list] = None
        self.required: set = set()
        self.properties: dict[str, list] = {}

    def add(self, other: "_Shape") -> None:
        self.types &= other.types
        if other.values is not None:
            self.restrict(other.values)
        self.required |= other.required
        for k, v in other.properties.items():
            self.properties.setdefault(k, []).extend(v)

    def restrict(self, values: list) -> None:
        if self.values is not None:
            values = [x for x in values if any(_equal(x, y) for y in self.values)]
        self.values = values
        self.types &= frozenset(_value_type(v) for v in values)


def _disjoint_values(a: Optional[list], b: Optional[list]) -> bool:
    return a is not None and b is not None and not any(_equal(x, y) for x in a for y in b)


# ---------------------------------------------------------------------------------------------
# The compiler


class _Compiler(_KeywordsMixin, _NumbersMixin, _ObjectsMixin, _AlgebraMixin):
    def __init__(
        self, root: Schema, whitespace: str, max_depth: int, spans: Optional[SpanStrings] = None, *,
        key_order: str = "schema", extra_properties: bool = False, formats: Optional[dict] = None,
        unknown_formats: str = "annotate",
    ) -> None:
        if key_order not in ("schema", "any"):
            raise ValueError(f"key_order must be 'schema' or 'any', got {key_order!r}")
        self.key_order = key_order
        self.extra_properties = extra_properties
        self.root = root
        self.spans = spans  # extract_from: string values restricted to spans of documents
        self.max_depth = max_depth
        self.ws = f"(?:{whitespace})" if whitespace else ""
        self.formats = _check_format_options(formats, unknown_formats)
        self.unknown_formats = unknown_formats
        validator = _validator_class(tuple(sorted(self.formats.items())), unknown_formats)
        self.validator = validator(root, registry=referencing.Registry())  # (no remote retrieval)
        self.anchors: dict[str, tuple] = {}  # "base#name" -> tokens
        self._any: Optional[str] = None
        self.max_states = DEFAULT_MAX_STATES
        # Automata the regex refers to by a slot marker (FSM algebra results: see nfa.slot_marker).
        self.slots: list[ByteDFA] = []
        self._dfas: dict[str, ByteDFA] = {}
        self._quoted: dict[str, str] = {}  # pattern translation with assertions -> its slot marker
        self.resources: dict[str, tuple] = {"": ()}
        self.bases: dict[tuple, str] = {}
        # Calls (schema_to_network): automaton k of the network is callees[k - 1]; a recursive
        # $ref's automaton is allocated (None) before its regex is known.
        self.calls_on = False
        self.regex_only = False
        self.callees: list[Optional[str]] = []
        self._callee_source: dict[int, tuple[Schema, str]] = {}  # $ref callees: (schema, path)
        self._callee_of_regex: dict[tuple[str, int], int] = {}
        self.required: dict[int, int] = {}  # automaton -> keys its close guard requires
        self._flat_builders: dict[int, Callable[[], str]] = {}
        self._ref_out: dict[str, str] = {}  # $ref target path -> its regex or call marker
        self._ref_active: dict[str, Optional[int]] = {}  # targets being compiled -> callee if recursive
        self._flat: dict[int, str] = {}
        self._slot_flat: dict[str, Any] = {}  # slot marker -> its twin without calls (made on demand)
        self._any_flat: Optional[str] = None
        self._any_callee = 0
        if isinstance(root, dict):
            self._scan(root)

    # -- references --------------------------------------------------------------------------

    def _scan(self, root: dict) -> None:
        """Resources (every ``$id``, resolved against its parent's base URI) and their anchors;
        every ``$ref`` must land in one of them."""
        self.resources: dict[str, tuple] = {}
        self.bases: dict[tuple, str] = {}
        refs_at = []
        for sub, tokens in _walk(root):
            if "$dynamicRef" in sub:
                raise SchemaNotSupported("$dynamicRef", _pointer(tokens + ("$dynamicRef",)))
            for key in _LEGACY_KEYWORDS:
                if sub.get(key):
                    raise SchemaNotSupported(
                        key, _pointer(tokens + (key,)),
                        "a 2019-09 recursive reference that resolves dynamically (to an outer $recursiveAnchor); refused rather than ignored",
                    )
            base = self._base(tokens)
            if isinstance(sub.get("$id"), str) or not tokens:
                self.resources.setdefault(base, tokens)
            for key in ("$anchor", "$dynamicAnchor"):
                if isinstance(sub.get(key), str):
                    self.anchors.setdefault(f"{base}#{sub[key]}", tokens)
            if isinstance(sub.get("$ref"), str):
                refs_at.append((sub["$ref"], tokens))
        for ref, tokens in refs_at:
            if self._target(ref, tokens) is None:
                raise SchemaNotSupported(
                    "$ref", _pointer(tokens + ("$ref",)),
                    f"{ref!r} is not in this schema (remote references are not fetched); use '#', '#/json/pointer', '#anchor' or an embedded $id",
                )

    def _base(self, tokens: tuple) -> str:
        """The base URI in effect at ``tokens`` (the ``$id`` of the nearest enclosing resource)."""
        if tokens in self.bases:
            return self.bases[tokens]
        parent = self._base(tokens[:-1]) if tokens else ""
        node = self._node(tokens)
        base = parent
        if isinstance(node, dict) and isinstance(node.get("$id"), str):
            base = _join(parent, node["$id"]).split("#")[0]
        self.bases[tokens] = base
        return base

    def _node(self, tokens: tuple) -> Any:
        node: Any = self.root
        for t in tokens:
            if isinstance(node, dict) and t in node:
                node = node[t]
            elif isinstance(node, list) and isinstance(t, str) and t.isdigit() and int(t) < len(node):
                node = node[int(t)]
            elif isinstance(node, list) and isinstance(t, int) and t < len(node):
                node = node[t]
            else:
                return None
        return node

    def _target(self, ref: str, tokens: tuple) -> Optional[tuple]:
        """The tokens a ``$ref`` found at ``tokens`` points at (``None``: not in this schema)."""
        target = _join(self._base(tokens), ref)
        doc, _, fragment = target.partition("#")
        if doc not in self.resources:
            return None
        fragment = unquote(fragment)
        if not fragment:
            return self.resources[doc]
        if fragment.startswith("/"):
            return self.resources[doc] + tuple(t.replace("~1", "/").replace("~0", "~") for t in fragment[1:].split("/"))
        return self.anchors.get(f"{doc}#{fragment}")

    def _resolve(self, ref: str, path: str) -> tuple[Schema, str]:
        where = f"{path}/$ref"
        here = tuple(unquote(t).replace("~1", "/").replace("~0", "~") for t in path.split("/")[1:]) if path else ()
        tokens = self._target(ref, here)
        if tokens is None:
            raise SchemaError(f"$ref {ref!r} does not resolve", where)
        node = self._node(tokens)
        if node is None:
            raise SchemaError(f"$ref {ref!r} does not resolve", where)
        if not isinstance(node, (dict, bool)):
            raise SchemaError(f"$ref {ref!r} points at a {type(node).__name__}, not a schema", where)
        return node, _pointer(tokens)

    def normalize(self, s: Schema, path: str, refs: tuple) -> tuple[Schema, str, tuple]:
        """Expand top-level ``$ref`` and ``allOf`` into one schema object."""
        while isinstance(s, dict):
            if "unevaluatedProperties" in s or "unevaluatedItems" in s:
                s = self.without_unevaluated(s, path)  # (in its own scope, before any merge)
            if "$ref" in s:
                target, target_path = self._resolve(s["$ref"], path)
                if refs.count(target_path) > self.max_depth:
                    raise _TooDeep("recursion depth (max_recursion_depth)", self.max_depth, target_path or "/")
                refs = refs + (target_path,)
                rest = {k: v for k, v in s.items() if k != "$ref"}
                if not _clean(rest):
                    s, path = target, target_path
                    continue
                t, _, refs = self.normalize(target, target_path, refs)
                s = _merge(t, rest, path)
            elif "allOf" in s:
                acc: Schema = True
                for i, sub in enumerate(s["allOf"]):
                    n, _, refs = self.normalize(sub, f"{path}/allOf/{i}", refs)
                    acc = _merge(acc, n, path)
                # the siblings last, so that properties come out base first (pydantic inheritance)
                s = _merge(acc, {k: v for k, v in s.items() if k != "allOf"}, path)
            else:
                break
        return s, path, refs

    def shape(self, s: Schema, seen: frozenset = frozenset()) -> _Shape:
        out = _Shape()
        if s is False:
            out.types = frozenset()
        if not isinstance(s, dict):
            return out
        if "type" in s:
            out.types = _schema_types(s["type"])
        if "const" in s:
            out.restrict([s["const"]])
        if "enum" in s:
            out.restrict(list(s["enum"]))
        if isinstance(s.get("required"), list):
            out.required = set(s["required"])
        for k, v in (s.get("properties") or {}).items():
            out.properties[k] = [v]
        subs = list(s.get("allOf", []))
        if "$ref" in s:
            try:
                target, target_path = self._resolve(s["$ref"], "")
            except ConstraintError:
                target, target_path = True, None
            if target_path not in seen:
                subs.append(target)
                seen = seen | {target_path}
        for sub in subs:
            out.add(self.shape(sub, seen))
        for key in ("anyOf", "oneOf"):
            if key in s:
                out.types &= frozenset().union(*(self.shape(b, seen).types for b in s[key]))
        return out

    def values_of(self, schemas: list) -> Optional[list]:
        out = _Shape()
        for s in schemas:
            out.add(self.shape(s))
        return out.values

    # -- compiling -----------------------------------------------------------------------------

    # -- automata inside the regex -------------------------------------------------------------

    def embed(self, dfa: ByteDFA) -> str:
        """A one-character regex that stands for ``dfa`` (an FSM-algebra result) in the output."""
        self.slots.append(dfa)
        return slot_marker(len(self.slots) - 1)

    def embed_calling(self, build: Callable[[Callable[[str], str]], ByteDFA]) -> str:
        """:meth:`embed` of ``build(convert)``, an automaton made from regexes that pass through
        ``convert``: given the identity first, so calls stay calls; the automata algebra, which
        needs calls inlined, gets ``build(self.flat)`` in its place (see :meth:`flat`)."""
        marker = self.embed(build(lambda r: r))
        if self.calls_on:
            self._slot_flat[marker] = lambda: self.embed(build(self.flat))
        return marker

    def to_dfa(self, regex: str, path: str) -> ByteDFA:
        """The automaton of a regex written by this compiler (its slots included), for algebra.

        A blown state budget names ``path``, the schema whose automaton grew too big."""
        cached = self._dfas.get(regex)
        if cached is not None:
            return cached
        try:
            slots = self.slots if self.spans is None else self.spans.resolve(self.slots)  # (no placeholders)
            dfa = slotted_regex_to_dfa(self.budget(self.flat(regex), path), slots, max_states=self.max_states)
        except CompileBudgetExceeded as e:
            if e.path:
                raise
            raise CompileBudgetExceeded(e.what, e.limit, path or "/") from None
        self._dfas[regex] = dfa
        return dfa

    def quoted(self, body: str, path: str) -> str:
        """The JSON strings whose contents ``body`` (a translated ``pattern``) matches. Its
        look-arounds and ``\\A``/``\\Z`` read the string's contents only, so a body that has them is
        compiled on its own and spliced in as an automaton."""
        if has_assertions(body):
            marker = self._quoted.get(body)
            if marker is None:
                marker = self._quoted[body] = self.embed(self.to_dfa(body, path))
            body = marker
        return f'"{body}"'

    def budget(self, regex: str, path: str) -> str:
        if len(regex) > MAX_REGEX_SIZE:
            raise CompileBudgetExceeded("regex size in characters", MAX_REGEX_SIZE, path or "/")
        return regex

    def compile(self, s: Schema, path: str, refs: tuple) -> str:
        if not self.calls_on:
            return self._compile(s, path, refs)
        if isinstance(s, dict) and isinstance(s.get("$ref"), str) and not _clean({k: v for k, v in s.items() if k != "$ref"}):
            target, target_path = self._resolve(s["$ref"], path)
            return self.call_ref(target, target_path)
        regex = self._compile(s, path, refs)
        if path and self.weight(regex) > CALL_THRESHOLD:
            return self.call_regex(regex)
        return regex

    # -- calls (networks of automata) ------------------------------------------------------------

    def weight(self, regex: str) -> int:
        """:func:`regex_weight`, an embedded automaton weighing its number of states."""
        slots = self.slots
        return regex_weight(regex, lambda c: slots[ord(c) - 0xD800].num_states if ord(c) - 0xD800 < len(slots) else 1)

    def new_callee(self, regex: Optional[str] = None) -> int:
        self.callees.append(regex)
        k = len(self.callees)
        call_marker(k)  # (raises past the budget of called automata)
        return k

    def call_regex(self, regex: str, *, required: int = 0, flat: Optional[Callable[[], str]] = None) -> str:
        """A call of an automaton for ``regex`` (one per distinct regex and ``required``: the
        keys its close guard requires, for an object with guards). ``flat()``, if given, is the
        regex the automata algebra uses instead (it must have no guard)."""
        key = (regex, required)
        k = self._callee_of_regex.get(key)
        if k is None:
            k = self._callee_of_regex[key] = self.new_callee(regex)
            if required:
                self.required[k] = required
            if flat is not None:
                self._flat_builders[k] = flat
        return call_marker(k)

    def call_ref(self, target: Schema, target_path: str) -> str:
        """A ``$ref`` target: inline when small and not recursive, else called."""
        done = self._ref_out.get(target_path)
        if done is not None:
            return done
        if target_path in self._ref_active:  # recursion: the target calls itself
            k = self._ref_active[target_path]
            if k is None:
                k = self._ref_active[target_path] = self.new_callee()
                self._callee_source[k] = (target, target_path)
            return call_marker(k)
        self._ref_active[target_path] = None
        try:
            regex = self._compile(target, target_path, (target_path,))
        finally:
            k = self._ref_active.pop(target_path)
        if k is not None:
            self.callees[k - 1] = regex
            out = call_marker(k)
        elif self.weight(regex) > CALL_THRESHOLD:
            out = self.call_regex(regex)
        else:
            out = regex
        self._ref_out[target_path] = out
        return out

    def flat(self, regex: str) -> str:
        """``regex`` with every call replaced by the callee's own regex, recursion unrolled
        ``max_recursion_depth`` times as without calls (for the automata algebra, which needs
        one finite automaton)."""
        n = len(self.callees)

        def callee(c: str) -> int:  # (0: not a call; a surrogate may also end a class range)
            k = call_index(c)
            return k if k is not None and 1 <= k <= n else 0

        if not n or not any(callee(c) or c in self._slot_flat for c in regex):
            return regex
        out = []
        for c in regex:
            k = callee(c)
            if k:
                out.append(f"(?:{self._flat_callee(k)})")
            elif c in self._slot_flat:
                twin = self._slot_flat[c]
                if not isinstance(twin, str):
                    twin = self._slot_flat[c] = twin()
                out.append(twin)
            else:
                out.append(c)
        return "".join(out)

    def _flat_callee(self, k: int) -> str:
        got = self._flat.get(k)
        if got is None:
            source = self._callee_source.get(k)
            if k in self._flat_builders:
                got = self.flat(self._flat_builders[k]())
            elif source is not None or k == self._any_callee:
                was, self.calls_on = self.calls_on, False
                try:
                    got = self.any_value() if source is None else self._compile(source[0], source[1], (source[1],))
                finally:
                    self.calls_on = was
            else:
                got = self.flat(self.callees[k - 1])  # type: ignore[arg-type]
            self._flat[k] = got
        return got

    def _compile(self, s: Schema, path: str, refs: tuple) -> str:
        if s is True:
            return self.any_value()
        if s is False:
            raise UnsatisfiableConstraint("the schema is false, no instance is valid", path or "/")
        if "enum" in s or "const" in s:
            return self.finite(s, path)
        if "unevaluatedProperties" in s or "unevaluatedItems" in s:
            s = self.without_unevaluated(s, path)
        original = s
        try:
            s, path, refs = self.normalize(s, path, refs)
        except _MergeClash:
            return self.intersection(original, path, refs)  # (allOf / $ref siblings that do not merge)
        if isinstance(s, bool):
            return self.compile(s, path, refs)
        s = _clean(s)
        if not s:
            return self.any_value()
        if "enum" in s or "const" in s:
            return self.finite(s, path)
        if "not" in s:
            if _accepts_all(s["not"]):
                raise UnsatisfiableConstraint("'not' of a schema that accepts everything", path or "/")
            return self.negation(s, path, refs)
        if "if" in s:
            return self.conditional(s, path, refs)
        if "dependentRequired" in s or "dependentSchemas" in s:
            return self.dependencies(s, path, refs)
        for key in ("anyOf", "oneOf"):
            if key in s:
                return self.union(s, key, path, refs)
        return self.typed(s, path, refs)

    def union(self, s: dict, key: str, path: str, refs: tuple) -> str:
        rest = {k: v for k, v in s.items() if k != key}
        branches = s[key]
        if key == "oneOf":
            try:
                self.check_disjoint(rest, branches, path)
            except SchemaNotSupported:
                return self.exclusive(rest, branches, path, refs)
        alts, errors = [], []
        for i, branch in enumerate(branches):
            where = f"{path}/{key}/{i}"
            try:
                try:
                    n, npath, nrefs = self.normalize(branch, where, refs)
                except _MergeClash:  # (the branch's own allOf does not merge: intersected)
                    alts.append(self.compile(_conj(rest, branch) if rest else branch, where, refs))
                    continue
                try:
                    merged = _merge(rest, n, where) if rest else n
                except _MergeClash:
                    merged = {"allOf": [rest, n]}
                alts.append(self.compile(merged, where if rest else npath, nrefs))
            except (UnsatisfiableConstraint, _TooDeep) as e:
                errors.append(e)
        if not alts:
            raise self.no_alternative(errors, f"no {key} branch can be satisfied", path)
        return self.budget(_alt(alts), path)

    def check_disjoint(self, rest: dict, branches: list, path: str) -> None:
        common = self.shape(rest)
        shapes = []
        for b in branches:
            sh = self.shape(b)
            sh.add(common)
            shapes.append(sh)
        for i, a in enumerate(shapes):
            for j in range(i + 1, len(shapes)):
                b = shapes[j]
                shared = a.types & b.types
                if not shared or _disjoint_values(a.values, b.values):
                    continue
                if shared <= {"object"} and any(
                    _disjoint_values(self.values_of(a.properties.get(p, [])), self.values_of(b.properties.get(p, [])))
                    for p in a.required & b.required
                ):
                    continue
                raise SchemaNotSupported(
                    "oneOf", f"{path}/oneOf",
                    f"branches {i} and {j} may both match; only oneOf with provably disjoint branches (different "
                    "types, different constants, or a required property with different constants) is supported",
                )

    @staticmethod
    def no_alternative(errors: list, message: str, path: str) -> Exception:
        for e in errors:
            if isinstance(e, _TooDeep):
                return e
        if len(errors) == 1:
            return errors[0]
        return UnsatisfiableConstraint(message, path or "/")

    def typed(self, s: dict, path: str, refs: tuple) -> str:
        t = s.get("type")
        types = list(_TYPES) if t is None else list(dict.fromkeys(_type_set(t) if isinstance(t, str) else t))
        if "number" in types and "integer" in types:
            types.remove("integer")
        fmt = s.get("format")
        if fmt in NUMBER_FORMATS and fmt not in self.formats and ("number" in types or "integer" in types):
            lo, hi = NUMBER_FORMATS[fmt]  # (OpenAPI's int32 / int64: bounds on numbers)
            s = {**s, "minimum": max(s.get("minimum", lo), lo), "maximum": min(s.get("maximum", hi), hi)}
        builders: dict[str, Callable[[dict, str, tuple], str]] = {
            "object": self.object, "array": self.array, "string": self.string, "number": self.number,
            "integer": self.integer, "boolean": lambda *_: "(?:true|false)", "null": lambda *_: "null",
        }
        alts, errors = [], []
        for name in types:
            try:
                alts.append(builders[name](s, path, refs))
            except (UnsatisfiableConstraint, _TooDeep) as e:
                errors.append(e)
        if not alts:
            raise self.no_alternative(errors, f"no instance of type {types} satisfies the schema", path)
        return self.budget(_alt(alts), path)

    # -- values ----------------------------------------------------------------------------------

    def any_value(self) -> str:
        if self.calls_on and self.spans is None:
            if self._any is None:  # one automaton that calls itself for nested values
                k = self._any_callee = self.new_callee()
                self._any = call_marker(k)
                self.callees[k - 1] = self._any_regex(self._any)
            return self._any
        if self._any_flat is None:
            w = self.ws
            string = STRING if self.spans is None or self.spans.marked else self.string({}, "", ())
            scalars = f"null|true|false|{NUMBER}|{string}"
            value = f"(?:{scalars})"
            for _ in range(self.max_depth):
                array = rf"\[{w}(?:{value}(?:{w},{w}{value})*{w})?\]"
                member = f"{STRING}{w}:{w}{value}"
                obj = rf"\{{{w}(?:{member}(?:{w},{w}{member})*{w})?\}}"
                value = f"(?:{scalars}|{array}|{obj})"
            self._any_flat = value
        return self._any_flat

    def _any_regex(self, value: str) -> str:
        """Any JSON value, nested values being ``value``."""
        w = self.ws
        array = rf"\[{w}(?:{value}(?:{w},{w}{value})*{w})?\]"
        member = f"{STRING}{w}:{w}{value}"
        obj = rf"\{{{w}(?:{member}(?:{w},{w}{member})*{w})?\}}"
        return f"(?:null|true|false|{NUMBER}|{STRING}|{array}|{obj})"

    def value(self, v: Any, path: str) -> str:
        w = self.ws
        if v is None or isinstance(v, bool):
            return json.dumps(v)
        if isinstance(v, int):
            if abs(v) <= 2**53:  # 1.0 equals 1, and parses back to exactly that value
                return literal(str(v)) + r"(?:\.0+)?"
            return literal(str(v))
        if isinstance(v, float):
            if not math.isfinite(v):
                raise SchemaNotSupported("enum", path, f"{v!r} is not a JSON number")
            forms = [literal(json.dumps(v))]
            if v.is_integer() and abs(v) < 2**53:
                forms.append(literal(str(int(v))))
            return _alt(forms)
        if isinstance(v, str):
            return '"' + literal(_encoded(v)) + '"'
        if isinstance(v, list):
            return rf"\[{w}" + f"{w},{w}".join(self.value(x, path) for x in v) + (rf"{w}\]" if v else r"\]")
        if isinstance(v, dict):
            members = [f'"{literal(_encoded(k))}"{w}:{w}{self.value(x, path)}' for k, x in v.items()]
            if not v:
                return r"\{" + w + r"\}"
            orders = [members]
            if self.key_order == "any" and 1 < len(members) <= 4:
                orders = [list(p) for p in itertools.permutations(members)]
            return _alt(rf"\{{{w}" + f"{w},{w}".join(order) + rf"{w}\}}" for order in orders)
        raise SchemaError(f"{v!r} is not a JSON value", path)

    def finite(self, s: dict, path: str) -> str:
        if "const" in s:
            values = [s["const"]]
            if "enum" in s:
                values = [v for v in values if any(_equal(v, e) for e in s["enum"])]
        else:
            values = list(s["enum"])
        if self.spans is not None:
            values = self.spans.filter_values(values, s)
        rest = {k: v for k, v in s.items() if k not in ("enum", "const")}  # (jsonschema's enum check is linear)
        validator = self.validator.evolve(schema=rest)
        kept: dict[str, str] = {}  # canonical value -> its regex
        size = 0
        for v in values:
            key = _canonical(v)
            if key in kept:
                continue
            try:
                ok = validator.is_valid(v)
            except SchemaNotSupported as e:
                raise SchemaNotSupported(e.keyword, path or "/", "inside a schema restricted by enum/const") from e
            except ConstraintError:
                raise
            except Exception as e:  # unresolvable references and the like
                raise SchemaNotSupported("$ref", path, f"cannot check the enum/const values: {e}") from e
            if ok:
                kept[key] = self.value(v, path)
                size += len(kept[key]) + 1
                if size > MAX_REGEX_SIZE:
                    raise CompileBudgetExceeded("regex size in characters", MAX_REGEX_SIZE, path or "/")
        if not kept:
            raise UnsatisfiableConstraint("no enum/const value satisfies the rest of the schema", path or "/")
        return self.budget(_alt(kept.values()), path)

    # -- strings -------------------------------------------------------------------------------

    def string(self, s: dict, path: str, refs: tuple) -> str:
        if self.spans is not None:
            spans, self.spans = self.spans, None  # (re-entered without spans for the other keywords)
            try:
                return spans.string(self, s, path, refs, self.string)
            finally:
                self.spans = spans
        if s.get("x-extract") is True:
            raise SchemaNotSupported("x-extract", f"{path}/x-extract", "needs the documents: pass extract_from=")
        lo = int(s.get("minLength", 0))
        hi = None if s.get("maxLength") is None else int(s["maxLength"])
        if hi is not None and lo > hi:
            raise UnsatisfiableConstraint(f"minLength {lo} > maxLength {hi}", path or "/")
        fmt, pattern = s.get("format"), s.get("pattern")
        regex = None if fmt is None else self.format_body(fmt, f"{path}/format")
        if regex is not None and pattern is not None:
            return self.format_and_pattern(regex, fmt, pattern, lo, hi, path)
        if regex is not None and fmt in self.formats:
            quoted = f'"(?:{regex})"'
            return self.with_length(quoted, lo, hi, path, f"format {fmt!r}") if lo or hi is not None else quoted
        if regex is not None:
            wlo, whi = regex_width(regex)
            if fmt in _CAPPED_FORMATS and (wlo < lo or (hi is not None and (whi is None or whi > hi))):
                key = "minLength" if wlo < lo else "maxLength"  # (our length cap is tighter than the RFC's)
                raise SchemaNotSupported(key, f"{path}/{key}", f"together with format {fmt!r}")
            if (hi is not None and wlo > hi) or (whi is not None and whi < lo):
                raise UnsatisfiableConstraint(f"no {fmt!r} string has {lo}..{hi} characters", path or "/")
            if wlo < lo or (hi is not None and (whi is None or whi > hi)):
                return self.with_length(f'"(?:{regex})"', lo, hi, path, f"format {fmt!r}")
            return f'"(?:{regex})"'
        if pattern is not None:
            try:
                body = pattern_regex(pattern, lo, hi, path=f"{path}/pattern")
            except SchemaNotSupported:
                if lo == 0 and hi is None:
                    raise
                # (a length the pattern's own repetitions cannot absorb: intersect the automata)
                body = pattern_regex(pattern, path=f"{path}/pattern")
                if body is None:
                    raise UnsatisfiableConstraint(f"no string matches pattern {pattern!r}", path or "/") from None
                return self.with_length(self.quoted(body, path), lo, hi, path, f"pattern {pattern!r}")
            if body is None:
                raise UnsatisfiableConstraint(f"no string of {lo}..{hi} characters matches pattern {pattern!r}", path or "/")
            return self.quoted(body, path)
        return '"' + quantify(CHAR, lo, hi) + '"'

    def format_body(self, fmt: Any, path: str) -> Optional[str]:
        """The regex of the string contents of a ``format`` (None: it constrains no string)."""
        if not isinstance(fmt, str):
            return None
        if fmt in self.formats:  # (a custom format: its regex matches the whole decoded string)
            body = pattern_regex(_anchored(self.formats[fmt]), path=path)
            if body is None:
                raise UnsatisfiableConstraint(f"no string matches the regex of format {fmt!r}", path)
            return body
        regex = format_regex(fmt)
        if regex is None and fmt not in FREE_STRING_FORMATS and self.unknown_formats == "error":
            raise SchemaNotSupported("format", path, f"unknown format {fmt!r}; known: {', '.join(FORMATS)} (or pass formats=)")
        return regex  # (unknown: an annotation, see format_annotations)

    def format_and_pattern(self, regex: str, fmt: str, pattern: str, lo: int, hi: Optional[int], path: str) -> str:
        """A string under both a ``format`` and a ``pattern``: the two automata intersected.
        Built-in formats are under-approximations, so an empty result is a refusal there."""
        body = pattern_regex(pattern, path=f"{path}/pattern")
        if body is None:
            raise UnsatisfiableConstraint(f"no string matches pattern {pattern!r}", path or "/")
        what = f"format {fmt!r} and pattern {pattern!r}"
        try:
            both = self.inter(f'"(?:{regex})"', f'"{body}"', path)
            if both is None:
                raise UnsatisfiableConstraint(f"no string matches {what}", path or "/")
            return self.with_length(both, lo, hi, path, what) if lo or hi is not None else both
        except UnsatisfiableConstraint:
            if fmt in self.formats:
                raise
            raise SchemaNotSupported(
                "pattern", f"{path}/pattern", f"no string of structgen's format {fmt!r} matches it (the format's regex leaves some valid strings out)"
            ) from None

    def with_length(self, string: str, lo: int, hi: Optional[int], path: str, what: str) -> str:
        """The strings of the regex ``string`` (quotes included) of ``lo``..``hi`` characters: an
        intersection of automata (exact: a unit of both regexes is one decoded character)."""
        kept = self.inter(string, '"' + quantify(CHAR, lo, hi) + '"', path)
        if kept is None:
            raise UnsatisfiableConstraint(f"no string of {lo}..{hi} characters matches {what}", path or "/")
        return kept

    # -- containers ------------------------------------------------------------------------------

    def array(self, s: dict, path: str, refs: tuple) -> str:
        if "contains" in s:
            return self.array_contains(s, path, refs)
        prefix = s.get("prefixItems", [])
        lo = int(s.get("minItems", 0))
        cap = None if s.get("maxItems") is None else int(s["maxItems"])
        if cap is not None and lo > cap:
            raise UnsatisfiableConstraint(f"minItems {lo} > maxItems {cap}", path or "/")
        elems: list[str] = []
        tail = None
        for i, sub in enumerate(prefix):
            if cap is not None and i >= cap:
                break
            try:
                elems.append(self.compile(sub, f"{path}/prefixItems/{i}", refs))
            except (UnsatisfiableConstraint, _TooDeep):
                if i < lo:
                    raise
                cap = i
        if len(elems) == len(prefix) and (cap is None or cap > len(prefix)):
            try:
                tail = self.compile(s.get("items", True), f"{path}/items", refs)
            except (UnsatisfiableConstraint, _TooDeep):
                if lo > len(prefix):
                    raise
                cap = len(prefix)
        if cap is not None and lo > cap:
            raise UnsatisfiableConstraint(f"minItems {lo} but at most {cap} items are possible", path or "/")
        unique = s.get("uniqueItems") is True and (cap is None or cap > 1)
        if unique:
            item_schemas = prefix[: len(elems)] + ([s.get("items", True)] if tail is not None else [])
            values = self.finite_values(item_schemas, f"{path}/uniqueItems")  # (refuses infinite item languages)
        w = self.ws
        sep = f"{w},{w}"

        def after(j: int) -> str:  # items from position j on, each after a separator when j > 0
            if cap is not None and j >= cap:
                return ""
            if j >= len(elems):
                assert tail is not None
                need, most = max(0, lo - j), None if cap is None else cap - j
                if j == 0:
                    return tail + quantify(sep + tail, max(need - 1, 0), None if most is None else most - 1)
                return quantify(sep + tail, need, most)
            piece = ("" if j == 0 else sep) + elems[j] + after(j + 1)
            return piece if j < lo or j == 0 else f"(?:{piece})?"

        content = after(0)
        if not content:
            return rf"\[{w}\]"
        array = rf"\[{w}(?:{content}{w})?\]" if lo == 0 else rf"\[{w}{content}{w}\]"
        if unique:
            return self.unique_items(array, _alt(elems + ([tail] if tail is not None else [])), values, path, refs)
        return self.budget(array, path)


def _alt(parts: Any) -> str:
    unique = list(dict.fromkeys(parts))
    return unique[0] if len(unique) == 1 else "(?:" + "|".join(unique) + ")"


def schema_to_regex(
    schema: Union[dict, bool, str, type],
    *,
    whitespace: str = DEFAULT_WHITESPACE,
    max_recursion_depth: int = 3,
    dialect: Optional[str] = None,
    formats: Optional[dict] = None,
    unknown_formats: str = "annotate",
) -> str:
    """The regex (full-match, interegular-compatible) of the serialised instances of ``schema``.

    Parameters
    ----------
    schema:
        A JSON Schema (draft 2020-12) as a dict or bool, a JSON string, or a pydantic model class.
    whitespace:
        Regex allowed once between any two JSON tokens; it must only match JSON whitespace
        (space, tab, line feed, carriage return). ``""`` gives compact output only.
    max_recursion_depth:
        How many times a ``$ref`` may re-enter a schema it is already inside (so a recursive
        schema yields at most ``max_recursion_depth + 1`` nested copies of itself), and how many
        levels of arrays/objects a ``{}`` value may nest.
    dialect:
        ``"draft-04"``, ``"draft-06"``, ``"draft-07"``, ``"2019-09"`` or ``"2020-12"``: read the
        schema in that draft, whatever its ``$schema`` says (default: its ``$schema``, else
        2020-12). Older drafts are rewritten first (:mod:`structgen.json_dialects`).
    formats:
        Custom formats, ``{name: regex}``: a string with ``"format": name`` must match ``regex``
        (ECMA-262 syntax, as ``pattern``, matched against the whole string). They are enforced,
        and take precedence over the built-in formats of the same name.
    unknown_formats:
        ``"annotate"`` (default): a ``format`` neither built in nor in ``formats`` constrains
        nothing, as the specification reads it, and each one raises an
        :class:`~structgen.errors.AnnotationWarning` naming its JSON pointer. ``"error"``: it
        raises :class:`SchemaNotSupported` where a string would be compiled under it.

    Raises
    ------
    SchemaError
        Not JSON, or not a valid JSON Schema.
    SchemaNotSupported
        A keyword that structgen cannot enforce exactly (see the module documentation).
    UnsatisfiableConstraint
        No instance is valid (``false``, ``minItems`` > ``maxItems``, ...).
    CompileBudgetExceeded
        The schema needs deeper recursion, or the regex would exceed ``MAX_REGEX_SIZE``.
    """
    regex, compiler, _ = _compile_root(
        schema, whitespace, max_recursion_depth, DEFAULT_MAX_STATES, dialect=dialect, formats=formats,
        unknown_formats=unknown_formats, regex_only=True,
    )
    warn_annotations(compiler.root, formats, unknown_formats)
    if compiler.slots:
        raise SchemaNotSupported("", "/", "this schema compiles to automaton algebra, not one regex: use schema_to_dfa")
    return regex


def schema_to_dfa(
    schema: Union[dict, bool, str, type],
    *,
    whitespace: str = DEFAULT_WHITESPACE,
    max_recursion_depth: int = 3,
    max_states: int = DEFAULT_MAX_STATES,
    extract_from: Union[str, Sequence[str], None] = None,
    key_order: str = "schema",
    extra_properties: bool = False,
    dialect: Optional[str] = None,
    formats: Optional[dict] = None,
    unknown_formats: str = "annotate",
) -> ByteDFA:
    """The byte automaton of the serialised instances of ``schema`` (see :func:`schema_to_regex`
    for the parameters); ``max_states`` bounds every automaton built on the way, and a blown
    budget names the JSON pointer of the schema whose automaton grew too big. With
    ``extract_from`` (documents), string values are spans of them (:mod:`structgen.spans`).

    ``key_order="schema"`` (default) writes declared properties in schema order; ``"any"`` lets
    the output choose the order of an object's keys when it has at most five declared ones (the
    automaton tracks which were written: 2**n states). ``extra_properties=True`` also lets it add
    keys that ``additionalProperties`` / ``patternProperties`` allow beside declared properties
    (by default none are written where properties are declared). Unlike :func:`schema_to_regex`,
    this covers the keywords compiled by automaton algebra (``not``, ``if``, overlapping
    ``oneOf``, ``contains`` counts, ``multipleOf``, ...).

    >>> dfa = schema_to_dfa({"type": "integer", "minimum": 10})
    >>> dfa.accepts(b"12"), dfa.accepts(b"9")
    (True, False)
    """
    dfa, root = _schema_dfa(
        schema, whitespace=whitespace, max_recursion_depth=max_recursion_depth, max_states=max_states,
        extract_from=extract_from, key_order=key_order, extra_properties=extra_properties, dialect=dialect,
        formats=formats, unknown_formats=unknown_formats,
    )
    warn_annotations(root, formats, unknown_formats)
    return dfa


def _schema_dfa(schema: Any, *, whitespace: str, max_recursion_depth: int, max_states: int, extract_from: Any,
                key_order: str, extra_properties: bool, dialect: Optional[str], formats: Optional[dict],
                unknown_formats: str, network: bool = False) -> tuple[Any, Schema]:
    """:func:`schema_to_dfa` (or with ``network=True`` and no documents, :func:`schema_to_network`)
    without its warnings, and the (2020-12) schema it compiled."""
    regex, compiler, spans = _compile_root(
        schema, whitespace, max_recursion_depth, max_states, extract_from, key_order=key_order,
        extra_properties=extra_properties, dialect=dialect, formats=formats, unknown_formats=unknown_formats,
        calls=network,
    )
    if compiler.callees:
        from ..automata.network import Network

        assert all(c is not None for c in compiler.callees)
        callees: list[str] = compiler.callees  # type: ignore[assignment]
        return Network([regex, *callees], compiler.slots, max_states=max_states, required=compiler.required), compiler.root
    return _finish(regex, compiler, spans, max_states), compiler.root


def _finish(regex: str, compiler: "_Compiler", spans: Optional[SpanStrings], max_states: int) -> ByteDFA:
    if spans is None:
        return compiler.to_dfa(regex, "")
    # span strings are placeholders until here (see structgen.spans_json)
    dfa = regex_to_dfa(regex, max_states=max_states, slots=compiler.slots)
    spliced = spans.splice(dfa)
    return spliced if spliced is not None else regex_to_dfa(regex, max_states=max_states, slots=spans.resolve(compiler.slots))


def schema_to_network(
    schema: Union[dict, bool, str, type],
    *,
    whitespace: str = DEFAULT_WHITESPACE,
    max_recursion_depth: int = 3,
    max_states: int = DEFAULT_MAX_STATES,
    key_order: str = "schema",
    extra_properties: bool = False,
    dialect: Optional[str] = None,
    formats: Optional[dict] = None,
    unknown_formats: str = "annotate",
) -> Union[ByteDFA, "Network"]:
    """The automata of ``schema`` as a :class:`~structgen.automata.network.Network` (a ``$ref`` that recurses, a
    large sub-schema used more than once, ``{}`` values and ``key_order="any"`` objects become
    automata that their users call), or one :class:`ByteDFA` when nothing is called. Parameters
    as :func:`schema_to_dfa`; ``max_recursion_depth`` only bounds recursion inside the automata
    algebra (``not``, ``if``, overlapping ``oneOf``, intersections), which needs finite automata.

    >>> net = schema_to_network({"$defs": {"t": {"type": "array", "items": {"$ref": "#/$defs/t"}}}, "$ref": "#/$defs/t"})
    >>> len(net.regexes)
    2
    """
    compiled, root = _schema_dfa(
        schema, whitespace=whitespace, max_recursion_depth=max_recursion_depth, max_states=max_states,
        extract_from=None, key_order=key_order, extra_properties=extra_properties, dialect=dialect,
        formats=formats, unknown_formats=unknown_formats, network=True,
    )
    warn_annotations(root, formats, unknown_formats)
    return compiled


def _compile_root(
    schema: Any, whitespace: str, max_recursion_depth: int, max_states: int,
    extract_from: Union[str, Sequence[str], None] = None, *, key_order: str = "schema", extra_properties: bool = False,
    dialect: Optional[str] = None, formats: Optional[dict] = None, unknown_formats: str = "annotate",
    calls: bool = False, regex_only: bool = False,
) -> tuple[str, "_Compiler", Optional[SpanStrings]]:
    if not isinstance(max_recursion_depth, int) or max_recursion_depth < 0:
        raise ValueError(f"max_recursion_depth must be a non-negative int, got {max_recursion_depth!r}")
    if whitespace and not matches_only(whitespace, " \t\n\r"):
        try:
            re.compile(whitespace)
        except re.error as e:
            raise RegexSyntaxError(whitespace, e.pos, e.msg) from e
        raise RegexNotSupported(whitespace, "characters other than JSON whitespace (space, \\t, \\n, \\r)")
    root = to_2020_12(load_schema(schema, dialect=dialect), dialect)
    spans = None if extract_from is None else SpanStrings(normalize_documents(extract_from), root, max_states=max_states)
    compiler = _Compiler(
        root, whitespace, max_recursion_depth, spans, key_order=key_order, extra_properties=extra_properties,
        formats=formats, unknown_formats=unknown_formats,
    )
    compiler.max_states = max_states
    compiler.calls_on = calls and spans is None
    compiler.regex_only = regex_only  # (schema_to_regex: no automaton spliced in where a regex will do)
    try:
        if compiler.calls_on:  # the root as a $ref target that "#" may call
            compiler._ref_active[""] = None
            try:
                regex = compiler._compile(root, "", ("",))
            finally:
                k = compiler._ref_active.pop("")
            if k is not None:
                compiler.callees[k - 1] = regex
                regex = call_marker(k)
        else:
            regex = compiler.compile(root, "", ("",))  # the root counts as entered once, like a $ref target
    except _TooDeep as e:
        raise CompileBudgetExceeded("recursion depth (max_recursion_depth)", e.limit, e.path) from None
    return compiler.budget(regex, ""), compiler, spans
