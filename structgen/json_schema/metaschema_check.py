"""A dialect's metaschema compiled into Python closures: the fast first check of a schema.

Every compile checks the schema against its dialect's metaschema (:mod:`.loading`). ``jsonschema``
walks the metaschema anew for every sub-schema it checks (a validator made per descent, each
``$ref`` looked up in a registry), which was a quarter of a typical real-world schema's compile
(2.1 ms of 8 for the median of issue 21's sample). A metaschema uses a dozen keywords; here each
becomes a closure once per process, ``$ref`` a direct call, and a check is a few dict lookups per
keyword of the schema checked.

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
from typing import Any, Callable, Optional

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
    ``validator_class``'s types and ``format_checker``'s formats; ``None`` where it uses a keyword
    or a reference this module does not compile."""
    try:
        from jsonschema._utils import equal, uniq  # (jsonschema's own equality: True is not 1)
    except ImportError:  # pragma: no cover - a jsonschema without them: no fast path
        return None
    kind = _type_tests(validator_class.TYPE_CHECKER)
    is_object, is_array, is_number, is_string = kind("object"), kind("array"), kind("number"), kind("string")
    compiled: dict[str, Check] = {}

    def ref(target: str) -> Check:
        got = compiled.get(target)
        if got is None:
            cell: list[Check] = []
            compiled[target] = got = lambda x: cell[0](x)
            cell.append(node(_lookup(document, target)))
        return got

    def node(schema: Any) -> Check:
        if schema is True or schema == {}:
            return _always
        if schema is False:
            return _never
        if not isinstance(schema, dict):
            raise _NotCompiled
        checks = [keyword(schema, k, v) for k, v in schema.items() if k not in _ANNOTATIONS]
        checks = [c for c in checks if c is not _always]
        if not checks:
            return _always
        return _all_of(checks)

    def keyword(schema: dict[str, Any], k: str, v: Any) -> Check:  # noqa: C901  (one branch per keyword)
        if k == "$ref":
            return ref(v)
        if k == "type":
            tests = [kind(t) for t in ([v] if isinstance(v, str) else v)]
            return tests[0] if len(tests) == 1 else lambda x: any(t(x) for t in tests)
        if k == "properties":
            props = {name: node(sub) for name, sub in v.items()}
            return lambda x: not is_object(x) or all(
                c(value) for name, value in x.items() if (c := props.get(name)) is not None
            )
        if k == "additionalProperties":
            if "patternProperties" in schema:
                raise _NotCompiled
            known, extra = set(schema.get("properties", ())), node(v)
            return lambda x: not is_object(x) or all(extra(value) for name, value in x.items() if name not in known)
        if k == "items":
            if not isinstance(v, (dict, bool)) or "prefixItems" in schema or "additionalItems" in schema:
                raise _NotCompiled
            each = node(v)
            return lambda x: not is_array(x) or all(each(i) for i in x)
        if k in ("anyOf", "allOf"):
            parts = [node(sub) for sub in v]
            if k == "anyOf":
                return lambda x: any(p(x) for p in parts)
            return _all_of(parts)
        if k == "enum":
            if v and all(type(each) is str for each in v):  # (jsonschema's equal of strings is ==: a set's test)
                names = frozenset(v)
                return lambda x: isinstance(x, str) and x in names
            return lambda x: any(equal(each, x) for each in v)
        if k == "const":
            return lambda x: equal(x, v)
        if k == "minimum":
            return lambda x: not is_number(x) or x >= v
        if k == "exclusiveMinimum" and not isinstance(v, bool):  # (draft 4's boolean form is not compiled)
            return lambda x: not is_number(x) or x > v
        if k == "minItems":
            return lambda x: not is_array(x) or len(x) >= v
        if k == "uniqueItems":
            return (lambda x: not is_array(x) or uniq(x)) if v else _always
        if k == "format":
            if format_checker is None:
                return _always
            return lambda x: format_checker.conforms(x, v)
        if k == "pattern":
            return lambda x: not is_string(x) or re.search(v, x) is not None
        if k == "propertyNames":
            valid_name = node(v)
            return lambda x: not is_object(x) or all(valid_name(name) for name in x)
        raise _NotCompiled

    try:
        return node(document)
    except (_NotCompiled, LookupError, TypeError, AttributeError, re.error):
        return None


def _all_of(checks: list[Check]) -> Check:
    """One check passing where each of ``checks`` passes (two or three as one expression: a
    generator per call cost more than the checks themselves)."""
    if len(checks) == 1:
        return checks[0]
    if len(checks) == 2:
        a, b = checks
        return lambda x: a(x) and b(x)
    if len(checks) == 3:
        a, b, c = checks
        return lambda x: a(x) and b(x) and c(x)
    return lambda x: all(c(x) for c in checks)


def _type_tests(checker: Any) -> Callable[[str], Check]:
    """``name -> (instance -> bool)``: ``checker.is_type(instance, name)`` as one call, without the
    lookup of the type's function per check; jsonschema's own ``object``, ``array``, ``string``,
    ``boolean`` and ``null`` functions (which read only the instance's Python type) as
    ``isinstance``. Any other function is jsonschema's, called as its ``is_type`` calls it."""
    try:
        from jsonschema import _types
        functions: dict[str, Any] = dict(checker._type_checkers)
        plain: dict[Any, Check] = {
            _types.is_object: lambda x: isinstance(x, dict), _types.is_array: lambda x: isinstance(x, list),
            _types.is_string: lambda x: isinstance(x, str), _types.is_bool: lambda x: isinstance(x, bool),
            _types.is_null: lambda x: x is None,
        }
    except (ImportError, AttributeError, TypeError):  # pragma: no cover - a jsonschema laid out otherwise
        return lambda name: lambda x: bool(checker.is_type(x, name))

    def test(name: str) -> Check:
        fn = functions.get(name)
        if fn is None:  # (an unknown type: is_type raises, as jsonschema does)
            return lambda x: bool(checker.is_type(x, name))
        return plain.get(fn) or (lambda x: bool(fn(checker, x)))

    return test


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
