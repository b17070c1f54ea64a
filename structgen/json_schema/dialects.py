"""Older JSON Schema drafts rewritten into their draft 2020-12 equivalent, before the compiler.

The compiler reads draft 2020-12 only. A schema's dialect is its ``$schema`` (draft-04, -06, -07,
2019-09 or 2020-12, by URI), or the ``dialect=`` option, which overrides it; with neither, or with
a ``$schema`` naming another metaschema, the schema is 2020-12. :func:`to_2020_12` then rewrites
every schema position of the schema's own draft; what each older keyword becomes is listed once,
in ``docs/json_schema.md`` (section "Dialects").

:func:`metaschema_validator` gives the ``jsonschema`` validator class of a dialect, which
``load_schema`` checks the schema against before any rewrite.
"""
from __future__ import annotations

import re
from typing import Any, Callable, Optional
from urllib.parse import unquote, urljoin

import jsonschema

from ..errors import SchemaNotSupported
from .ops import Tokens, known_text, pointer

__all__ = ["DIALECTS", "dialect_of", "join_uri", "metaschema_validator", "to_2020_12"]

#: Dialect names, oldest first; ``dialect=`` also takes ``"draft7"``, ``"7"`` or a ``$schema`` URI.
DIALECTS = ("draft-04", "draft-06", "draft-07", "2019-09", "2020-12")
_RANK = {name: i for i, name in enumerate(DIALECTS)}
_URI = re.compile(r"^(?:https?://)?json-schema\.org/(?:draft-0?([4-7])|draft/(2019-09|2020-12))/(?:hyper-)?schema/?#?$")
_VALIDATORS = {
    "draft-04": jsonschema.Draft4Validator,
    "draft-06": jsonschema.Draft6Validator,
    "draft-07": jsonschema.Draft7Validator,
    "2019-09": jsonschema.Draft201909Validator,
    "2020-12": jsonschema.Draft202012Validator,
}

_COMMON = {"$ref", "type", "enum", "multipleOf", "maximum", "exclusiveMaximum", "minimum", "exclusiveMinimum",
           "maxLength", "minLength", "pattern", "format", "items", "additionalItems", "maxItems", "minItems",
           "uniqueItems", "maxProperties", "minProperties", "required", "properties", "patternProperties",
           "additionalProperties", "dependencies", "allOf", "anyOf", "oneOf", "not"}
_DRAFT6 = _COMMON | {"const", "contains", "propertyNames"}
_DRAFT7 = _DRAFT6 | {"if", "then", "else"}
_DRAFT2019 = _DRAFT7 | {"dependentRequired", "dependentSchemas", "minContains", "maxContains",
                                            "unevaluatedItems", "unevaluatedProperties", "$recursiveRef"}
#: The keywords that constrain instances, per draft (2020-12: everything is kept).
_CONSTRAINTS = {"draft-04": _COMMON, "draft-06": _DRAFT6, "draft-07": _DRAFT7, "2019-09": _DRAFT2019}
#: Every keyword of any draft that constrains (to tell which ones an older draft lacks).
_ANY_CONSTRAINT = _DRAFT2019 | _DRAFT7 | {"prefixItems", "$dynamicRef"}

_SCHEMA_VALUED = ("additionalItems", "additionalProperties", "not", "if", "then", "else", "contains",
                  "propertyNames", "unevaluatedItems", "unevaluatedProperties", "contentSchema")
_SCHEMA_MAPS = ("properties", "patternProperties", "definitions", "$defs", "dependentSchemas")
_SCHEMA_LISTS = ("allOf", "anyOf", "oneOf", "prefixItems")
#: The kind of each keyword that holds subschemas but ``items`` (a schema or a list).
_KIND = {**dict.fromkeys(_SCHEMA_VALUED, "schema"), **dict.fromkeys((*_SCHEMA_MAPS, "dependencies"), "map"),
         **dict.fromkeys(_SCHEMA_LISTS, "list")}
#: The keywords whose presence has the rewrite change a node without subschemas, per draft (the
#: ones it renames or reads, and those the draft does not have).
_TOUCHED = {name: frozenset({"$ref", "$id", "definitions", "dependencies", "items", "additionalItems", "$recursiveRef",
                             "$recursiveAnchor"} | (_ANY_CONSTRAINT - _CONSTRAINTS.get(name, _ANY_CONSTRAINT)))
            for name in DIALECTS}
