"""Shapes: what a schema says about types and constants, to prove ``oneOf`` branches disjoint
(then ``oneOf`` is a plain union; otherwise :mod:`.keywords` subtracts over-approximations).

>>> check_disjoint({}, [{"type": "string"}, {"type": "integer"}], "", resolve=None)
>>> check_disjoint({}, [{"type": "number"}, {"type": "integer"}], "", resolve=None)
Traceback (most recent call last):
...
structgen.errors.SchemaNotSupported: ...branches 0 and 1 may both match...
"""

from __future__ import annotations

import re
from typing import Any, Callable, Optional

from ..errors import ConstraintError, SchemaNotSupported
from .ecma_pattern import compiled_pattern
from .ops import Schema, clean, encoded, equal, type_set

__all__ = ["Shape", "check_disjoint", "overlapping_pairs", "shape_of"]

#: ``$ref`` -> (target schema, its JSON pointer); raises :class:`ConstraintError` when it does not resolve.
Resolve = Optional[Callable[[str, str], tuple[Schema, str]]]

_ALL = frozenset({"null", "boolean", "integer", "fraction", "string", "array", "object"})
_NO_NAMES: frozenset[str] = frozenset()
_TYPE_NAMES: dict[type, str] = {str: "string", list: "array", dict: "object"}


def _value_type(v: Any) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "boolean"
    if isinstance(v, int) or (isinstance(v, float) and v.is_integer()):
        return "integer"
    if isinstance(v, float):
        return "fraction"
    return _TYPE_NAMES[type(v)]


def _schema_types(t: Any) -> frozenset[str]:
    out: set[str] = set()
    for name in type_set(t):
        out |= {"integer", "fraction"} if name == "number" else {name}
    return frozenset(out)


class Shape:
    """Over-approximated types, the finite set of values (or None), definitely required
    properties and the property schemas that apply."""

    def __init__(self) -> None:
        self.types = _ALL
        self.values: Optional[list[Any]] = None
        self.required: set[str] = set()
        self.properties: dict[str, list[Schema]] = {}
        self.allowed: Optional[frozenset[str]] = None  # the only keys an object may have (None: any)
        self.nonempty = False  # an object has a member for sure (minProperties, required)
        self.names: list[Schema] = []  # the propertyNames every key of an object meets

    def add(self, other: "Shape") -> None:
        self.types &= other.types
        if other.values is not None:
            self.restrict(other.values)
        self.required |= other.required
        for k, v in other.properties.items():
            self.properties.setdefault(k, []).extend(v)
        if other.allowed is not None:
            self.allowed = other.allowed if self.allowed is None else self.allowed & other.allowed
        self.nonempty |= other.nonempty
        self.names += other.names

    def restrict(self, values: list[Any]) -> None:
        if self.values is not None:
            values = [x for x in values if any(equal(x, y) for y in self.values)]
        self.values = values
        self.types &= frozenset(_value_type(v) for v in values)


def _disjoint_values(a: Optional[list[Any]], b: Optional[list[Any]]) -> bool:
    return a is not None and b is not None and not any(equal(x, y) for x in a for y in b)


def shape_of(s: Schema, resolve: Resolve, seen: frozenset[Optional[str]] = frozenset()) -> Shape:
    """The shape of ``s`` (``$ref``s followed through ``resolve``, each once; ``seen``: the targets
    followed, ``None`` for one that did not resolve)."""
    out = Shape()
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
    min_props = s.get("minProperties", 0)
    out.nonempty = bool(out.required) or (isinstance(min_props, (int, float)) and min_props >= 1)
    if "propertyNames" in s:
        out.names = [s["propertyNames"]]
    for k, v in (s.get("properties") or {}).items():
        out.properties[k] = [v]
    if s.get("additionalProperties") is False and not s.get("patternProperties"):
        out.allowed = frozenset(s.get("properties") or {})
    subs = list(s.get("allOf", []))
    if "$ref" in s and resolve is not None:
        target: Schema = True
        target_path: Optional[str] = None
        try:
            target, target_path = resolve(s["$ref"], "")
        except ConstraintError:
            pass
        if target_path not in seen:
            subs.append(target)
            seen = seen | {target_path}
    for sub in subs:
        out.add(shape_of(sub, resolve, seen))
    for key in ("anyOf", "oneOf"):
        if key in s and s[key]:
            shapes = [shape_of(b, resolve, seen) for b in s[key]]
            out.types &= _NO_NAMES.union(*(sh.types for sh in shapes))
            closed = [sh.allowed for sh in shapes if sh.allowed is not None]
            if len(closed) == len(shapes):  # (every branch a closed object: the keys of any)
                allowed = _NO_NAMES.union(*closed)
                out.allowed = allowed if out.allowed is None else out.allowed & allowed
            # (a key every branch requires, each with finitely many values: required, with their union)
            for p in set.intersection(*(sh.required for sh in shapes)) - out.required:
                values = [_values_of(sh.properties.get(p, []), resolve) for sh in shapes]
                finite = [v for v in values if v is not None]
                if len(finite) == len(values):
                    out.required.add(p)
                    out.properties.setdefault(p, []).append({"enum": [x for v in finite for x in v]})
    return out


