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

from typing import Any, NamedTuple, Optional

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
    """``if`` / ``then`` / ``else`` whose ``if`` only asks about one key (:func:`key_test`: whether
    it is there, whether its value is one of some constants, and ``not`` / ``anyOf`` / ``allOf``
    of such: dependabot's "schedule unless multi-ecosystem-group", circle-ci's job types) as
    disjoint schemas, each with its branch: the instances where the test holds (the key there
    with a value the test takes, the key absent, a non-object), each with ``then``, and where it
    fails, each with ``else``. An ``else`` that is another such ``if`` (an else-if ladder) splits
    in turn where it is compiled. ``None`` where the ``if`` is not of those forms.

    >>> for b in presence_branches({"if": {"required": ["t"], "properties": {"t": {"enum": ["a", "b"]}}},
    ...                             "then": {"required": ["x"]}, "type": "object"}):
    ...     print(b["allOf"][1:])
    [{'type': 'object', 'required': ['t'], 'properties': {'t': {'enum': ['a', 'b']}}}, {'required': ['x']}]
    [{'type': 'object', 'properties': {'t': {'not': {'enum': ['a', 'b']}}}}]
    """
    test = key_test(s.get("if"))
    if test is None:
        return None
    rest = {key: v for key, v in s.items() if key not in ("if", "then", "else")}
    holds, fails = test, test.complement()
    if "type" in rest:
        types = type_set(rest["type"]) if isinstance(rest["type"], (str, list)) else None
        if types is None or "object" not in types:
            return None  # (no object: the test is a constant, the general path says so)
        if types == {"object"}:  # (no non-object to place)
            holds, fails = holds._replace(non_object=False), fails._replace(non_object=False)
    if test.name in (rest.get("required") or []):  # (no object without the key)
        holds, fails = holds._replace(absent=False), fails._replace(absent=False)
    then, otherwise = s.get("then", True), s.get("else", True)
    return [_branch(rest, p, [then]) for p in holds.pieces()] + [_branch(rest, p, [otherwise]) for p in fails.pieces()]


class _Values(NamedTuple):
    """A set of JSON values: ``items`` (``finite``) or every value but ``items``."""

    finite: bool
    items: tuple[Any, ...]

    def has(self, v: Any) -> bool:
        return any(equal(v, x) for x in self.items) == self.finite

    def complement(self) -> "_Values":
        return _Values(not self.finite, self.items)

    def union(self, other: "_Values") -> "_Values":
        if self.finite and other.finite:
            return _Values(True, _distinct(self.items + other.items))
        if self.finite:  # (every value but other's items, less those self has)
            return _Values(False, tuple(x for x in other.items if not self.has(x)))
        if other.finite:
            return other.union(self)
        return _Values(False, tuple(x for x in self.items if not other.has(x)))

    def schema(self) -> Optional[Schema]:
        """Its schema: ``None`` for every value, ``False`` for none."""
        if not self.items:
            return False if self.finite else None
        return {"enum": list(self.items)} if self.finite else {"not": {"enum": list(self.items)}}


def _distinct(values: tuple[Any, ...]) -> tuple[Any, ...]:
    out: list[Any] = []
    for v in values:
        if not any(equal(v, d) for d in out):
            out.append(v)
    return tuple(out)


class KeyTest(NamedTuple):
    """Where a test of one key ``name`` holds: the values of ``name`` it takes when there, and
    whether it holds when ``name`` is absent from an object and for a non-object."""

    name: str
    values: _Values
    absent: bool
    non_object: bool

    def complement(self) -> "KeyTest":
        return KeyTest(self.name, self.values.complement(), not self.absent, not self.non_object)

    def union(self, other: "KeyTest") -> "KeyTest":
        return KeyTest(self.name, self.values.union(other.values), self.absent or other.absent,
                       self.non_object or other.non_object)

    def pieces(self) -> list[dict[str, Any]]:
        """Disjoint schemas whose union is where the test holds: the objects it holds for (the
        key there with one of its values, or absent) in one, which also takes the non-objects
        where the test holds for them."""
        out: list[dict[str, Any]] = []
        values = self.values.schema()
        if self.absent or values is not False:  # (``properties`` holds where the key is absent)
            out.append({"type": "object", **({} if self.absent else {"required": [self.name]}),
                        **({} if values is None else {"properties": {self.name: values}})})
        if self.non_object:
            if out:  # (without its type: ``required`` and ``properties`` hold of every non-object)
                out[0] = {k: v for k, v in out[0].items() if k != "type"}
            else:
                out.append({"type": _NOT_OBJECT})
        return out


_EVERY = _Values(False, ())


def key_test(condition: object) -> Optional[KeyTest]:
    """The :class:`KeyTest` of an ``if`` that only asks about one key: ``{"required": [k]}``,
    ``{"properties": {k: {"const": c}}}`` (or an ``enum``, ``true``, ``false``), both, and
    ``not`` / ``anyOf`` / ``allOf`` of such on the same key; else ``None``."""
    if not isinstance(condition, dict):
        return None
    c = clean(condition)
    if set(c) == {"not"}:
        inner = key_test(c["not"])
        return None if inner is None else inner.complement()
    if set(c) in ({"anyOf"}, {"allOf"}):
        members = c["anyOf"] if "anyOf" in c else c["allOf"]
        if not isinstance(members, list) or not members:
            return None
        tests = [key_test(m) for m in members]
        if any(t is None for t in tests) or len({t.name for t in tests if t is not None}) != 1:
            return None
        got = [t if "anyOf" in c else t.complement() for t in tests if t is not None]
        acc = got[0]
        for t in got[1:]:
            acc = acc.union(t)
        return acc if "anyOf" in c else acc.complement()
    if not c or set(c) - {"properties", "required"}:
        return None
    props, required = c.get("properties", {}), c.get("required", [])
    if not isinstance(props, dict) or not isinstance(required, list):
        return None
    names = set(props) | set(required)
    if len(names) != 1:
        return None
    name, = names
    if not isinstance(name, str):
        return None
    values = _value_set(props.get(name, True))
    if values is None:
        return None
    return KeyTest(name, values, name not in required, True)


def _value_set(sub: object) -> Optional[_Values]:
    """The values a key's schema takes, where it is a constant, an ``enum``, or a boolean."""
    if sub is True or sub is False:
        return _EVERY if sub else _Values(True, ())
    if not isinstance(sub, dict):
        return None
    c = clean(sub)
    if not c:
        return _EVERY
    if set(c) == {"const"}:
        return _Values(True, (c["const"],))
    if set(c) == {"enum"} and isinstance(c["enum"], list):
        return _Values(True, _distinct(tuple(c["enum"])))
    return None


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