#: Keywords whose values are instances, not schemas.
_VALUES = ("enum", "const", "default", "examples")
_ANCHOR = re.compile(r"^[A-Za-z_][-A-Za-z0-9._]*$")


def _name(dialect: str, where: str) -> str:
    text = dialect.strip()
    if text in _RANK:
        return text
    m = re.fullmatch(r"(?:draft-?)?0?([4-7])", text)
    if m:
        return f"draft-0{m.group(1)}"
    m = _URI.match(text)
    if m:
        return f"draft-0{m.group(1)}" if m.group(1) else m.group(2)
    if where:  # a $schema naming some other metaschema (CloudFormation's, say): read as 2020-12
        return "2020-12"  # (what jsonschema's validator_for does with an unknown $schema)
    raise ValueError(f"unknown dialect {dialect!r}; known: {', '.join(DIALECTS)}")


def dialect_of(schema: Any, dialect: Optional[str] = None) -> str:
    """The dialect ``schema`` is read in: ``dialect`` (which overrides ``$schema``), else its
    ``$schema``, else ``"2020-12"``.

    >>> dialect_of({"$schema": "http://json-schema.org/draft-07/schema#"}), dialect_of(True, "draft4")
    ('draft-07', 'draft-04')
    """
    if dialect is not None:
        if not isinstance(dialect, str):
            raise TypeError(f"dialect must be a string such as 'draft-07', got {type(dialect).__name__}")
        return _name(dialect, "")
    if isinstance(schema, dict) and isinstance(schema.get("$schema"), str):
        return _name(schema["$schema"], "/$schema")
    return "2020-12"


def metaschema_validator(dialect: str) -> Any:
    """The ``jsonschema`` validator class of a dialect (see :data:`DIALECTS`)."""
    return _VALIDATORS[_name(dialect, "")]


def join_uri(base: str, ref: str) -> str:
    """``ref`` resolved against ``base`` (URNs and other opaque bases too)."""
    if ref.startswith("#"):
        return base.split("#")[0] + ref
    if not base or ":" in ref.split("/")[0]:
        return ref
    return urljoin(base, ref)


#: What :meth:`_Rewriter.map_subs` does to each subschema: ``f(subschema, its tokens)``.
_Rewrite = Callable[[Any, Tokens], Any]