def _excluded(schemas: list[Schema], values: Optional[list[Any]]) -> bool:
    """Whether one of ``schemas`` is ``{"not": {"enum": [...]}}`` (or ``const``) naming every one of ``values``."""
    if not values:
        return False
    for s in schemas:
        negated = s.get("not") if isinstance(s, dict) else None
        if isinstance(negated, dict):
            names = [negated["const"]] if "const" in negated else negated.get("enum")
            if isinstance(names, list) and all(any(equal(v, n) for n in names) for v in values):
                return True
    return False


def _types_of(schemas: list[Schema], resolve: Resolve) -> frozenset[str]:
    return _shape_of_all(schemas, resolve).types


def _values_of(schemas: list[Schema], resolve: Resolve) -> Optional[list[Any]]:
    return _shape_of_all(schemas, resolve).values


def _shape_of_all(schemas: list[Schema], resolve: Resolve) -> Shape:
    """The shape of what every one of ``schemas`` allows."""
    out = Shape()
    for s in schemas:
        out.add(shape_of(s, resolve))
    return out


def check_disjoint(rest: dict[str, Any], branches: list[Schema], path: str, *, resolve: Resolve, but_empty: bool = False) -> None:
    """Nothing when no instance can match two of ``branches`` (each with ``rest`` beside it):
    different types, different constants, a required property with different constants or
    types or with constants the other branch's ``not`` excludes, or a required key the other
    branch's object does not allow; with ``but_empty``, also objects
    whose allowed keys (``additionalProperties: false``) have nothing in common, which may both
    match only ``{}``. Else :class:`SchemaNotSupported` (the caller then subtracts, see :mod:`.keywords`)."""
    for i, j in overlapping_pairs(rest, branches, resolve=resolve, but_empty=but_empty):
        raise SchemaNotSupported(
            "oneOf", f"{path}/oneOf",
            f"branches {i} and {j} may both match; only oneOf with provably disjoint branches (different "
            "types, different constants, or a required property with different constants) is supported",
        )


def overlapping_pairs(rest: dict[str, Any], branches: list[Schema], *, resolve: Resolve,
                      but_empty: bool = False) -> list[tuple[int, int]]:
    """The pairs ``(i, j)``, ``i < j``, of ``branches`` (each with ``rest`` beside it) not proved
    disjoint as :func:`check_disjoint` proves them: only these can share an instance.

    >>> overlapping_pairs({}, [{"type": "string"}, {"type": "object"}, {"type": "object", "required": ["a"]}], resolve=None)
    [(1, 2)]
    """
    pairs, beyond_empty = overlaps(rest, branches, resolve=resolve)
    return beyond_empty if but_empty else pairs


def overlaps(rest: dict[str, Any], branches: list[Schema], *, resolve: Resolve) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """(:func:`overlapping_pairs`, and of them those that may share more than ``{}``: the same
    with ``but_empty``), the branches' shapes made once for both.

    >>> overlaps({"type": "object"}, [{"properties": {"a": {}}, "additionalProperties": False},
    ...                               {"properties": {"b": {}}, "additionalProperties": False}, {}], resolve=None)
    ([(0, 1), (0, 2), (1, 2)], [(0, 2), (1, 2)])
    """
    common = shape_of(rest, resolve)
    shapes = []
    for branch in branches:
        sh = shape_of(branch, resolve)
        sh.add(common)
        shapes.append(sh)
    pairs = [(i, j) for i, a in enumerate(shapes) for j in range(i + 1, len(shapes)) if _may_overlap(a, shapes[j], resolve)]
    return pairs, [(i, j) for i, j in pairs if not _only_empty_shared(shapes[i], shapes[j])]


