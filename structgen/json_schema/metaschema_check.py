"""A dialect's metaschema compiled into a table of native checks: the fast first check of a schema.

Every compile checks the schema against its dialect's metaschema (:mod:`.loading`). ``jsonschema``
walks the metaschema anew for every sub-schema it checks (a validator made per descent, each
``$ref`` looked up in a registry), which was a quarter of a typical real-world schema's compile
(2.1 ms of 8 for the median of issue 21's sample). A metaschema uses a dozen keywords; here each
becomes a check in a table once per process (:class:`structgen._engine.MetaschemaCheck`), ``$ref``
a node of it, and a check is a few native dict lookups per keyword of the schema checked; the
keywords that need ``jsonschema``'s own helpers (``const``, an ``enum`` of other values than
strings, ``uniqueItems``, ``format``, ``pattern``) call them. Where a value is not plain JSON (a
dict or list subclass to read) the native check answers "invalid", and ``jsonschema`` decides.

It is a fast path with ``jsonschema``'s own meaning: types are the validator's type checker's,
formats its format checker's, equality (``enum``, ``uniqueItems``) ``jsonschema``'s own helpers.
A schema it calls valid is valid; one it calls invalid is checked again by ``jsonschema``, whose
error is the one raised. A metaschema holding a keyword not listed here has no compiled form
(``None``): it is checked as before.

Example:
    >>> from jsonschema import Draft7Validator
    >>> check = compiled_metaschema(Draft7Validator, Draft7Validator.META_SCHEMA)
    >>> check({"type": "string", "minLength": 2}), check({"minLength": -1}), check({"type": "text"})
    (True, False, False)
"""

from __future__ import annotations

import re
from typing import Any, Callable, Optional, Union

from .._engine import MetaschemaCheck

__all__ = ["compiled_metaschema"]

Check = Callable[[Any], bool]

#: Keywords of a metaschema that assert nothing about the schema checked.
_ANNOTATIONS = frozenset({
    "$schema", "$id", "$comment", "title", "description", "default", "deprecated", "examples", "readOnly", "writeOnly",
    "$defs", "definitions", "$vocabulary",
})


class _NotCompiled(Exception):
    """The metaschema uses something this module does not compile."""


def compiled_metaschema(validator_class: Any, document: Any, format_checker: Any = None) -> Optional[Check]:
    """``document`` (a metaschema, or its flat form) as one function ``schema -> valid?`` with
    ``validator_class``'s types and ``format_checker``'s formats (a native table of checks,
    :class:`structgen._engine.MetaschemaCheck`); ``None`` where it uses a keyword or a reference
    this module does not compile."""
    try:
        from jsonschema._utils import equal, uniq  # (jsonschema's own equality: True is not 1)
    except ImportError:  # pragma: no cover - a jsonschema without them: no fast path
        return None
    kind = _type_tests(validator_class.TYPE_CHECKER)
    is_object, is_array, is_number, is_string = kind("object"), kind("array"), kind("number"), kind("string")
    array_test, string_test = _as_function(is_array), _as_function(is_string)  # (for the checks made in Python)
    nodes: list[list[tuple[Any, ...]]] = [[]]  # (node 0: the root, filled last)
    refs: dict[str, int] = {}

    def ref(target: str) -> int:
        got = refs.get(target)
        if got is None:
            refs[target] = got = len(nodes)
            nodes.append([])
            nodes[got] = checks(_lookup(document, target))  # (its checks may refer to it: made after its number)
        return got

    def node(schema: Any) -> int:
        made = checks(schema)
        nodes.append(made)
        return len(nodes) - 1

    def checks(schema: Any) -> list[tuple[Any, ...]]:
        if schema is True or schema == {}:
            return []
        if schema is False:
            return [("never",)]
        if not isinstance(schema, dict):
            raise _NotCompiled
        return [c for k, v in schema.items() if k not in _ANNOTATIONS for c in keyword(schema, k, v)]

    def predicate(test: Check) -> list[tuple[Any, ...]]:
        return [("predicate", test)]

    def keyword(schema: dict[str, Any], k: str, v: Any) -> list[tuple[Any, ...]]:  # noqa: C901  (one branch per keyword)
        if k == "$ref":
            return [("ref", ref(v))]
        if k == "type":
            return [("type", [kind(t) for t in ([v] if isinstance(v, str) else v)])]
        if k == "properties":
            return [("properties", {name: node(sub) for name, sub in v.items()})]
        if k == "additionalProperties":
            if "patternProperties" in schema:
                raise _NotCompiled
            return [("additionalProperties", frozenset(schema.get("properties", ())), node(v))]
        if k == "items":
            if not isinstance(v, (dict, bool)) or "prefixItems" in schema or "additionalItems" in schema:
                raise _NotCompiled
            return [("items", node(v))]
        if k in ("anyOf", "allOf"):
            return [(k, [node(sub) for sub in v])]
        if k == "enum":
            if v and all(type(each) is str for each in v):  # (jsonschema's equal of strings is ==: a set's test)
                return [("enum", frozenset(v))]
            return predicate(lambda x: any(equal(each, x) for each in v))
        if k == "const":
            return predicate(lambda x: equal(x, v))
        if k in ("minimum", "minItems") or (k == "exclusiveMinimum" and not isinstance(v, bool)):  # (draft 4's boolean form is not compiled)
            return [(k, v)]
        if k == "uniqueItems":
            return predicate(lambda x: not array_test(x) or uniq(x)) if v else []
        if k == "format":
            if format_checker is None:
                return []
            return predicate(lambda x: format_checker.conforms(x, v))
        if k == "pattern":
            return predicate(lambda x: not string_test(x) or re.search(v, x) is not None)
        if k == "propertyNames":
            return [("propertyNames", node(v))]
        raise _NotCompiled

    try:
        nodes[0] = checks(document)
        return MetaschemaCheck(nodes, is_object, is_array, is_number, is_string)
    except (_NotCompiled, LookupError, TypeError, AttributeError, re.error):
        return None