class _Rewriter:
    def __init__(self, root: Any, dialect: str, shortcuts: bool = True) -> None:
        """``shortcuts``: the first pass skipped where the root is the one resource, and leaves the
        rewrite leaves as they are shared (off: every node walked and copied, as the tests compare)."""
        self.root = root
        self.dialect = dialect
        self.shortcuts = shortcuts
        self.resources: dict[str, tuple[Any, str]] = {}  # base URI -> (original node, dialect)
        self.recursive_anchors: set[int] = set()  # id() of resources with $recursiveAnchor: true
        self._targets: Optional[tuple[set[Tokens], set[Tokens]]] = None  # (see targets)
        self.collect(root, dialect, "", (), deep=not (shortcuts and _one_resource(root, dialect)))

    # -- what a node is, in its draft -------------------------------------------------------------

    def node_dialect(self, node: dict[str, Any], dialect: str) -> str:
        if isinstance(node.get("$schema"), str) and node is not self.root:
            return _name(node["$schema"], "/$schema")
        return dialect

    def ref_alone(self, node: dict[str, Any], dialect: str) -> bool:
        return _RANK[dialect] <= _RANK["draft-07"] and isinstance(node.get("$ref"), str)

    def own_id(self, node: dict[str, Any], dialect: str) -> Optional[str]:
        key = "id" if dialect == "draft-04" else "$id"
        value = node.get(key)
        if not isinstance(value, str) or self.ref_alone(node, dialect):
            return None
        return value

    def children(self, node: dict[str, Any], dialect: str, tokens: Optional[Tokens] = None) -> list[tuple[str, Any, str]]:
        """(keyword, value, kind) of the keywords holding subschemas: kind is schema/map/list, or
        ``within`` for a keyword this draft does not know whose value holds a ``$ref`` target
        (``tokens``: the node's place in the root resource, where known)."""
        out = []
        keep_only = ("definitions", "$defs") if self.ref_alone(node, dialect) else None
        for key, value in node.items():
            if keep_only is not None and key not in keep_only:
                continue
            kind = _KIND.get(key)
            if kind is not None:
                out.append((key, value, kind))
            elif key == "items":
                out.append((key, value, "list" if isinstance(value, list) else "schema"))
            elif tokens is not None and isinstance(value, dict) and key not in _VALUES:
                targets, on_way = self.targets()
                place = _as_pointer(tokens + (key,))
                if place in targets:
                    out.append((key, value, "schema"))
                elif place in on_way:
                    out.append((key, value, "within"))
        return out

    def targets(self) -> tuple[set[Tokens], set[Tokens]]:
        """The places ``$ref: "#/..."`` keywords of the root resource point at, and every place on
        the way to one (found once, when a keyword no draft has holds an object)."""
        if self._targets is None:
            self._targets = _pointer_targets(self.root)
        return self._targets

    # -- pass 1: resources ----------------------------------------------------------------------

    def collect(self, node: Any, dialect: str, base: str, tokens: Tokens, deep: bool = True) -> None:
        """The resources (and recursive anchors) at and below ``node`` (``deep`` false: at it alone)."""
        if not isinstance(node, dict):
            return
        dialect = self.node_dialect(node, dialect)
        own = self.own_id(node, dialect)
        if own is not None:
            base = join_uri(base, own).split("#")[0]
        if own is not None or not tokens:
            self.resources.setdefault(base, (node, dialect))
        if node.get("$recursiveAnchor") is True:
            self.recursive_anchors.add(id(node))
        if not deep:
            return
        for key, value, kind in self.children(node, dialect, tokens):
            self.map_subs(key, value, kind, lambda sub, t: self.collect(sub, dialect, base, t), tokens)

    # -- pass 2: the rewrite ----------------------------------------------------------------------

    def rewrite(self, node: Any, dialect: str, base: str, resource: Any, tokens: Tokens) -> Any:
        if not isinstance(node, dict):
            return node
        dialect = self.node_dialect(node, dialect)
        own = self.own_id(node, dialect)
        if own is not None:
            base = join_uri(base, own).split("#")[0]
            resource = node
        older = dialect != "2020-12"
        kids = self.children(node, dialect, tokens)
        if not kids and self.shortcuts and dialect != "draft-04" and node.keys().isdisjoint(_TOUCHED[dialect]):
            return node  # (a leaf the rewrite leaves as it is: shared, not copied)
        rewritten_children: dict[str, Any] = {}
        for key, value, kind in kids:
            rewritten_children[key] = self.map_subs(
                key, value, kind, lambda sub, t: self.rewrite(sub, dialect, base, resource, t), tokens
            )
        out: dict[str, Any] = {}
        alone = self.ref_alone(node, dialect)
        for key, value in node.items():
            if alone and key not in ("$ref", "definitions", "$defs", "$schema"):
                continue
            if older and key in _ANY_CONSTRAINT and key not in _CONSTRAINTS[dialect]:
                continue  # (a keyword this draft does not have: its validators ignore it)
            out[key] = rewritten_children.get(key, value)
        if older and dialect == "draft-04":
            out.pop("$id", None)
            if "id" in out:
                if isinstance(out["id"], str):
                    out["$id"] = out.pop("id")
                else:
                    out.pop("id")
            for bound, exclusive in (("minimum", "exclusiveMinimum"), ("maximum", "exclusiveMaximum")):
                flag = out.pop(exclusive, None)
                if flag is True and bound in out:
                    out[exclusive] = out.pop(bound)
        if older and _RANK[dialect] <= _RANK["draft-07"] and isinstance(out.get("$id"), str) and "#" in out["$id"]:
            uri, _, fragment = out.pop("$id").partition("#")
            if uri:
                out["$id"] = uri
            if fragment:
                if not _ANCHOR.match(fragment):
                    raise SchemaNotSupported("$id", pointer(tokens + ("$id",)), f"a fragment {fragment!r} that is not a plain name")
                out["$anchor"] = fragment
        if isinstance(out.get("$ref"), str):
            out["$ref"] = self.translate_ref(out["$ref"], base, resource)
        if isinstance(out.get("definitions"), dict) and "$defs" not in out:
            out["$defs"] = out.pop("definitions")
        if "dependencies" in out:
            deps = out.pop("dependencies")
            if isinstance(deps, dict):
                required = {k: v for k, v in deps.items() if isinstance(v, list)}
                schemas = {k: v for k, v in deps.items() if not isinstance(v, list)}
                if required:
                    out["dependentRequired"] = {**out.get("dependentRequired", {}), **required}
                if schemas:
                    out["dependentSchemas"] = {**out.get("dependentSchemas", {}), **schemas}
        if _RANK[dialect] <= _RANK["2019-09"]:
            items = out.pop("items", None)
            additional = out.pop("additionalItems", None)
            if isinstance(items, list):
                out["prefixItems"] = items
                if additional is not None:
                    out["items"] = additional
            elif items is not None:
                out["items"] = items
        if "$recursiveRef" in out and _RANK[dialect] >= _RANK["2019-09"]:
            if out["$recursiveRef"] == "#" and self.recursive_is_plain(resource):
                del out["$recursiveRef"]
                if "$ref" in out:
                    out["allOf"] = [*out.get("allOf", []), {"$ref": "#"}]
                else:
                    out["$ref"] = "#"
        out.pop("$recursiveAnchor", None)
        return out

    def map_subs(self, key: str, value: Any, kind: str, f: _Rewrite, tokens: Tokens) -> Any:
        """``value`` (of keyword ``key``, of kind ``kind``: see :meth:`children`) with each of its
        subschemas ``sub`` replaced by ``f(sub, its tokens)``."""
        if kind == "schema":
            return f(value, tokens + (key,))
        if kind == "map" and isinstance(value, dict):
            return {name: sub if isinstance(sub, list) else f(sub, tokens + (key, name)) for name, sub in value.items()}
        if kind == "list" and isinstance(value, list):
            return [f(sub, tokens + (key, i)) for i, sub in enumerate(value)]
        if kind == "within":
            return self.within(value, tokens + (key,), f)
        return value

    def within(self, value: Any, tokens: Tokens, f: _Rewrite) -> Any:
        """A value that is not a schema but holds ``$ref`` targets (``tokens``: its place), such as
        ``{"webhooks": {...}, "slack": {...}}`` under a keyword no draft has: the targets passed
        through ``f``, the rest as it is."""
        if not isinstance(value, dict):
            return value
        out = {}
        targets, on_way = self.targets()
        for name, sub in value.items():
            t = tokens + (name,)
            place = _as_pointer(t)
            out[name] = f(sub, t) if place in targets else self.within(sub, t, f) if place in on_way else sub
        return out

    def recursive_is_plain(self, resource: Any) -> bool:
        """Whether ``$recursiveRef: "#"`` inside ``resource`` always lands on ``resource``."""
        anchored = self.recursive_anchors
        return id(resource) not in anchored or resource is self.root or anchored == {id(resource)}

    def translate_ref(self, ref: str, base: str, resource: Any) -> str:
        """``ref`` with every JSON pointer token through a renamed keyword renamed too."""
        doc, hash_, fragment = ref.partition("#")
        if not fragment.startswith("/"):
            return ref
        target = resource if not doc else self.resources.get(join_uri(base, doc).split("#")[0], (None, ""))[0]
        if target is None:
            return ref  # (not in this schema: the compiler refuses it)
        dialect = self.resources.get(join_uri(base, doc).split("#")[0], (None, self.dialect))[1] if doc else self.dialect
        tokens = fragment[1:].split("/")
        out = []
        node: Any = target
        i = 0
        while i < len(tokens):
            t = tokens[i]
            key = unquote(t).replace("~1", "/").replace("~0", "~")
            if not isinstance(node, dict) or key not in node:
                out.extend(tokens[i:])
                break
            dialect = self.node_dialect(node, dialect)
            value = node[key]
            kinds = {k: kind for k, _, kind in self.children(node, dialect)}
            kind = kinds.get(key)
            new = t
            if key == "definitions" and "$defs" not in node:
                new = "$defs"
            elif key == "items" and kind == "list" and _RANK[dialect] <= _RANK["2019-09"]:
                new = "prefixItems"
            elif key == "additionalItems" and isinstance(node.get("items"), list) and _RANK[dialect] <= _RANK["2019-09"]:
                new = "items"
            elif key == "dependencies" and i + 1 < len(tokens) and isinstance(value, dict):
                name = unquote(tokens[i + 1]).replace("~1", "/").replace("~0", "~")
                new = "dependentRequired" if isinstance(value.get(name), list) else "dependentSchemas"
            out.append(new)
            if kind is None:
                out.extend(tokens[i + 1:])
                break
            if kind == "schema":
                node, i = value, i + 1
                continue
            if i + 1 >= len(tokens):
                break
            out.append(tokens[i + 1])
            sub = unquote(tokens[i + 1]).replace("~1", "/").replace("~0", "~")
            if kind == "map" and isinstance(value, dict):
                node = value.get(sub)
            elif kind == "list" and isinstance(value, list) and sub.isdigit() and int(sub) < len(value):
                node = value[int(sub)]
            else:
                node = None
            i += 2
        return f"{doc}{hash_}/" + "/".join(out)


