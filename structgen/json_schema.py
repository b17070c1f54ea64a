"""JSON Schema (draft 2020-12) → a regex whose language is the serialisations of the valid instances.

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
``properties`` / ``required``          properties appear in schema order; optional ones may be
                                       left out; required names missing from ``properties`` are
                                       emitted with the ``additionalProperties`` schema
``additionalProperties``               ``false``: exact. With declared properties, extra keys are
                                       never emitted (sound: no extra key, no duplicate of a
                                       declared key). Without any, ``{"key": value, ...}`` with
                                       free keys and values under the schema
``items`` / ``prefixItems``            exact, with ``minItems`` / ``maxItems``
``minLength`` / ``maxLength``          exact, in code points (an escape is one character)
``pattern``                            ECMA-262 search semantics, translated per character (see
                                       :mod:`structgen.json_formats`); with min/maxLength only
                                       when exactly combinable, else refused
``format``                             date, time, date-time, duration, uuid, ipv4, ipv6,
                                       hostname, email, uri, uri-reference (hostname and email
                                       are under-approximations keeping RFC length limits;
                                       quoted e-mail local parts and IPvFuture are left out);
                                       any other format is refused
``minimum`` / ``maximum`` / exclusive  exact for integers (digit-range regexes); refused on
                                       non-integer numbers for now
``anyOf``                              exact (siblings are distributed into each branch)
``oneOf``                              exact when the branches are provably disjoint (types,
                                       constants, or a required property with different
                                       constants — pydantic's discriminated unions); else refused
``allOf`` / ``$ref`` with siblings     exact when the schemas merge keyword by keyword (bounds
                                       tightened, types and enums intersected, properties and
                                       ``additionalProperties`` combined); a clash is refused
``$ref``, ``$defs``, ``definitions``   local references ``#``, ``#/json/pointer``, ``#anchor``;
                                       a schema is re-entered at most ``max_recursion_depth``
                                       times, beyond which an optional recursive part (optional
                                       property, ``anyOf`` branch, array items past
                                       ``minItems``) is dropped; a schema that needs deeper
                                       recursion raises
                                       :class:`CompileBudgetExceeded`. Remote references and an
                                       embedded ``$id`` next to a ``$ref`` are refused
``{}`` / ``true``                      any JSON value nested at most ``max_recursion_depth``
                                       levels deep (an under-approximation)
``false``                              :class:`UnsatisfiableConstraint`
``minProperties`` / ``maxProperties``  only when implied by what is emitted; else refused
``uniqueItems: true``                  only when at most one item can appear; else refused
``multipleOf``                         only ``multipleOf: 1`` on integers; else refused
``not``, ``if``/``then``/``else``,     refused (``not: false`` and a lone ``if`` have no effect
``dependentRequired``,                 and are accepted); all but ``$dynamicRef`` are decided
``dependentSchemas``,                  exactly when ``enum``/``const`` is present
``propertyNames``,
``patternProperties``, ``contains``,
``unevaluated*``, ``$dynamicRef``
annotations, unknown keywords          ignored, as the specification says — except the
                                       draft 7 / 2019-09 ``dependencies`` and ``$recursiveRef``,
                                       refused so a meant constraint is not silently lost
=====================================  =========================================================
"""

from __future__ import annotations

import json
import re
import math
from fractions import Fraction
from typing import Any, Callable, Iterator, Optional, Sequence, Union
from urllib.parse import unquote

import jsonschema
import referencing
from jsonschema import validators as _validators

from .errors import (
    CompileBudgetExceeded,
    ConstraintError,
    RegexNotSupported,
    RegexSyntaxError,
    SchemaError,
    SchemaNotSupported,
    UnsatisfiableConstraint,
)
from .fsm import DEFAULT_MAX_STATES, ByteDFA
from .nfa import slot_marker
from .regex import regex_to_dfa
from .spans import normalize_documents
from .spans_json import SpanStrings
from .json_formats import (
    CHAR,
    FORMATS,
    NUMBER,
    STRING,
    compiled_format,
    compiled_pattern,
    format_regex,
    integer_range,
    literal,
    matches_only,
    pattern_regex,
    quantify,
    regex_width,
)

