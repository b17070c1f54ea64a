"""References inside one schema: its resources (every ``$id``, resolved against its parent's base
URI), their anchors, and the schema a ``$ref`` lands on. Nothing is fetched: a ``$ref`` that
leaves the schema is refused when the resolver is built.

>>> refs = RefResolver({"$defs": {"a": {"$anchor": "A", "type": "string"}}, "$ref": "#A"})
>>> refs.resolve("#A", "")
({'$anchor': 'A', 'type': 'string'}, '/$defs/a')
>>> refs.resolve("#/$defs/a", "/properties/x")[1]
'/$defs/a'
"""

from __future__ import annotations

from typing import Any, Optional
from urllib.parse import unquote

from ..automata.graphs import strongly_connected
from ..errors import SchemaError, SchemaNotSupported
from .dialects import join_uri
from .ops import LEGACY_KEYWORDS, Schema, Tokens, pointer, root_text, subschemas, walk

__all__ = ["RefResolver"]


#: The keywords the resolver's scan reads beside ``$id``: a schema whose text names none of them
#: (and holds at most the root's ``$id``) has the root as its one resource and nothing to check.
_SCANNED = ("$ref", "$anchor", "$dynamicAnchor", "$dynamicRef", *LEGACY_KEYWORDS)


class RefResolver:
    """The resources, anchors and base URIs of ``root`` (a 2020-12 schema), and ``$ref`` targets.

    Raises :class:`SchemaNotSupported` for ``$dynamicRef``, a dynamic ``$recursiveRef`` and a
    ``$ref`` that does not land inside the schema.
    """

    def __init__(self, root: Schema) -> None:
        self.root = root
        #: the root's :func:`.ops.schema_text` (the compile's memo reads it too, and its
        #: sub-schemas' texts: :func:`.ops.root_text`)
        self.text = root_text(root)
        self.anchors: dict[str, Tokens] = {}  # "base#name" -> tokens
        self.resources: dict[str, Tokens] = {"": ()}
        self.bases: dict[Tokens, str] = {}
        self._direct: dict[tuple[Optional[str], str], frozenset[str]] = {}  # (schema text or None, path) -> targets
        self._within: dict[int, tuple[dict[str, Any], frozenset[str]]] = {}  # id -> (the schema held, its targets)
        self._closures: dict[str, frozenset[str]] = {}
        self._base_at: dict[str, str] = {}  # JSON pointer -> base URI (base_at)
        self._landed: dict[str, tuple[Schema, str]] = {}  # $ref -> (schema, pointer), where one base URI holds everywhere
        # The one base URI of every place, where no schema but the root may hold an ``$id`` (no
        # other "$id" in the text: most schemas), else None (found per place: _base).
        ids = self.text.count('"$id"')
        own = isinstance(root, dict) and isinstance(root.get("$id"), str)
        self._one_base: Optional[str] = None
        if ids == 0 or (ids == 1 and own):
            self._one_base = join_uri("", root["$id"]).split("#")[0] if own else ""  # type: ignore[index]
        if isinstance(root, dict):
            self.resources = {}
            if self._one_base is not None and not any(f'"{key}"' in self.text for key in _SCANNED):
                self.resources[self._one_base] = ()  # (what the scan finds: the root's resource, no anchor, no $ref)
            else:
                self._scan(root)

    def _scan(self, root: dict[str, Any]) -> None:
        """Resources (every ``$id``, resolved against its parent's base URI) and their anchors;
        every ``$ref`` must land in one of them."""
        refs_at: list[tuple[str, Tokens]] = []
        for sub, tokens in walk(root):
            if "$dynamicRef" in sub:
                raise SchemaNotSupported("$dynamicRef", pointer(tokens + ("$dynamicRef",)))
            for key in LEGACY_KEYWORDS:
                if sub.get(key):
                    raise SchemaNotSupported(
                        key, pointer(tokens + (key,)),
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
                    "$ref", pointer(tokens + ("$ref",)),
                    f"{ref!r} is not in this schema (remote references are not fetched); use '#', '#/json/pointer', '#anchor' or an embedded $id",
                )

    def base_at(self, path: str) -> str:
        """The base URI in effect at JSON pointer ``path`` (where a ``$ref`` there resolves from)."""
        if self._one_base is not None:
            return self._one_base
        got = self._base_at.get(path)
        if got is None:  # (asked for every sub-schema a compile memoises: a path parsed once)
            got = self._base_at[path] = self._base(_tokens(path))
        return got

    def leads_to(self, s: Schema, path: str, text: str, target: str) -> bool:
        """Whether compiling ``s`` (at ``path``; ``text``: its :func:`.ops.schema_text`) may enter the
        ``$ref`` target ``target`` (a JSON pointer), directly or through other targets. (``s`` is
        reached from ``target``, entered on the way to it: only a target that reaches itself can
        be reached again from ``s``, and most are not recursive, so ``s`` is not searched.)"""
        if target not in self._closure(target):
            return False
        return any(d == target or target in self._closure(d) for d in self._direct_targets(s, path, text))

    def _direct_targets(self, s: Schema, path: str, text: Optional[str]) -> frozenset[str]:
        """The targets of the ``$ref`` keywords inside ``s`` (``text``: ``None`` for a target itself)."""
        if text is not None:  # (asked again and again, of a compile's memoised schemas at every level)
            if '"$ref"' not in text:
                return frozenset()
            if self._one_base is not None and isinstance(s, dict):
                return self._targets_within(s)
        key = (text, path)
        got = self._direct.get(key)
        if got is None:
            found = set()
            for sub, tokens in walk(s):
                if isinstance(sub.get("$ref"), str):
                    try:
                        found.add(self.resolve(sub["$ref"], path + pointer(tokens))[1])
                    except SchemaError:
                        pass  # (the compile says so)
            got = self._direct[key] = frozenset(found)
        return got

    def _targets_within(self, s: dict[str, Any]) -> frozenset[str]:
        """:meth:`_direct_targets` where every place has one base URI, so that a ``$ref`` resolves
        alike wherever it stands: made bottom-up, once per subschema (a search of each schema
        the compile memoises walked its whole subtree again, at every level)."""
        memo = self._within
        got = memo.get(id(s))
        if got is not None and got[0] is s:
            return got[1]
        todo: list[tuple[dict[str, Any], bool]] = [(s, False)]
        while todo:
            node, children_done = todo.pop()
            if children_done:
                found: set[str] = set()
                ref = node.get("$ref")
                if isinstance(ref, str):
                    try:
                        found.add(self.resolve(ref, "")[1])
                    except SchemaError:
                        pass  # (the compile says so)
                for child in subschemas(node):
                    found |= memo[id(child)][1]
                memo[id(node)] = (node, frozenset(found))
                continue
            held = memo.get(id(node))
            if held is not None and held[0] is node:
                continue
            todo.append((node, True))
            todo.extend((child, False) for child in subschemas(node))
        return memo[id(s)][1]

    def _closure(self, target: str) -> frozenset[str]:
        """Every target the schema at ``target`` leads to through its ``$ref`` keywords.

        One search of strongly connected components gives every target it meets its closure:
        the targets of one component share one set, made from their edges and the sets of the
        components below them (met first); targets closed before end the search. (A search per
        target cost hundreds of milliseconds on a schema with a thousand targets.)"""
        closures = self._closures
        got = closures.get(target)
        if got is not None:
            return got
        for group in strongly_connected([target], lambda t: () if t in closures else self._successors(t)):
            if group[0] in closures:
                continue  # (closed before: no edges in this search)
            reach: set[str] = set()
            for m in group:
                for d in self._successors(m):
                    reach.add(d)
                    below = closures.get(d)
                    if below is not None:
                        reach |= below
            shared = frozenset(reach)
            for m in group:
                closures[m] = shared
        return closures[target]

    def _successors(self, target: str) -> frozenset[str]:
        """The targets of the ``$ref`` keywords inside the schema at ``target``."""
        got = self._direct.get((None, target))
        return got if got is not None else self._direct_targets(self._node(_tokens(target)), target, None)

    def _base(self, tokens: Tokens) -> str:
        """The base URI in effect at ``tokens`` (the ``$id`` of the nearest enclosing resource)."""
        if self._one_base is not None:
            return self._one_base
        known = len(tokens)  # (iterative: compile paths may be long)
        while known and tokens[:known] not in self.bases:
            known -= 1
        base = self.bases.get(tokens[:known], "") if known else self.bases.get((), "")
        for n in range(known + 1 if known or () in self.bases else 0, len(tokens) + 1):
            node = self._node(tokens[:n])
            if isinstance(node, dict) and isinstance(node.get("$id"), str):
                base = join_uri(base, node["$id"]).split("#")[0]
            self.bases[tokens[:n]] = base
        return base

    def _node(self, tokens: Tokens) -> Any:
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

    def _target(self, ref: str, tokens: Tokens) -> Optional[Tokens]:
        """The tokens a ``$ref`` found at ``tokens`` points at (``None``: not in this schema)."""
        target = join_uri(self._base(tokens), ref)
        doc, _, fragment = target.partition("#")
        if doc not in self.resources:
            return None
        fragment = unquote(fragment)
        if not fragment:
            return self.resources[doc]
        if fragment.startswith("/"):
            return self.resources[doc] + tuple(t.replace("~1", "/").replace("~0", "~") for t in fragment[1:].split("/"))
        return self.anchors.get(f"{doc}#{fragment}")

    def resolve(self, ref: str, path: str) -> tuple[Schema, str]:
        """The schema the ``$ref`` found at JSON pointer ``path`` lands on, and its JSON pointer;
        :class:`SchemaError` when it lands on nothing or on something that is not a schema."""
        if self._one_base is not None:  # (a $ref lands alike wherever it stands: its landing kept)
            got = self._landed.get(ref)
            if got is None:
                got = self._landed[ref] = self._resolve(ref, path)
            return got
        return self._resolve(ref, path)

    def _resolve(self, ref: str, path: str) -> tuple[Schema, str]:
        where = f"{path}/$ref"
        tokens = self._target(ref, _tokens(path))
        if tokens is None:
            raise SchemaError(f"$ref {ref!r} does not resolve", where)
        node = self._node(tokens)
        if node is None:
            raise SchemaError(f"$ref {ref!r} does not resolve", where)
        if not isinstance(node, (dict, bool)):
            raise SchemaError(f"$ref {ref!r} points at a {type(node).__name__}, not a schema", where)
        return node, pointer(tokens)


def _tokens(path: str) -> tuple[str, ...]:
    """The tokens of JSON pointer ``path`` (percent-escapes and ``~`` escapes read).

    >>> _tokens("/$defs/a~1b/%7Ex")
    ('$defs', 'a/b', '~x')
    """
    if not path:
        return ()
    if "%" not in path and "~" not in path:  # (most paths: nothing to read)
        return tuple(path.split("/")[1:])
    return tuple(unquote(t).replace("~1", "/").replace("~0", "~") for t in path.split("/")[1:])