def _one_resource(root: dict[str, Any], dialect: str) -> bool:
    """Whether the first pass would find the root alone, read off its JSON text: no ``$id`` but
    the root's (draft 4's ``id`` is also a common property name: its schemas take the pass), no
    ``$recursiveAnchor``, and no ``$schema`` but the root's (a resource of another draft inside).

    >>> _one_resource({"$id": "https://x/s.json", "properties": {"id": {}}}, "draft-07")
    True
    >>> _one_resource({"properties": {"a": {"$id": "a.json"}}}, "draft-07")
    False
    """
    if dialect == "draft-04":
        return False
    try:
        text = known_text(root)  # (the compile cache's key made it: not written again)
    except (ValueError, TypeError, RecursionError):
        return False
    ids = text.count('"$id"')
    if ids > 1 or (ids == 1 and not isinstance(root.get("$id"), str)) or '"$recursiveAnchor"' in text:
        return False
    marks = text.count('"$schema"')
    return marks == 0 or (marks == 1 and isinstance(root.get("$schema"), str))


def _as_pointer(tokens: Tokens) -> Tokens:
    """``tokens`` as a pointer's reference tokens: a list index as its text ("0"), as ``$ref``
    writes it (a target inside a list was compared as the number 0 and never found)."""
    return tuple(str(t) for t in tokens)