def _may_overlap(a: Shape, b: Shape, resolve: Resolve) -> bool:
    shared = a.types & b.types
    if not shared or _disjoint_values(a.values, b.values):
        return False
    if shared <= {"object"} and (any(
        _disjoint_values(_values_of(a.properties.get(p, []), resolve), _values_of(b.properties.get(p, []), resolve))
        or not _types_of(a.properties.get(p, []), resolve) & _types_of(b.properties.get(p, []), resolve)
        for p in a.required & b.required
    ) or any(x.allowed is not None and y.required - x.allowed for x, y in ((a, b), (b, a)))
            or any(_excluded(y.properties.get(p, []), _values_of(x.properties.get(p, []), resolve))
                   for x, y in ((a, b), (b, a)) for p in x.required)):
        return False
    if shared <= {"object"} and any(_forbidden(x.properties.get(k, [])) for x, y in ((a, b), (b, a)) for k in y.required):
        return False  # (a key one requires, the other forbids: ``"k": false`` or ``{"not": {}}``)
    if shared <= {"object"} and any(y.allowed is not None and y.nonempty and y.allowed and all(
            any(_rejects(n, k) for n in x.names) for k in y.allowed) for x, y in ((a, b), (b, a))):
        return False  # (one has a member, every key it may have the other's propertyNames refuse)
    return True


def _only_empty_shared(a: Shape, b: Shape) -> bool:
    """Whether two shapes that may overlap may share only ``{}``: objects whose allowed keys have
    nothing in common."""
    return (a.types & b.types <= {"object"} and a.allowed is not None and b.allowed is not None
            and not a.allowed & b.allowed)


def _forbidden(schemas: list[Schema]) -> bool:
    """Whether one of a property's ``schemas`` refuses every value (``false``, ``{"not": {}}``).

    >>> _forbidden([{"type": "string"}, {"not": {"description": "never"}}]), _forbidden([{"not": {"type": "string"}}])
    (True, False)
    """
    return any(s is False or (isinstance(s, dict) and set(clean(s)) == {"not"}
                              and (s["not"] is True or (isinstance(s["not"], dict) and not clean(s["not"]))))
               for s in schemas)


def _rejects(names: Schema, key: str) -> bool:
    """Whether the ``propertyNames`` schema ``names`` refuses ``key`` for sure (``pattern`` read
    as structgen compiles it; ``False`` means "not known").

    >>> _rejects({"not": {"pattern": "^(when|unless)$"}}, "when"), _rejects({"pattern": "^x"}, "when")
    (True, True)
    >>> _rejects({"not": {"pattern": "^(when|unless)$"}}, "run"), _rejects({"maxLength": 3}, "when")
    (False, False)
    """
    if names is False:
        return True
    if not isinstance(names, dict):
        return False
    n = clean(names)
    if "const" in n and not equal(n["const"], key):
        return True
    if isinstance(n.get("enum"), list) and not any(equal(v, key) for v in n["enum"]):
        return True
    if isinstance(n.get("pattern"), str) and _matches(n["pattern"], key) is False:
        return True
    return "not" in n and _accepts(n["not"], key)


def _accepts(schema: Schema, key: str) -> bool:
    """Whether ``schema`` accepts the string ``key`` for sure (``False`` means "not known")."""
    if schema is True:
        return True
    if not isinstance(schema, dict):
        return False
    s = clean(schema)
    if not set(s) <= {"type", "const", "enum", "pattern"} or ("type" in s and "string" not in type_set(s["type"])):
        return False
    if "const" in s and not equal(s["const"], key):
        return False
    if "enum" in s and not (isinstance(s["enum"], list) and any(equal(v, key) for v in s["enum"])):
        return False
    return "pattern" not in s or (isinstance(s["pattern"], str) and _matches(s["pattern"], key) is True)


def _matches(pattern: str, key: str) -> Optional[bool]:
    """Whether ``key`` matches ``pattern`` as structgen reads it (``None``: a pattern it refuses)."""
    try:
        return compiled_pattern(pattern).fullmatch(encoded(key)) is not None
    except (ConstraintError, re.error):
        return None
