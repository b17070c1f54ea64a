"""``if`` / ``then`` / ``else`` chains keyed on one property's constant (a discriminated union, as
github-issue-forms writes its form items), rewritten as an ``anyOf`` of disjoint branches: one per
constant, then one for any other value, one for the property absent and one for non-objects;
``oneOf`` branches that each require a different key (:func:`one_of_keys`); and an ``if`` that
only asks whether a key is there (:func:`presence_branches`); a ``not`` of keys that must not be
there (:func:`forbidden_keys`). Each branch is a plain
conjunction that merges, so the chain needs no automata algebra (which is slow, and cannot take a
``uniqueItems`` array whose items have infinitely many values).

>>> s = {"type": "object", "required": ["t"], "allOf": [
...     {"if": {"properties": {"t": {"const": "a"}}}, "then": {"required": ["x"]}},
...     {"if": {"properties": {"t": {"const": "b"}}}, "then": {"required": ["y"]}, "else": {"maxProperties": 3}}]}
>>> for branch in if_chain_union(s)["anyOf"]:
...     print(branch["allOf"][1:])
[{'type': 'object', 'required': ['t'], 'properties': {'t': {'const': 'a'}}}, {'required': ['x']}, {'maxProperties': 3}]
[{'type': 'object', 'required': ['t'], 'properties': {'t': {'const': 'b'}}}, {'required': ['y']}]
[{'type': 'object', 'required': ['t'], 'properties': {'t': {'not': {'enum': ['a', 'b']}}}}, {'maxProperties': 3}]
"""

from __future__ import annotations

from typing import Any, Optional

from ..errors import ConstraintError
from .ops import Schema, clean, equal, type_set
from .shapes import Resolve

__all__ = ["forbidden_keys", "if_chain_union", "one_of_keys", "presence_branches"]

_NOT_OBJECT = ["null", "boolean", "number", "string", "array"]


def if_chain_union(s: dict[str, Any]) -> Optional[dict[str, Any]]:
    """``s`` as ``{"anyOf": [...]}`` where its ``if`` / ``then`` / ``else`` (its own and those of
    ``allOf`` members that hold nothing else), two or more, all test one property against a constant
    (``{"properties": {p: {"const": c}}}``, each with or all without ``"required": [p]``); else
    ``None``. The branches are disjoint: the property equal to each constant, to none of them,
    absent, or the instance not an object."""
    members = list(s.get("allOf", []))
    chain = [m for m in members if isinstance(m, dict) and _is_conditional(m)]
    own: dict[str, Any] = {k: s[k] for k in ("if", "then", "else") if k in s}
    if _is_conditional(own):
        chain.append(own)
    if len(chain) < 2:  # (one conditional: its subtraction is cheaper than more branches)
        return None
    tests = [_tested(clean(m)["if"]) for m in chain]
    known = [t for t in tests if t is not None]
    if len(known) < len(tests) or len({(t[0], t[2]) for t in known}) != 1:
        return None
    name, required = known[0][0], known[0][2]
    constants = [t[1] for t in known]
    rest: dict[str, Any] = {k: v for k, v in s.items() if k not in ("if", "then", "else", "allOf")}
    others = [m for m in members if not (isinstance(m, dict) and _is_conditional(m))]
    if others:
        rest["allOf"] = others
    then = [m.get("then", True) for m in chain]
    otherwise = [m.get("else", True) for m in chain]
    distinct: list[Any] = []
    for c in constants:
        if not any(equal(c, d) for d in distinct):
            distinct.append(c)
    branches = []
    for v in distinct:
        picked = [then[i] if equal(constants[i], v) else otherwise[i] for i in range(len(chain))]
        branches.append(_branch(rest, {"type": "object", "required": [name], "properties": {name: {"const": v}}}, picked))
    branches.append(_branch(rest, {"type": "object", "required": [name], "properties": {name: {"not": {"enum": distinct}}}}, otherwise))
    # (the property absent: each test holds unless it requires the property; not an object:
    # each test holds, properties and required apply to objects only)
    if name not in (rest.get("required") or []):
        branches.append(_branch(rest, {"type": "object", "properties": {name: False}}, otherwise if required else then))
    if "type" not in rest or set(type_set(rest["type"])) - {"object"}:
        branches.append(_branch(rest, {"type": _NOT_OBJECT}, then))
    return {"anyOf": branches}


def _branch(rest: dict[str, Any], test: dict[str, Any], parts: list[Schema]) -> dict[str, Any]:
    return {"allOf": [rest, test, *(p for p in parts if p is not True and p != {})]}


def _is_conditional(m: dict[str, Any]) -> bool:
    kept = clean(m)
    return "if" in kept and set(kept) <= {"if", "then", "else"}


def _tested(condition: object) -> Optional[tuple[str, Any, bool]]:
    """``(property, constant, required)`` of ``{"properties": {p: {"const": c}}}`` (with or
    without ``"required": [p]``); else ``None`` (``condition``: an ``if``'s value, if any)."""
    if not isinstance(condition, dict):
        return None
    c = clean(condition)
    props = c.get("properties")
    if not isinstance(props, dict) or len(props) != 1 or set(c) - {"properties", "required"}:
        return None
    (name, sub), = props.items()
    if not isinstance(sub, dict) or set(clean(sub)) != {"const"}:
        return None
    required = c.get("required", [])
    if required not in ([], [name]):
        return None
    return name, sub["const"], bool(required)