def _pointer_targets(root: dict[str, Any]) -> tuple[set[Tokens], set[Tokens]]:
    """The places (tokens from the root) that ``$ref: "#/..."`` keywords of the root resource point
    at, found anywhere but in instances (:data:`_VALUES`), and every place on the way to one."""
    targets: set[Tokens] = set()
    todo: list[Any] = [root]
    while todo:
        node = todo.pop()
        if isinstance(node, list):
            todo.extend(node)
        elif isinstance(node, dict):
            if node is not root and (isinstance(node.get("$id"), str) or isinstance(node.get("id"), str)):
                continue  # (another resource: its pointers are its own)
            ref = node.get("$ref")
            if isinstance(ref, str) and ref.startswith("#/"):
                targets.add(tuple(unquote(t).replace("~1", "/").replace("~0", "~") for t in ref[2:].split("/")))
            todo.extend(v for k, v in node.items() if k not in _VALUES)
    on_way = {t[:n] for t in targets for n in range(1, len(t))}
    return targets, on_way


#: The keywords the rewrite of a draft 2020-12 schema acts on (each quoted as in a JSON text).
_REWRITTEN_IN_2020_12 = ('"definitions"', '"dependencies"', '"$recursiveRef"', '"$recursiveAnchor"')


def _already_2020_12(schema: dict[str, Any]) -> bool:
    """Whether a schema read in 2020-12 is its own rewrite, read off its JSON text: no keyword
    the rewrite renames or drops, and no ``$schema`` but the root's (a resource inside may be of
    another draft). A name that is also some other string (a property called ``definitions``)
    only sends the schema through the rewrite."""
    try:
        text = known_text(schema)  # (the compile cache's key made it: not written again)
    except (ValueError, TypeError, RecursionError):
        return False
    if any(key in text for key in _REWRITTEN_IN_2020_12):
        return False
    marks = text.count('"$schema"')
    return marks == 0 or (marks == 1 and isinstance(schema.get("$schema"), str))


def to_2020_12(schema: Any, dialect: Optional[str] = None) -> Any:
    """``schema`` (read in ``dialect``, see :func:`dialect_of`) as an equivalent draft 2020-12
    schema; the input is not modified.

    >>> to_2020_12({"$schema": "http://json-schema.org/draft-04/schema#",
    ...             "minimum": 0, "exclusiveMinimum": True, "definitions": {"a": {}}})
    {'$schema': 'http://json-schema.org/draft-04/schema#', 'exclusiveMinimum': 0, '$defs': {'a': {}}}
    """
    if not isinstance(schema, dict):
        return schema
    name = dialect_of(schema, dialect)
    if name == "2020-12" and _already_2020_12(schema):
        return schema
    rewriter = _Rewriter(schema, name)
    return rewriter.rewrite(schema, name, "", schema, ())