__all__ = ["DEFAULT_WHITESPACE", "MAX_REGEX_SIZE", "load_schema", "schema_to_dfa", "schema_to_regex"]

#: At most one space between tokens: enough for readable output, too little to loop on.
DEFAULT_WHITESPACE = r"[ ]?"
#: Regexes longer than this many characters raise :class:`CompileBudgetExceeded`.
MAX_REGEX_SIZE = 1_000_000

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
#: Keywords of older drafts that 2020-12 dropped: ignoring them would silently drop a constraint
#: their author meant (``dependencies`` of draft 7, ``$recursiveRef`` of 2019-09).
_LEGACY_KEYWORDS = ("dependencies", "$recursiveRef")
_TYPES = ("object", "array", "string", "number", "integer", "boolean", "null")
_LOWER_BOUNDS = ("minLength", "minItems", "minProperties", "minimum", "exclusiveMinimum")
_UPPER_BOUNDS = ("maxLength", "maxItems", "maxProperties", "maximum", "exclusiveMaximum")


#: Formats whose regex keeps under the RFC's length limit by dropping some long valid values.
_CAPPED_FORMATS = ("hostname", "email")


class _TooDeep(CompileBudgetExceeded):
    """Recursion went past ``max_recursion_depth``; dropped where the recursive part is optional."""


# ---------------------------------------------------------------------------------------------
# Loading