def one_of_keys(rest: dict[str, Any], branches: list[Schema], resolve: Resolve) -> Optional[list[dict[str, Any]]]:
    """``oneOf`` branches that each require one key, a different one (``{"required": [k]}``, the
    key's schema at most the one ``rest`` gives it: github-workflows' steps, one of ``uses``,
    ``run``, ...), as disjoint branches: key ``k`` present and every other one absent. ``None``
    where the branches are not of that form. ``resolve``: a ``$ref`` and where it is -> (schema,
    pointer)."""
    if len(branches) < 2:
        return None
    own = rest.get("properties") or {}
    keys: list[str] = []
    for b in branches:
        c = clean(b) if isinstance(b, dict) else None
        if not c or set(c) - {"type", "required", "properties"} or c.get("type", "object") != "object":
            return None
        required, props = c.get("required"), c.get("properties") or {}
        if not (isinstance(required, list) and len(required) == 1 and set(props) <= set(required)):
            return None
        k = required[0]
        if k in keys or (k in props and not _implied(props[k], own.get(k), resolve)):
            return None
        keys.append(k)
    if len(set(keys) & set(rest.get("required") or [])) >= 2:
        return None  # (two branches always hold: the subtraction says so, by name)
    return [{"type": "object", "required": [k], "properties": {j: False for j in keys if j != k}} for k in keys]


def _implied(sub: Schema, given: Optional[Schema], resolve: Resolve) -> bool:
    """Whether ``sub`` holds of every value ``given`` allows (``None``: not given): ``sub``
    accepts all, is ``given``, or is a ``$ref`` to it."""
    if sub is True or (isinstance(sub, dict) and not clean(sub)):
        return True
    if given is None:
        return False
    if equal(sub, given):
        return True
    if resolve is not None and isinstance(sub, dict) and set(sub) == {"$ref"} and isinstance(sub["$ref"], str):
        try:
            target, _ = resolve(sub["$ref"], "")
        except ConstraintError:  # (it does not resolve: the compile says so)
            return False
        return target is given or equal(target, given)
    return False


def presence_branches(s: dict[str, Any]) -> Optional[list[dict[str, Any]]]:
    """``if`` / ``then`` / ``else`` whose ``if`` only asks whether a key is there (``{"required":
    [k]}``, or its ``not``: dependabot's "schedule unless multi-ecosystem-group") or tests one key
    against a constant, as two disjoint schemas, each with its branch: the key there (or equal to
    the constant; or the instance not an object, which ``required`` and ``properties`` let
    through), and an object without it (or with another value). ``None`` where the ``if`` is not
    of those forms."""
    cond = s.get("if")
    rest = {key: v for key, v in s.items() if key not in ("if", "then", "else")}
    then, otherwise = s.get("then", True), s.get("else", True)
    tested = _tested(cond)
    if tested is not None:  # (a key against a constant: equal, or else not equal / absent)
        name, value, is_required = tested
        equal_to = {"properties": {name: {"const": value}}, **({"required": [name]} if is_required else {})}
        other = {"type": "object", "properties": {name: {"not": {"const": value}}}, **({} if is_required else {"required": [name]})}
        return [_branch(rest, equal_to, [then]), _branch(rest, other, [otherwise])]
    negated, test = False, cond
    if isinstance(cond, dict) and set(clean(cond)) == {"not"}:
        negated, test = True, clean(cond)["not"]
    if not isinstance(test, dict):
        return None
    c = clean(test)
    required, props = c.get("required"), c.get("properties") or {}
    if set(c) - {"required", "properties"} or not (isinstance(required, list) and len(required) == 1):
        return None
    k = required[0]
    if set(props) - {k} or not all(v is True or (isinstance(v, dict) and not clean(v)) for v in props.values()):
        return None
    there, absent = (otherwise, then) if negated else (then, otherwise)
    return [_branch(rest, {"required": [k]}, [there]), _branch(rest, {"type": "object", "properties": {k: False}}, [absent])]


def forbidden_keys(negated: Schema) -> Optional[dict[str, Any]]:
    """The schema of ``{"not": negated}`` where ``negated`` asks for one key (``{"required": [k]}``)
    or for any one of several (``{"anyOf": [{"required": [k1]}, ...]}``: renovate's options that
    only a global config may set): an object without those keys. (``required`` holds for every
    non-object, so its negation holds for objects only.) ``None`` where ``negated`` is not of
    those forms.

    >>> forbidden_keys({"anyOf": [{"required": ["a"]}, {"required": ["b"], "description": "global"}]})
    {'type': 'object', 'properties': {'a': False, 'b': False}}
    """
    if not isinstance(negated, dict):
        return None
    c = clean(negated)
    members = c["anyOf"] if set(c) == {"anyOf"} and isinstance(c["anyOf"], list) and c["anyOf"] else [c]
    keys: list[str] = []
    for m in members:
        if not isinstance(m, dict):
            return None
        m = clean(m)
        required = m.get("required")
        if set(m) != {"required"} or not (isinstance(required, list) and len(required) == 1 and isinstance(required[0], str)):
            return None
        keys.append(required[0])
    return {"type": "object", "properties": dict.fromkeys(keys, False)}