#: The type tests :class:`structgen._engine.MetaschemaCheck` makes natively (jsonschema's own
#: functions, which read only the Python type; ``integer``: drafts 6 and later).
_OBJECT, _ARRAY, _STRING, _BOOLEAN, _NULL, _NUMBER, _INTEGER = range(7)

#: A type test: ``(code, instance -> bool)`` (one of the codes above, and the function it stands
#: for, called where the value is not plain JSON), or ``instance -> bool``.
TypeTest = Union[tuple[int, Check], Check]


def _type_tests(checker: Any) -> Callable[[str], TypeTest]:
    """``name -> type test`` of ``checker``: a native code where its function is one of
    ``jsonschema``'s own (``object``, ``array``, ``string``, ``boolean``, ``null``, ``number``,
    and drafts 6+'s ``integer``), else ``checker``'s function, called as its ``is_type`` calls it."""
    try:
        from jsonschema import _types
        functions: dict[str, Any] = dict(checker._type_checkers)
        native: dict[Any, int] = {
            _types.is_object: _OBJECT, _types.is_array: _ARRAY, _types.is_string: _STRING, _types.is_bool: _BOOLEAN,
            _types.is_null: _NULL, _types.is_number: _NUMBER,
            _types.draft6_type_checker._type_checkers["integer"]: _INTEGER,
        }
    except (ImportError, AttributeError, TypeError, KeyError):  # pragma: no cover - a jsonschema laid out otherwise
        return lambda name: lambda x: bool(checker.is_type(x, name))

    def test(name: str) -> TypeTest:
        fn = functions.get(name)
        if fn is None:  # (an unknown type: is_type raises, as jsonschema does)
            return lambda x: bool(checker.is_type(x, name))
        code = native.get(fn)
        function: Check = lambda x: bool(fn(checker, x))  # noqa: E731
        return function if code is None else (code, function)

    return test


def _as_function(test: TypeTest) -> Check:
    """A type test as ``instance -> bool``."""
    return test[1] if isinstance(test, tuple) else test


def _lookup(document: Any, target: str) -> Any:
    """The part of ``document`` at a local reference (``#`` or ``#/a/b``)."""
    if not target.startswith("#"):
        raise _NotCompiled
    part = document
    for step in target[1:].split("/")[1:]:
        part = part[step.replace("~1", "/").replace("~0", "~")]
    return part


def _always(x: Any) -> bool:
    return True


def _never(x: Any) -> bool:
    return False