def load_schema(schema: Union[dict, bool, str, type]) -> Schema:
    """Return ``schema`` as a dict or bool, checked against the draft 2020-12 metaschema.

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
    try:
        jsonschema.Draft202012Validator.check_schema(schema)
    except jsonschema.exceptions.SchemaError as e:
        if e.validator == "format" and e.validator_value == "regex":
            keyword = "pattern" if e.absolute_path and e.absolute_path[-1] == "pattern" else "patternProperties"
            raise SchemaNotSupported(keyword, _pointer(e.absolute_path), f"{e.instance!r} is not a regex Python can read") from e
        raise SchemaError(e.message, _pointer(e.absolute_path)) from e
    return schema


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
            raise SchemaNotSupported(key, path, "two different values of it must hold at once (from $ref, allOf, anyOf or oneOf)")
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
            raise SchemaNotSupported("patternProperties", path, "combining it with properties of another schema")
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


def _format_keyword(validator: Any, fmt: str, instance: Any, schema: dict) -> Iterator[Any]:
    if isinstance(instance, str):
        if format_regex(fmt) is None:
            raise SchemaNotSupported("format", "", f"unknown format {fmt!r}")
        if not compiled_format(fmt).fullmatch(instance):
            yield jsonschema.ValidationError(f"{instance!r} is not a {fmt!r}")


#: Draft 2020-12 with ``pattern`` and ``format`` read exactly as the regexes we emit read them.
_Validator = _validators.extend(
    jsonschema.Draft202012Validator,
    {"pattern": _pattern_keyword, "patternProperties": _pattern_properties_keyword, "format": _format_keyword},
)


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


class _Compiler:
    def __init__(self, root: Schema, whitespace: str, max_depth: int, spans: Optional[SpanStrings] = None) -> None:
        self.root = root
        self.spans = spans  # extract_from: string values restricted to spans of documents
        self.max_depth = max_depth
        self.ws = f"(?:{whitespace})" if whitespace else ""
        self.validator = _Validator(root, registry=referencing.Registry())  # (no remote retrieval)
        self.anchors: dict[str, tuple] = {}
        self.root_id = ""
        self._any: Optional[str] = None
        self.max_states = DEFAULT_MAX_STATES
        # Automata the regex refers to by a slot marker (FSM algebra results: see nfa.slot_marker).
        self.slots: list[ByteDFA] = []
        if isinstance(root, dict):
            if isinstance(root.get("$id"), str):
                self.root_id = root["$id"].split("#")[0]
            self._scan(root)

    # -- references --------------------------------------------------------------------------

    def _scan(self, root: dict) -> None:
        has_ref, embedded = False, None
        for sub, tokens in _walk(root):
            if "$dynamicRef" in sub:
                raise SchemaNotSupported("$dynamicRef", _pointer(tokens + ("$dynamicRef",)))
            for key in _LEGACY_KEYWORDS:
                if sub.get(key):
                    raise SchemaNotSupported(
                        key, _pointer(tokens + (key,)),
                        "an older draft's keyword that draft 2020-12 does not define; refused rather than ignored",
                    )
            if isinstance(sub.get("$ref"), str) and not self._is_local(sub["$ref"]):
                raise SchemaNotSupported(
                    "$ref", _pointer(tokens + ("$ref",)),
                    f"{sub['$ref']!r} is not local; use '#', '#/json/pointer' or '#anchor'",
                )
            has_ref = has_ref or "$ref" in sub
            if tokens and "$id" in sub and embedded is None:
                embedded = tokens
            for key in ("$anchor", "$dynamicAnchor"):
                if isinstance(sub.get(key), str):
                    self.anchors.setdefault(sub[key], tokens)
        if has_ref and embedded is not None:
            raise SchemaNotSupported("$id", _pointer(embedded + ("$id",)), "an embedded $id changes where $ref resolves")

    def _local(self, ref: str) -> str:
        if self.root_id and ref.startswith(self.root_id) and ref[len(self.root_id):][:1] in ("", "#"):
            return ref[len(self.root_id):]
        return ref

    def _is_local(self, ref: str) -> bool:
        return self._local(ref)[:1] in ("", "#")

    def _resolve(self, ref: str, path: str) -> tuple[Schema, str]:
        where = f"{path}/$ref"
        local = self._local(ref)
        if local in ("", "#"):
            tokens: tuple = ()
        elif local.startswith("#/"):
            tokens = tuple(unquote(t).replace("~1", "/").replace("~0", "~") for t in local[2:].split("/"))
        elif local.startswith("#"):
            name = unquote(local[1:])
            if name not in self.anchors:
                raise SchemaError(f"$ref {ref!r}: no $anchor named {name!r}", where)
            tokens = self.anchors[name]
        else:
            raise SchemaNotSupported("$ref", where, f"{ref!r} is not local; use '#', '#/json/pointer' or '#anchor'")
        node: Any = self.root
        for t in tokens:
            if isinstance(node, dict) and t in node:
                node = node[t]
            elif isinstance(node, list) and isinstance(t, str) and t.isdigit() and int(t) < len(node):
                node = node[int(t)]
            elif isinstance(node, list) and isinstance(t, int) and t < len(node):
                node = node[t]
            else:
                raise SchemaError(f"$ref {ref!r} does not resolve", where)
        if not isinstance(node, (dict, bool)):
            raise SchemaError(f"$ref {ref!r} points at a {type(node).__name__}, not a schema", where)
        return node, _pointer(tokens)

    def normalize(self, s: Schema, path: str, refs: tuple) -> tuple[Schema, str, tuple]:
        """Expand top-level ``$ref`` and ``allOf`` into one schema object."""
        while isinstance(s, dict):
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

    def to_dfa(self, regex: str, path: str) -> ByteDFA:
        """The automaton of a regex written by this compiler (its slots included), for algebra.

        A blown state budget names ``path``, the schema whose automaton grew too big."""
        try:
            slots = self.slots if self.spans is None else self.spans.resolve(self.slots)  # (no placeholders)
            return regex_to_dfa(regex, max_states=self.max_states, slots=slots)
        except CompileBudgetExceeded as e:
            if e.path:
                raise
            raise CompileBudgetExceeded(e.what, e.limit, path or "/") from None

    def budget(self, regex: str, path: str) -> str:
        if len(regex) > MAX_REGEX_SIZE:
            raise CompileBudgetExceeded("regex size in characters", MAX_REGEX_SIZE, path or "/")
        return regex

    def compile(self, s: Schema, path: str, refs: tuple) -> str:
        if s is True:
            return self.any_value()
        if s is False:
            raise UnsatisfiableConstraint("the schema is false, no instance is valid", path or "/")
        if "enum" in s or "const" in s:
            return self.finite(s, path)
        s, path, refs = self.normalize(s, path, refs)
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
            raise SchemaNotSupported("not", f"{path}/not")
        for key in ("if", "unevaluatedProperties", "unevaluatedItems"):
            if key in s:
                raise SchemaNotSupported(key, f"{path}/{key}")
        for key in ("anyOf", "oneOf"):
            if key in s:
                return self.union(s, key, path, refs)
        return self.typed(s, path, refs)

    def union(self, s: dict, key: str, path: str, refs: tuple) -> str:
        rest = {k: v for k, v in s.items() if k != key}
        branches = s[key]
        if key == "oneOf":
            self.check_disjoint(rest, branches, path)
        alts, errors = [], []
        for i, branch in enumerate(branches):
            where = f"{path}/{key}/{i}"
            try:
                n, npath, nrefs = self.normalize(branch, where, refs)
                merged = _merge(rest, n, where) if rest else n
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
        if self._any is None:
            w = self.ws
            string = STRING if self.spans is None or self.spans.marked else self.string({}, "", ())
            scalars = f"null|true|false|{NUMBER}|{string}"
            value = f"(?:{scalars})"
            for _ in range(self.max_depth):
                array = rf"\[{w}(?:{value}(?:{w},{w}{value})*{w})?\]"
                member = f"{STRING}{w}:{w}{value}"
                obj = rf"\{{{w}(?:{member}(?:{w},{w}{member})*{w})?\}}"
                value = f"(?:{scalars}|{array}|{obj})"
            self._any = value
        return self._any

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
            return rf"\{{{w}" + f"{w},{w}".join(members) + (rf"{w}\}}" if v else r"\}")
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

    # -- scalars ---------------------------------------------------------------------------------

    def integer(self, s: dict, path: str, refs: tuple) -> str:
        if "multipleOf" in s and s["multipleOf"] != 1:  # every integer is a multiple of 1
            raise SchemaNotSupported("multipleOf", f"{path}/multipleOf")
        try:
            bounds = {k: Fraction(s[k]) for k in ("minimum", "exclusiveMinimum", "maximum", "exclusiveMaximum") if k in s}
        except (OverflowError, ValueError, TypeError) as e:
            raise SchemaError(f"a numeric bound is not a finite number: {e}", path) from e
        lows = [math.ceil(bounds["minimum"])] if "minimum" in bounds else []
        lows += [math.floor(bounds["exclusiveMinimum"]) + 1] if "exclusiveMinimum" in bounds else []
        highs = [math.floor(bounds["maximum"])] if "maximum" in bounds else []
        highs += [math.ceil(bounds["exclusiveMaximum"]) - 1] if "exclusiveMaximum" in bounds else []
        lo, hi = (max(lows) if lows else None), (min(highs) if highs else None)
        if lo is not None and hi is not None and lo > hi:
            described = ", ".join(f"{k} {s[k]}" for k in bounds)
            raise UnsatisfiableConstraint(f"no integer satisfies {described} (minimum > maximum)", path or "/")
        return integer_range(lo, hi)

    def number(self, s: dict, path: str, refs: tuple) -> str:
        for key in ("minimum", "exclusiveMinimum", "maximum", "exclusiveMaximum", "multipleOf"):
            if key in s:
                raise SchemaNotSupported(key, f"{path}/{key}", "on non-integer numbers (not yet; type: integer is supported)")
        return NUMBER

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
        if fmt is not None:
            regex = format_regex(fmt)
            if regex is None:
                raise SchemaNotSupported("format", f"{path}/format", f"unknown format {fmt!r}; known: {', '.join(FORMATS)}")
            if pattern is not None:
                raise SchemaNotSupported("pattern", f"{path}/pattern", f"together with format {fmt!r}")
            wlo, whi = regex_width(regex)
            if fmt in _CAPPED_FORMATS and (wlo < lo or (hi is not None and (whi is None or whi > hi))):
                key = "minLength" if wlo < lo else "maxLength"  # (our length cap is tighter than the RFC's)
                raise SchemaNotSupported(key, f"{path}/{key}", f"together with format {fmt!r}")
            if (hi is not None and wlo > hi) or (whi is not None and whi < lo):
                raise UnsatisfiableConstraint(f"no {fmt!r} string has {lo}..{hi} characters", path or "/")
            if wlo < lo or (hi is not None and (whi is None or whi > hi)):
                key = "minLength" if wlo < lo else "maxLength"
                raise SchemaNotSupported(key, f"{path}/{key}", f"together with format {fmt!r}")
            return f'"(?:{regex})"'
        if pattern is not None:
            body = pattern_regex(pattern, lo, hi, path=f"{path}/pattern")
            if body is None:
                raise UnsatisfiableConstraint(f"no string of {lo}..{hi} characters matches pattern {pattern!r}", path or "/")
            return f'"{body}"'
        return '"' + quantify(CHAR, lo, hi) + '"'

    # -- containers ------------------------------------------------------------------------------

    def array(self, s: dict, path: str, refs: tuple) -> str:
        if "contains" in s:
            raise SchemaNotSupported("contains", f"{path}/contains")
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
        if s.get("uniqueItems") is True and (cap is None or cap > 1):
            raise SchemaNotSupported("uniqueItems", f"{path}/uniqueItems")
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
        if lo == 0:
            return self.budget(rf"\[{w}(?:{content}{w})?\]", path)
        return self.budget(rf"\[{w}{content}{w}\]", path)

    def object(self, s: dict, path: str, refs: tuple) -> str:
        for key in ("patternProperties", "propertyNames", "dependentRequired", "dependentSchemas"):
            if key in s:
                raise SchemaNotSupported(key, f"{path}/{key}")
        props: dict = s.get("properties", {})
        additional = s.get("additionalProperties", True)
        required = list(dict.fromkeys(s.get("required", [])))
        names = list(props) + [r for r in required if r not in props]
        min_p, max_p = int(s.get("minProperties", 0)), s.get("maxProperties")
        w = self.ws
        if max_p == 0:
            if required:
                raise UnsatisfiableConstraint(f"maxProperties 0 but {len(required)} required properties", path or "/")
            return rf"\{{{w}\}}"
        if not names:
            try:
                value = self.compile(additional, f"{path}/additionalProperties", refs)
            except (UnsatisfiableConstraint, _TooDeep):
                if min_p > 0:
                    raise
                return rf"\{{{w}\}}"
            if min_p > 0 or max_p is not None:
                key = "minProperties" if min_p > 0 else "maxProperties"
                raise SchemaNotSupported(key, f"{path}/{key}", "with free property names (duplicate keys would not count)")
            member = f"{STRING}{w}:{w}{value}"
            return self.budget(rf"\{{{w}(?:{member}(?:{w},{w}{member})*{w})?\}}", path)
        entries: list[tuple[str, bool]] = []
        for name in names:
            is_required = name in required
            where = f"{path}/properties/{_pointer([name])[1:]}" if name in props else f"{path}/additionalProperties"
            try:
                value = self.compile(props.get(name, additional), where, refs)
            except (UnsatisfiableConstraint, _TooDeep):
                if is_required:
                    raise
                continue
            entries.append((f'"{literal(_encoded(name))}"{w}:{w}{value}', is_required))
        n_required = len(required)
        if max_p is not None and max_p < n_required:
            raise UnsatisfiableConstraint(f"maxProperties {max_p} < {n_required} required properties", path or "/")
        if min_p > len(entries) and additional is False:
            raise UnsatisfiableConstraint(f"minProperties {min_p} > {len(entries)} possible properties", path or "/")
        if min_p > n_required:
            raise SchemaNotSupported("minProperties", f"{path}/minProperties", "more than the required properties")
        if max_p is not None and max_p < len(entries):
            raise SchemaNotSupported("maxProperties", f"{path}/maxProperties", "fewer than the known properties")
        return self.budget(self.members(entries), path)

    def members(self, entries: list[tuple[str, bool]]) -> str:
        """``{ ... }`` with the entries in order, optional ones skippable, commas only between."""
        w = self.ws
        sep = f"{w},{w}"
        rest = [""] * (len(entries) + 1)  # rest[i]: entries i.. each preceded by a separator
        for i in range(len(entries) - 1, -1, -1):
            entry, is_required = entries[i]
            piece = sep + entry
            rest[i] = (piece if is_required else f"(?:{piece})?") + rest[i + 1]
            if len(rest[i]) > MAX_REGEX_SIZE:
                raise CompileBudgetExceeded("regex size in characters", MAX_REGEX_SIZE)
        firsts = []
        for i, (entry, is_required) in enumerate(entries):
            firsts.append(entry + rest[i + 1])
            if sum(map(len, firsts)) > MAX_REGEX_SIZE:
                raise CompileBudgetExceeded("regex size in characters", MAX_REGEX_SIZE)
            if is_required:
                break
        body = _alt(firsts)
        if any(is_required for _, is_required in entries):
            return rf"\{{{w}{body}{w}\}}"
        return rf"\{{{w}(?:{body}{w})?\}}"


def _alt(parts: Any) -> str:
    unique = list(dict.fromkeys(parts))
    return unique[0] if len(unique) == 1 else "(?:" + "|".join(unique) + ")"


def schema_to_regex(
    schema: Union[dict, bool, str, type],
    *,
    whitespace: str = DEFAULT_WHITESPACE,
    max_recursion_depth: int = 3,
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
    regex, slots, _ = _compile_root(schema, whitespace, max_recursion_depth, DEFAULT_MAX_STATES)
    if slots:
        raise SchemaNotSupported("", "/", "this schema compiles to automaton algebra, not one regex: use schema_to_dfa")
    return regex


def schema_to_dfa(
    schema: Union[dict, bool, str, type],
    *,
    whitespace: str = DEFAULT_WHITESPACE,
    max_recursion_depth: int = 3,
    max_states: int = DEFAULT_MAX_STATES,
    extract_from: Union[str, Sequence[str], None] = None,
) -> ByteDFA:
    """The byte automaton of the serialised instances of ``schema`` (see :func:`schema_to_regex`
    for the parameters); ``max_states`` bounds every automaton built on the way, and a blown
    budget names the JSON pointer of the schema whose automaton grew too big. With
    ``extract_from`` (documents), string values are spans of them (:mod:`structgen.spans`).

    >>> dfa = schema_to_dfa({"type": "integer", "minimum": 10})
    >>> dfa.accepts(b"12"), dfa.accepts(b"9")
    (True, False)
    """
    regex, slots, spans = _compile_root(schema, whitespace, max_recursion_depth, max_states, extract_from)
    dfa = regex_to_dfa(regex, max_states=max_states, slots=slots)
    if spans is not None:  # span strings are placeholders until here (see structgen.spans_json)
        spliced = spans.splice(dfa)
        dfa = spliced if spliced is not None else regex_to_dfa(regex, max_states=max_states, slots=spans.resolve(slots))
    return dfa


def _compile_root(
    schema: Any, whitespace: str, max_recursion_depth: int, max_states: int, extract_from: Union[str, Sequence[str], None] = None
) -> tuple[str, list[ByteDFA], Optional[SpanStrings]]:
    if not isinstance(max_recursion_depth, int) or max_recursion_depth < 0:
        raise ValueError(f"max_recursion_depth must be a non-negative int, got {max_recursion_depth!r}")
    if whitespace and not matches_only(whitespace, " \t\n\r"):
        try:
            re.compile(whitespace)
        except re.error as e:
            raise RegexSyntaxError(whitespace, e.pos, e.msg) from e
        raise RegexNotSupported(whitespace, "characters other than JSON whitespace (space, \\t, \\n, \\r)")
    root = load_schema(schema)
    spans = None if extract_from is None else SpanStrings(normalize_documents(extract_from), root, max_states=max_states)
    compiler = _Compiler(root, whitespace, max_recursion_depth, spans)
    compiler.max_states = max_states
    try:
        regex = compiler.compile(root, "", ("",))  # the root counts as entered once, like a $ref target
    except _TooDeep as e:
        raise CompileBudgetExceeded("recursion depth (max_recursion_depth)", e.limit, e.path) from None
    return compiler.budget(regex, ""), compiler.slots, spans
